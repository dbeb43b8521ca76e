/* Opening an evidence directory (fresh or for recovery) and closing it:
 * the layout, modes, and the recovery that rebuilds a missing export tail. */
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
#include "ledger.h"
#include "ledger_impl.h"
#include "sanitize.h"

/* ---- the directory ---------------------------------------------------- */

ll_status ll_ledger_mkdir_p(const char *dir, ll_error *err) {
  char path[PATH_MAX];
  if (!ll_strlcpy(path, dir, sizeof path))
    return ll_fail(err, LL_E_USAGE, "path too long: %s", dir);
  size_t len = strlen(path);
  while (len > 1 && path[len - 1] == '/')
    path[--len] = '\0';
  for (size_t i = 1; i <= len; i++) {
    if (path[i] != '/' && path[i] != '\0')
      continue;
    char saved = path[i];
    path[i] = '\0';
    if (mkdir(path, i == len ? 0700 : 0755) == 0) {
      char *slash = strrchr(path, '/');
      ll_status st;
      if (!slash)
        st = ll_ledger_fsync_dir(".", err);
      else if (slash == path)
        st = ll_ledger_fsync_dir("/", err);
      else {
        *slash = '\0';
        st = ll_ledger_fsync_dir(path, err);
        *slash = '/';
      }
      if (st)
        return st;
    } else if (errno != EEXIST) {
      return ll_fail(err, LL_E_IO, "cannot create %s: %s", path,
                     strerror(errno));
    }
    path[i] = saved;
  }
  return LL_OK;
}

static ll_status refuse_existing(const char *dir, ll_error *err) {
  return ll_fail(err, LL_E_EVIDENCE_EXISTS,
                 "evidence directory %s already holds evidence: choose a new "
                 "--evidence or open it for recovery",
                 dir);
}

/* The bundle and every folder and ledger file in it belong to this user,
 * and neither group nor others can write them: evidence someone else can
 * change is not evidence. */
static ll_status check_own(const char *what, const char *path,
                           const struct stat *sb, int want_dir, ll_error *err) {
  if (want_dir ? !S_ISDIR(sb->st_mode) : !S_ISREG(sb->st_mode))
    return ll_fail(err, LL_E_USAGE,
                   "%s %s is not a %s: not evidence a run made; choose a new "
                   "--evidence",
                   what, path, want_dir ? "directory" : "regular file");
  if (sb->st_uid != geteuid())
    return ll_fail(err, LL_E_USAGE,
                   "%s %s is owned by uid %ld, not by this user (uid %ld): "
                   "others could change the evidence; choose a new "
                   "--evidence",
                   what, path, (long)sb->st_uid, (long)geteuid());
  if (sb->st_mode & (S_IWGRP | S_IWOTH))
    return ll_fail(err, LL_E_USAGE,
                   "%s %s is writable by group or others (mode %04o): others "
                   "could change the evidence; chmod go-w it or choose a new "
                   "--evidence",
                   what, path, (unsigned)(sb->st_mode & 07777));
  return LL_OK;
}

static ll_status refuse_link(const char *path, ll_error *err) {
  return ll_fail(err, LL_E_USAGE,
                 "%s is a symbolic link: a run never makes one and never "
                 "follows one; remove it, or recover a copy of the evidence "
                 "without it",
                 path);
}

/* Opens name in directory dfd without following a link, and checks it
 * with check_own. path is dir/name, for messages. */
static ll_status open_entry(int dfd, const char *name, int flags,
                            const char *what, const char *path, int want_dir,
                            int *out, ll_error *err) {
  struct stat sb;
  int fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(sb.st_mode))
      return refuse_link(path, err);
    return ll_fail(err, LL_E_IO, "cannot open %s %s: %s", what, path,
                   strerror(e));
  }
  ll_status st = fstat(fd, &sb) != 0
                     ? ll_fail(err, LL_E_IO, "cannot stat %s %s: %s", what,
                               path, strerror(errno))
                     : check_own(what, path, &sb, want_dir, err);
  if (st != LL_OK) {
    close(fd);
    return st;
  }
  *out = fd;
  return LL_OK;
}

/* Reads the entries of directory fd: *other when one is not "." or "..",
 * and a refusal for the first symbolic link when links_refused. */
