/* The export form of ledger rows: lease IDs to aliases, credentials
 * dropped, sig= values and bearer tokens redacted; as a copy, or made of
 * the row itself for the ledger's append. */
#include <ctype.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jsonx.h"
#include "sanitize.h"
#include "sanitize_impl.h"

/* Keys dropped at any depth, compared case-insensitively: lease IDs,
 * credentials, and the identifiers of a principal that only the protected
 * ledger keeps (the identity record: tid, oid, appid, azp, and a user
 * delegation SAS's skoid and sktid; the export keeps their fingerprint). */
static const char *const dropped_keys[] = {"lease_real_id", "authorization",
                                           "cookie", "set-cookie",
                                           LL_IDENTITY_PRIVATE_KEYS};

static int is_token_end(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '"' ||
         c == ',';
}

typedef ll_buf sbuf;

/* Length of a "Bearer <token>" prefix at s[i] up to the token, with the
 * token's end in *tok_end; 0 when there is none. */
static size_t bearer_at(const char *s, size_t len, size_t i, size_t *tok_end) {
  if ((i > 0 && isalnum((unsigned char)s[i - 1])) ||
      !ci_prefix(s, len, i, "bearer"))
    return 0;
  size_t j = i + 6;
  if (j >= len || (s[j] != ' ' && s[j] != '\t'))
    return 0;
  while (j < len && (s[j] == ' ' || s[j] == '\t'))
    j++;
  size_t e = j;
  while (e < len && !is_token_end(s[e]))
    e++;
  if (e == j)
    return 0;
  *tok_end = e;
  return j - i;
}

/* What the copy of one row needs: the table of its bound IDs (made once
 * per set of IDs, ll_san_ids_make: where in a value scrub_at can match,
 * and the bytes one of which a value must hold for it to match anywhere,
 * for strpbrk), and id_min, the fewest bytes a match of an ID (or of a
 * cut one's first digits) spans. share: unchanged strings and keys are
 * borrowed from the row, not copied. */
typedef struct {
  const ll_san_ids *t;
  const char *const *ids, *const *aliases;
  size_t n;
  size_t id_min;
  int share;
} scrub_ctx;

/* What scrub replaces at s[i], if anything: a bound lease ID (its alias
 * in *alias; also the ID's first digits where the value was cut inside
 * it), a sig= value (its key as sent or percent-encoded) or a bearer
 * token. *keep is how many bytes of
 * s[i..] stay before "REDACTED", *end where the replaced text ends. The
 * checks run in this order at each offset. */
static int scrub_at(const char *s, size_t len, size_t i, const scrub_ctx *x,
                    const char **alias, size_t *keep, size_t *end) {
  unsigned char c = fold(s[i]);
  /* the IDs whose first two bytes are here, in their order: the first
   * ones by their bit, the rest by their first byte */
  for (unsigned m = ids_at(x->t, s, len, i), k = 0; m; k++, m >>= 1)
    if ((m & 1) && ((*end = match_id(s, len, i, x->ids[k])) ||
                    (*end = match_id_cut(s, len, i, x->ids[k])))) {
      *alias = x->aliases[k];
      return 1;
    }
  for (size_t k = LL_SAN_KNOWN_IDS; c != '-' && k < x->n; k++)
    if (id_first(x->ids[k]) == c &&
        id_second_at(s, len, i, id_second(x->ids[k])) &&
        ((*end = match_id(s, len, i, x->ids[k])) ||
         (*end = match_id_cut(s, len, i, x->ids[k])))) {
      *alias = x->aliases[k];
      return 1;
    }
  size_t key;
  if (c == 's' && (key = sig_key_at(s, len, i)) != 0) {
    size_t e = i + key;
    while (e < len && !is_sig_end(s[e]))
      e++;
    *alias = NULL;
    *keep = key;
    *end = e;
    return 1;
  }
  size_t pre, tok_end;
  if (c == 'b' && (pre = bearer_at(s, len, i, &tok_end)) != 0) {
    *alias = NULL;
    *keep = pre;
    *end = tok_end;
    return 1;
  }
  return 0;
}

