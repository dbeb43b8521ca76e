/* The ledger's line format: a row printed once, byte for byte as
 * cJSON_PrintUnformatted prints it, into the ledger's reused buffer; the
 * chain hash over that line; and the row sealed in place with the seq,
 * prev_hash and row_hash the line holds, so that memory equals the file
 * without parsing the line back. Shared by the writer (ledger.c,
 * ledger_open.c) and the reader (ledger_read.c). */
#include "ledger_line.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "ledger_impl.h"
#include "text.h"

static inline void put(ll_buf *b, const char *s, size_t n) {
  char *d = ll_buf_room(b, n);
  if (d) {
    memcpy(d, s, n);
    b->n += n;
    b->p[b->n] = '\0';
  }
}

/* A whole number below 1e15 prints as its digits under both of cJSON's
 * rules (%d of valueint and %1.15g); anything else (fractions, big
 * numbers, -0, NaN and infinities) is printed by cJSON itself. With canon,
 * the item then holds what a reader parses back from those bytes: a
 * fraction printed with 15 digits that cJSON deemed close enough, or null
 * for NaN and infinities. */
static void put_number(ll_buf *b, cJSON *item, int canon) {
  double d = item->valuedouble;
  /* (no libm: NaN fails the range test) */
  if (d > -1e15 && d < 1e15 && (double)(long long)d == d &&
      !(d == 0 && signbit(d))) {
    char tmp[24], *e = tmp + sizeof tmp, *q = e;
    long long v = (long long)d;
    unsigned long long u =
        v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do
      *--q = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
      *--q = '-';
    put(b, q, (size_t)(e - q));
    return;
  }
  char tmp[64];
  cJSON one = *item;
  one.next = one.prev = one.child = NULL;
  one.string = NULL;
  if (!cJSON_PrintPreallocated(&one, tmp, sizeof tmp, 0)) {
    b->oom = 1; /* cannot happen: 26 bytes at most */
    return;
  }
  put(b, tmp, strlen(tmp));
  if (!canon)
    return;
  if (isnan(d) || isinf(d))
    item->type = cJSON_NULL | (item->type & ~0xFF);
  else
    cJSON_SetNumberValue(item, strtod(tmp, NULL));
}

/* 1 when printed; 0 for a raw or invalid item. *deepest gets the deepest
 * nesting seen (the top object or array is 1). */
static int put_value(ll_buf *b, cJSON *item, int depth, int *deepest,
                     int canon) {
  switch (item->type & 0xFF) {
  case cJSON_NULL:
    put(b, "null", 4);
    return 1;
  case cJSON_False:
    put(b, "false", 5);
    return 1;
  case cJSON_True:
    put(b, "true", 4);
    return 1;
  case cJSON_Number:
    put_number(b, item, canon);
    return 1;
  case cJSON_String:
    ll_json_put_string(b, item->valuestring);
    return 1;
  case cJSON_Array:
  case cJSON_Object: {
    int obj = (item->type & 0xFF) == cJSON_Object;
    if (depth + 1 > *deepest)
      *deepest = depth + 1;
    put(b, obj ? "{" : "[", 1);
    for (cJSON *c = item->child; c; c = c->next) {
      if (obj) {
        ll_json_put_string(b, c->string);
        put(b, ":", 1);
      }
      if (!put_value(b, c, depth + 1, deepest, canon))
        return 0;
      if (c->next)
        put(b, ",", 1);
    }
    put(b, obj ? "}" : "]", 1);
    return 1;
  }
  default: /* raw or invalid: not plain JSON */
    return 0;
  }
}

int ll_line_plain(const cJSON *item) {
  if (cJSON_IsRaw(item) || cJSON_IsInvalid(item))
    return 0;
  for (const cJSON *c = item->child; c; c = c->next)
    if (!ll_line_plain(c))
      return 0;
  return 1;
}

int ll_line_print_json(ll_buf *out, const cJSON *item) {
  int deepest = 0;
  if (!item)
    return 0;
  /* canon 0: nothing is written through the cast */
  return put_value(out, (cJSON *)item, 0, &deepest, 0) &&
         deepest <= LL_LINE_MAX_DEPTH;
}