static ll_status scan_dir(int fd, const char *path, int links_refused,
                          int *other, ll_error *err) {
  int copy = dup(fd);
  DIR *d = copy >= 0 ? fdopendir(copy) : NULL;
  if (!d) {
    if (copy >= 0)
      close(copy);
    return ll_fail(err, LL_E_IO, "cannot list %s: %s", path, strerror(errno));
  }
  ll_status st = LL_OK;
  struct dirent *e;
  *other = 0;
  while (st == LL_OK && (e = readdir(d))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    *other = 1;
    struct stat sb;
    char full[PATH_MAX];
    if (links_refused &&
        fstatat(fd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(sb.st_mode) &&
        (st = ll_ledger_join(full, path, e->d_name, err)) == LL_OK)
      st = refuse_link(full, err);
  }
  closedir(d);
  return st;
}

/* Makes (create) or finds the evidence directory and keeps it open in
 * l->dirfd, once it is known to be a directory of this user, not writable
 * by group or others, not a symbolic link, and (create) empty. */
static ll_status open_dir(ll_ledger *l, int create, ll_error *err) {
  const char *dir = l->dir;
  struct stat sb;
  int other = 0;
  ll_status st;
  if (create && lstat(dir, &sb) != 0) {
    if (errno != ENOENT)
      return ll_fail(err, LL_E_IO, "cannot stat %s: %s", dir, strerror(errno));
    if ((st = ll_ledger_mkdir_p(dir, err)) != LL_OK)
      return st;
  }
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (lstat(dir, &sb) == 0 && S_ISLNK(sb.st_mode))
      return ll_fail(err, LL_E_USAGE,
                     "evidence directory %s is a symbolic link: pass the "
                     "directory itself to --evidence",
                     dir);
    if (e == ENOTDIR)
      return ll_fail(err, LL_E_IO, "evidence path %s is not a directory", dir);
    return ll_fail(err, LL_E_IO, "cannot open evidence directory %s: %s", dir,
                   strerror(e));
  }
  l->dirfd = fd;
  if (fstat(fd, &sb) != 0)
    return ll_fail(err, LL_E_IO, "cannot stat %s: %s", dir, strerror(errno));
  if ((st = check_own("evidence directory", dir, &sb, 1, err)) != LL_OK)
    return st;
  if ((st = scan_dir(fd, dir, !create, &other, err)) != LL_OK)
    return st;
  if (create && other)
    return refuse_existing(dir, err);
  return LL_OK;
}

/* mkdirat, then the new folder opened without following a link. */
static ll_status make_folder(ll_ledger *l, const char *name, mode_t mode,
                             int *out, ll_error *err) {
  char path[PATH_MAX];
  ll_status st = ll_ledger_join(path, l->dir, name, err);
  if (st != LL_OK)
    return st;
  /* mkdir without -p: a racing run that got there first is refused. */
  if (mkdirat(l->dirfd, name, mode) != 0)
    return errno == EEXIST ? refuse_existing(l->dir, err)
                           : ll_fail(err, LL_E_IO, "cannot create %s: %s", path,
                                     strerror(errno));
  if ((st = open_entry(l->dirfd, name, O_RDONLY | O_DIRECTORY,
                       "evidence folder", path, 1, out, err)) != LL_OK)
    return st;
  if (fchmod(*out, mode) != 0) /* exactly mode, whatever the umask */
    return ll_fail(err, LL_E_IO, "cannot chmod %s: %s", path, strerror(errno));
  return LL_OK;
}

/* A new, empty ledger file in folder fd (O_EXCL: never one that exists,
 * never through a link). */
static ll_status make_ledger_file(ll_ledger *l, int fd, const char *folder,
                                  mode_t mode, int access, int *out,
                                  ll_error *err) {
  char path[PATH_MAX];
  ll_status st = ll_ledger_join(path, folder, "ledger.jsonl", err);
  if (st != LL_OK)
    return st;
  *out = openat(fd, "ledger.jsonl",
                O_CREAT | O_EXCL | O_APPEND | access | O_NOFOLLOW | O_CLOEXEC,
                mode);
  if (*out < 0)
    return errno == EEXIST ? refuse_existing(l->dir, err)
                           : ll_fail(err, LL_E_IO, "cannot create %s: %s", path,
                                     strerror(errno));
  if (fchmod(*out, mode) != 0)
    return ll_fail(err, LL_E_IO, "cannot chmod %s: %s", path, strerror(errno));
  return ll_ledger_fsync_dirfd(fd, folder, err);
}

