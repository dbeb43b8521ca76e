/* The scan that refuses a row still holding a lease ID, a secret or a
 * sig= value, the redaction of what the service echoed, and the comparable
 * form of a lease ID. The export form of a row is in sanitize_row.c. */
#include "sanitize.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sanitize_impl.h"
#include "secret.h"
#include "text.h"

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

/* In printed JSON a terminator may appear escaped ("\"", "\n"), so the
 * scan also stops at a backslash. */
static int is_scan_sig_end(char c) {
  return is_sig_end(c) || c == '\\';
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

/* Whether sec[j] is a hex digit of a percent escape ("%2B", or "%252B"
 * encoded twice): a server may write it in either case. */
static int escape_digit(const char *sec, size_t j) {
  return (j >= 1 && sec[j - 1] == '%') || (j >= 2 && sec[j - 2] == '%') ||
         (j >= 3 && sec[j - 3] == '%' && sec[j - 2] == '2' &&
          sec[j - 1] == '5') ||
         (j >= 4 && sec[j - 4] == '%' && sec[j - 3] == '2' &&
          sec[j - 2] == '5');
}

/* A secret's bytes at p: exact, except the hex digits of its percent
 * escapes, in either case. */
static int secret_eq(const char *p, const char *sec, size_t sl) {
  if (memcmp(p, sec, sl) == 0)
    return 1;
  if (!memchr(sec, '%', sl))
    return 0;
  for (size_t j = 0; j < sl; j++)
    if (p[j] != sec[j] && !(escape_digit(sec, j) && lower_eq(p[j], sec[j])))
      return 0;
  return 1;
}

/* A secret that is a GUID (a learnt lease ID) is matched as a lease ID
 * is, in any case and with its hyphens anywhere or nowhere: a server may
 * echo it in a form it was never registered in. */
static int is_guid(const char *sec) {
  /* ll_sanitize_norm_id's test without its copy: this is asked of every
   * secret for every value */
  size_t d = 0;
  if (!sec || *sec == '-')
    return 0;
  for (const unsigned char *p = (const unsigned char *)sec; *p; p++) {
    if (*p == '-')
      continue;
    unsigned char c = *p | 0x20;
    if (!((*p >= '0' && *p <= '9') || (c >= 'a' && c <= 'f')) ||
        ++d == LL_SANITIZE_ID_MAX)
      return 0;
  }
  return d == LL_SANITIZE_ID_MAX - 1;
}

/* The end of secret sec (length sl, guid: is_guid) at s[i], or 0. */
static size_t secret_at(const char *s, size_t len, size_t i, const char *sec,
                        size_t sl, int guid) {
  if (sec[0] == LL_SANITIZE_SIG_MARK)
    return ll_san_sig_at(s, len, i, sec + 1);
  if (guid)
    return s[i] == '-' ? 0 : match_id(s, len, i, sec);
  return sl && sl <= len - i && secret_eq(s + i, sec, sl) ? i + sl : 0;
}

static size_t rare_byte(const char *sec, size_t sl) {
  size_t best = 0;
  int escapes = memchr(sec, '%', sl < 16 ? sl : 16) != NULL;
  for (size_t j = 1; j < sl && j < 16 && common[(unsigned char)sec[best]]; j++)
    if (!(escapes && escape_digit(sec, j)) &&
        common[(unsigned char)sec[j]] < common[(unsigned char)sec[best]])
      best = j;
  return best;
}

/* The first offset of secret sec (length sl) in s[0..len), or len; its
 * end in *end. */
static size_t find_secret(const char *s, size_t len, const char *sec, size_t sl,
                          size_t *end) {
  if (sl == 0)
    return len;
  if (sec[0] == LL_SANITIZE_SIG_MARK)
    return ll_san_sig_find(s, len, sec + 1, end);
  if (is_guid(sec)) {
    unsigned char f = id_first(sec), sec2 = id_second(sec);
    for (size_t i = 0; i < len; i++)
      if (fold(s[i]) == f && id_second_at(s, len, i, sec2) &&
          (*end = match_id(s, len, i, sec)) != 0)
        return i;
    return len;
  }
  if (sl > len)
    return len;
  size_t r = rare_byte(sec, sl);
  const char *p = s + r, *last = s + (len - sl) + r;
  while (p <= last && (p = memchr(p, sec[r], (size_t)(last - p) + 1))) {
    if (secret_eq(p - r, sec, sl)) {
      *end = (size_t)(p - r - s) + sl;
      return (size_t)(p - r - s);
    }
    p++;
  }
  return len;
}

/* Whether the sig= key at s[i] (key_len bytes) holds a value other than
 * REDACTED, whose end is told by at_end. */
static int sig_unredacted(const char *s, size_t len, size_t i, size_t key_len,
                          int (*at_end)(char)) {
  size_t v = i + key_len;
  return !(len - v >= 8 && memcmp(s + v, "REDACTED", 8) == 0 &&
           (v + 8 == len || at_end(s[v + 8])));
}

/* The start of the next sig= key (sig_key_at) in s[from..len) that holds
 * a value other than REDACTED, or len; its key's length in *key_len. A key
 * is found by its '=' or '%', rarer in a line than 's'. */
static size_t next_sig(const char *s, size_t len, size_t from, size_t *key_len,
                       int (*at_end)(char)) {
  size_t best = len;
  static const char marks[] = {'=', '%'};
  if (len - from < 3)
    return len;
  for (size_t m = 0; m < sizeof marks; m++)
    for (const char *p = s + from + 3;
         (size_t)(p - s) < best &&
         (p = memchr(p, marks[m], best - (size_t)(p - s)));
         p++) {
      size_t i = (size_t)(p - s) - 3, kl = sig_key_at(s, len, i);
      if (kl && sig_unredacted(s, len, i, kl, at_end)) {
        best = i;
        *key_len = kl;
        break;
      }
    }
  return best;
}

/* The next offset >= i where ll_sanitize_replace replaces something, or
 * len, with the end of what is replaced in *end: secret *k (with *k < n),
 * or a sig= value not REDACTED (*k == n). */
/* The bytes where a match can start: a secret's first byte (either case
 * for a GUID's), s or S (a sig= key). */
static void start_bytes(const char *const *secrets, size_t n,
                        unsigned char first[256]) {
  memset(first, 0, 256);
  first['s'] = first['S'] = 1;
  for (size_t j = 0; j < n; j++)
    if (secrets[j] && secrets[j][0] == LL_SANITIZE_SIG_MARK) {
      ll_san_sig_starts(secrets[j] + 1, first);
    } else if (secrets[j] && secrets[j][0]) {
      unsigned char f = (unsigned char)secrets[j][0];
      first[f] = 1;
      if (is_guid(secrets[j]))
        first[fold((char)f)] = first[other_case((char)f)] = 1;
    }
}

static size_t replace_next(const char *s, size_t len, size_t i,
                           const char *const *secrets, size_t n, size_t *k,
                           size_t *end) {
  unsigned char first[256];
  start_bytes(secrets, n, first);
  for (; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (!first[c])
      continue;
    for (*k = 0; *k < n; (*k)++) {
      const char *sec = secrets[*k];
      if (sec && sec[0] == LL_SANITIZE_SIG_MARK) {
        if ((*end = ll_san_sig_at(s, len, i, sec + 1)) != 0)
          return i;
        continue;
      }
      if (!sec || !sec[0] || !lower_eq(sec[0], (char)c))
        continue;
      int guid = is_guid(sec);
      if ((unsigned char)sec[0] != c && !guid)
        continue;
      if ((*end = secret_at(s, len, i, sec, strlen(sec), guid)) != 0)
        return i;
    }
    size_t kl;
    if ((c == 's' || c == 'S') && (kl = sig_key_at(s, len, i)) != 0 &&
        sig_unredacted(s, len, i, kl, is_sig_end)) {
      for (*end = i + kl; *end < len && !is_sig_end(s[*end]); (*end)++)
        ;
      /* a secret the value starts with is taken whole, past a space a
       * form decoder made of its '+' */
      for (size_t j = 0, e; j < n && i + kl < len; j++)
        if (secrets[j] && secrets[j][0] &&
            (e = secret_at(s, len, i + kl, secrets[j], strlen(secrets[j]),
                           is_guid(secrets[j]))) > *end)
          *end = e;
      *k = n;
      return i;
    }
  }
  return len;
}

/* replace_next(s, len, 0, ...) < len, without its per-call table: a sig=
 * value is found by its '=' or '%', a secret by its least common byte.
 * Most values hold neither, and every string the service sent is asked. */
int ll_sanitize_needs_replace(const char *s, size_t len,
                              const char *const *secrets, size_t n) {
  size_t kl, end;
  if (!s)
    return 0;
  if (len >= 3 && next_sig(s, len, 0, &kl, is_sig_end) < len)
    return 1;
  for (size_t k = 0; k < n; k++)
    if (secrets[k] && secrets[k][0] &&
        find_secret(s, len, secrets[k], strlen(secrets[k]), &end) < len)
      return 1;
  return 0;
}

/* A secret (or an unredacted sig= value) that starts inside what is
 * replaced, [at, end), and runs past it is replaced with it, its
 * placeholder after the first: found leftmost-first alone, the first
 * match would cut the second and keep its tail. Asked only where
 * something was found, which is rare. Returns the new end. */
static size_t overlapping_secrets(const char *s, size_t len, size_t at,
                                  size_t end, const char *const *secrets,
                                  const char *const *placeholders, size_t n,
                                  unsigned *found, ll_buf *out) {
  unsigned char first[256];
  start_bytes(secrets, n, first);
  /* the end of the last sig= value read: a key inside it ends with it, so
   * each value is read once however many keys it holds (linear, not
   * quadratic, in a value made of keys) */
  size_t value_end = 0;
  for (size_t j = at; j < end; j++) {
    if (!first[(unsigned char)s[j]])
      continue;
    for (size_t m = 0; m < n; m++) {
      const char *sec = secrets[m];
      size_t e;
      if (!sec || !sec[0] ||
          (e = secret_at(s, len, j, sec, strlen(sec), is_guid(sec))) <= end)
        continue;
      ll_buf_put(out, placeholders[m], strlen(placeholders[m]));
      *found |= m < 30 ? 1u << m : LL_REDACT_MORE;
      end = e;
    }
    size_t kl, e = 0;
    if ((s[j] == 's' || s[j] == 'S') && j >= value_end &&
        (kl = sig_key_at(s, len, j)) != 0 &&
        sig_unredacted(s, len, j, kl, is_sig_end)) {
      for (e = j + kl; e < len && !is_sig_end(s[e]); e++)
        ;
      value_end = e;
      if (e > end) {
        ll_buf_put(out, "sig=REDACTED", 12);
        *found |= LL_REDACT_SIG;
        end = e;
      }
    }
  }
  return end;
}

unsigned ll_sanitize_replace(const char *s, size_t len,
                             const char *const *secrets,
                             const char *const *placeholders, size_t n,
                             ll_buf *out) {
  unsigned found = 0;
  size_t i = 0, k, end = 0;
  ll_buf_put(out, "", 0);
  while (i < len && !out->oom) {
    size_t at = replace_next(s, len, i, secrets, n, &k, &end);
    ll_buf_put(out, s + i, at - i);
    if (at == len)
      break;
    if (k < n) {
      ll_buf_put(out, placeholders[k], strlen(placeholders[k]));
      found |= k < 30 ? 1u << k : LL_REDACT_MORE;
    } else {
      ll_buf_put(out, s + at, sig_key_at(s, len, at));
      ll_buf_put(out, "REDACTED", 8);
      found |= LL_REDACT_SIG;
    }
    i = overlapping_secrets(s, len, at, end, secrets, placeholders, n, &found,
                            out);
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
#define HIT(i) ((i) < 30 ? (found & (1u << (i))) : (found & LL_REDACT_MORE))
  for (size_t i = 0; i < n; i++) {
    if (!HIT(i))
      continue;
    /* each placeholder once (a secret registered in several forms; from
     * the 31st on, which of them matched is not kept) */
    int named = 0;
    for (size_t j = 0; j < i && !named; j++)
      named = HIT(j) && strcmp(placeholders[j], placeholders[i]) == 0;
    if (named)
      continue;
    if (!first)
      ll_buf_put(note, ", ", 2);
    ll_buf_put(note, placeholders[i], strlen(placeholders[i]));
    first = 0;
  }
#undef HIT
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

static void scan(const char *text, size_t len, const char *const *ids,
                 const ll_san_ids *t, const char *const *secrets,
                 size_t n_secrets, int stretches, ll_scan_result *out);

void ll_sanitize_scan(const char *text, size_t len, const char *const *ids,
                      size_t n_ids, const char *const *secrets,
                      size_t n_secrets, ll_scan_result *out) {
  ll_san_ids t;
  if (n_ids)
    ll_san_ids_make(&t, ids, n_ids);
  scan(text, len, ids, n_ids ? &t : NULL, secrets, n_secrets, 0, out);
}

void ll_sanitize_scan_ids(const char *text, size_t len, const char *const *ids,
                          const ll_san_ids *t, const char *const *secrets,
                          size_t n_secrets, ll_scan_result *out) {
  scan(text, len, ids, t, secrets, n_secrets, 1, out);
}

static void scan(const char *text, size_t len, const char *const *ids,
                 const ll_san_ids *t, const char *const *secrets,
                 size_t n_secrets, int stretches, ll_scan_result *out) {
  ll_san_ids own;
  memset(out, 0, sizeof *out);
  if (!text)
    return;
  if (t)
    t = ll_san_ids_ready(t, ids, &own);
  size_t n_ids = t ? t->n : 0, id_min = t ? t->id_min : (size_t)-1;
  /* A match of a lease ID spans at least id_min bytes (one for each
   * non-hyphen byte of the ID), each a byte of some ID in either case or a
   * hyphen: it covers one of the offsets id_min - 1, 2 id_min - 1, ...
   * Only the runs of such bytes through those offsets that are long
   * enough are searched, offset by offset; the rest of the line is never
   * looked at, whatever bytes the IDs start with. */
  const unsigned char *in_id = t ? t->in_id : NULL;
  const unsigned char *starts = t ? t->starts : NULL;
  /* A value cut inside an ID ends in its first LL_SAN_CUT_MIN or more
   * digits, then '"': runs that end the text or a string are searched for
   * such a prefix too. */
  size_t step = id_min < LL_SAN_CUT_MIN ? id_min : LL_SAN_CUT_MIN;
  /* stretches are looked for only where some ID has windows */
  stretches = stretches && t && (t->nwins || !t->wins_all);
  ll_san_stretch stretch;
  ll_san_stretch_init(&stretch);
  for (size_t at = step - 1, done = 0; id_min != (size_t)-1 && at < len;
       at += step) {
    if (at < done || !in_id[(unsigned char)text[at]])
      continue;
    size_t a = at, e = at + 1, before = done;
    while (e < len && in_id[(unsigned char)text[e]])
      e++;
    done = e;
    /* a match starting at i ends by e: it starts by e - need */
    int cut = e == len || text[e] == '"';
    size_t need = cut ? step : id_min;
    size_t least = stretches && need > LL_SAN_CUT_MIN ? LL_SAN_CUT_MIN : need;
    /* the run starts after at - step (that offset was not in a run, or
     * in one that ended by before): one that cannot be long enough for a
     * match or a stretch is not walked back */
    if (e - at + step - 1 < least)
      continue;
    while (a > before && in_id[(unsigned char)text[a - 1]])
      a--;
    size_t hits = out->hits;
    for (size_t i = a; e - a >= need && i <= e - need; i++) {
      if (!starts[(unsigned char)text[i]])
        continue;
      /* the IDs whose first two bytes are here: the first ones by their
       * bit, the rest by their first byte */
      unsigned char c = fold(text[i]);
      for (unsigned m = ids_at(t, text, len, i), k = 0; m; k++, m >>= 1)
        if ((m & 1) && (match_id(text, len, i, ids[k]) ||
                        (cut && match_id_cut(text, e, i, ids[k]))))
          record(out, LL_SCAN_ID, k, i);
      for (size_t k = LL_SAN_KNOWN_IDS; k < n_ids; k++)
        if (ids[k] && id_first(ids[k]) == c &&
            id_second_at(text, len, i, id_second(ids[k])) &&
            (match_id(text, len, i, ids[k]) ||
             (cut && match_id_cut(text, e, i, ids[k]))))
          record(out, LL_SCAN_ID, k, i);
    }
    /* A run that holds no ID from its first digit may hold a stretch from
     * inside one (sanitize_stretch.c): one hit, at its first (the line is
     * refused all the same; a run with a match is not searched again). */
    size_t k, o;
    if (stretches && out->hits == hits && e - a >= LL_SAN_CUT_MIN &&
        (o = ll_san_stretch_find(&stretch, t, ids, text, a, e, &k)) < e)
      record(out, LL_SCAN_ID, k, o);
  }
  ll_san_stretch_free(&stretch);
  /* a sig= key (any case, or percent-encoded) by its '=' or '%' */
  size_t kl;
  for (size_t i = 0; (i = next_sig(text, len, i, &kl, is_scan_sig_end)) < len;
       i++)
    record(out, LL_SCAN_SIG, 0, i);
  /* A secret is found by its least common byte: every match holds it at
   * the same place (a GUID's, by its first, in either case). */
  for (size_t k = 0; k < n_secrets; k++) {
    size_t sl = secrets[k] ? strlen(secrets[k]) : 0, end;
    for (size_t i = 0, at; i < len; i = at + 1) {
      at = i + find_secret(text + i, len - i, secrets[k], sl, &end);
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