ll_status ll_ledger_chain_hash(ll_sha256 *reused, const char *prev,
                               const char *a, size_t alen, const char *b,
                               size_t blen, char out[LL_SHA256_HEX]) {
  ll_sha256 *h = reused ? reused : ll_sha256_new();
  if (!h)
    return LL_E_NOMEM;
  ll_status st = reused ? ll_sha256_reset(h) : LL_OK;
  if (!st)
    st = ll_sha256_update(h, prev, HASH_HEX_LEN);
  if (!st)
    st = ll_sha256_update(h, a, alen);
  if (!st)
    st = ll_sha256_update(h, b, blen);
  if (!st)
    st = ll_sha256_final(h, out);
  if (!reused)
    ll_sha256_free(h);
  return st;
}

/* seq, prev_hash, row_hash (or no key): told apart by their first two
 * bytes before any strcmp, since most keys of a row start with s, p or r. */
static inline int ledger_key(const cJSON *c) {
  const char *k = c->string;
  if (!k)
    return 1;
  if (k[0] == 's' && k[1] == 'e')
    return strcmp(k, "seq") == 0;
  if (k[0] == 'p' && k[1] == 'r')
    return strcmp(k, "prev_hash") == 0;
  if (k[0] == 'r' && k[1] == 'o')
    return strcmp(k, "row_hash") == 0;
  return 0;
}

/* A constant key: the sealed row's own keys are never freed. */
static cJSON *keyed(cJSON *item, const char *key) {
  if (item) {
    item->string = (char *)key;
    item->type |= cJSON_StringIsConst;
  }
  return item;
}

/* The line: {"seq":seq, <row's keys but seq/prev_hash/row_hash>,
 * "prev_hash":prev} is what is hashed; its final '}' then becomes
 * ',"row_hash":"<hex>"}' and '\n': byte for byte what cJSON prints once
 * row_hash is added (the key and the lowercase hex need no escaping). */
/* 1 when member e prints byte for byte as member p printed: the same key
 * (borrowed, so the same pointer) and the same string (borrowed), or the
 * same null, boolean, or number (its printing reads valuedouble alone). */
static int same_print(const cJSON *e, const cJSON *p) {
  int t = e->type & 0xFF;
  if (e->string != p->string || t != (p->type & 0xFF))
    return 0;
  switch (t) {
  case cJSON_String:
    return e->valuestring == p->valuestring;
  case cJSON_NULL:
  case cJSON_False:
  case cJSON_True:
    return 1;
  case cJSON_Number:
    return memcmp(&e->valuedouble, &p->valuedouble, sizeof(double)) == 0;
  default:
    return 0;
  }
}

ll_status ll_ledger_seal(cJSON *row, long seq, const char *prev, ll_buf *line,
                         ll_sha256 *hasher, char hash[LL_SHA256_HEX],
                         ll_error *err) {
  return ll_ledger_seal_spans(row, seq, prev, line, hasher, NULL, NULL, hash,
                              err);
}

/* The line of the sealed row, into line; *stale says whether row holds
 * its own seq, prev_hash or row_hash (left out of the line). */
