/* The export form of ledger rows (lease IDs to aliases, credentials
 * dropped or redacted) and the scan that refuses a row still holding one. */
#include "sanitize.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jsonx.h"

/* Keys dropped at any depth, compared case-insensitively. */
static const char *const dropped_keys[] = {"lease_real_id", "authorization",
                                           "cookie", "set-cookie"};

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

static int ci_prefix(const char *s, size_t len, size_t i, const char *word) {
  size_t n = strlen(word);
  if (len - i < n)
    return 0;
  for (size_t k = 0; k < n; k++)
    if (!lower_eq(s[i + k], word[k]))
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

/* A new string: s with bound lease IDs replaced by their aliases, sig=
 * values and bearer tokens redacted. NULL when out of memory. */
static char *scrub(const char *s, const char *const *ids,
                   const char *const *aliases, size_t n) {
  sbuf b = {0};
  size_t len = strlen(s), i = 0;
  ll_buf_put(&b, "", 0);
  while (i < len && !b.oom) {
    size_t end = 0, k = 0, pre, tok_end;
    unsigned char c = fold(s[i]);
    if (c != '-')
      for (k = 0; k < n && !end; k++)
        end = id_first(ids[k]) == c ? match_id(s, len, i, ids[k]) : 0;
    if (end) {
      ll_buf_put(&b, aliases[k - 1], strlen(aliases[k - 1]));
      i = end;
    } else if (c == 's' && ci_prefix(s, len, i, "sig=")) {
      ll_buf_put(&b, s + i, 4);
      ll_buf_put(&b, "REDACTED", 8);
      i += 4;
      while (i < len && !is_sig_end(s[i]))
        i++;
    } else if (c == 'b' && (pre = bearer_at(s, len, i, &tok_end)) != 0) {
      ll_buf_put(&b, s + i, pre);
      ll_buf_put(&b, "REDACTED", 8);
      i = tok_end;
    } else {
      ll_buf_put(&b, s + i, 1);
      i++;
    }
  }
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}

static int dropped(const char *key, int top) {
  for (size_t i = 0; i < sizeof dropped_keys / sizeof dropped_keys[0]; i++)
    if (strcasecmp(key, dropped_keys[i]) == 0)
      return 1;
  return top && (strcmp(key, "prev_hash") == 0 || strcmp(key, "row_hash") == 0);
}

static cJSON *sanitize_item(const cJSON *item, int top, const char *const *ids,
                            const char *const *aliases, size_t n) {
  cJSON *out = NULL;
  if (cJSON_IsObject(item) || cJSON_IsArray(item)) {
    int is_obj = cJSON_IsObject(item);
    out = is_obj ? cJSON_CreateObject() : cJSON_CreateArray();
    if (!out)
      return NULL;
    for (const cJSON *c = item->child; c; c = c->next) {
      if (is_obj && (!c->string || dropped(c->string, top)))
        continue;
      cJSON *copy = sanitize_item(c, 0, ids, aliases, n);
      if (!copy) {
        cJSON_Delete(out);
        return NULL;
      }
      if (!(is_obj ? ll_json_add(out, c->string, copy)
                   : ll_json_push(out, copy))) {
        cJSON_Delete(out);
        return NULL;
      }
    }
    return out;
  }
  if ((cJSON_IsString(item) || cJSON_IsRaw(item)) && item->valuestring) {
    char *s = scrub(item->valuestring, ids, aliases, n);
    if (!s)
      return NULL;
    out = cJSON_IsString(item) ? cJSON_CreateString(s) : cJSON_CreateRaw(s);
    free(s);
    return out;
  }
  out = cJSON_Duplicate(item, 0);
  if (out && out->string && !(out->type & cJSON_StringIsConst)) {
    cJSON_free(out->string);
    out->string = NULL;
  }
  return out;
}

cJSON *ll_sanitize_row(const cJSON *row, const char *const *ids,
                       const char *const *aliases, size_t n) {
  if (!row)
    return NULL;
  return sanitize_item(row, 1, ids, aliases, n);
}

unsigned ll_sanitize_replace(const char *s, size_t len,
                             const char *const *secrets,
                             const char *const *placeholders, size_t n,
                             ll_buf *out) {
  unsigned found = 0;
  size_t i = 0, k;
  ll_buf_put(out, "", 0);
  while (i < len && !out->oom) {
    for (k = 0; k < n; k++) {
      size_t sl = secrets[k] ? strlen(secrets[k]) : 0;
      if (sl > 0 && sl <= len - i && memcmp(s + i, secrets[k], sl) == 0)
        break;
    }
    if (k < n) {
      ll_buf_put(out, placeholders[k], strlen(placeholders[k]));
      i += strlen(secrets[k]);
      found |= k < 31 ? 1u << k : 0;
    } else if (fold(s[i]) == 's' && ci_prefix(s, len, i, "sig=") &&
               !(len - i - 4 >= 8 && memcmp(s + i + 4, "REDACTED", 8) == 0 &&
                 (i + 12 == len || is_sig_end(s[i + 12])))) {
      ll_buf_put(out, s + i, 4);
      ll_buf_put(out, "REDACTED", 8);
      for (i += 4; i < len && !is_sig_end(s[i]); i++)
        ;
      found |= LL_REDACT_SIG;
    } else {
      ll_buf_put(out, s + i, 1);
      i++;
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
  ll_buf b = {0};
  unsigned hit =
      ll_sanitize_replace(item->valuestring, strlen(item->valuestring), secrets,
                          placeholders, n, &b);
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
  for (size_t i = 0; i < len; i++) {
    unsigned char c = fold(text[i]);
    if (c != '-')
      for (size_t k = 0; k < n_ids; k++)
        if (ids[k] && id_first(ids[k]) == c && match_id(text, len, i, ids[k]))
          record(out, LL_SCAN_ID, k, i);
    if (c == 's' && ci_prefix(text, len, i, "sig=")) {
      size_t v = i + 4;
      int redacted = len - v >= 8 && memcmp(text + v, "REDACTED", 8) == 0 &&
                     (v + 8 == len || is_scan_sig_end(text[v + 8]));
      if (!redacted)
        record(out, LL_SCAN_SIG, 0, i);
    }
  }
  for (size_t k = 0; k < n_secrets; k++) {
    size_t sl = secrets[k] ? strlen(secrets[k]) : 0;
    if (sl == 0 || sl > len)
      continue;
    for (size_t i = 0; i + sl <= len; i++)
      if (text[i] == secrets[k][0] && memcmp(text + i, secrets[k], sl) == 0)
        record(out, LL_SCAN_SECRET, k, i);
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
