/* The export form of ledger rows (lease IDs to aliases, credentials
 * dropped or redacted) and the scan that refuses a row still holding one. */
#include "sanitize.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jsonx.h"

/* Keys dropped at any depth, compared case-insensitively: lease IDs,
 * credentials, and the identifiers of a principal that only the protected
 * ledger keeps (the identity record: tid, oid, appid, azp, and a user
 * delegation SAS's skoid and sktid; the export keeps their fingerprint). */
static const char *const dropped_keys[] = {
    "lease_real_id", "authorization", "cookie", "set-cookie", "tid",
    "oid",           "appid",         "azp",    "skoid",      "sktid"};
static const size_t dropped_len[] = {13, 13, 6, 10, 3, 3, 5, 3, 5, 5};
_Static_assert(sizeof dropped_keys / sizeof dropped_keys[0] ==
                   sizeof dropped_len / sizeof dropped_len[0],
               "one length per dropped key");

int ll_sanitize_norm_id(const char *id, char out[LL_SANITIZE_ID_MAX]) {
  size_t n = 0;
  out[0] = '\0';
  if (!id)
    return 0;
  for (const char *p = id; *p; p++) {
    if (*p == '-')
      continue;
    if (!isxdigit((unsigned char)*p) || n == LL_SANITIZE_ID_MAX - 1) {
      out[0] = '\0';
      return 0;
    }
    out[n++] = (char)tolower((unsigned char)*p);
  }
  out[n] = '\0';
  if (n != LL_SANITIZE_ID_MAX - 1) {
    out[0] = '\0';
    return 0;
  }
  return 1;
}

/* ASCII case folding: the words and lease IDs matched here are ASCII, and
 * the locale must not change what matches (tolower() would; it also costs
 * a call per byte on paths that run at every offset of every row). */
static inline unsigned char fold(char c) {
  unsigned char x = (unsigned char)c;
  return x >= 'A' && x <= 'Z' ? (unsigned char)(x - 'A' + 'a') : x;
}

static int lower_eq(char a, char b) {
  return fold(a) == fold(b);
}

/* The first byte of id that a match must start with (hyphens skipped), so
 * that the per-offset loops below call match_id only where it can match. */
static inline unsigned char id_first(const char *id) {
  while (*id == '-')
    id++;
  return fold(*id);
}

/* The second byte of id that a match must hold (hyphens skipped), 0 when
 * id has one byte; id_second_at tells whether s[i + 1..] holds it after
 * any hyphens, as match_id would read it. A quick test only: match_id
 * still compares the whole ID. */
static inline unsigned char id_second(const char *id) {
  while (*id == '-')
    id++;
  if (!*id)
    return 0;
  id++;
  while (*id == '-')
    id++;
  return fold(*id);
}

static inline int id_second_at(const char *s, size_t len, size_t i,
                               unsigned char second) {
  size_t j = i + 1;
  if (!second)
    return 1;
  while (j < len && s[j] == '-')
    j++;
  return j < len && fold(s[j]) == second;
}

/* Stops at the first byte that differs: at most offsets that is the
 * second (the callers look at s[i] only where the first byte matched). */
static int ci_prefix(const char *s, size_t len, size_t i, const char *word) {
  for (size_t k = 0; word[k]; k++)
    if (i + k >= len || !lower_eq(s[i + k], word[k]))
      return 0;
  return 1;
}

/* Matches id at s[i] ignoring case and hyphens on both sides; the service
 * may hand a lease ID back in another case or without hyphens. Returns the
 * end of the match (exclusive), or 0. s[i] must not be a hyphen, so a match
 * neither starts nor ends on one. */
static size_t match_id(const char *s, size_t len, size_t i, const char *id) {
  const char *p = id;
  size_t k = i;
  while (*p == '-')
    p++;
  if (!*p)
    return 0;
  for (;;) {
    if (k >= len || !lower_eq(s[k], *p))
      return 0;
    k++;
    p++;
    while (*p == '-')
      p++;
    if (!*p)
      return k;
    while (k < len && s[k] == '-')
      k++;
  }
}

/* Where a SAS "sig=" value stops inside a string value. */
static int is_sig_end(char c) {
  return c == '&' || c == ' ' || c == '\t' || c == '\r' || c == '\n' ||
         c == '"' || c == '\'' || c == '#' || c == '<' || c == '>';
}

/* In printed JSON a terminator may appear escaped ("\"", "\n"), so the
 * scan also stops at a backslash. */