static void scrub_init(scrub_ctx *x, const char *const *ids,
                       const char *const *aliases, const ll_san_ids *t,
                       int share) {
  x->t = t;
  /* match_id takes one byte of s for each non-hyphen byte of the ID (an ID
   * of hyphens alone never matches): a shorter value holds no ID, nor its
   * first digits where it was cut */
  x->id_min = t->id_min < LL_SAN_CUT_MIN ? t->id_min : LL_SAN_CUT_MIN;
  x->ids = ids;
  x->aliases = aliases;
  x->n = t->n;
  x->share = share;
}

/* A bound ID that starts inside the one matched at s[i..end) and runs past
 * its end (two IDs sharing bytes) is replaced too, its alias after the
 * first one's: otherwise what is left of it would stay in clear, where the
 * scan, which looks for an ID from its first byte, could not see it.
 * Returns where the replaced text now ends. */
static size_t overlapping_ids(const char *s, size_t len, size_t i, size_t end,
                              const scrub_ctx *x, sbuf *b) {
  for (size_t j = i + 1; j < end; j++) {
    const char *alias = NULL;
    size_t keep = 0, e = 0;
    if (x->t->starts[(unsigned char)s[j]] &&
        scrub_at(s, len, j, x, &alias, &keep, &e) && alias && e > end) {
      ll_buf_put(b, alias, strlen(alias));
      end = e;
    }
  }
  return end;
}

/* A new string: s with bound lease IDs replaced by their aliases, sig=
 * values and bearer tokens redacted; *same when nothing was (then NULL is
 * returned and s stands). NULL otherwise only when out of memory. */
static char *scrub(const char *s, const scrub_ctx *x, int *same) {
  const char *needed = x->t->needed;
  sbuf b = {0};
  size_t len = strlen(s), i = 0, from = 0;
  *same = 0;
  /* Too short for an ID, a sig= value needs '=' (or '%' encoded) and a
   * bearer token a space or tab: most values hold none of these. */
  if ((len < x->id_min && !strpbrk(s, "= \t%")) ||
      (needed[0] && !strpbrk(s, needed))) {
    *same = 1;
    return NULL;
  }
  /* The bytes a match may start at: the IDs' first bytes, s and S when
   * the value holds '=' or '%' (a sig= key needs one), b and B when it
   * holds a space or a tab (a bearer token needs one). */
  int v = 0;
  if (strpbrk(s, "=% \t"))
    v = (strpbrk(s, "=%") ? 1 : 0) | (strpbrk(s, " \t") ? 2 : 0);
  const unsigned char *walk = x->t->walk[v];
  while (i < len && !b.oom) {
    const char *alias;
    size_t keep = 0, end = 0;
    while (i < len && !walk[(unsigned char)s[i]])
      i++;
    if (i == len)
      break;
    if (!scrub_at(s, len, i, x, &alias, &keep, &end)) {
      i++;
      continue;
    }
    ll_buf_put(&b, s + from, i - from);
    if (alias) {
      ll_buf_put(&b, alias, strlen(alias));
      end = overlapping_ids(s, len, i, end, x, &b);
    } else {
      ll_buf_put(&b, s + i, keep);
      ll_buf_put(&b, "REDACTED", 8);
    }
    i = from = end;
  }
  if (!b.p && !b.oom) {
    *same = 1;
    return NULL;
  }
  ll_buf_put(&b, s + from, len - from);
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}

/* key equals lit (lowercase) in any case: what strcasecmp says, inline
 * (it is asked for most keys of every row, and most differ early). */
static int ci_equal(const char *key, const char *lit) {
  for (; *lit; key++, lit++)
    if (fold(*key) != (unsigned char)*lit)
      return 0;
  return *key == '\0';
}

/* bit i: dropped_keys[i] starts with this byte, in either case; made
 * once, from the list itself */