static ll_status print_line(cJSON *row, long seq, const char *prev,
                            ll_buf *line, ll_sha256 *hasher,
                            ll_seal_spans *record, const ll_seal_spans *reuse,
                            char hash[LL_SHA256_HEX], int *stale,
                            ll_error *err) {
  int deepest = 1;
  *stale = 0;
  cJSON num = {.type = cJSON_Number, .valuedouble = (double)seq};
  size_t k = 0; /* where the next shared member is looked for in reuse */
  line->n = 0;
  line->oom = 0;
  if (record) {
    record->n = 0;
    record->line = line;
  }
  put(line, "{\"seq\":", 7);
  put_number(line, &num, 0);
  for (cJSON *c = row->child; c; c = c->next) {
    if (ledger_key(c)) {
      /* not printed, but refused like any member that cannot be */
      if (!ll_line_plain(c))
        return ll_fail(err, LL_E_USAGE,
                       "evidence row holds a raw or invalid item");
      *stale = 1;
      continue;
    }
    size_t from = line->n, j = k;
    while (reuse && j < reuse->n && reuse->item[j]->string != c->string)
      j++;
    if (reuse && j < reuse->n && same_print(c, reuse->item[j])) {
      put(line, reuse->line->p + reuse->from[j], reuse->to[j] - reuse->from[j]);
      k = j + 1;
      continue;
    }
    if (reuse && j < reuse->n)
      k = j + 1;
    put(line, ",", 1);
    ll_json_put_string(line, c->string);
    put(line, ":", 1);
    if (!put_value(line, c, 1, &deepest, 1))
      return ll_fail(err, LL_E_USAGE,
                     "evidence row holds a raw or invalid item");
    if (record && record->n < LL_SEAL_SPANS && !line->oom) {
      record->item[record->n] = c;
      record->from[record->n] = from;
      record->to[record->n++] = line->n;
    }
  }
  put(line, ",\"prev_hash\":", 13);
  ll_json_put_string(line, prev);
  put(line, "}", 1);
  if (line->oom)
    return ll_fail(err, LL_E_NOMEM, "out of memory printing an evidence row");
  ll_status st =
      ll_ledger_chain_hash(hasher, prev, line->p, line->n, "", 0, hash);
  if (st != LL_OK)
    return ll_fail(err, st, "could not hash the evidence row");
  line->n--; /* the final '}' */
  put(line, ROW_HASH_KEY, ROW_HASH_KEY_LEN);
  put(line, hash, HASH_HEX_LEN);
  put(line, "\"}", 2);
  if (line->oom)
    return ll_fail(err, LL_E_NOMEM, "out of memory printing an evidence row");
  if (line->n > LL_LEDGER_MAX_LINE)
    return ll_fail(err, LL_E_TOO_LARGE,
                   "evidence row of %zu bytes is over the %u byte line limit",
                   line->n, LL_LEDGER_MAX_LINE);
  if (deepest > LL_LINE_MAX_DEPTH)
    return ll_fail(err, LL_E_USAGE,
                   "evidence row does not read back as JSON "
                   "(nested too deeply?)");
  put(line, "\n", 1);
  return line->oom ? ll_fail(err, LL_E_NOMEM,
                             "out of memory printing an evidence row")
                   : LL_OK;
}

ll_status ll_ledger_print_spans(cJSON *row, long seq, const char *prev,
                                ll_buf *line, ll_sha256 *hasher,
                                ll_seal_spans *record, char hash[LL_SHA256_HEX],
                                ll_error *err) {
  int stale;
  return print_line(row, seq, prev, line, hasher, record, NULL, hash, &stale,
                    err);
}

ll_status ll_ledger_seal_spans(cJSON *row, long seq, const char *prev,
                               ll_buf *line, ll_sha256 *hasher,
                               ll_seal_spans *record,
                               const ll_seal_spans *reuse,
                               char hash[LL_SHA256_HEX], ll_error *err) {
  int stale;
  ll_status st = print_line(row, seq, prev, line, hasher, record, reuse, hash,
                            &stale, err);
  if (st != LL_OK)
    return st;
  /* The row becomes what a reader parses from the line. */
  for (cJSON *c = stale ? row->child : NULL, *next; c; c = next) {
    next = c->next;
    if (ledger_key(c))
      cJSON_Delete(cJSON_DetachItemViaPointer(row, c));
  }
  cJSON *s = keyed(cJSON_CreateNumber((double)seq), "seq");
  cJSON *ph = keyed(cJSON_CreateString(prev), "prev_hash");
  char hex[LL_SHA256_HEX];
  memcpy(hex, hash, sizeof hex);
  cJSON *rh = keyed(cJSON_CreateString(hex), "row_hash");
  if (!s || !ph || !rh) {
    cJSON_Delete(s);
    cJSON_Delete(ph);
    cJSON_Delete(rh);
    return ll_fail(err, LL_E_NOMEM, "out of memory building an evidence row");
  }
  if (row->child)
    cJSON_InsertItemInArray(row, 0, s);
  else
    cJSON_AddItemToArray(row, s);
  cJSON_AddItemToArray(row, ph);
  cJSON_AddItemToArray(row, rh);
  return LL_OK;
}
