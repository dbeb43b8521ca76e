/* ll_chain_append: the ledger's seal and durable write over a file of its
 * own. The chain code is the ledger's (ledger_line.c, ledger_read.c), not
 * a copy of it. */
#include "chain_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonx.h"
#include "ledger_impl.h"

ll_status ll_chain_append(int dirfd, const char *name, cJSON *row,
                          long *out_seq, ll_error *err) {
  ll_status st = LL_OK;
  cJSON *rows = NULL;
  ll_buf line = {0};
  long bad = 0;
  char prev[LL_SHA256_HEX] = LL_GENESIS_HASH, hash[LL_SHA256_HEX];
  int fd = openat(dirfd, name,
                  O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return ll_fail(err, LL_E_IO, "cannot open %s: %s", name, strerror(errno));
  int rfd = dup(fd);
  if (rfd < 0) {
    st = ll_fail(err, LL_E_IO, "cannot read %s: %s", name, strerror(errno));
    goto cleanup;
  }
  if (lseek(rfd, 0, SEEK_SET) < 0) {
    close(rfd);
    st = ll_fail(err, LL_E_IO, "cannot read %s: %s", name, strerror(errno));
    goto cleanup;
  }
  st = ll_ledger_read_fd(rfd, name, &rows, &bad, err);
  if (st == LL_E_TAMPER) {
    char why[sizeof err->message];
    ll_strlcpy(why, err->message, sizeof why);
    st = ll_fail(err, LL_E_TAMPER, "%s: %s; nothing appended", name, why);
  }
  if (st != LL_OK)
    goto cleanup;
  long n = cJSON_GetArraySize(rows);
  if (n > 0) {
    const char *last = ll_json_str(ll_json_last(rows), "row_hash");
    if (!last || strlen(last) != LL_SHA256_HEX - 1) {
      st = ll_fail(err, LL_E_TAMPER, "%s: the last row has no row_hash", name);
      goto cleanup;
    }
    memcpy(prev, last, sizeof prev);
  }
  st = ll_ledger_seal(row, n + 1, prev, &line, NULL, hash, err);
  if (st == LL_OK)
    st = ll_ledger_write_durable(fd, line.p, line.n, err);
  if (st == LL_OK)
    st = ll_ledger_fsync_dirfd(dirfd, name, err);
  if (st == LL_OK && out_seq)
    *out_seq = n + 1;
cleanup:
  cJSON_Delete(rows);
  free(line.p);
  close(fd);
  return st;
}