static ll_status create_layout(ll_ledger *l, ll_error *err) {
  char prot[PATH_MAX], exp[PATH_MAX];
  int pfd = -1, efd = -1;
  ll_status st;
  if ((st = open_dir(l, 1, err)) ||
      (st = ll_ledger_join(prot, l->dir, "protected", err)) ||
      (st = ll_ledger_join(exp, l->dir, "export", err)) ||
      (st = make_folder(l, "protected", 0700, &pfd, err)) ||
      (st = make_folder(l, "export", 0755, &efd, err)) ||
      (st = ll_ledger_fsync_dirfd(l->dirfd, l->dir, err)) ||
      (st = make_ledger_file(l, pfd, prot, 0600, O_WRONLY, &l->fd_prot, err)))
    goto cleanup;
  /* the export file is also read back (ledger_back.c) */
  st = make_ledger_file(l, efd, exp, 0644, O_RDWR, &l->fd_exp, err);
cleanup:
  if (pfd >= 0)
    close(pfd);
  if (efd >= 0)
    close(efd);
  return st;
}

static ll_status tamper(ll_error *err, const char *path, const char *fmt, ...)
    LL_PRINTF(3, 4);

static ll_status tamper(ll_error *err, const char *path, const char *fmt, ...) {
  char what[128];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return ll_fail(err, LL_E_TAMPER, "ledger %s: %s", path, what);
}

/* Sanitized protected row i as compact JSON, for comparing with export. */
static char *sanitized_text(const ll_ledger *l, const cJSON *row) {
  cJSON *s = ll_ledger_sanitize(l, row);
  char *t = s ? cJSON_PrintUnformatted(s) : NULL;
  cJSON_Delete(s);
  return t;
}

/* Compares export row e with the sanitized protected row p, both printed
 * compactly; 1 when equal, 0 when not, -1 when out of memory. */
static int export_matches(const ll_ledger *l, const cJSON *p, const cJSON *e) {
  cJSON *copy = cJSON_Duplicate(e, 1);
  char *want = sanitized_text(l, p), *got = NULL;
  if (copy) {
    cJSON_DeleteItemFromObjectCaseSensitive(copy, "prev_hash");
    cJSON_DeleteItemFromObjectCaseSensitive(copy, "row_hash");
    got = cJSON_PrintUnformatted(copy);
  }
  int same = !want || !got ? -1 : strcmp(want, got) == 0;
  cJSON_Delete(copy);
  cJSON_free(want);
  cJSON_free(got);
  return same;
}

/* Re-derives the export row for protected row p (seq) after a crash
 * between the two writes, and appends it durably. */
static ll_status rederive_export(ll_ledger *l, const cJSON *p, long seq,
                                 ll_error *err) {
  char hash[LL_SHA256_HEX];
  const ll_buf *b = &l->line_exp;
  cJSON *s = ll_ledger_sanitize(l, p);
  if (!s)
    return ll_fail(err, LL_E_NOMEM, "out of memory recovering the export");
  ll_status st =
      ll_ledger_seal(s, seq, l->prev_exp, &l->line_exp, l->hasher, hash, err);
  if (!st &&
      !(st = ll_ledger_scan_line(l, b->p, b->n, 1, "recovered export row",
                                 err)) &&
      !(st = ll_ledger_write_durable(l->fd_exp, b->p, b->n, err))) {
    cJSON_AddItemToArray(l->export_rows, s);
    s = NULL;
    memcpy(l->prev_exp, hash, sizeof l->prev_exp);
  }
  cJSON_Delete(s);
  return st;
}

static const char *last_hash(const cJSON *rows) {
  const cJSON *r = rows->child;
  while (r && r->next)
    r = r->next;
  return r ? cJSON_GetObjectItemCaseSensitive(r, "row_hash")->valuestring
           : LL_GENESIS_HASH;
}

/* Opens folder name of the bundle and its ledger file for appending, and
 * a second descriptor on the same file for reading (checked to be the same
 * inode): nothing is reached through a link. */
