/* The request cadence of any client, measured from outside it: an
 * LD_PRELOAD shim that notes the monotonic time and byte count of every
 * send(2), sendto(2) and sendmsg(2) on a socket, and of every recv(2),
 * recvfrom(2) and recvmsg(2) that returned bytes (a MSG_PEEK is not a
 * receive), and writes them at exit to the file named by LL_CADENCE_OUT:
 * "ns bytes cpu_ns" for a send (cpu_ns: the process's CPU time, user and
 * system, all threads, as the send returned; "ns bytes" where it could not
 * be read), "ns r bytes" for a receive, in the order they happened.
 *
 * bench/run.sh preloads it into the curl floor and into leaselua alike, so
 * that both clients' "end to end" is the same quantity taken the same way:
 * the interval from one request leaving the process to the next (over a
 * kept-alive connection each request is one TLS record, one send). The
 * receives split each interval in two, the same way for both clients: the
 * wait (the request leaving to the first bytes of its answer arriving:
 * the server, the network, the wake-up) and the client's own time (those
 * bytes to the next request leaving). The CPU time between two sends is
 * what the process spent on one request, on the CPU, whatever the machine
 * made it wait: the same for both clients, and less moved by a busy
 * neighbour than any interval of wall time. (That clock is a system call,
 * not the vDSO's: each send costs both clients one more, about a
 * microsecond, inside the intervals measured.) The filter that picks the
 * requests out of the handshake and the close alert is bench/cadence.lua's.
 * This is a benchmark helper, not part of leaselua: it observes, it changes
 * nothing the client sends or receives. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#define MAX_SENDS (1 << 20) /* sends and receives together */

static int64_t when[MAX_SENDS];
static int64_t size[MAX_SENDS];
static int64_t cpu[MAX_SENDS]; /* a send's CPU time, ns; -1: unread */
static char recvd[MAX_SENDS];  /* 1: a receive */
static size_t nsends;          /* sends and receives */
static size_t nsent;           /* sends alone */

static ssize_t (*real_send)(int, const void *, size_t, int);
static ssize_t (*real_sendto)(int, const void *, size_t, int,
                              const struct sockaddr *, socklen_t);
static ssize_t (*real_sendmsg)(int, const struct msghdr *, int);
static ssize_t (*real_recv)(int, void *, size_t, int);
static ssize_t (*real_recvfrom)(int, void *, size_t, int, struct sockaddr *,
                                socklen_t *);
static ssize_t (*real_recvmsg)(int, struct msghdr *, int);

/* Only what moved bytes is noted, and the caller's errno is kept. */
static void note_as(ssize_t n, char is_recv) {
  if (n > 0 && nsends < MAX_SENDS) {
    int saved = errno;
    struct timespec t, c = {0, 0};
    clock_gettime(CLOCK_MONOTONIC, &t);
    int have_cpu = !is_recv && clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c) == 0;
    errno = saved;
    when[nsends] = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
    cpu[nsends] = have_cpu ? (int64_t)c.tv_sec * 1000000000 + c.tv_nsec : -1;
    recvd[nsends] = is_recv;
    nsent += !is_recv;
    size[nsends++] = n;
  }
}

static void note(ssize_t n) {
  note_as(n, 0);
}

/* A peek leaves the bytes for the next receive: only that one counts. */
static void note_recv(ssize_t n, int flags) {
  if (!(flags & MSG_PEEK))
    note_as(n, 1);
}

ssize_t send(int fd, const void *buf, size_t len, int flags) {
  if (!real_send)
    real_send =
        (ssize_t(*)(int, const void *, size_t, int))dlsym(RTLD_NEXT, "send");
  ssize_t n = real_send(fd, buf, len, flags);
  note(n);
  return n;
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags,
               const struct sockaddr *to, socklen_t tolen) {
  if (!real_sendto)
    real_sendto =
        (ssize_t(*)(int, const void *, size_t, int, const struct sockaddr *,
                    socklen_t))dlsym(RTLD_NEXT, "sendto");
  ssize_t n = real_sendto(fd, buf, len, flags, to, tolen);
  note(n);
  return n;
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags) {
  if (!real_sendmsg)
    real_sendmsg = (ssize_t(*)(int, const struct msghdr *, int))dlsym(
        RTLD_NEXT, "sendmsg");
  ssize_t n = real_sendmsg(fd, msg, flags);
  note(n);
  return n;
}

ssize_t recv(int fd, void *buf, size_t len, int flags) {
  if (!real_recv)
    real_recv = (ssize_t(*)(int, void *, size_t, int))dlsym(RTLD_NEXT, "recv");
  ssize_t n = real_recv(fd, buf, len, flags);
  note_recv(n, flags);
  return n;
}

ssize_t recvfrom(int fd, void *buf, size_t len, int flags,
                 struct sockaddr *from, socklen_t *fromlen) {
  if (!real_recvfrom)
    real_recvfrom = (ssize_t(*)(int, void *, size_t, int, struct sockaddr *,
                                socklen_t *))dlsym(RTLD_NEXT, "recvfrom");
  ssize_t n = real_recvfrom(fd, buf, len, flags, from, fromlen);
  note_recv(n, flags);
  return n;
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags) {
  if (!real_recvmsg)
    real_recvmsg =
        (ssize_t(*)(int, struct msghdr *, int))dlsym(RTLD_NEXT, "recvmsg");
  ssize_t n = real_recvmsg(fd, msg, flags);
  note_recv(n, flags);
  return n;
}

__attribute__((destructor)) static void dump(void) {
  const char *out = getenv("LL_CADENCE_OUT");
  /* Only a process that sent something writes: a wrapper that inherits the
   * preload (timeout, /usr/bin/time) exits after the client and would
   * otherwise leave an empty file in its place. */
  FILE *f = nsent && out && *out ? fopen(out, "w") : NULL;
  if (!f)
    return;
  for (size_t i = 0; i < nsends; i++)
    if (recvd[i])
      fprintf(f, "%lld r %lld\n", (long long)when[i], (long long)size[i]);
    else if (cpu[i] < 0) /* a send without its CPU time: no interval's */
      fprintf(f, "%lld %lld\n", (long long)when[i], (long long)size[i]);
    else
      fprintf(f, "%lld %lld %lld\n", (long long)when[i], (long long)size[i],
              (long long)cpu[i]);
  fclose(f);
}
