/* The record file's place (fixture_impl.h): its directory held open, a
 * name checked free before anything is sent, and each finish's text put
 * there whole, never through a link, replacing only the file placed
 * before. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture_impl.h"

/* A new temporary file beside the record file, never an existing one:
 * ".NAME.PID.K.tmp". Its name goes to tmp. */
static int make_tmp(const fx_place *r, char *tmp, size_t cap) {
  for (int k = 0; k < 100; k++) {
    snprintf(tmp, cap, ".%s.%ld.%d.tmp", r->base, (long)getpid(), k);
    int fd = openat(r->dirfd, tmp,
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST)
      return fd;
  }
  return -1;
}

/* Writes text to a temporary file, fsyncs it, and puts it in place: the
 * first time with linkat, which fails rather than replace anything that
 * appeared at the name; later (after more exchanges) with renameat, once
 * the name is still the file this recorder placed. Neither follows a link
 * at the name. A reader sees no file, or a whole one. */
ll_status fx_place_write(fx_place *r, const char *text, ll_error *err) {
  char tmp[NAME_MAX + 1];
  int fd = make_tmp(r, tmp, sizeof tmp);
  if (fd < 0)
    return ll_fail(err, LL_E_IO, "cannot write fixture %.200s: %s", r->path,
                   strerror(errno));
  size_t n = strlen(text), off = 0;
  while (off < n) {
    ssize_t w = write(fd, text + off, n - off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      break;
    off += (size_t)w;
  }
  struct stat mine, cur;
  int ok = off == n && fsync(fd) == 0 && fstat(fd, &mine) == 0;
  int e = ok ? 0 : errno ? errno : EIO; /* 0: the file was written */
  if (close(fd) != 0 && ok) {
    ok = 0;
    e = errno;
  }
  const char *why = NULL;
  if (ok && !r->placed) {
    if (linkat(r->dirfd, tmp, r->dirfd, r->base, 0) == 0) {
      (void)unlinkat(r->dirfd, tmp, 0);
    } else if (errno == EEXIST) {
      why = "appeared during the run";
    } else if (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP) {
      /* No hard links on this file system: rename, if still absent. */
      if (fstatat(r->dirfd, r->base, &cur, AT_SYMLINK_NOFOLLOW) == 0)
        why = "appeared during the run";
      else if (renameat(r->dirfd, tmp, r->dirfd, r->base) != 0)
        ok = 0;
    } else {
      ok = 0;
    }
  } else if (ok) {
    /* The same file: inode numbers are reused at once, so its size and
     * change time must be the ones this recorder left too. */
    if (fstatat(r->dirfd, r->base, &cur, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(cur.st_mode) || cur.st_dev != r->dev || cur.st_ino != r->ino ||
        cur.st_size != r->size || cur.st_ctim.tv_sec != r->ctime.tv_sec ||
        cur.st_ctim.tv_nsec != r->ctime.tv_nsec)
      why = "was replaced or removed during the run";
    else if (renameat(r->dirfd, tmp, r->dirfd, r->base) != 0)
      ok = 0;
  }
  if (why) /* the recording stays in tmp: it is not lost, nothing replaced */
    return ll_fail(err, LL_E_IO,
                   "record file %.200s %s: it is not replaced; this recording "
                   "is in %s beside it",
                   r->path, why, tmp);
  if (!ok) {
    if (e == 0)
      e = errno; /* the placing failed, not the write */
    (void)unlinkat(r->dirfd, tmp, 0);
    return ll_fail(err, LL_E_IO, "cannot write fixture %.200s: %s", r->path,
                   strerror(e));
  }
  r->placed = 1;
  r->dev = mine.st_dev;
  r->ino = mine.st_ino;
  r->size = mine.st_size;
  /* linkat and renameat change the ctime: read it at the name */
  if (fstatat(r->dirfd, r->base, &cur, AT_SYMLINK_NOFOLLOW) == 0)
    r->ctime = cur.st_ctim;
  (void)fsync(r->dirfd); /* the new name; best effort, like the report */
  return LL_OK;
}

/* Opens the record file's directory and checks, before anything is sent,
 * that the name is free (an existing file, or a link, is never replaced)
 * and that a file can be made there. */
ll_status fx_place_open(fx_place *r, const char *path, ll_error *err) {
  r->path = path;
  const char *slash = strrchr(r->path, '/');
  const char *base = slash ? slash + 1 : r->path;
  char dir[1100];
  if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
    return ll_fail(err, LL_E_USAGE,
                   "record file %.200s names a directory: give --record a "
                   "new file's name",
                   r->path);
  if (!slash)
    ll_strlcpy(dir, ".", sizeof dir);
  else if (slash == r->path)
    ll_strlcpy(dir, "/", sizeof dir);
  else
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - r->path), r->path);
  if (!(r->base = strdup(base)))
    return ll_fail(err, LL_E_NOMEM, "out of memory");
  r->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (r->dirfd < 0)
    return ll_fail(err, LL_E_USAGE,
                   "cannot write fixture %.200s: %s: check --record", r->path,
                   strerror(errno));
  struct stat sb;
  if (fstatat(r->dirfd, r->base, &sb, AT_SYMLINK_NOFOLLOW) == 0)
    return ll_fail(err, LL_E_USAGE,
                   "record file %.200s already exists: --record writes a new "
                   "file and never replaces one; give another name or move "
                   "that one away",
                   r->path);
  if (errno != ENOENT)
    return ll_fail(err, LL_E_USAGE,
                   "cannot write fixture %.200s: %s: check --record", r->path,
                   strerror(errno));
  /* Fail now, not after a 30 s run, when the file cannot be written. */
  char tmp[NAME_MAX + 1];
  int fd = make_tmp(r, tmp, sizeof tmp);
  if (fd < 0)
    return ll_fail(err, LL_E_USAGE,
                   "cannot write fixture %.200s: %s: check --record", r->path,
                   strerror(errno));
  close(fd);
  (void)unlinkat(r->dirfd, tmp, 0);
  return LL_OK;
}

void fx_place_close(fx_place *r) {
  if (r->dirfd >= 0)
    close(r->dirfd);
  r->dirfd = -1;
  free(r->base);
  r->base = NULL;
}
