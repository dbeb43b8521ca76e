/* posix_spawnp with an argument vector, a capped stdout pipe and a
 * deadline. There is no shell anywhere in this file: text a shell would
 * act on ($(...), ;, |, quotes) reaches the program as it is. */
#define _GNU_SOURCE /* pipe2, posix_spawn_file_actions_addclosefrom_np */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#if defined(__GLIBC__) &&                                                      \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
#define HAVE_ADDCLOSEFROM 1
#endif

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The program's name for a message: printable ASCII only, cut short. */
static void prog_name(const char *argv0, char *buf, size_t cap) {
  size_t n = 0;
  for (const char *p = argv0; *p && n + 1 < cap && n < 64; p++)
    buf[n++] = (*p > 0x20 && *p < 0x7f) ? *p : '?';
  buf[n] = '\0';
}

/* A pipe whose two ends are both above stderr, so that the dup2 onto
 * stdout in the child always moves a descriptor (a dup2 onto itself
 * would keep FD_CLOEXEC and leave the child without stdout). */
static int make_pipe(int p[2]) {
  if (pipe2(p, O_CLOEXEC) != 0)
    return -1;
  for (int i = 0; i < 2; i++) {
    if (p[i] > 2)
      continue;
    int moved = fcntl(p[i], F_DUPFD_CLOEXEC, 3);
    close(p[i]);
    p[i] = moved;
  }
  if (p[0] < 0 || p[1] < 0) {
    if (p[0] >= 0)
      close(p[0]);
    if (p[1] >= 0)
      close(p[1]);
    return -1;
  }
  return 0;
}

/* stdin from /dev/null (or in_path, or our in_fd), stdout onto the pipe (stderr
 * too when merged), then every descriptor from 3 up closed: the ledger's and
 * libcurl's files never reach the child, whether or not they carry
 * O_CLOEXEC. */
static int file_actions(posix_spawn_file_actions_t *fa, int wfd,
                        const char *in_path, const int *in_fd, int merge) {
  int in_flags = in_path ? O_RDONLY | O_NOFOLLOW : O_RDONLY;
  if ((in_fd ? posix_spawn_file_actions_adddup2(fa, *in_fd, 0)
             : posix_spawn_file_actions_addopen(
                   fa, 0, in_path ? in_path : "/dev/null", in_flags, 0)) != 0 ||
      posix_spawn_file_actions_adddup2(fa, wfd, 1) != 0 ||
      (merge && posix_spawn_file_actions_adddup2(fa, wfd, 2) != 0))
    return -1;
#ifdef HAVE_ADDCLOSEFROM
  return posix_spawn_file_actions_addclosefrom_np(fa, 3) == 0 ? 0 : -1;
#else
  long max = sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > 65536)
    max = 65536;
  for (int fd = 3; fd < max; fd++)
    if (fcntl(fd, F_GETFD) != -1 && posix_spawn_file_actions_addclose(fa, fd))
      return -1;
  return 0;
#endif
}

/* Signals back to their defaults and none blocked: an ignored SIGPIPE in
 * this process must not make the child immortal on a closed pipe. */
static int spawn_attr(posix_spawnattr_t *at) {
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  return posix_spawnattr_setsigdefault(at, &all) != 0 ||
                 posix_spawnattr_setsigmask(at, &none) != 0 ||
                 posix_spawnattr_setflags(at, POSIX_SPAWN_SETSIGDEF |
                                                  POSIX_SPAWN_SETSIGMASK) != 0
             ? -1
             : 0;
}

/* Reads stdout until EOF, the cap or the deadline. Returns 0, or -1 on a
 * read error (errno set). */
static int collect(int rfd, char *buf, size_t cap, int64_t deadline,
                   ll_proc_result *r) {
  for (;;) {
    int64_t left = deadline - mono_ms();
    if (left <= 0) {
      r->timed_out = 1;
      return 0;
    }
    struct pollfd pf = {.fd = rfd, .events = POLLIN};
    int pr = poll(&pf, 1, left > INT32_MAX ? INT32_MAX : (int)left);
    if (pr < 0 && errno == EINTR)
      continue;
    if (pr < 0)
      return -1;
    if (pr == 0) {
      r->timed_out = 1;
      return 0;
    }
    ssize_t n = read(rfd, buf + r->out_len, cap + 1 - r->out_len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n < 0)
      return -1;
    if (n == 0)
      return 0;
    r->out_len += (size_t)n;
    if (r->out_len > cap) {
      r->overflow = 1;
      return 0;
    }
  }
}

/* Waits for the child until the deadline, then kills it by its PID and
 * waits for good; killed says it was killed already. The child is reaped
 * on every path, never left a zombie. */
