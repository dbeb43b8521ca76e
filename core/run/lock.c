/* One run per blob: the per-blob flock, and the refusal to start beside a
 * previous run on the blob that left no decision or an open HOLD latch. */
#define _DEFAULT_SOURCE /* flock */
#include "lock.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "endpoint.h"
#include "hash.h"
#include "input.h"
#include "jsonx.h"
#include "manifest.h"
#include "verify_impl.h"

struct ll_lock {
  int dir, fd;
  char name[LL_SHA256_HEX + 8];
};

static void default_dir(char *buf, size_t cap) {
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  if (xdg && xdg[0] == '/')
    snprintf(buf, cap, "%s/leaselua", xdg);
  else
    snprintf(buf, cap, "/tmp/leaselua-%u", (unsigned)geteuid());
}

/* Opens the lock directory without following a link, and checks that it
 * is this user's and that no one else may write it. */
static int open_private_dir(const char *dir, ll_error *err) {
  if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
    ll_fail(err, LL_E_IO,
            "cannot create the lock directory %s: %s: set XDG_RUNTIME_DIR to "
            "a private directory",
            dir, strerror(errno));
    return -1;
  }
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0) {
    ll_fail(err, LL_E_IO,
            "cannot open the lock directory %s: %s: it must be a directory, "
            "not a link",
            dir, strerror(errno));
    if (fd >= 0)
      close(fd);
    return -1;
  }
  if (sb.st_uid != geteuid() || (sb.st_mode & 022) != 0) {
    ll_fail(err, LL_E_IO,
            "lock directory %s is not private to this user (owner uid %u, "
            "mode %03o): remove it, or set XDG_RUNTIME_DIR",
            dir, (unsigned)sb.st_uid, (unsigned)(sb.st_mode & 0777));
    close(fd);
    return -1;
  }
  return fd;
}