static uint16_t drop_first[256];
static pthread_once_t drop_once = PTHREAD_ONCE_INIT;
_Static_assert(sizeof dropped_keys / sizeof dropped_keys[0] <= 16,
               "drop_first holds one bit per dropped key");

static void drop_init(void) {
  for (size_t i = 0; i < sizeof dropped_keys / sizeof dropped_keys[0]; i++) {
    unsigned char f = (unsigned char)dropped_keys[i][0];
    drop_first[f] = drop_first[other_case((char)f)] =
        (uint16_t)(drop_first[f] | (1u << i));
  }
}

/* Whether key is dropped (drop_init has run): one of dropped_keys in any
 * case, or the chain's own keys at the top only, exactly. */
static int dropped(const char *key, int top) {
  if (top &&
      ((key[0] == 'p' && key[1] == 'r' && strcmp(key, "prev_hash") == 0) ||
       (key[0] == 'r' && key[1] == 'o' && strcmp(key, "row_hash") == 0)))
    return 1;
  for (unsigned m = drop_first[(unsigned char)key[0]], i = 0; m; i++, m >>= 1)
    if ((m & 1) && ci_equal(key, dropped_keys[i])) /* each is lowercase */
      return 1;
  return 0;
}

/* Adds copy under c's key: a constant key (a builder's literal) is kept,
 * any other copied (borrowed when sharing). */
static int add_keyed(cJSON *out, const cJSON *c, cJSON *copy, int share) {
  if (!share && !(c->type & cJSON_StringIsConst))
    return ll_json_add(out, c->string, copy);
  if (cJSON_AddItemToObjectCS(out, c->string, copy))
    return 1;
  cJSON_Delete(copy);
  return 0;
}

static cJSON *sanitize_item(const cJSON *item, int top, const scrub_ctx *x) {
  cJSON *out = NULL;
  if (cJSON_IsObject(item) || cJSON_IsArray(item)) {
    int is_obj = cJSON_IsObject(item);
    out = is_obj ? cJSON_CreateObject() : cJSON_CreateArray();
    if (!out)
      return NULL;
    for (const cJSON *c = item->child; c; c = c->next) {
      if (is_obj && (!c->string || dropped(c->string, top)))
        continue;
      cJSON *copy = sanitize_item(c, 0, x);
      if (!copy) {
        cJSON_Delete(out);
        return NULL;
      }
      if (!(is_obj ? add_keyed(out, c, copy, x->share)
                   : ll_json_push(out, copy))) {
        cJSON_Delete(out);
        return NULL;
      }
    }
    return out;
  }
  if ((cJSON_IsString(item) || cJSON_IsRaw(item)) && item->valuestring) {
    int same = 0;
    char *s = scrub(item->valuestring, x, &same);
    if (!s && !same)
      return NULL;
    const char *v = same ? item->valuestring : s;
    if (same && x->share && cJSON_IsString(item))
      out = cJSON_CreateStringReference(v);
    else
      out = cJSON_IsString(item) ? cJSON_CreateString(v) : cJSON_CreateRaw(v);
    free(s);
    return out;
  }
  /* null, true and false carry nothing but their type */
  if (cJSON_IsNull(item) || cJSON_IsBool(item))
    return cJSON_IsNull(item)   ? cJSON_CreateNull()
           : cJSON_IsTrue(item) ? cJSON_CreateTrue()
                                : cJSON_CreateFalse();
  out = cJSON_Duplicate(item, 0);
  if (out && out->string && !(out->type & cJSON_StringIsConst)) {
    cJSON_free(out->string);
    out->string = NULL;
  }
  return out;
}

static cJSON *sanitize_row(const cJSON *row, const char *const *ids,
                           const char *const *aliases, size_t n, int share) {
  scrub_ctx x;
  ll_san_ids t;
  if (!row)
    return NULL;
  pthread_once(&drop_once, drop_init);
  ll_san_ids_make(&t, ids, n);
  scrub_init(&x, ids, aliases, &t, share);
  return sanitize_item(row, 1, &x);
}