static void reap(pid_t pid, int killed, int64_t deadline, ll_proc_result *r) {
  int status = 0;
  pid_t w = 0;
  int kill_now = killed;
  while (!kill_now) {
    w = waitpid(pid, &status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR))
      break;
    if (mono_ms() >= deadline) {
      r->timed_out = 1;
      kill(pid, SIGKILL);
      kill_now = 1;
      break;
    }
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  if (kill_now) {
    do
      w = waitpid(pid, &status, 0);
    while (w < 0 && errno == EINTR);
  }
  if (w != pid)
    return; /* already reaped elsewhere (a SIGCHLD handler): status unknown */
  if (WIFEXITED(status)) {
    r->exited = 1;
    r->exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r->term_signal = WTERMSIG(status);
  }
}

/* The stdin file must be a regular file: a FIFO would block the child,
 * a link would be followed by nobody (O_NOFOLLOW makes the open fail in
 * the child, unseen). */
static ll_status check_stdin(const char *path, const char *name,
                             ll_error *err) {
  struct stat sb;
  if (lstat(path, &sb) != 0)
    return ll_fail(err, LL_E_IO, "cannot give %s its input: %s", name,
                   strerror(errno));
  if (!S_ISREG(sb.st_mode))
    return ll_fail(err, LL_E_IO, "cannot give %s its input: not a regular file",
                   name);
  return LL_OK;
}

ll_status ll_proc_capture(const ll_proc_options *o, ll_proc_result *r,
                          ll_error *err) {
  if (!r)
    return ll_fail(err, LL_E_USAGE, "ll_proc_capture: NULL result");
  memset(r, 0, sizeof *r);
  if (!o || !o->argv || !o->argv[0] || !o->argv[0][0] || o->timeout_ms <= 0 ||
      o->out_cap == 0)
    return ll_fail(err, LL_E_USAGE,
                   "ll_proc_capture: empty argv, timeout or cap");
  char name[72];
  prog_name(o->argv[0], name, sizeof name);
  char *buf = malloc(o->out_cap + 1);
  if (!buf)
    return ll_fail(err, LL_E_NOMEM, "out of memory running %s", name);
  int p[2] = {-1, -1};
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  int have_fa = 0, have_at = 0;
  ll_status st = LL_OK;
  if (make_pipe(p) != 0) {
    st = ll_fail(err, LL_E_IO, "cannot make a pipe for %s: %s", name,
                 strerror(errno));
    goto cleanup;
  }
  have_fa = posix_spawn_file_actions_init(&fa) == 0;
  have_at = have_fa && posix_spawnattr_init(&at) == 0;
  if (o->stdin_path && !o->stdin_fd)
    st = check_stdin(o->stdin_path, name, err);
  if (st != LL_OK)
    goto cleanup;
  if (!have_at ||
      file_actions(&fa, p[1], o->stdin_path, o->stdin_fd, o->merge_stderr) !=
          0 ||
      spawn_attr(&at) != 0) {
    st = ll_fail(err, LL_E_NOMEM, "out of memory setting up %s", name);
    goto cleanup;
  }
  int64_t deadline = mono_ms() + o->timeout_ms;
  pid_t pid;
  /* posix_spawnp's prototype predates const: nothing is written through
   * these pointers. */
  int rc = posix_spawnp(&pid, o->argv[0], &fa, &at, (char *const *)o->argv,
                        o->envp ? (char *const *)o->envp : environ);
  close(p[1]);
  p[1] = -1;
  if (rc != 0) {
    st = ll_fail(err, LL_E_IO, "cannot start %s: %s", name, strerror(rc));
    goto cleanup;
  }
  r->pid = (long)pid;
  int read_err = collect(p[0], buf, o->out_cap, deadline, r) != 0 ? errno : 0;
  int stop = r->timed_out || r->overflow || read_err;
  if (stop) /* before the close: it dies of SIGKILL, not of a late EPIPE */
    kill(pid, SIGKILL);
  close(p[0]);
  p[0] = -1;
  reap(pid, stop, deadline, r);
  if (read_err) {
    st = ll_fail(err, LL_E_IO, "cannot read the output of %s: %s", name,
                 strerror(read_err));
  } else if (!r->timed_out && !r->overflow) {
    buf[r->out_len] = '\0';
    r->out = buf;
    buf = NULL;
  }
cleanup:
  if (buf) {
    OPENSSL_cleanse(buf, o->out_cap + 1);
    free(buf);
  }
  if (!r->out)
    r->out_len = 0;
  if (p[0] >= 0)
    close(p[0]);
  if (p[1] >= 0)
    close(p[1]);
  if (have_at)
    posix_spawnattr_destroy(&at);
  if (have_fa)
    posix_spawn_file_actions_destroy(&fa);
  return st;
}

void ll_proc_result_cleanup(ll_proc_result *r) {
  if (!r)
    return;
  if (r->out) {
    OPENSSL_cleanse(r->out, r->out_len);
    free(r->out);
  }
  memset(r, 0, sizeof *r);
}
