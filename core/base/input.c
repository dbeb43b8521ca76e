/* Input files (input.h): opened without following a link or waiting on a
 * FIFO, checked to be regular and under their limit before any read. */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void ll_input_limit_str(size_t max, char *buf, size_t cap) {
  if (max >= (1u << 20) && max % (1u << 20) == 0)
    snprintf(buf, cap, "%zu MiB", max >> 20);
  else if (max >= 1024 && max % 1024 == 0)
    snprintf(buf, cap, "%zu KiB", max >> 10);
  else
    snprintf(buf, cap, "%zu bytes", max);
}

/* "a FIFO", "a directory": what a file that is not regular is. */
static const char *kind_of(mode_t m) {
  if (S_ISFIFO(m))
    return "a FIFO";
  if (S_ISDIR(m))
    return "a directory";
  if (S_ISCHR(m))
    return "a character device";
  if (S_ISBLK(m))
    return "a block device";
  if (S_ISSOCK(m))
    return "a socket";
  if (S_ISLNK(m))
    return "a symbolic link";
  return "not a regular file";
}

static ll_status not_regular(const char *path, const char *what,
                             const char *flag, mode_t m, ll_error *err) {
  if (S_ISLNK(m))
    return ll_fail(err, LL_E_USAGE,
                   "%s %.300s is a symbolic link: pass the file it names "
                   "(readlink -f) to %s",
                   what, path, flag);
  return ll_fail(err, LL_E_USAGE,
                 "%s %.300s is %s, not a regular file: pass a regular file "
                 "to %s",
                 what, path, kind_of(m), flag);
}

static ll_status too_large(const char *path, const char *what, const char *flag,
                           size_t max, size_t size, ll_error *err) {
  char limit[32];
  ll_input_limit_str(max, limit, sizeof limit);
  return ll_fail(err, LL_E_USAGE,
                 "%s %.300s is larger than the %s limit (%zu bytes): pass a "
                 "smaller file to %s",
                 what, path, limit, size, flag);
}

ll_status ll_input_open(const char *path, const char *what, const char *flag,
                        size_t max, int *out_fd, size_t *out_size,
                        ll_error *err) {
  *out_fd = -1;
  *out_size = 0;
  if (!path || !*path)
    return ll_fail(err, LL_E_USAGE, "no %s given: pass one with %s", what,
                   flag);
  /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
   * writer, forever; O_NOFOLLOW: a link is refused, not resolved. */
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    struct stat lb;
    /* ELOOP is a link (O_NOFOLLOW); ENXIO a socket. Name what it is. */
    if (lstat(path, &lb) == 0 && !S_ISREG(lb.st_mode))
      return not_regular(path, what, flag, lb.st_mode, err);
    return ll_fail(err, LL_E_USAGE, "cannot read %s %.300s: %s: check %s", what,
                   path, strerror(e), flag);
  }
  struct stat sb;
  ll_status st = LL_OK;
  if (fstat(fd, &sb) != 0)
    st = ll_fail(err, LL_E_USAGE, "cannot read %s %.300s: %s: check %s", what,
                 path, strerror(errno), flag);
  else if (!S_ISREG(sb.st_mode))
    st = not_regular(path, what, flag, sb.st_mode, err);
  else if (sb.st_size < 0 || (unsigned long long)sb.st_size > max)
    st = too_large(path, what, flag, max, (size_t)sb.st_size, err);
  else {
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
      st = ll_fail(err, LL_E_IO, "cannot read %s %.300s: %s", what, path,
                   strerror(errno));
  }
  if (st != LL_OK) {
    close(fd);
    return st;
  }
  *out_fd = fd;
  *out_size = (size_t)sb.st_size;
  return LL_OK;
}

/* One read(2) into dst, retried only on EINTR (a signal, not a failure):
 * *got is 0 at the end of the file. */
static ll_status read_some(int fd, char *dst, size_t cap, const char *path,
                           const char *what, size_t *got, ll_error *err) {
  for (;;) {
    ssize_t n = read(fd, dst, cap);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return ll_fail(err, LL_E_IO, "cannot read %s %.300s: %s", what, path,
                     strerror(errno));
    *got = (size_t)n;
    return LL_OK;
  }
}

ll_status ll_input_read(const char *path, const char *what, const char *flag,
                        size_t max, ll_buf *b, ll_error *err) {
  int fd;
  size_t size;
  ll_status st = ll_input_open(path, what, flag, max, &fd, &size, err);
  if (st != LL_OK)
    return st;
  ll_buf_put(b, "", 0);
  char chunk[1 << 16];
  for (;;) {
    size_t n = 0;
    if ((st = read_some(fd, chunk, sizeof chunk, path, what, &n, err)) ||
        n == 0)
      break;
    if (b->n + n > max) { /* it grew after fstat */
      st = too_large(path, what, flag, max, b->n + n, err);
      break;
    }
    ll_buf_put(b, chunk, n);
  }
  close(fd);
  if (st == LL_OK && b->oom)
    st =
        ll_fail(err, LL_E_NOMEM, "out of memory reading %s %.300s", what, path);
  return st;
}

ll_status ll_input_read_into(const char *path, const char *what,
                             const char *flag, char *buf, size_t max,
                             size_t *out_len, ll_error *err) {
  int fd;
  size_t size, len = 0;
  *out_len = 0;
  buf[0] = '\0';
  ll_status st = ll_input_open(path, what, flag, max, &fd, &size, err);
  if (st != LL_OK)
    return st;
  for (;;) { /* reads one byte past max, to see a file that grew */
    size_t n = 0;
    if ((st = read_some(fd, buf + len, max + 1 - len, path, what, &n, err)) ||
        n == 0)
      break;
    len += n;
    if (len > max) { /* it grew after fstat */
      st = too_large(path, what, flag, max, len, err);
      break;
    }
  }
  close(fd);
  if (st != LL_OK)
    len = 0; /* the caller wipes max + 1 bytes either way */
  buf[len] = '\0';
  *out_len = len;
  return st;
}
