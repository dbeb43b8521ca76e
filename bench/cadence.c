/* The request cadence of any client, measured from outside it: an
 * LD_PRELOAD shim that notes the monotonic time and byte count of every
 * send(2), sendto(2) and sendmsg(2) on a socket, and writes them at exit,
 * one "ns bytes" line each, to the file named by LL_CADENCE_OUT.
 *
 * bench/run.sh preloads it into the curl floor and into leaselua alike, so
 * that both clients' "end to end" is the same quantity taken the same way:
 * the interval from one request leaving the process to the next (over a
 * kept-alive connection each request is one TLS record, one send). The
 * filter that picks the requests out of the handshake and the close alert
 * is bench/cadence.lua's. This is a benchmark helper, not part of leaselua:
 * it observes, it changes nothing the client sends. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#define MAX_SENDS (1 << 20)

static int64_t when[MAX_SENDS];
static int64_t size[MAX_SENDS];
static size_t nsends;

static ssize_t (*real_send)(int, const void *, size_t, int);
static ssize_t (*real_sendto)(int, const void *, size_t, int,
                              const struct sockaddr *, socklen_t);
static ssize_t (*real_sendmsg)(int, const struct msghdr *, int);

static void note(ssize_t n) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  if (n > 0 && nsends < MAX_SENDS) {
    when[nsends] = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
    size[nsends++] = n;
  }
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

__attribute__((destructor)) static void dump(void) {
  const char *out = getenv("LL_CADENCE_OUT");
  /* Only a process that sent something writes: a wrapper that inherits the
   * preload (timeout, /usr/bin/time) exits after the client and would
   * otherwise leave an empty file in its place. */
  FILE *f = nsends && out && *out ? fopen(out, "w") : NULL;
  if (!f)
    return;
  for (size_t i = 0; i < nsends; i++)
    fprintf(f, "%lld %lld\n", (long long)when[i], (long long)size[i]);
  fclose(f);
}
