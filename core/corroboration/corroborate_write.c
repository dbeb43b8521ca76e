/* Writing a corroboration beside the run (corroborate.h): its rows
 * appended to corroboration.jsonl through the ledger's own chain code
 * (core/evidence/chain_file.c), corroboration.json replaced atomically,
 * and the principal fingerprint of the shared contract. */
#include "corroborate_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chain_file.h"
#include "hash.h"
#include "jwt.h"
#include "sanitize.h"

ll_status ll_corr_fingerprint(const char *tid, const char *oid, char out[17]) {
  /* the one implementation of the contract (core/transport/jwt.c) */
  return ll_principal_fingerprint(tid, oid, out);
}

static ll_status write_json(int dirfd, const char *name, const cJSON *v,
                            ll_error *err) {
  char tmp[128];
  snprintf(tmp, sizeof tmp, ".%s.tmp", name);
  char *text = cJSON_Print(v);
  if (!text)
    return ll_fail(err, LL_E_NOMEM, "out of memory printing %s", name);
  ll_status st = LL_OK;
  (void)unlinkat(dirfd, tmp, 0);
  int fd = openat(dirfd, tmp,
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    st = ll_fail(err, LL_E_IO, "cannot write %s: %s", name, strerror(errno));
    goto cleanup;
  }
  size_t len = strlen(text), off = 0;
  while (off < len) {
    ssize_t w = write(fd, text + off, len - off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      st = ll_fail(err, LL_E_IO, "cannot write %s: %s", name, strerror(errno));
      break;
    }
    off += (size_t)w;
  }
  if (st == LL_OK && (write(fd, "\n", 1) != 1 || fsync(fd) != 0))
    st = ll_fail(err, LL_E_IO, "cannot write %s: %s", name, strerror(errno));
  close(fd);
  if (st == LL_OK && renameat(dirfd, tmp, dirfd, name) != 0)
    st = ll_fail(err, LL_E_IO, "cannot rename %s: %s", name, strerror(errno));
  if (st != LL_OK)
    (void)unlinkat(dirfd, tmp, 0);
  else if (fsync(dirfd) != 0 && errno != EINVAL)
    st = ll_fail(err, LL_E_IO, "cannot fsync the evidence directory: %s",
                 strerror(errno));
cleanup:
  cJSON_free(text);
  return st;
}

/* The distinct requester object IDs of the logs, at most
 * LL_CORR_SCAN_IDS of them, borrowed. */
#define LL_CORR_SCAN_IDS 1024
static size_t distinct_oids(const ll_log_set *logs, const char **ids) {
  size_t n = 0;
  for (size_t i = 0; logs && i < logs->n && n < LL_CORR_SCAN_IDS; i++) {
    const char *o = logs->recs[i].oid;
    int seen = !o[0];
    for (size_t k = 0; k < n && !seen; k++)
      seen = strcmp(ids[k], o) == 0;
    if (!seen)
      ids[n++] = o;
  }
  return n;
}

static ll_status scan(const cJSON *result, const ll_log_set *logs,
                      ll_error *err) {
  const char **ids = calloc(LL_CORR_SCAN_IDS, sizeof *ids);
  char *text = cJSON_PrintUnformatted(result);
  ll_status st = LL_OK;
  char what[128];
  if (!ids || !text)
    st = ll_fail(err, LL_E_NOMEM, "out of memory scanning the corroboration");
  else if (ll_secret_scan(text, strlen(text), ids, distinct_oids(logs, ids),
                          NULL, 0, what, sizeof what) > 0)
    st = ll_fail(err, LL_E_INTERNAL,
                 "the corroboration would hold %s; nothing written", what);
  free(ids);
  cJSON_free(text);
  return st;
}

ll_status ll_corr_write(const char *dir, const cJSON *result,
                        const ll_log_set *logs, ll_error *err) {
  ll_status sst = scan(result, logs, err);
  if (sst != LL_OK)
    return sst;
  int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirfd < 0)
    return ll_fail(err, LL_E_USAGE, "cannot open %s: %s", dir, strerror(errno));
  ll_status st = LL_OK;
  cJSON *full = cJSON_Duplicate(result, 1);
  if (!full) {
    st = ll_fail(err, LL_E_NOMEM, "out of memory writing the corroboration");
    goto cleanup;
  }
  const cJSON *s;
  const cJSON *settled =
      cJSON_GetObjectItemCaseSensitive(result, "settlements");
  long seq = 0, first = 0;
  cJSON_ArrayForEach(s, settled) {
    cJSON *row = cJSON_Duplicate(s, 1);
    if (!row) {
      st = ll_fail(err, LL_E_NOMEM, "out of memory writing a settlement");
      goto cleanup;
    }
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(result, "run_id");
    if (cJSON_IsString(run))
      cJSON_AddStringToObject(row, "run_id", run->valuestring);
    st = ll_chain_append(dirfd, "corroboration.jsonl", row, &seq, err);
    cJSON_Delete(row);
    if (st != LL_OK)
      goto cleanup;
    if (!first)
      first = seq;
  }
  cJSON *row = cJSON_Duplicate(result, 1);
  if (!row) {
    st = ll_fail(err, LL_E_NOMEM, "out of memory writing the corroboration");
    goto cleanup;
  }
  /* the row names its settlement rows by seq rather than repeat them */
  cJSON_DeleteItemFromObjectCaseSensitive(row, "settlements");
  if (first)
    cJSON_AddNumberToObject(row, "settlement_seq_first", (double)first);
  st = ll_chain_append(dirfd, "corroboration.jsonl", row, &seq, err);
  cJSON_Delete(row);
  if (st == LL_OK) {
    cJSON_AddNumberToObject(full, "corroboration_seq", (double)seq);
    st = write_json(dirfd, "corroboration.json", full, err);
  }
cleanup:
  cJSON_Delete(full);
  close(dirfd);
  return st;
}
