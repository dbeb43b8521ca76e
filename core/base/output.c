/* The one all-or-nothing file writer (output.h). */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_all(int fd, const char *data, size_t n) {
  for (size_t off = 0; off < n;) {
    ssize_t w = write(fd, data + off, n - off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    off += (size_t)w;
  }
  return 0;
}

/* fsync of path's directory, best effort. */
static void sync_parent(const char *path) {
  char dir[PATH_MAX];
  const char *slash = strrchr(path, '/');
  size_t len = slash ? (size_t)(slash - path) : 0;
  if (len >= sizeof dir)
    return;
  if (slash && len == 0)
    len = 1; /* "/name" */
  memcpy(dir, slash ? path : ".", slash ? len : 1);
  dir[slash ? len : 1] = '\0';
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)fsync(dfd);
    close(dfd);
  }
}

int ll_write_replace(const char *path, const char *tmp, const char *data,
                     size_t n) {
  char made[PATH_MAX];
  int fd;
  if (tmp) {
    (void)unlink(tmp); /* left by a writer that was killed */
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  } else {
    int k = snprintf(made, sizeof made, "%s.XXXXXX", path);
    if (k < 0 || (size_t)k >= sizeof made) {
      errno = ENAMETOOLONG;
      return -1;
    }
    fd = mkstemp(made);
    if (fd >= 0 && fchmod(fd, 0644) != 0) {
      int e = errno;
      close(fd);
      unlink(made);
      errno = e;
      return -1;
    }
    tmp = made;
  }
  if (fd < 0)
    return -1;
  int ok = write_all(fd, data, n) == 0 && fsync(fd) == 0;
  int e = ok ? 0 : errno;
  if (close(fd) != 0 && ok) {
    e = errno;
    ok = 0;
  }
  if (ok && rename(tmp, path) != 0) {
    e = errno;
    ok = 0;
  }
  if (!ok) {
    unlink(tmp);
    errno = e ? e : EIO;
    return -1;
  }
  sync_parent(path);
  return 0;
}
