/* The export form of ledger rows: lease IDs to aliases, credentials
 * dropped, sig= values and bearer tokens redacted; as a copy, or made of
 * the row itself for the ledger's append. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* What the copy of one row needs, made once per row. firsts: the bytes
 * where scrub_at can match (the first byte of a bound ID in either case,
 * and s/S, b/B). needed: bytes one of which a value must hold for
 * scrub_at to match anywhere in it (a sig= holds '=' or '%', a bearer token a
 * space or tab after "bearer", an ID its first byte), for strpbrk; ""
 * when there are too many IDs to list (then every value is walked).
 * share: unchanged strings and keys are borrowed from the row, not
 * copied. */
typedef struct {
  unsigned char firsts[256];
  unsigned char first[LL_SAN_KNOWN_IDS],
      second[LL_SAN_KNOWN_IDS]; /* id_first/second */
  char needed[64];
  const char *const *ids, *const *aliases;
  size_t n;
  size_t id_min; /* the fewest bytes an ID match spans (or a cut one's) */
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
  if (c != '-')
    for (size_t k = 0; k < x->n; k++) {
      const char *id = x->ids[k];
      unsigned char f = k < LL_SAN_KNOWN_IDS ? x->first[k] : id_first(id);
      if (f != c)
        continue;
      unsigned char sec = k < LL_SAN_KNOWN_IDS ? x->second[k] : id_second(id);
      if (id_second_at(s, len, i, sec) &&
          ((*end = match_id(s, len, i, id)) ||
           (*end = match_id_cut(s, len, i, id)))) {
        *alias = x->aliases[k];
        return 1;
      }
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
                       const char *const *aliases, size_t n, int share) {
  unsigned char *t = x->firsts;
  size_t m = 0;
  memset(t, 0, 256);
  t['s'] = t['S'] = t['b'] = t['B'] = 1;
  memcpy(x->needed, "= \t%", 4);
  m = 4;
  int quick = 1;
  /* every ID marks its first bytes, even once needed is given up: a
   * byte left unmarked is an ID never replaced */
  for (size_t k = 0; k < n; k++) {
    unsigned char f = id_first(ids[k]);
    unsigned char u = other_case((char)f);
    if (k < LL_SAN_KNOWN_IDS) {
      x->first[k] = f;
      x->second[k] = id_second(ids[k]);
    }
    t[f] = t[u] = 1;
    if (!quick || (f && memchr(x->needed, f, m)))
      continue; /* listed already (IDs share first bytes) */
    if (m + 2 < sizeof x->needed && f) {
      x->needed[m++] = (char)f;
      x->needed[m++] = (char)u;
    } else {
      quick = 0; /* a NUL first byte or too many IDs: no quick test */
    }
  }
  x->needed[quick ? m : 0] = '\0';
  /* match_id takes one byte of s for each non-hyphen byte of the ID (an ID
   * of hyphens alone never matches): a shorter value holds no ID */
  x->id_min = (size_t)-1;
  for (size_t k = 0; k < n; k++) {
    size_t d = 0;
    for (const char *p = ids[k]; *p; p++)
      d += *p != '-';
    if (d > LL_SAN_CUT_MIN) /* or its first digits, where it was cut */
      d = LL_SAN_CUT_MIN;
    if (d && d < x->id_min)
      x->id_min = d;
  }
  x->ids = ids;
  x->aliases = aliases;
  x->n = n;
  x->share = share;
}

/* A new string: s with bound lease IDs replaced by their aliases, sig=
 * values and bearer tokens redacted; *same when nothing was (then NULL is
 * returned and s stands). NULL otherwise only when out of memory. */
static char *scrub(const char *s, const scrub_ctx *x, int *same) {
  const unsigned char *firsts = x->firsts;
  sbuf b = {0};
  size_t len = strlen(s), i = 0, from = 0;
  *same = 0;
  /* Too short for an ID, a sig= value needs '=' (or '%' encoded) and a
   * bearer token a space or tab: most values hold none of these. */
  if ((len < x->id_min && !strpbrk(s, "= \t%")) ||
      (x->needed[0] && !strpbrk(s, x->needed))) {
    *same = 1;
    return NULL;
  }
  /* The bytes a match may start at, as a set strpbrk jumps to: the IDs'
   * first bytes (needed after its "= \t%"), s and S when the value holds
   * '=' or '%' (a sig= key needs one), b and B when it holds a space or a
   * tab (a bearer token needs one). Without a quick list, every byte. */
  char walk[sizeof x->needed + 4];
  const char *set = NULL;
  if (x->needed[0]) {
    size_t w = strlen(x->needed + 4);
    memcpy(walk, x->needed + 4, w);
    if (strpbrk(s, "=%")) {
      walk[w++] = 's';
      walk[w++] = 'S';
    }
    if (strpbrk(s, " \t")) {
      walk[w++] = 'b';
      walk[w++] = 'B';
    }
    walk[w] = '\0';
    set = walk;
  }
  while (i < len && !b.oom) {
    const char *alias;
    size_t keep = 0, end = 0;
    if (set) {
      const char *p = *set ? strpbrk(s + i, set) : NULL;
      if (!p)
        break;
      i = (size_t)(p - s);
    }
    if (!firsts[(unsigned char)s[i]] ||
        !scrub_at(s, len, i, x, &alias, &keep, &end)) {
      i++;
      continue;
    }
    ll_buf_put(&b, s + from, i - from);
    if (alias) {
      ll_buf_put(&b, alias, strlen(alias));
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

static int dropped(const char *key, int top) {
  /* the first letters of the dropped keys, before comparing whole keys;
   * tid and oid are the only ones under t and o (LL_IDENTITY_PRIVATE_KEYS:
   * tests/test_sanitize.c checks that every key of it is dropped) */
  switch (fold(key[0])) {
  case 'l':
  case 'a':
  case 'c':
  case 's':
    break;
  case 't': /* transport_error, ...: one short compare, not the list */
    return strcasecmp(key, "tid") == 0;
  case 'o':
    return strcasecmp(key, "oid") == 0;
  case 'p': /* the chain's own keys, at the top only, exactly */
    return top && key[1] == 'r' && strcmp(key, "prev_hash") == 0;
  case 'r':
    return top && key[1] == 'o' && strcmp(key, "row_hash") == 0;
  default:
    return 0;
  }
  for (size_t i = 0; i < sizeof dropped_keys / sizeof dropped_keys[0]; i++)
    if (fold(key[1]) == dropped_keys[i][1] && /* each is lowercase */
        strcasecmp(key, dropped_keys[i]) == 0)
      return 1;
  return 0; /* prev_hash and row_hash start with neither l, a, c nor s */
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
  if (!row)
    return NULL;
  scrub_init(&x, ids, aliases, n, share);
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
  int is_obj = cJSON_IsObject(item);
  for (cJSON *c = item->child, *next; c; c = next) {
    next = c->next;
    if (is_obj && (!c->string || dropped(c->string, top))) {
      cJSON_DetachItemViaPointer(item, c);
      bury(dead, c);
      continue;
    }
    if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
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
    if (!(cJSON_IsString(c) || cJSON_IsRaw(c)) || !c->valuestring)
      continue; /* numbers, null, booleans: nothing to replace */
    int same = 0;
    char *s = scrub(c->valuestring, x, &same);
    if (same)
      continue;
    cJSON *n = !s                  ? NULL
               : cJSON_IsString(c) ? cJSON_CreateString(s)
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
  scrub_ctx x;
  if (!row || !dead || !(cJSON_IsObject(row) || cJSON_IsArray(row)) ||
      (row->type & cJSON_IsReference))
    return 0;
  scrub_init(&x, ids, aliases, n, 0);
  return sanitize_in_place(row, 1, &x, dead);
}
