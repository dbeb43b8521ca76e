/* The export rows, kept only once a reader asks for them. Until then a
 * run keeps none of the rows it appends: each is printed, hashed, written,
 * and its tree handed once to the caller (ll_ledger_take_last), so a run
 * of reads does not grow. The first ask (ll_ledger_export_rows) reads back
 * every row appended so far from the export stream (the file, then the
 * lines waiting to be written), each line checked against the chain this
 * handle wrote: what it gets is what was written, byte for byte, or
 * nothing. From then on each appended row is kept as it is, and the array
 * a reader holds stays current, as a borrowed array always has. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "ledger.h"
#include "ledger_impl.h"

/* One line of the stream (without its '\n'), checked as the row after
 * the last one read back, and kept. */
static ll_status take_line(ll_ledger *l, const char *p, size_t len,
                           ll_error *err) {
  char hash[LL_SHA256_HEX];
  cJSON *row = NULL;
  int nomem = 0;
  long n = l->exp_parsed + 1;
  const char *why =
      ll_ledger_check_line(p, len, n, l->exp_prev, &row, hash, &nomem);
  if (nomem)
    return ll_fail(err, LL_E_NOMEM, "out of memory reading back export row %ld",
                   n);
  if (why)
    return ll_fail(err, LL_E_TAMPER,
                   "the export ledger no longer holds what this run wrote: "
                   "row %ld: %s",
                   n, why);
  if (!cJSON_AddItemToArray(l->export_rows, row)) {
    cJSON_Delete(row);
    return ll_fail(err, LL_E_NOMEM, "out of memory reading back export row %ld",
                   n);
  }
  l->exp_parsed = n;
  memcpy(l->exp_prev, hash, sizeof l->exp_prev);
  return LL_OK;
}

/* Every whole line of p[0..n), in order; *used gets the bytes they took. */
static ll_status take_lines(ll_ledger *l, const char *p, size_t n, size_t *used,
                            ll_error *err) {
  size_t at = 0;
  *used = 0;
  for (;;) {
    const char *nl = memchr(p + at, '\n', n - at);
    if (!nl)
      return LL_OK;
    size_t len = (size_t)(nl - (p + at));
    ll_status st = take_line(l, p + at, len, err);
    if (st != LL_OK)
      return st;
    at += len + 1;
    *used = at;
  }
}

/* The lines of the export file's bytes [from, to), read with pread in a
 * buffer that grows to the longest line the ledger writes. */
static ll_status take_file(ll_ledger *l, size_t from, size_t to,
                           ll_error *err) {
  size_t cap = to - from < 65536 ? to - from : 65536, have = 0, pos = from;
  char *buf = ll_malloc(cap ? cap : 1);
  ll_status st = LL_OK;
  if (!buf)
    return ll_fail(err, LL_E_NOMEM, "out of memory reading back the export");
  while (pos < to || have > 0) {
    if (pos < to && have < cap) {
      size_t want = cap - have < to - pos ? cap - have : to - pos;
      ssize_t got = pread(l->fd_exp, buf + have, want, (off_t)pos);
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0) {
        st = got < 0 ? ll_fail(err, LL_E_IO,
                               "cannot read back the export ledger: %s",
                               strerror(errno))
                     : ll_fail(err, LL_E_TAMPER,
                               "the export ledger shrank under the run");
        goto cleanup;
      }
      have += (size_t)got;
      pos += (size_t)got;
    }
    size_t used = 0;
    if ((st = take_lines(l, buf, have, &used, err)) != LL_OK)
      goto cleanup;
    if (used > 0) {
      memmove(buf, buf + used, have - used);
      have -= used;
      continue;
    }
    if (pos >= to) { /* bytes left that end in no newline */
      st = ll_fail(err, LL_E_TAMPER,
                   "the export ledger ends in part of a line (row %ld)",
                   l->exp_parsed + 1);
      goto cleanup;
    }
    if (have == cap) { /* a line longer than the buffer: grow it */
      if (cap > LL_LEDGER_MAX_LINE) {
        st = ll_fail(err, LL_E_TAMPER,
                     "the export ledger holds a line too long (row %ld)",
                     l->exp_parsed + 1);
        goto cleanup;
      }
      size_t ncap =
          cap * 2 > LL_LEDGER_MAX_LINE + 1 ? LL_LEDGER_MAX_LINE + 1 : cap * 2;
      char *nb = ll_realloc(buf, ncap);
      if (!nb) {
        st = ll_fail(err, LL_E_NOMEM, "out of memory reading back the export");
        goto cleanup;
      }
      buf = nb;
      cap = ncap;
    }
  }