static ll_status open_ledger_file(ll_ledger *l, const char *name,
                                  mode_t folder_mode, mode_t file_mode,
                                  int access, int *out_append, int *out_read,
                                  char *path, ll_error *err) {
  char folder[PATH_MAX];
  int fd = -1, other = 0;
  struct stat a, b;
  ll_status st;
  *out_read = -1;
  if ((st = ll_ledger_join(folder, l->dir, name, err)) ||
      (st = ll_ledger_join(path, folder, "ledger.jsonl", err)) ||
      (st = open_entry(l->dirfd, name, O_RDONLY | O_DIRECTORY,
                       "evidence folder", folder, 1, &fd, err)) ||
      (st = scan_dir(fd, folder, 1, &other, err)) ||
      (st = open_entry(fd, "ledger.jsonl", access | O_APPEND, "ledger", path, 0,
                       out_append, err)) ||
      (st = open_entry(fd, "ledger.jsonl", O_RDONLY, "ledger", path, 0,
                       out_read, err)))
    goto cleanup;
  if (fstat(*out_append, &a) != 0 || fstat(*out_read, &b) != 0 ||
      a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
    st = ll_fail(err, LL_E_IO, "ledger %s changed while it was opened", path);
    goto cleanup;
  }
  /* Modes as a run makes them, whatever a copy left (protected 0700/0600). */
  if (fchmod(fd, folder_mode) != 0 || fchmod(*out_append, file_mode) != 0)
    st = ll_fail(err, LL_E_IO, "cannot restore the modes of %s: %s", folder,
                 strerror(errno));
cleanup:
  if (fd >= 0)
    close(fd);
  if (st != LL_OK && *out_read >= 0) {
    close(*out_read);
    *out_read = -1;
  }
  return st;
}

/* The recovery's files, opened and read: both chains checked. */
static ll_status load(ll_ledger *l, char *pfile, char *efile, ll_error *err) {
  int rfd[2] = {-1, -1};
  ll_error sub = {0};
  long bad = 0;
  ll_status st;
  if ((st = open_dir(l, 0, err)) ||
      (st = open_ledger_file(l, "protected", 0700, 0600, O_WRONLY, &l->fd_prot,
                             &rfd[0], pfile, err)) ||
      (st = open_ledger_file(l, "export", 0755, 0644, O_RDWR, &l->fd_exp,
                             &rfd[1], efile, err)))
    goto cleanup;
  const char *files[2] = {pfile, efile};
  cJSON **arrays[2] = {&l->rows, &l->export_rows};
  for (int k = 0; k < 2 && st == LL_OK; k++) {
    cJSON_Delete(*arrays[k]);
    st = ll_ledger_read_fd(rfd[k], files[k], arrays[k], &bad, &sub);
    rfd[k] = -1; /* closed by the reader */
    if (st == LL_E_TAMPER)
      st = tamper(err, files[k], "%s", sub.message);
    else if (st)
      st = ll_fail(err, st, "%s", sub.message);
  }
cleanup:
  for (int k = 0; k < 2; k++)
    if (rfd[k] >= 0)
      close(rfd[k]);
  return st;
}

static ll_status recover(ll_ledger *l, ll_error *err) {
  char pfile[PATH_MAX], efile[PATH_MAX];
  ll_status st = load(l, pfile, efile, err);
  if (st != LL_OK)
    return st;
  long np = cJSON_GetArraySize(l->rows),
       ne = cJSON_GetArraySize(l->export_rows);
  if (ne > np)
    return tamper(err, efile, "has more rows than the protected ledger (%ld)",
                  np);
  /* Every binding first: a row written after a direct ll_ledger_bind_alias
   * but before its lease_bind row was sanitized with it. Bindings made only
   * through ll_ledger_bind_alias do not survive a reopen. */
  const cJSON *p, *e;
  cJSON_ArrayForEach(p, l->rows) {
    if (ll_ledger_is_lease_bind(p) && (st = ll_ledger_bind_from_row(l, p, err)))
      return st;
  }
  ll_strlcpy(l->prev_prot, last_hash(l->rows), sizeof l->prev_prot);
  ll_strlcpy(l->prev_exp, last_hash(l->export_rows), sizeof l->prev_exp);
  long seq = 1;
  for (p = l->rows->child, e = l->export_rows->child; p; p = p->next, seq++) {
    if (!e) {
      if ((st = rederive_export(l, p, seq, err)))
        return st;
      continue;
    }
    int same = export_matches(l, p, e);
    if (same < 0)
      return ll_fail(err, LL_E_NOMEM, "out of memory checking %s", efile);
    if (!same)
      return tamper(err, efile, "row %ld is not the sanitized protected row",
                    seq);
    e = e->next;
  }
  l->count = np;
  /* every export row is read: the next to read back is the next appended */
  struct stat sb;
  if (fstat(l->fd_exp, &sb) != 0)
    return ll_fail(err, LL_E_IO, "cannot stat %s: %s", efile, strerror(errno));
  l->exp_parsed = np;
  l->exp_off = (size_t)sb.st_size;
  memcpy(l->exp_prev, l->prev_exp, sizeof l->exp_prev);
  l->keep = 1; /* a recovery reads its rows: they are all in memory */
  return LL_OK;
}

