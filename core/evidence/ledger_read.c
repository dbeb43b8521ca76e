/* Reading a ledger file and checking its chain, line by line: the half of
 * the ledger that verify, recovery and the fuzzer share. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "ledger.h"
#include "ledger_impl.h"

static int is_hex_lower(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return 0;
  return 1;
}

/* ---- reading --------------------------------------------------------- */

/* Two equal keys in one object: readers disagree on which one counts. */
static int has_duplicate_keys(const cJSON *o) {
  for (const cJSON *a = o ? o->child : NULL; a; a = a->next) {
    if (a->string)
      for (const cJSON *b = a->next; b; b = b->next)
        if (b->string && strcmp(a->string, b->string) == 0)
          return 1;
    if ((cJSON_IsObject(a) || cJSON_IsArray(a)) && has_duplicate_keys(a))
      return 1;
  }
  return 0;
}

const char *ll_ledger_check_line(const char *buf, size_t len, long n,
                                 const char *prev, cJSON **out_row,
                                 char hash[LL_SHA256_HEX], int *nomem) {
  const char *end = NULL, *reason = NULL;
  unsigned long mark = ll_alloc_failures();
  cJSON *row = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
  if (!cJSON_IsObject(row) || end != buf + len) {
    reason = "not JSON";
    goto done;
  }
  /* Rows are written in cJSON's compact form; anything else (a duplicate
   * key that readers would resolve differently, added spaces) is an edit. */
  char *canon = cJSON_PrintUnformatted(row);
  int same = canon && strlen(canon) == len && memcmp(canon, buf, len) == 0;
  cJSON_free(canon);
  if (!same) {
    reason = "not in the canonical form the ledger writes (edited?)";
    goto done;
  }
  if (has_duplicate_keys(row)) {
    reason = "a key appears twice in one object";
    goto done;
  }
  const cJSON *seq = cJSON_GetObjectItemCaseSensitive(row, "seq");
  if (!cJSON_IsNumber(seq) || seq->valuedouble != (double)n) {
    reason = "seq out of order";
    goto done;
  }
  const cJSON *ph = cJSON_GetObjectItemCaseSensitive(row, "prev_hash");
  if (!cJSON_IsString(ph) || strcmp(ph->valuestring, prev) != 0) {
    reason = "prev_hash mismatch";
    goto done;
  }
  /* The last ',"row_hash":"' is the real one: inside a printed string a
   * quote is always escaped, so the sequence cannot occur there. */
  size_t pos = SIZE_MAX;
  for (size_t i = len >= ROW_HASH_KEY_LEN ? len - ROW_HASH_KEY_LEN + 1 : 0;
       i-- > 0;)
    if (memcmp(buf + i, ROW_HASH_KEY, ROW_HASH_KEY_LEN) == 0) {
      pos = i;
      break;
    }
  const cJSON *last = row->child;
  while (last && last->next)
    last = last->next;
  if (pos == SIZE_MAX || len != pos + ROW_HASH_KEY_LEN + HASH_HEX_LEN + 2 ||
      memcmp(buf + len - 2, "\"}", 2) != 0 ||
      !is_hex_lower(buf + pos + ROW_HASH_KEY_LEN, HASH_HEX_LEN) || !last ||
      !last->string || strcmp(last->string, "row_hash") != 0) {
    reason = "row_hash missing";
    goto done;
  }
  ll_status hs = ll_ledger_chain_hash(NULL, prev, buf, pos, "}", 1, hash);
  if (hs != LL_OK) {
    reason = "could not hash";
    *nomem = hs == LL_E_NOMEM;
    goto done;
  }
  if (memcmp(hash, buf + pos + ROW_HASH_KEY_LEN, HASH_HEX_LEN) != 0)
    reason = "row_hash mismatch";
done:
  if (ll_alloc_failed_since(mark)) {
    reason = "out of memory";
    *nomem = 1;
  }
  if (reason)
    cJSON_Delete(row);
  else
    *out_row = row;
  return reason;
}