static int is_scan_sig_end(char c) {
  return is_sig_end(c) || c == '\\';
}

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
 * scrub_at to match anywhere in it (a sig= holds '=', a bearer token a
 * space or tab after "bearer", an ID its first byte), for strpbrk; ""
 * when there are too many IDs to list (then every value is walked).
 * share: unchanged strings and keys are borrowed from the row, not
 * copied. */
#define SCRUB_KNOWN 16 /* IDs whose first two bytes are kept in the context */
typedef struct {
  unsigned char firsts[256];
  unsigned char first[SCRUB_KNOWN], second[SCRUB_KNOWN]; /* id_first/second */
  char needed[64];
  const char *const *ids, *const *aliases;
  size_t n;
  size_t id_min; /* the fewest bytes an ID match spans (its non-hyphens) */
  int share;
} scrub_ctx;

/* What scrub replaces at s[i], if anything: a bound lease ID (its alias
 * in *alias), a sig= value or a bearer token. *keep is how many bytes of
 * s[i..] stay before "REDACTED", *end where the replaced text ends. The
 * checks run in this order at each offset. */
static int scrub_at(const char *s, size_t len, size_t i, const scrub_ctx *x,
                    const char **alias, size_t *keep, size_t *end) {
  unsigned char c = fold(s[i]);
  if (c != '-')
    for (size_t k = 0; k < x->n; k++) {
      const char *id = x->ids[k];
      unsigned char f = k < SCRUB_KNOWN ? x->first[k] : id_first(id);
      if (f != c)
        continue;
      unsigned char sec = k < SCRUB_KNOWN ? x->second[k] : id_second(id);
      if (id_second_at(s, len, i, sec) && (*end = match_id(s, len, i, id))) {
        *alias = x->aliases[k];
        return 1;
      }
    }
  if (c == 's' && ci_prefix(s, len, i, "sig=")) {
    size_t e = i + 4;
    while (e < len && !is_sig_end(s[e]))
      e++;
    *alias = NULL;
    *keep = 4;
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
  memcpy(x->needed, "= \t", 3);
  m = 3;
  int quick = 1;
  /* every ID marks its first bytes, even once needed is given up: a
   * byte left unmarked is an ID never replaced */
  for (size_t k = 0; k < n; k++) {
    unsigned char f = id_first(ids[k]);
    unsigned char u = f >= 'a' && f <= 'z' ? (unsigned char)(f - 'a' + 'A') : f;
    if (k < SCRUB_KNOWN) {
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
  /* Too short for an ID, a sig= value needs '=' and a bearer token a
   * space or tab: most values hold none of these. */
  if ((len < x->id_min && !strpbrk(s, "= \t")) ||
      (x->needed[0] && !strpbrk(s, x->needed))) {
    *same = 1;
    return NULL;
  }
  while (i < len && !b.oom) {
    const char *alias;
    size_t keep = 0, end = 0;
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
  /* the first letters of the dropped keys, before comparing whole keys */
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
  size_t kl = strlen(key);
  for (size_t i = 0; i < sizeof dropped_keys / sizeof dropped_keys[0]; i++)
    if (kl == dropped_len[i] && strcasecmp(key, dropped_keys[i]) == 0)
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

/* How common a byte is in a ledger line (lowercase words and keys, digits,
 * JSON punctuation: 2; uppercase: 1; anything else: 0). A secret is looked
 * for by its least common byte among its first 16, so that memchr stops
 * rarely; any byte of it gives the same matches. */
static const unsigned char common[256] = {
    [' '] = 2, ['"'] = 2, [','] = 2, ['-'] = 2, [':'] = 2, ['_'] = 2, ['0'] = 2,
    ['1'] = 2, ['2'] = 2, ['3'] = 2, ['4'] = 2, ['5'] = 2, ['6'] = 2, ['7'] = 2,
    ['8'] = 2, ['9'] = 2, ['a'] = 2, ['b'] = 2, ['c'] = 2, ['d'] = 2, ['e'] = 2,
    ['f'] = 2, ['g'] = 2, ['h'] = 2, ['i'] = 2, ['j'] = 2, ['k'] = 2, ['l'] = 2,
    ['m'] = 2, ['n'] = 2, ['o'] = 2, ['p'] = 2, ['q'] = 2, ['r'] = 2, ['s'] = 2,
    ['t'] = 2, ['u'] = 2, ['v'] = 2, ['w'] = 2, ['x'] = 2, ['y'] = 2, ['z'] = 2,
    ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1,
    ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1,
    ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1,
    ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1};

static size_t rare_byte(const char *sec, size_t sl) {
  size_t best = 0;
  for (size_t j = 1; j < sl && j < 16 && common[(unsigned char)sec[best]]; j++)
    if (common[(unsigned char)sec[j]] < common[(unsigned char)sec[best]])
      best = j;
  return best;
}

/* The first offset of secret sec (length sl) in s[0..len), or len. */
static size_t find_secret(const char *s, size_t len, const char *sec,
                          size_t sl) {
  if (sl == 0 || sl > len)
    return len;
  size_t r = rare_byte(sec, sl);
  const char *p = s + r, *last = s + (len - sl) + r;
  while (p <= last && (p = memchr(p, sec[r], (size_t)(last - p) + 1))) {
    if (memcmp(p - r, sec, sl) == 0)
      return (size_t)(p - r - s);
    p++;
  }
  return len;
}

/* The next offset >= i where ll_sanitize_replace replaces something, or
 * len: secret *k (with *k < n), or a sig= value not REDACTED (*k == n). */
static size_t replace_next(const char *s, size_t len, size_t i,
                           const char *const *secrets, size_t n, size_t *k) {
  /* the bytes where a match can start: a secret's first byte, s or S */
  unsigned char first[256] = {0};
  first['s'] = first['S'] = 1;
  for (size_t j = 0; j < n; j++)
    if (secrets[j] && secrets[j][0])
      first[(unsigned char)secrets[j][0]] = 1;
  for (; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (!first[c])
      continue;
    for (*k = 0; *k < n; (*k)++) {
      const char *sec = secrets[*k];
      if (!sec || !sec[0] || (unsigned char)sec[0] != c)
        continue;
      size_t sl = strlen(sec);
      if (sl <= len - i && memcmp(s + i, sec, sl) == 0)
        return i;
    }
    if ((c == 's' || c == 'S') && ci_prefix(s, len, i, "sig=") &&
        !(len - i - 4 >= 8 && memcmp(s + i + 4, "REDACTED", 8) == 0 &&
          (i + 12 == len || is_sig_end(s[i + 12]))))
      return i; /* *k == n */
  }
  return len;
}

/* replace_next(s, len, 0, ...) < len, without its per-call table: a sig=
 * value is found by its '=', a secret by its least common byte. Most
 * values hold neither, and every string the service sent is asked. */
int ll_sanitize_needs_replace(const char *s, size_t len,
                              const char *const *secrets, size_t n) {
  if (!s)
    return 0;
  for (const char *p = s;
       (size_t)(p - s) < len && (p = memchr(p, '=', len - (size_t)(p - s)));
       p++) {
    size_t i = (size_t)(p - s);
    if (i >= 3 && ci_prefix(s, len, i - 3, "sig=") &&
        !(len - i - 1 >= 8 && memcmp(p + 1, "REDACTED", 8) == 0 &&
          (i + 9 == len || is_sig_end(s[i + 9]))))
      return 1;
  }
  for (size_t k = 0; k < n; k++)
    if (secrets[k] && secrets[k][0] &&
        find_secret(s, len, secrets[k], strlen(secrets[k])) < len)
      return 1;
  return 0;
}

unsigned ll_sanitize_replace(const char *s, size_t len,
                             const char *const *secrets,
                             const char *const *placeholders, size_t n,
                             ll_buf *out) {
  unsigned found = 0;
  size_t i = 0, k;
  ll_buf_put(out, "", 0);
  while (i < len && !out->oom) {
    size_t at = replace_next(s, len, i, secrets, n, &k);
    ll_buf_put(out, s + i, at - i);
    if (at == len)
      break;
    if (k < n) {
      ll_buf_put(out, placeholders[k], strlen(placeholders[k]));
      i = at + strlen(secrets[k]);
      found |= k < 31 ? 1u << k : 0;
    } else {
      ll_buf_put(out, s + at, 4);
      ll_buf_put(out, "REDACTED", 8);
      for (i = at + 4; i < len && !is_sig_end(s[i]); i++)
        ;
      found |= LL_REDACT_SIG;
    }
  }
  return found;
}

/* Appends path (prefix.key or prefix[i]) to where unless it is there. */
static void note_path(ll_buf *where, const char *path) {
  size_t n = strlen(path);
  for (const char *p = where->p; p && *p;) {
    const char *end = strstr(p, ", ");
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && memcmp(p, path, n) == 0)
      return;
    p = end ? end + 2 : p + len;
  }
  if (where->n > 0)
    ll_buf_put(where, ", ", 2);
  ll_buf_put(where, path, n);
}

static ll_status redact_item(cJSON *item, const char *path,
                             const char *const *secrets,
                             const char *const *placeholders, size_t n,
                             unsigned *found, ll_buf *where) {
  if (cJSON_IsObject(item) || cJSON_IsArray(item)) {
    int i = 0;
    for (cJSON *c = item->child; c; c = c->next, i++) {
      char sub[256];
      /* the path is named only for what may need it: numbers, booleans
       * and nulls hold no text, and a string only if it holds a secret */
      if (!cJSON_IsObject(c) && !cJSON_IsArray(c) && !cJSON_IsString(c))
        continue;
      if (cJSON_IsString(c) && c->valuestring &&
          !ll_sanitize_needs_replace(c->valuestring, strlen(c->valuestring),
                                     secrets, n))
        continue;
      if (cJSON_IsObject(item))
        snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "",
                 c->string ? c->string : "?");
      else
        snprintf(sub, sizeof sub, "%s[%d]", path, i);
      ll_status st =
          redact_item(c, sub, secrets, placeholders, n, found, where);
      if (st != LL_OK)
        return st;
    }
    return LL_OK;
  }
  /* A reference does not own its text: left alone, the scan refuses it. */
  if (!cJSON_IsString(item) || !item->valuestring ||
      (item->type & cJSON_IsReference))
    return LL_OK;
  size_t len = strlen(item->valuestring);
  if (!ll_sanitize_needs_replace(item->valuestring, len, secrets, n))
    return LL_OK;
  ll_buf b = {0};
  unsigned hit =
      ll_sanitize_replace(item->valuestring, len, secrets, placeholders, n, &b);
  if (b.oom) {
    free(b.p);
    return LL_E_NOMEM;
  }
  if (!hit) {
    free(b.p);
    return LL_OK;
  }
  /* cJSON owns valuestring through its allocator: hand it a copy. */
  char *copy = cJSON_malloc(b.n + 1);
  if (!copy) {
    free(b.p);
    return LL_E_NOMEM;
  }
  memcpy(copy, b.p, b.n + 1);
  free(b.p);
  cJSON_free(item->valuestring);
  item->valuestring = copy;
  *found |= hit;
  if (where)
    note_path(where, *path ? path : "(value)");
  return where && where->oom ? LL_E_NOMEM : LL_OK;
}

ll_status ll_sanitize_redact(cJSON *item, const char *const *secrets,
                             const char *const *placeholders, size_t n,
                             unsigned *found, ll_buf *where) {
  *found = 0;
  if (where)
    ll_buf_put(where, "", 0);
  return item ? redact_item(item, "", secrets, placeholders, n, found, where)
              : LL_OK;
}

void ll_sanitize_note(ll_buf *note, const char *where, unsigned found,
                      const char *const *placeholders, size_t n) {
  static const char head[] = "the service echoed a secret in ";
  ll_buf_put(note, head, sizeof head - 1);
  ll_buf_put(note, where, strlen(where));
  ll_buf_put(note, "; replaced by ", 14);
  int first = 1;
  for (size_t i = 0; i < n && i < 31; i++) {
    if (!(found & (1u << i)))
      continue;
    if (!first)
      ll_buf_put(note, ", ", 2);
    ll_buf_put(note, placeholders[i], strlen(placeholders[i]));
    first = 0;
  }
  if (found & LL_REDACT_SIG) {
    if (!first)
      ll_buf_put(note, ", ", 2);
    ll_buf_put(note, "sig=REDACTED", 12);
  }
}

static void record(ll_scan_result *r, ll_scan_kind kind, size_t index,
                   size_t offset) {
  r->hits++;
  if (r->hits == 1 || offset < r->offset) {
    r->kind = kind;
    r->index = index;
    r->offset = offset;
  }
}

void ll_sanitize_scan(const char *text, size_t len, const char *const *ids,
                      size_t n_ids, const char *const *secrets,
                      size_t n_secrets, ll_scan_result *out) {
  memset(out, 0, sizeof *out);
  if (!text)
    return;
  /* A match of a lease ID spans at least id_min bytes (one for each
   * non-hyphen byte of the ID), each a byte of some ID in either case or a
   * hyphen: it covers one of the offsets id_min - 1, 2 id_min - 1, ...
   * Only the runs of such bytes through those offsets that are long
   * enough are searched, offset by offset; the rest of the line is never
   * looked at, whatever bytes the IDs start with. */
  unsigned char in_id[256] = {0}, starts[256] = {0};
  unsigned char first[SCRUB_KNOWN], second[SCRUB_KNOWN];
  size_t id_min = (size_t)-1;
  for (size_t q = 0; q < n_ids; q++) {
    size_t d = 0;
    if (!ids[q])
      continue;
    unsigned char f = id_first(ids[q]);
    starts[f] = starts[f >= 'a' && f <= 'z' ? f - 32 : f] = 1;
    if (q < SCRUB_KNOWN) {
      first[q] = f;
      second[q] = id_second(ids[q]);
    }
    for (const unsigned char *p = (const unsigned char *)(ids[q] ? ids[q] : "");
         *p; p++) {
      in_id[*p] = 1;
      d += *p != '-';
    }
    if (d && d < id_min)
      id_min = d;
  }
  for (int c = 'a'; c <= 'z'; c++) /* either case matches either */
    in_id[c] = in_id[c - 32] = in_id[c] | in_id[c - 32];
  in_id['-'] = 1;
  for (size_t at = id_min - 1, done = 0; id_min != (size_t)-1 && at < len;
       at += id_min) {
    if (at < done || !in_id[(unsigned char)text[at]])
      continue;
    size_t a = at, e = at + 1;
    while (a > done && in_id[(unsigned char)text[a - 1]])
      a--;
    while (e < len && in_id[(unsigned char)text[e]])
      e++;
    done = e;
    /* a match starting at i ends by e: it starts by e - id_min */
    for (size_t i = a; e - a >= id_min && i <= e - id_min; i++) {
      if (!starts[(unsigned char)text[i]])
        continue;
      unsigned char c = fold(text[i]);
      for (size_t k = 0; k < n_ids; k++) {
        if (!ids[k] || (k < SCRUB_KNOWN ? first[k] : id_first(ids[k])) != c)
          continue;
        if (id_second_at(text, len, i,
                         k < SCRUB_KNOWN ? second[k] : id_second(ids[k])) &&
            match_id(text, len, i, ids[k]))
          record(out, LL_SCAN_ID, k, i);
      }
    }
  }
  /* "sig=" (any case) is found by its '=', rarer in a line than 's'. */
  for (const char *p = text; (size_t)(p - text) < len &&
                             (p = memchr(p, '=', len - (size_t)(p - text)));
       p++) {
    size_t j = (size_t)(p - text);
    if (j < 3 || !ci_prefix(text, len, j - 3, "sig="))
      continue;
    size_t i = j - 3, v = j + 1;
    int redacted = len - v >= 8 && memcmp(text + v, "REDACTED", 8) == 0 &&
                   (v + 8 == len || is_scan_sig_end(text[v + 8]));
    if (!redacted)
      record(out, LL_SCAN_SIG, 0, i);
  }
  /* A secret is found by its least common byte: every match holds it at
   * the same place. */
  for (size_t k = 0; k < n_secrets; k++) {
    size_t sl = secrets[k] ? strlen(secrets[k]) : 0;
    for (size_t i = 0, at; i < len; i = at + 1) {
      at = i + find_secret(text + i, len - i, secrets[k], sl);
      if (at >= len)
        break;
      record(out, LL_SCAN_SECRET, k, at);
    }
  }
}

size_t ll_secret_scan(const char *text, size_t len, const char *const *ids,
                      size_t n_ids, const char *const *secrets,
                      size_t n_secrets, char *what, size_t what_cap) {
  ll_scan_result r;
  ll_sanitize_scan(text, len, ids, n_ids, secrets, n_secrets, &r);
  if (what && what_cap) {
    switch (r.kind) {
    case LL_SCAN_ID:
      snprintf(what, what_cap, "lease ID #%zu at offset %zu", r.index + 1,
               r.offset);
      break;
    case LL_SCAN_SECRET:
      snprintf(what, what_cap, "secret #%zu at offset %zu", r.index + 1,
               r.offset);
      break;
    case LL_SCAN_SIG:
      snprintf(what, what_cap, "sig= value at offset %zu", r.offset);
      break;
    default:
      what[0] = '\0';
    }
  }
  return r.hits;
}