ll_ledger *ll_ledger_open(const char *dir, ll_ledger_mode mode, ll_error *err) {
  ll_alloc_init();
  if (!dir || !*dir) {
    ll_fail(err, LL_E_USAGE, "ledger_open needs an evidence directory");
    return NULL;
  }
  ll_ledger *l = calloc(1, sizeof *l);
  if (l) {
    l->dirfd = l->fd_prot = l->fd_exp = -1; /* before anything can fail */
    ll_san_ids_make(&l->idtab, NULL, 0);
  }
  if (!l || !(l->dir = strdup(dir)) || !(l->rows = cJSON_CreateArray()) ||
      !(l->export_rows = cJSON_CreateArray()) ||
      !(l->hasher = ll_sha256_new())) {
    ll_ledger_close(l);
    ll_fail(err, LL_E_NOMEM, "out of memory opening the ledger");
    return NULL;
  }
  memcpy(l->prev_prot, LL_GENESIS_HASH, sizeof l->prev_prot);
  memcpy(l->prev_exp, LL_GENESIS_HASH, sizeof l->prev_exp);
  memcpy(l->exp_prev, LL_GENESIS_HASH, sizeof l->exp_prev);
  /* "ev/" and "link/." resolve a link at their last name: O_NOFOLLOW
   * sees only the final component, so the final component is the
   * directory's own name. */
  size_t len = strlen(l->dir);
  while (len > 1 && l->dir[len - 1] == '/')
    l->dir[--len] = '\0';
  const char *last = strrchr(l->dir, '/');
  last = last ? last + 1 : NULL;
  if (last && (strcmp(last, ".") == 0 || strcmp(last, "..") == 0)) {
    ll_fail(err, LL_E_USAGE,
            "evidence directory %s ends in '%s': name the directory itself "
            "with --evidence",
            l->dir, last);
    ll_ledger_close(l);
    return NULL;
  }
  ll_status st = mode == LL_LEDGER_CREATE ? create_layout(l, err)
                 : mode == LL_LEDGER_RECOVER
                     ? recover(l, err)
                     : ll_fail(err, LL_E_USAGE, "unknown ledger mode");
  struct stat sb;
  if (st == LL_OK && fstat(l->fd_prot, &sb) != 0)
    st = ll_fail(err, LL_E_IO, "cannot stat the protected ledger: %s",
                 strerror(errno));
  if (st != LL_OK) {
    ll_ledger_close(l);
    return NULL;
  }
  l->bytes = (size_t)sb.st_size;
  return l;
}

void ll_ledger_close(ll_ledger *l) {
  if (!l)
    return;
  /* Export lines still waiting go first (best effort: a recovery
   * re-derives them from the protected ledger); rows appended without a
   * sync become durable here at the latest. */
  if (l->fd_exp >= 0 && !l->broken)
    (void)ll_ledger_flush_hook(l);
  if (l->fd_prot >= 0) {
    (void)fsync(l->fd_prot);
    close(l->fd_prot);
  }
  if (l->fd_exp >= 0) {
    (void)fsync(l->fd_exp);
    close(l->fd_exp);
  }
  if (l->dirfd >= 0)
    close(l->dirfd);
  for (size_t i = 0; i < l->n_binds; i++) {
    free(l->ids[i]);
    free(l->aliases[i]);
  }
  for (size_t i = 0; i < l->n_secrets; i++) {
    free(l->secrets[i]);
    free(l->secret_ph[i]);
  }
  ll_sha256_free(l->hasher);
  free(l->line_prot.p);
  free(l->line_exp.p);
  free(l->exp_pend.p);
  free(l->ids);
  free(l->aliases);
  free(l->secrets);
  free(l->secret_ph);
  cJSON_Delete(l->rows);
  cJSON_Delete(l->export_rows);
  cJSON_Delete(l->last);
  free(l->dir);
  free(l);
}