ll_status ll_ledger_read_file(const char *path, cJSON **out_rows, long *bad_seq,
                              ll_error *err) {
  if (out_rows)
    *out_rows = NULL;
  if (bad_seq)
    *bad_seq = 0;
  int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
  if (fd < 0)
    return ll_fail(err, LL_E_IO, "cannot open ledger %s: %s",
                   path ? path : "(null)", strerror(errno));
  return ll_ledger_read_fd(fd, path, out_rows, bad_seq, err);
}

/* The chain check of a ledger's lines read from f, which it closes. */
static ll_status read_stream(FILE *f, const char *path, cJSON **out_rows,
                             long *bad_seq, ll_error *err) {
  ll_status st = LL_OK;
  char prev[LL_SHA256_HEX] = LL_GENESIS_HASH, hash[LL_SHA256_HEX];
  char *buf = NULL;
  cJSON *rows = NULL;
  long n = 0;
  if (!(buf = malloc(LL_LEDGER_MAX_LINE + 1)) ||
      !(rows = cJSON_CreateArray())) {
    st = ll_fail(err, LL_E_NOMEM, "out of memory reading ledger %s", path);
    goto cleanup;
  }
  for (;;) {
    size_t len = 0;
    int c = EOF, too_long = 0;
    while ((c = getc(f)) != EOF && c != '\n') {
      if (len < LL_LEDGER_MAX_LINE)
        buf[len++] = (char)c;
      else
        too_long = 1;
    }
    if (ferror(f)) {
      st = ll_fail(err, LL_E_IO, "cannot read ledger %s: %s", path,
                   strerror(errno));
      goto cleanup;
    }
    if (c == EOF && len == 0 && !too_long)
      break;
    n++;
    const char *reason = NULL;
    cJSON *row = NULL;
    int nomem = 0;
    if (c == EOF)
      reason = "truncated last line";
    else if (too_long)
      reason = "line too long";
    else
      reason = ll_ledger_check_line(buf, len, n, prev, &row, hash, &nomem);
    if (nomem) {
      st = ll_fail(err, LL_E_NOMEM,
                   "out of memory reading ledger %s at row %ld", path, n);
      goto cleanup;
    }
    if (reason) {
      if (bad_seq)
        *bad_seq = n;
      st = ll_fail(err, LL_E_TAMPER, "chain broken at row %ld: %s", n, reason);
      goto cleanup;
    }
    cJSON_AddItemToArray(rows, row);
    memcpy(prev, hash, sizeof prev);
  }
cleanup:
  if (out_rows)
    *out_rows = rows;
  else
    cJSON_Delete(rows);
  free(buf);
  fclose(f);
  return st;
}

ll_status ll_ledger_read_fd(int fd, const char *path, cJSON **out_rows,
                            long *bad_seq, ll_error *err) {
  if (out_rows)
    *out_rows = NULL;
  if (bad_seq)
    *bad_seq = 0;
  FILE *f = fdopen(fd, "r");
  if (!f) {
    close(fd);
    return ll_fail(err, LL_E_IO, "cannot read ledger %s: %s", path,
                   strerror(errno));
  }
  return read_stream(f, path, out_rows, bad_seq, err);
}

ll_status ll_ledger_read_mem(const char *p, size_t n, const char *path,
                             cJSON **out_rows, long *bad_seq, ll_error *err) {
  if (out_rows)
    *out_rows = NULL;
  if (bad_seq)
    *bad_seq = 0;
  if (n == 0) { /* fmemopen may refuse a size of 0: no line, no row */
    if (out_rows && !(*out_rows = cJSON_CreateArray()))
      return ll_fail(err, LL_E_NOMEM, "out of memory reading ledger %s", path);
    return LL_OK;
  }
  FILE *f = fmemopen((void *)p, n, "r");
  if (!f)
    return errno == ENOMEM ? ll_fail(err, LL_E_NOMEM,
                                     "out of memory reading ledger %s", path)
                           : ll_fail(err, LL_E_IO, "cannot read ledger %s: %s",
                                     path, strerror(errno));
  return read_stream(f, path, out_rows, bad_seq, err);
}
