/* A read whose connection was expected to be reused but is not (the peer,
 * here behind an http proxy's tunnel, answered "Connection: close"):
 * libcurl resolves the proxy's name again once its DNS cache entry (60 s) has
 * expired, before it opens the socket. The export line of the read's intent
 * must not wait through that resolution: on_wire must fire before it starts. */
#define _GNU_SOURCE
#include "http.h"
#include "script_server.h"
#include "testlib.h"

#include <dlfcn.h>
#include <netdb.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static _Atomic int n_resolves;
static _Atomic int64_t resolve_start_ns, resolve_end_ns;
static _Atomic int stall_ms;

/* the test's resolver: "slowproxy.test" is the loopback, slowly */
int getaddrinfo(const char *node, const char *service,
                const struct addrinfo *hints, struct addrinfo **res) {
  int (*real)(const char *, const char *, const struct addrinfo *,
              struct addrinfo **) =
      (int (*)(const char *, const char *, const struct addrinfo *,
               struct addrinfo **))dlsym(RTLD_NEXT, "getaddrinfo");
  if (node && strcmp(node, "slowproxy.test") == 0) {
    n_resolves++;
    resolve_start_ns = now_ns();
    if (stall_ms)
      sleep_ms(stall_ms);
    int rc = real("127.0.0.1", service, hints, res);
    resolve_end_ns = now_ns();
    return rc;
  }
  return real(node, service, hints, res);
}

static _Atomic int64_t wired_ns;
static int hook(void *ctx) {
  (void)ctx;
  if (!wired_ns)
    wired_ns = now_ns();
  return 0;
}

#define CLOSE_REPLY                                                            \
  "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  ll_clock *clk = ll_clock_new_real();
  /* each connection: the CONNECT (every target is tunnelled), then the
   * tunnelled GET, answered and closed */
  static step script[256];
  for (int i = 0; i < 256; i += 2) {
    script[i] = (step){TUNNEL, NULL, 0};
    script[i + 1] = (step){RAW, CLOSE_REPLY, sizeof CLOSE_REPLY - 1};
  }
  server s;
  server_start(&s, script, 256);
  char proxy[64], url[128];
  snprintf(proxy, sizeof proxy, "http://slowproxy.test:%d", s.port);
  snprintf(url, sizeof url, "http://127.0.0.1:%d/c/b", s.port + 1);
  ll_http_options o = {
      .connect_timeout_ms = 5000, .total_timeout_ms = 5000, .proxy = proxy};
  ll_error err = {0};
  ll_transport *t = ll_http_new(&o, clk, &err);
  if (!t) {
    fprintf(stderr, "ll_http_new: %s\n", err.message);
    return 1;
  }
  int late = 0, stalled = 0;
  int64_t t0 = now_ns();
  for (int i = 0; now_ns() - t0 < 64LL * 1000000000; i++) {
    ll_http_request req = {.method = "GET", .url = url, .on_wire = hook};
    ll_headers_init(&req.headers);
    ll_http_response r;
    ll_http_response_init(&r);
    int before = n_resolves;
    stall_ms = i > 0 ? 1500 : 0;
    wired_ns = 0;
    ll_status st = t->exchange(t, &req, &r, &err);
    CHECK_INT(st, LL_OK);
    CHECK_INT(r.status, 200);
    if (n_resolves > before) {
      stalled += i > 0;
      /* the line must be written before the name is looked up */
      if (!wired_ns || wired_ns > resolve_start_ns) {
        late++;
        fprintf(stderr,
                "exchange %d at %.1f s: on_wire %.3f s after the resolution "
                "began (it took %.3f s)\n",
                i, (double)(now_ns() - t0) / 1e9,
                wired_ns ? (double)(wired_ns - resolve_start_ns) / 1e9 : -1.0,
                (double)(resolve_end_ns - resolve_start_ns) / 1e9);
      }
    }
    ll_http_response_cleanup(&r);
    ll_headers_cleanup(&req.headers);
    sleep_ms(1000); /* under the reuse limit: the next read expects reuse */
  }
  fprintf(stderr, "resolutions %d (after the first: %d), late %d\n",
          (int)n_resolves, stalled, late);
  CHECK(stalled > 0); /* the window was reached */
  CHECK_INT(late, 0);
  ll_transport_free(t);
  server_stop(&s);
  ll_clock_free(clk);
  return ll_test_report("test_wire_dns");
}