/* "pid N" and "evidence DIR" from a lock file, for the refusal. */
static void holder_of(int fd, char *pid, size_t pcap, char *ev, size_t ecap) {
  char buf[2048];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  snprintf(pid, pcap, "unknown");
  snprintf(ev, ecap, "unknown");
  if (n <= 0)
    return;
  buf[n] = '\0';
  char *save = NULL;
  for (char *line = strtok_r(buf, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    if (strncmp(line, "pid ", 4) == 0)
      snprintf(pid, pcap, "%s", line + 4);
    else if (strncmp(line, "evidence ", 9) == 0)
      snprintf(ev, ecap, "%s", line + 9);
  }
}

/* Opens and flocks name under dfd. 0: locked; EWOULDBLOCK: another run
 * holds it (*out_fd stays open, to read its note); another errno: failed.
 * A release unlinks the file while it still holds the lock, so a lock won
 * on a file that was unlinked meanwhile is worth nothing: then the file
 * the name now points to is locked instead. */
static int lock_file(int dfd, const char *name, int *out_fd) {
  *out_fd = -1;
  for (int tries = 0; tries < 8; tries++) {
    int fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
      return errno ? errno : EIO;
    struct stat a, b;
    if (fstat(fd, &a) != 0 || !S_ISREG(a.st_mode) || a.st_uid != geteuid()) {
      close(fd);
      return EPERM;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int e = errno;
      if (e == EWOULDBLOCK)
        *out_fd = fd;
      else
        close(fd);
      return e;
    }
    if (fstatat(dfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
        a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
      *out_fd = fd;
      return 0;
    }
    close(fd);
  }
  return EBUSY;
}

ll_status ll_lock_take(const char *dir, const char *host, const char *blob_path,
                       const char *evidence_dir, ll_lock **out, ll_error *err) {
  char where[512], key[1024], name[LL_SHA256_HEX + 8];
  *out = NULL;
  if (dir)
    ll_strlcpy(where, dir, sizeof where);
  else
    default_dir(where, sizeof where);
  /* one server, however spelt (endpoint.h); blob paths are exact */
  ll_endpoint_server_key(host, key, 300);
  size_t h = strlen(key);
  snprintf(key + h, sizeof key - h, "\n%s", blob_path);
  char hex[LL_SHA256_HEX];
  if (ll_sha256_hex(key, strlen(key), hex) != LL_OK)
    return ll_fail(err, LL_E_INTERNAL, "SHA-256 failed for the lock name");
  snprintf(name, sizeof name, "%s.lock", hex);

  int dfd = open_private_dir(where, err);
  if (dfd < 0)
    return err ? err->code : LL_E_IO;
  int fd;
  int e = lock_file(dfd, name, &fd);
  if (e == EWOULDBLOCK) {
    char pid[64], ev[1024];
    holder_of(fd, pid, sizeof pid, ev, sizeof ev);
    close(fd);
    close(dfd);
    return ll_fail(err, LL_E_SCOPE,
                   "blob %s%s is in use by another run (pid %s, evidence "
                   "%.400s): one run per blob at a time (invariant 14); let "
                   "it finish, or recover it once it has ended",
                   host, blob_path, pid, ev);
  }
  ll_lock *l = e == 0 ? malloc(sizeof *l) : NULL;
  if (!l) {
    if (fd >= 0)
      close(fd);
    close(dfd);
    if (e == 0)
      return ll_fail(err, LL_E_NOMEM, "out of memory");
    return ll_fail(err, LL_E_IO,
                   "cannot use the lock file %s/%s: %s: remove it", where, name,
                   e == EPERM ? "not a file of this user" : strerror(e));
  }
  l->dir = dfd;
  l->fd = fd;
  ll_strlcpy(l->name, name, sizeof l->name);
  /* Who holds it, for a refused second run; best effort, the lock is
   * what counts. */
  char cwd[512] = "";
  if (evidence_dir[0] != '/' && !getcwd(cwd, sizeof cwd))
    cwd[0] = '\0';
  char text[2048];
  int n = snprintf(text, sizeof text,
                   "leaselua run lock\npid %ld\nevidence %s%s%s\nblob %s%s\n",
                   (long)getpid(), cwd, cwd[0] ? "/" : "", evidence_dir, host,
                   blob_path);
  if (n > 0 && ftruncate(fd, 0) == 0) {
    size_t len = (size_t)n < sizeof text ? (size_t)n : sizeof text - 1;
    ssize_t w = pwrite(fd, text, len, 0);
    (void)w; /* informational only */
  }
  *out = l;
  return LL_OK;
}

void ll_lock_release(ll_lock *l) {
  if (!l)
    return;
  /* unlinked while still held (see lock_file), so no file is left over */
  (void)unlinkat(l->dir, l->name, 0);
  close(l->fd); /* releases the flock */
  close(l->dir);
  free(l);
}

/* The whole of a small regular file under dfd, never through a link. */
static char *read_small(int dfd, const char *name, size_t max) {
  int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  struct stat sb;
  char *buf = NULL;
  if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (size_t)sb.st_size <= max) {
    buf = malloc((size_t)sb.st_size + 1);
    ssize_t n = buf ? pread(fd, buf, (size_t)sb.st_size, 0) : -1;
    if (n < 0) {
      free(buf);
      buf = NULL;
    } else {
      buf[n] = '\0';
    }
  }
  close(fd);
  return buf;
}

/* The bundle's export ledger, opened without following a link, or -1. */
static int open_export(int bundle) {
  int exp =
      openat(bundle, "export", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (exp < 0)
    return -1;
  int fd = openat(exp, "ledger.jsonl",
                  O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  close(exp);
  return fd;
}

/* The first row of the bundle's export ledger, parsed, or NULL; *has_rows
 * says whether the ledger holds a whole line at all. */
static cJSON *ledger_first(int bundle, int *has_rows) {
  int fd = open_export(bundle);
  *has_rows = 0;
  if (fd < 0)
    return NULL;
  struct stat sb;
  cJSON *row = NULL;
  enum { SPAN = 256 * 1024 };
  char *buf = malloc(SPAN + 1);
  if (buf && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
    ssize_t n = pread(fd, buf, SPAN, 0);
    if (n > 0) {
      buf[n] = '\0';
      char *nl = memchr(buf, '\n', (size_t)n);
      if (nl)
        *nl = '\0';
      /* a first line cut short (the process died writing the manifest
       * row) means that nothing was ever sent; one longer than what is
       * read is no manifest row a run writes, and is not taken for one */
      *has_rows = nl != NULL || n == SPAN;
      row = cJSON_Parse(buf);
    }
  }
  free(buf);
  close(fd);
  return row;
}

/* The rows of the bundle's export ledger within its final 256 KiB, in
 * order (the first line skipped when the span starts inside it), or NULL:
 * none readable, or a line that does not parse (a torn write), since a
 * row not read may be the one that unseats a decision. */
static cJSON *ledger_tail(int bundle) {
  int fd = open_export(bundle);
  if (fd < 0)
    return NULL;
  struct stat sb;
  cJSON *rows = NULL;
  enum { SPAN = 256 * 1024 };
  char *buf = malloc(SPAN + 1);
  if (buf && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
    off_t from = sb.st_size > SPAN ? sb.st_size - SPAN : 0;
    ssize_t n = pread(fd, buf, SPAN, from);
    if (n > 0) {
      buf[n] = '\0';
      char *at = buf;
      if (from > 0) {
        char *nl = strchr(buf, '\n');
        at = nl ? nl + 1 : buf + n;
      }
      rows = cJSON_CreateArray();
      char *save = NULL;
      for (char *line = rows ? strtok_r(at, "\r\n", &save) : NULL; line;
           line = strtok_r(NULL, "\r\n", &save)) {
        cJSON *row = cJSON_Parse(line);
        if (!row || !cJSON_AddItemToArray(rows, row)) {
          cJSON_Delete(row);
          cJSON_Delete(rows);
          rows = NULL;
          break;
        }
      }
    }
  }
  free(buf);
  close(fd);
  return rows;
}

/* Whether m names the blob its bundle was for. */
static int names_blob(const cJSON *m) {
  return ll_json_str(m, "account_host") && ll_json_str(m, "blob_path") &&
         ll_json_str(m, "endpoint_kind");
}

/* Why the bundle blocks a new run ("" when it does not). */
static void judge(int bundle, const char *host, const char *path, char *why,
                  size_t cap) {
  why[0] = '\0';
  /* a bundle's manifest.json is the operator's manifest (at most
   * LL_MANIFEST_FILE_MAX) printed with indentation and the run's fields
   * added: four times that bound, so that no manifest a run wrote is too
   * large to be read here, where one not read blocks nothing */
  char *text = read_small(bundle, "manifest.json", 4 * LL_MANIFEST_FILE_MAX);
  cJSON *man = text ? cJSON_Parse(text) : NULL;
  free(text);
  int has_rows = 0;
  if (!names_blob(man)) {
    /* the same fields open the ledger: its first row is the manifest */
    cJSON_Delete(man);
    man = ledger_first(bundle, &has_rows);
    if (!names_blob(man) || !ll_streq(ll_json_str(man, "record"), "manifest")) {
      cJSON_Delete(man);
      if (has_rows)
        snprintf(why, cap,
                 "names its blob in neither its manifest.json nor its "
                 "ledger's first row, so it may be this blob's");
      return;
    }
  }
  const char *h = ll_json_str(man, "account_host");
  const char *p = ll_json_str(man, "blob_path");
  const char *kind = ll_json_str(man, "endpoint_kind");
  int same = h && p && kind && strcmp(kind, "replay") != 0 &&
             ll_endpoint_same_server(h, host) && strcmp(p, path) == 0;
  cJSON_Delete(man);
  if (!same)
    return;
  /* the decision that stands, as verify reads it (verify_impl.h) */
  cJSON *rows = ledger_tail(bundle);
  long last = 0, after = 0;
  const cJSON *row = ll_verify_stands(rows, &last, &after);
  long doubts = ll_json_long(row, "open_doubts", -1);
  if (!row && after)
    snprintf(why, cap,
             "has a decision (row %ld) that a request after it (row %ld) "
             "unseats: it ended without a decision that stands",
             last, after);
  else if (!row)
    snprintf(why, cap,
             "ended without a decision (interrupted, or still "
             "running elsewhere)");
  else if (doubts < 0)
    snprintf(why, cap,
             "has a decision row without open_doubts (written by "
             "an older leaselua), so its HOLD latch cannot be "
             "checked");
  else if (doubts > 0)
    snprintf(why, cap,
             "left an open HOLD latch (%ld unreconciled outcome(s) or "
             "intent(s) without an outcome in its decision)",
             doubts);
  cJSON_Delete(rows);
}

/* A multi-version run's parent (index.json beside one bundle per
 * version, run_index.h) is judged by its bundles: the first that blocks
 * gets its name into sub and its reason into why. */
static void judge_index(int dir, const char *host, const char *path, char *sub,
                        size_t subcap, char *why, size_t cap) {
  why[0] = '\0';
  if (faccessat(dir, "index.json", F_OK, AT_SYMLINK_NOFOLLOW) != 0)
    return;
  int dup_fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
  if (!d) {
    if (dup_fd >= 0)
      close(dup_fd);
    return;
  }
  struct dirent *e;
  long seen = 0;
  while (!why[0] && (e = readdir(d)) != NULL && ++seen <= LL_LOCK_SCAN_MAX) {
    struct stat sb;
    if (e->d_name[0] == '.' ||
        fstatat(dup_fd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISDIR(sb.st_mode))
      continue;
    int bundle = openat(dup_fd, e->d_name,
                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (bundle < 0)
      continue;
    judge(bundle, host, path, why, cap);
    close(bundle);
    if (why[0])
      snprintf(sub, subcap, "/%s", e->d_name);
  }
  closedir(d);
}

ll_status ll_lock_check_previous(const char *evidence_dir, const char *host,
                                 const char *blob_path, ll_error *err) {
  char parent[1024], base[256];
  ll_strlcpy(parent, evidence_dir, sizeof parent);
  size_t n = strlen(parent);
  while (n > 1 && parent[n - 1] == '/')
    parent[--n] = '\0';
  char *slash = strrchr(parent, '/');
  if (!slash) {
    ll_strlcpy(base, parent, sizeof base);
    ll_strlcpy(parent, ".", sizeof parent);
  } else {
    ll_strlcpy(base, slash + 1, sizeof base);
    if (slash == parent)
      slash[1] = '\0';
    else
      *slash = '\0';
  }
  /* the earlier runs are the siblings of the directory's last name: a
   * "." or ".." there would make the check list the wrong directory
   * (helper-30: a version series' root/s2/. listed root/s2, new, and
   * passed a blob whose run beside it in root held an open latch) */
  if (!base[0] || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
    return ll_fail(err, LL_E_USAGE,
                   "evidence directory %.300s ends in '.' or '..': name the "
                   "directory itself, so that the runs beside it can be "
                   "checked",
                   evidence_dir);
  int dfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 && errno == ENOENT)
    return LL_OK; /* a new root holds no previous run */
  DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
  if (!d) {
    ll_fail(err, LL_E_IO,
            "cannot list the evidence root %s to check earlier runs on this "
            "blob: %s: use an evidence root you can read",
            parent, strerror(errno));
    if (dfd >= 0)
      close(dfd);
    return LL_E_IO;
  }
  ll_status st = LL_OK;
  long seen = 0;
  struct dirent *e;
  while (st == LL_OK && (e = readdir(d)) != NULL) {
    if (++seen > LL_LOCK_SCAN_MAX) {
      st = ll_fail(err, LL_E_SCOPE,
                   "evidence root %s holds more than %d entries: earlier runs "
                   "on blob %s%s cannot all be checked (invariant 14); use an "
                   "evidence root of its own for this blob",
                   parent, LL_LOCK_SCAN_MAX, host, blob_path);
      break;
    }
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
        strcmp(e->d_name, base) == 0)
      continue;
    struct stat sb;
    if (fstatat(dfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISDIR(sb.st_mode))
      continue;
    int bundle =
        openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (bundle < 0)
      continue;
    char why[256], sub[300] = "";
    judge(bundle, host, blob_path, why, sizeof why);
    if (!why[0])
      judge_index(bundle, host, blob_path, sub, sizeof sub, why, sizeof why);
    close(bundle);
    if (why[0]) {
      const char *sep = strcmp(parent, "/") == 0 ? "" : "/";
      st = ll_fail(err, LL_E_SCOPE,
                   "blob %s%s: the previous run on it in this evidence root, "
                   "%s%s%s%s, %s (invariant 14): recover it first (leaselua "
                   "scripts/recovery.lua --evidence %s%s%s%s) or move it out "
                   "of %s",
                   host, blob_path, parent, sep, e->d_name, sub, why, parent,
                   sep, e->d_name, sub, parent);
    }
  }
  closedir(d);
  return st;
}