cJSON *ll_sanitize_row(const cJSON *row, const char *const *ids,
                       const char *const *aliases, size_t n) {
  return sanitize_row(row, ids, aliases, n, 0);
}

cJSON *ll_sanitize_row_shared(const cJSON *row, const char *const *ids,
                              const char *const *aliases, size_t n) {
  return sanitize_row(row, ids, aliases, n, 1);
}

/* c leaves the tree for the caller's *dead chain (linked by next; one
 * cJSON_Delete frees the chain), untouched otherwise. */
static void bury(cJSON **dead, cJSON *c) {
  c->prev = NULL;
  c->next = *dead;
  *dead = c;
}

/* n takes c's place (and key) in parent's list, as
 * cJSON_ReplaceItemViaPointer links it, but c is buried, not deleted: the
 * key stays readable in c and is freed with n. */
static void take_place(cJSON *parent, cJSON *c, cJSON *n, cJSON **dead) {
  n->string = c->string;
  n->type = (n->type & ~cJSON_StringIsConst) | (c->type & cJSON_StringIsConst);
  c->type |= cJSON_StringIsConst;
  n->next = c->next;
  n->prev = c->prev;
  if (n->next)
    n->next->prev = n;
  if (parent->child == c) {
    if (c->prev == c)
      n->prev = n;
    parent->child = n;
  } else {
    n->prev->next = n;
    if (!n->next)
      parent->child->prev = n;
  }
  bury(dead, c);
}

static int sanitize_in_place(cJSON *item, int top, const scrub_ctx *x,
                             cJSON **dead) {
  int is_obj = (item->type & 0xFF) == cJSON_Object;
  for (cJSON *c = item->child, *next; c; c = next) {
    /* the type by its low byte, as cJSON_Is* reads it, without a call */
    int t = c->type & 0xFF;
    next = c->next;
    if (is_obj && (!c->string || dropped(c->string, top))) {
      cJSON_DetachItemViaPointer(item, c);
      bury(dead, c);
      continue;
    }
    if (t == cJSON_Object || t == cJSON_Array) {
      if (!(c->type & cJSON_IsReference)) {
        if (!sanitize_in_place(c, 0, x, dead))
          return 0;
        continue;
      }
      /* a borrowed subtree is not this row's to change: its copy */
      cJSON *copy = sanitize_item(c, 0, x);
      if (!copy)
        return 0;
      take_place(item, c, copy, dead);
      continue;
    }
    if ((t != cJSON_String && t != cJSON_Raw) || !c->valuestring)
      continue; /* numbers, null, booleans: nothing to replace */
    int same = 0;
    char *s = scrub(c->valuestring, x, &same);
    if (same)
      continue;
    cJSON *n = !s                  ? NULL
               : t == cJSON_String ? cJSON_CreateString(s)
                                   : cJSON_CreateRaw(s);
    free(s);
    if (!n)
      return 0;
    take_place(item, c, n, dead);
  }
  return 1;
}

int ll_sanitize_row_in_place(cJSON *row, const char *const *ids,
                             const char *const *aliases, size_t n,
                             cJSON **dead) {
  ll_san_ids t;
  ll_san_ids_make(&t, ids, n);
  return ll_sanitize_row_in_place_ids(row, ids, aliases, &t, dead);
}

int ll_sanitize_row_in_place_ids(cJSON *row, const char *const *ids,
                                 const char *const *aliases,
                                 const ll_san_ids *t, cJSON **dead) {
  scrub_ctx x;
  ll_san_ids own;
  if (!row || !dead || !t || !(cJSON_IsObject(row) || cJSON_IsArray(row)) ||
      (row->type & cJSON_IsReference))
    return 0;
  t = ll_san_ids_ready(t, ids, &own);
  pthread_once(&drop_once, drop_init);
  scrub_init(&x, ids, aliases, t, 0);
  return sanitize_in_place(row, 1, &x, dead);
}
