/* The evidence ledger: write-ahead, hash-chained, fsync'd JSONL, a
 * protected copy and a sanitized export each with its own chain. */
#include "ledger.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "alloc.h"
#include "hash.h"
#include "jsonx.h"
#include "ledger_impl.h"
#include "ledger_line.h"
#include "sanitize.h"
#include "secret.h"

/* One write() per line (or per run of whole lines): after SIGKILL a line
 * is wholly there or absent, so the reader treats a final line without
 * '\n' as tampering, not as a crash to repair. (A power loss mid-write is
 * outside that promise; fsync below bounds it to the row in flight, which
 * was never acted on.) *wrote gets the bytes that reached the file, for
 * take_back. A failure's message says what failed, then the caller's
 * then: ": nothing was sent" where the lines' rows were not acted on. */
static ll_status write_some(int fd, const char *buf, size_t len, int sync,
                            const char *then, size_t *wrote, ll_error *err) {
  ssize_t n;
  *wrote = 0;
  do
    n = write(fd, buf, len);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return ll_fail(err, LL_E_DURABILITY,
                   "could not make the evidence row durable: %s%s",
                   strerror(errno), then);
  *wrote = (size_t)n;
  if ((size_t)n != len)
    return ll_fail(err, LL_E_DURABILITY,
                   "could not make the evidence row durable: short write "
                   "(%zd of %zu bytes)%s",
                   n, len, then);
  if (sync && fsync(fd) != 0)
    return ll_fail(err, LL_E_DURABILITY,
                   "could not make the evidence row durable: %s%s",
                   strerror(errno), then);
  return LL_OK;
}

static const char nothing_sent[] = ": nothing was sent";

/* Takes back the last wrote bytes of fd's file, the part of a failed
 * write that reached it, so that the file ends on a whole row and a
 * recovery can reopen it. The file is the ledger's own, locked, and only
 * appended to by this process: its size now, less what the failed write
 * added, is its size before. */
static void take_back(int fd, size_t wrote) {
  struct stat sb;
  if (wrote == 0 || fstat(fd, &sb) != 0 || sb.st_size < (off_t)wrote)
    return;
  if (ftruncate(fd, sb.st_size - (off_t)wrote) == 0)
    (void)fsync(fd);
}

/* Appends len bytes to the ledger file fd; on failure takes back what part
 * of them reached it and makes the ledger unusable. */
static ll_status append_bytes(ll_ledger *l, int fd, const char *buf, size_t len,
                              int sync, const char *then, ll_error *err) {
  size_t wrote = 0;
  ll_status st = write_some(fd, buf, len, sync, then, &wrote, err);
  if (st != LL_OK) {
    take_back(fd, wrote);
    l->broken = 1;
  }
  return st;
}

ll_status ll_ledger_write_durable(int fd, const char *buf, size_t len,
                                  ll_error *err) {
  size_t wrote;
  return write_some(fd, buf, len, 1, nothing_sent, &wrote, err);
}

ll_status ll_ledger_fsync_dirfd(int fd, const char *name, ll_error *err) {
  /* EINVAL: the file system cannot sync directories */
  if (fsync(fd) != 0 && errno != EINVAL)
    return ll_fail(err, LL_E_IO, "cannot fsync directory %s: %s", name,
                   strerror(errno));
  return LL_OK;
}

ll_status ll_ledger_fsync_dir(const char *path, ll_error *err) {
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return ll_fail(err, LL_E_IO, "cannot open directory %s: %s", path,
                   strerror(errno));
  ll_status st = ll_ledger_fsync_dirfd(fd, path, err);
  close(fd);
  return st;
}

ll_status ll_ledger_join(char *out, const char *a, const char *b,
                         ll_error *err) {
  int n = snprintf(out, PATH_MAX, "%s/%s", a, b);
  if (n < 0 || n >= PATH_MAX)
    return ll_fail(err, LL_E_USAGE, "path too long: %s/%s", a, b);
  return LL_OK;
}

/* ---- scanning -------------------------------------------------------- */

ll_status ll_ledger_scan_line(const ll_ledger *l, const char *line, size_t len,
                              int with_ids, const char *which, ll_error *err) {
  ll_scan_result r;
  ll_san_ids own;
  ll_sanitize_scan_ids(line, len, (const char *const *)l->ids,
                       with_ids ? ll_ledger_bound_ids(l, &own) : NULL,
                       (const char *const *)l->secrets, l->n_secrets, &r);
  if (!r.hits)
    return LL_OK;
  if (r.kind == LL_SCAN_ID)
    return ll_fail(err, LL_E_INTERNAL,
                   "%s refused: it would hold the lease ID of alias %s at "
                   "offset %zu",
                   which, l->aliases[r.index], r.offset);
  if (r.kind == LL_SCAN_SECRET)
    return ll_fail(err, LL_E_INTERNAL,
                   "%s refused: it would hold secret #%zu at offset %zu", which,
                   r.index + 1, r.offset);
  return ll_fail(err, LL_E_INTERNAL,
                 "%s refused: it would hold a sig= value at offset %zu", which,
                 r.offset);
}