cleanup:
  ll_free(buf);
  return st;
}

static ll_status catch_up(ll_ledger *l, ll_error *err);

/* A file that does not read back as written makes the ledger unusable:
 * nothing more is appended to a bundle that no longer verifies, and the
 * next append says why. */
ll_status ll_ledger_catch_up(ll_ledger *l, ll_error *err) {
  ll_error e = {0};
  long n0 = l->exp_parsed;
  char prev0[LL_SHA256_HEX];
  memcpy(prev0, l->exp_prev, sizeof prev0);
  ll_status st = catch_up(l, &e);
  if (st == LL_OK)
    return LL_OK;
  /* All or nothing: the rows read back before the failure go, so a later
   * ask starts from the same row (out of memory is never taken for an
   * edit the next time). */
  while (l->exp_parsed > n0) {
    cJSON_DeleteItemFromArray(l->export_rows, (int)(l->exp_parsed - 1));
    l->exp_parsed--;
  }
  memcpy(l->exp_prev, prev0, sizeof l->exp_prev);
  /* out of memory here (OpenSSL's context included, which the counter
   * does not see) is the run's out of memory: a reader that goes on
   * without the rows must not let it end in ACCEPT */
  if (st == LL_E_NOMEM)
    ll_alloc_note_failure();
  if (st == LL_E_TAMPER || st == LL_E_IO) {
    l->broken = 1;
    l->tampered = st == LL_E_TAMPER;
    ll_strlcpy(l->broken_why, e.message, sizeof l->broken_why);
  }
  if (err)
    *err = e;
  return st;
}

static ll_status catch_up(ll_ledger *l, ll_error *err) {
  /* a ledger a failed write or an edit made unusable: its file may no
   * longer hold what the rows in memory say, so none is handed out */
  if (l->broken)
    return ll_fail(err, l->tampered ? LL_E_TAMPER : LL_E_DURABILITY,
                   "the export ledger cannot be read back: %s",
                   l->broken_why[0] ? l->broken_why : "a write failed");
  if (l->exp_parsed == l->count) {
    l->keep = 1;
    return LL_OK;
  }
  /* The stream is the file, then the lines waiting: a flush moves bytes
   * from the second to the first and leaves the stream as it was. */
  struct stat sb;
  if (fstat(l->fd_exp, &sb) != 0)
    return ll_fail(err, LL_E_IO, "cannot stat the export ledger: %s",
                   strerror(errno));
  size_t fsz = (size_t)sb.st_size, pend = l->exp_pend.n;
  if (l->exp_off > fsz + pend)
    return ll_fail(err, LL_E_TAMPER, "the export ledger shrank under the run");
  ll_status st = LL_OK;
  size_t used = 0, skip = 0;
  if (l->exp_off < fsz)
    st = take_file(l, l->exp_off, fsz, err);
  else
    skip = l->exp_off - fsz; /* waiting lines already read back */
  if (st == LL_OK && pend > skip)
    st = take_lines(l, l->exp_pend.p + skip, pend - skip, &used, err);
  if (st != LL_OK)
    return st;
  if (used != pend - skip || l->exp_parsed != l->count ||
      strcmp(l->exp_prev, l->prev_exp) != 0)
    return ll_fail(err, LL_E_TAMPER,
                   "the export ledger holds %ld rows that this run did not "
                   "write as they are (it wrote %ld)",
                   l->exp_parsed, l->count);
  l->exp_off = fsz + pend;
  l->keep = 1;
  return LL_OK;
}

ll_status ll_ledger_read_back(const ll_ledger *l, const cJSON **out,
                              ll_error *err) {
  /* reading back fills the handle's cache: the one change a reader
   * makes, never a byte of a file */
  ll_ledger *w = (ll_ledger *)l;
  *out = NULL;
  if (!w)
    return ll_fail(err, LL_E_USAGE, "no ledger to read back");
  ll_status st = ll_ledger_catch_up(w, err);
  if (st == LL_OK)
    *out = w->export_rows;
  return st;
}

const cJSON *ll_ledger_export_rows(const ll_ledger *l) {
  const cJSON *rows = NULL;
  return ll_ledger_read_back(l, &rows, NULL) == LL_OK ? rows : NULL;
}

int ll_ledger_keeps_rows(const ll_ledger *l) {
  return l && l->keep;
}

cJSON *ll_ledger_take_last(ll_ledger *l) {
  cJSON *row = l ? l->last : NULL;
  if (l)
    l->last = NULL;
  return row;
}