/* ---- appending ------------------------------------------------------- */

/* A refusal (USAGE, TOO_LARGE, BAD_LEASE_ID, or INTERNAL for a secret the
 * row would leak) writes nothing and leaves the ledger usable. A failed
 * write or fsync (DURABILITY) leaves it unusable for this process; the
 * partial row is truncated away so that recovery can reopen the files. */
ll_status ll_ledger_append(ll_ledger *l, const cJSON *row, long *out_seq,
                           ll_error *err) {
  return ll_ledger_append_sync(l, row, LL_SYNC_BOTH, out_seq, err);
}

ll_status ll_ledger_append_sync(ll_ledger *l, const cJSON *row, ll_sync sync,
                                long *out_seq, ll_error *err) {
  if (out_seq)
    *out_seq = 0;
  if (!l || !cJSON_IsObject(row))
    return ll_fail(err, LL_E_USAGE, "ledger_append needs a JSON object");
  unsigned long mark = ll_alloc_failures();
  cJSON *copy = cJSON_Duplicate(row, 1);
  if (!copy)
    return ll_fail(err, LL_E_NOMEM, "out of memory building an evidence row");
  ll_status st = ll_ledger_append_row(l, copy, sync, out_seq, err);
  if (st != LL_OK && st != LL_E_NOMEM && ll_alloc_failed_since(mark))
    st = ll_fail(err, LL_E_NOMEM, "out of memory building an evidence row");
  return st;
}

/* ---- the export's waiting lines ---------------------------------------- */

/* The one refusal of a ledger made unusable by a failed write or fsync:
 * with the reason when the failure came while a request was on the wire
 * (the flush hook has no caller to tell). */
static ll_status refuse_broken(const ll_ledger *l, ll_error *err) {
  if (l->tampered)
    return ll_fail(err, LL_E_TAMPER,
                   "the ledger is unusable: %s; nothing more is appended",
                   l->broken_why);
  if (l->broken_why[0])
    return ll_fail(err, LL_E_DURABILITY,
                   "the ledger is unusable: its export could not be written "
                   "while a request was on the wire (%s); nothing more is sent",
                   l->broken_why);
  return ll_fail(err, LL_E_DURABILITY,
                 "the ledger is unusable after an earlier durability failure: "
                 "nothing was sent");
}

/* Writes the export lines waiting (with sync, fsync'd) in one write(). On
 * failure the part that reached the file is taken back and the ledger is
 * unusable: those rows are in the protected ledger, and a recovery
 * re-derives their export lines from it. The rows of lines that waited
 * were acted on, so the failure's reason says only what failed (then is
 * the new row's, which was not). */
static ll_status flush_pending(ll_ledger *l, int sync, const char *then,
                               ll_error *err) {
  ll_buf *q = &l->exp_pend;
  if (q->n == 0)
    return LL_OK;
  ll_status st = append_bytes(l, l->fd_exp, q->p, q->n, sync, then, err);
  q->n = 0;
  q->p[0] = '\0';
  return st;
}

/* The export line e of a row whose protected line is written: it waits
 * when the row is appended with LL_SYNC_DEFER; otherwise it is written
 * after what waits, in the same write(). A line that finds no room to
 * wait is written alone, after the others. */
static ll_status put_export(ll_ledger *l, const ll_buf *e, ll_sync sync,
                            ll_error *err) {
  ll_buf *q = &l->exp_pend;
  int both = sync == LL_SYNC_BOTH;
  if (ll_buf_reserve(q, e->n)) {
    memcpy(q->p + q->n, e->p, e->n);
    q->n += e->n;
    q->p[q->n] = '\0';
    return sync == LL_SYNC_DEFER ? LL_OK
                                 : flush_pending(l, both, nothing_sent, err);
  }
  q->oom = 0; /* what waits is intact: it goes first, then the line */
  ll_status st = flush_pending(l, 0, nothing_sent, err);
  return st == LL_OK
             ? append_bytes(l, l->fd_exp, e->p, e->n, both, nothing_sent, err)
             : st;
}

ll_status ll_ledger_flush_export(ll_ledger *l, ll_error *err) {
  if (!l || l->exp_pend.n == 0)
    return LL_OK;
  if (l->broken)
    return refuse_broken(l, err);
  ll_error e = {0};
  ll_status st = flush_pending(l, 0, "", &e);
  if (st != LL_OK) {
    ll_strlcpy(l->broken_why, e.message, sizeof l->broken_why);
    if (err)
      *err = e;
  }
  return st;
}

int ll_ledger_flush_hook(void *ledger) {
  /* the reason is the next append's to report */
  return ll_ledger_flush_export(ledger, NULL) == LL_OK ? 0 : -1;
}

/* ---- appending (the row itself) -------------------------------------- */

/* Row (appended, its export line of len bytes hashed to hash) becomes the
 * last row, the caller's to take; kept among the export rows, as they were
 * before any was asked for, once a reader has asked (ledger_back.c). */
static void settle_last(ll_ledger *l, cJSON *row, size_t len,
                        const char hash[LL_SHA256_HEX]) {
  cJSON_Delete(l->last);
  if (!l->keep) {
    l->last = row; /* the caller's to take */
    return;
  }
  /* kept as before a reader asked: the caller gets a reference */
  cJSON_AddItemToArray(l->export_rows, row);
  l->exp_parsed++;
  l->exp_off += len;
  memcpy(l->exp_prev, hash, sizeof l->exp_prev);
  l->last = cJSON_CreateObjectReference(row->child);
}

/* The row is printed once per file: the protected line from the row
 * itself, sealed in place; the export line from the same tree, sanitized
 * in place once the protected line is printed. The hash, the scan and the
 * file read those lines; the sealed export tree, which holds what a
 * reader parses from the export line, is the caller's to take
 * (ll_ledger_take_last), and kept only once a reader has asked for the
 * rows (ledger_back.c); the protected form of a row appended by this
 * process is in the file only. */
ll_status ll_ledger_append_row(ll_ledger *l, cJSON *row, ll_sync sync,
                               long *out_seq, ll_error *err) {
  cJSON *dead = NULL; /* the protected members the export replaced */
  ll_status st;
  char hp[LL_SHA256_HEX], he[LL_SHA256_HEX];
  unsigned long mark = ll_alloc_failures();
  if (out_seq)
    *out_seq = 0;
  if (!l || !cJSON_IsObject(row)) {
    st = ll_fail(err, LL_E_USAGE, "ledger_append needs a JSON object");
    goto cleanup;
  }
  if ((int)sync < (int)LL_SYNC_BOTH || (int)sync > (int)LL_SYNC_DEFER) {
    /* a value that names none of the four is no default to guess at */
    st = ll_fail(err, LL_E_USAGE, "ledger_append: unknown sync mode %d",
                 (int)sync);
    goto cleanup;
  }
  if (l->broken) {
    st = refuse_broken(l, err);
    goto cleanup;
  }
  /* A row whose printing is not plain JSON (raw text could hold a newline
   * and split the line) is refused by the printer; a lease_bind row is
   * checked before it binds anything. */
  int binds = ll_ledger_is_lease_bind(row);
  if (binds && !ll_line_plain(row)) {
    st = ll_fail(err, LL_E_USAGE, "evidence row holds a raw or invalid item");
    goto cleanup;
  }
  if (binds && (st = ll_ledger_bind_from_row(l, row, err)))
    goto cleanup;
  long seq = l->count + 1;
  if ((st = ll_ledger_print_spans(row, seq, l->prev_prot, &l->line_prot,
                                  l->hasher, &l->spans, hp, err)))
    goto cleanup;
  /* The protected line is printed (the tree is not sealed with it): the
   * tree becomes the export row. The members it drops or replaces stay
   * (on dead) until the export line is printed, since the spans of the
   * protected line point at them. */
  ll_san_ids own;
  if (!ll_sanitize_row_in_place_ids(row, (const char *const *)l->ids,
                                    (const char *const *)l->aliases,
                                    ll_ledger_bound_ids(l, &own), &dead)) {
    st = ll_fail(err, LL_E_NOMEM, "out of memory sanitizing a row");
    goto cleanup;
  }
  /* the export line copies the protected line's bytes of every member
   * the two forms share (the same node, or the same key and value), and
   * prints the rest */
  if ((st = ll_ledger_seal_spans(row, seq, l->prev_exp, &l->line_exp, l->hasher,
                                 NULL, &l->spans, he, err)))
    goto cleanup;
  const ll_buf *p = &l->line_prot, *e = &l->line_exp;
  /* Protected rows may hold lease IDs but never tokens or SAS signatures
   * (invariant 9); export rows hold neither. */
  if ((st = ll_ledger_scan_line(l, p->p, p->n, 0, "protected row", err)) ||
      (st = ll_ledger_scan_line(l, e->p, e->n, 1, "export row", err)))
    goto cleanup;
  /* Not one byte of a row built across a failed allocation reaches a file
   * (a cJSON call that cannot say so may have dropped a field). */
  if (ll_alloc_failed_since(mark)) {
    st = ll_fail(err, LL_E_NOMEM, "out of memory building an evidence row");
    goto cleanup;
  }
  int sync_prot = sync == LL_SYNC_BOTH || sync == LL_SYNC_PROTECTED;
  if ((st = append_bytes(l, l->fd_prot, p->p, p->n, sync_prot, nothing_sent,
                         err)))
    goto cleanup;
  if ((st = put_export(l, e, sync, err))) {
    /* The row was never acted on (nothing was sent): its protected line
     * goes too, and both files end on a whole row. */
    take_back(l->fd_prot, p->n);
    l->broken = 1;
    goto cleanup;
  }
  settle_last(l, row, e->n, he);
  row = NULL;
  memcpy(l->prev_prot, hp, sizeof l->prev_prot);
  memcpy(l->prev_exp, he, sizeof l->prev_exp);
  l->count = seq;
  l->bytes += p->n;
  if (out_seq)
    *out_seq = seq;
cleanup:
  if (st != LL_OK && st != LL_E_NOMEM && ll_alloc_failed_since(mark))
    st = ll_fail(err, LL_E_NOMEM, "out of memory building an evidence row");
  cJSON_Delete(dead);
  cJSON_Delete(row);
  return st;
}

const cJSON *ll_ledger_rows(const ll_ledger *l) {
  return l ? l->rows : NULL;
}

long ll_ledger_count(const ll_ledger *l) {
  return l ? l->count : 0;
}

size_t ll_ledger_bytes(const ll_ledger *l) {
  return l ? l->bytes : 0;
}

const char *ll_ledger_dir(const ll_ledger *l) {
  return l ? l->dir : NULL;
}

ll_status ll_ledger_write_json(ll_ledger *l, const char *name,
                               const cJSON *value, ll_error *err) {
  char path[PATH_MAX], tmp[NAME_MAX + 1];
  char *text = NULL;
  ll_status st = LL_OK;
  int fd = -1, made = 0;
  if (!l || !name || !*name || !value || strchr(name, '/') ||
      strstr(name, "..") || strcmp(name, ".") == 0)
    return ll_fail(err, LL_E_USAGE, "write_json needs a plain file name");
  if ((st = ll_ledger_join(path, l->dir, name, err)))
    return st;
  if (snprintf(tmp, sizeof tmp, ".%s.tmp", name) >= (int)sizeof tmp)
    return ll_fail(err, LL_E_USAGE, "file name too long: %s", name);
  if (!(text = cJSON_Print(value)))
    return ll_fail(err, LL_E_NOMEM, "out of memory printing %s", name);
  size_t len = strlen(text);
  /* These files sit beside the export: the same secret rules apply. */
  if ((st = ll_ledger_scan_line(l, text, len, 1, name, err)))
    goto cleanup;
  /* Relative to the directory the ledger checked and holds open: the name
   * is never resolved again. A temporary a crash left behind is removed
   * (unlinkat removes a link, never its target); O_EXCL | O_NOFOLLOW then
   * makes a new file or fails, so nothing is written through a link. */
  if (unlinkat(l->dirfd, tmp, 0) != 0 && errno != ENOENT) {
    st = ll_fail(err, LL_E_IO, "cannot remove the stale %s/%s: %s", l->dir, tmp,
                 strerror(errno));
    goto cleanup;
  }
  fd = openat(l->dirfd, tmp,
              O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    st = ll_fail(err, LL_E_IO, "cannot create %s/%s: %s", l->dir, tmp,
                 strerror(errno));
    goto cleanup;
  }
  made = 1;
  text[len] = '\n'; /* replaces the NUL, which is not written */
  for (size_t off = 0; off < len + 1;) {
    ssize_t n = write(fd, text + off, len + 1 - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      st = ll_fail(err, LL_E_IO, "cannot write %s/%s: %s", l->dir, tmp,
                   n < 0 ? strerror(errno) : "no progress");
      goto cleanup;
    }
    off += (size_t)n;
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    fd = -1;
    st = ll_fail(err, LL_E_IO, "cannot fsync %s/%s: %s", l->dir, tmp,
                 strerror(errno));
    goto cleanup;
  }
  fd = -1;
  /* rename replaces the name itself: a link planted there is replaced,
   * and what it pointed at is never opened. */
  if (renameat(l->dirfd, tmp, l->dirfd, name) != 0) {
    st = ll_fail(err, LL_E_IO, "cannot rename %s/%s to %s: %s", l->dir, tmp,
                 path, strerror(errno));
    goto cleanup;
  }
  made = 0;
  st = ll_ledger_fsync_dirfd(l->dirfd, l->dir, err);
cleanup:
  if (fd >= 0)
    close(fd);
  if (made)
    (void)unlinkat(l->dirfd, tmp, 0);
  cJSON_free(text);
  return st;
}
