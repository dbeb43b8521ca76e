/* The libcurl transport against a scripted loopback HTTP/1.1 server: the
 * 7.88 silent re-send on a reused connection, fresh connections for
 * mutations, outcome classes, caps, and the URL policy. */
#define _GNU_SOURCE /* strcasestr */
#include "http.h"
#include "script_server.h"
#include "testlib.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <signal.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- client helpers --------------------------------------------------- */

static ll_clock *clk;

typedef struct {
  server s;
  ll_transport *t;
  ll_http_response r;
} fixture;

/* Zero caps and timeouts mean the transport's defaults. */
static fixture *fx_open(const step *script, int nscript, size_t body_cap,
                        size_t header_cap, long total_ms) {
  fixture *f = calloc(1, sizeof *f);
  ll_http_options o = {NULL,       2000, total_ms, body_cap,
                       header_cap, 0,    NULL,     NULL};
  ll_error err = {0};
  if (!f || !(f->t = ll_http_new(&o, clk, &err))) {
    fprintf(stderr, "ll_http_new: %s\n", err.message);
    exit(1);
  }
  ll_http_response_init(&f->r);
  server_start(&f->s, script, nscript);
  return f;
}

static void fx_close(fixture *f) {
  ll_http_response_cleanup(&f->r);
  ll_transport_free(f->t);
  server_stop(&f->s);
  free(f);
}

static ll_status exchange_to(fixture *f, int port, const char *method,
                             const char *path, int mutation, const char *body) {
  char url[256];
  snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
  ll_http_request req = {.method = method, .url = url, .mutation = mutation};
  ll_headers_init(&req.headers);
  if (body) {
    req.body = (const unsigned char *)body;
    req.body_len = strlen(body);
    if (ll_headers_add(&req.headers, "Content-Type",
                       "application/octet-stream") != LL_OK)
      exit(1);
  }
  if (ll_headers_add(&req.headers, "x-ms-version", LL_API_VERSION) != LL_OK)
    exit(1);
  ll_error err = {0};
  ll_status st = f->t->exchange(f->t, &req, &f->r, &err);
  ll_headers_cleanup(&req.headers);
  return st;
}
#define EX(f, m, path, mut, body)                                              \
  exchange_to(f, (f)->s.port, m, path, mut, body)

/* ---- tests ------------------------------------------------------------ */

/* Invariant 1, reads: a request that dies on a reused connection is sent
 * again by libcurl 7.88, and the emitted count must show it. */
static void test_resend_on_reused_read(void) {
  static const step script[] = {
      {ANSWER, NULL, 0}, {CLOSE, NULL, 0}, {ANSWER, NULL, 0}};
  fixture *f = fx_open(script, 3, 0, 0, 5000);
  CHECK_INT(EX(f, "GET", "/first", 0, NULL), LL_OK);
  CHECK_INT(f->r.outcome, LL_OUTCOME_RESPONSE);
  CHECK_INT(f->r.status, 200);
  CHECK_INT(f->r.emitted_requests, 1);
  CHECK_STR((const char *)f->r.body, "ok");

  CHECK_INT(EX(f, "GET", "/second", 0, NULL), LL_OK);
  CHECK_INT(f->r.outcome, LL_OUTCOME_RESPONSE);
  CHECK_INT(f->r.status, 200);
  CHECK_INT(f->r.emitted_requests, 2);
  CHECK_INT(server_count(&f->s, "GET", "/second"), 2);
  /* the first copy went on the reused connection, the copy on a new one */
  CHECK_INT(NREQ(f->s), 3);
  CHECK_INT(req_at(&f->s, 1).conn, req_at(&f->s, 0).conn);
  CHECK(req_at(&f->s, 2).conn != req_at(&f->s, 1).conn);
  fx_close(f);
}

/* Invariant 1, reads after a long idle: with the default limit (2, so
 * under 3 s idle), a read right after another reuses its connection, and a
 * read after 3.1 s idle opens a fresh one instead of racing the server's own
 * idle close (Node's, so Azurite's, is 5 s; a poller may sleep that long). */
static void test_idle_reuse_limit(void) {
  fixture *f = fx_open(NULL, 0, 0, 0, 5000);
  CHECK_INT(EX(f, "GET", "/a", 0, NULL), LL_OK);
  CHECK_INT(EX(f, "GET", "/b", 0, NULL), LL_OK);
  CHECK_INT(NCONNS(f->s), 1);
  sleep_ms(3100);
  CHECK_INT(EX(f, "GET", "/c", 0, NULL), LL_OK);
  CHECK_INT(f->r.status, 200);
  CHECK_INT(f->r.emitted_requests, 1);
  CHECK_INT(NCONNS(f->s), 2);
  CHECK_INT(NREQ(f->s), 3);
  CHECK(req_at(&f->s, 2).conn != req_at(&f->s, 1).conn);
  fx_close(f);
}

/* Invariant 1, mutations: a fresh connection, so the same server behaviour
 * gives CURLE_GOT_NOTHING and one copy only. */
static void test_mutation_fresh_connection(void) {
  static const step script[] = {{ANSWER, NULL, 0}, {CLOSE, NULL, 0}};
  fixture *f = fx_open(script, 2, 0, 0, 5000);
  CHECK_INT(EX(f, "GET", "/first", 0, NULL), LL_OK);
  CHECK_INT(f->r.status, 200);
  CHECK_INT(EX(f, "PUT", "/blob", 1, "payload"), LL_OK);
  sleep_ms(100); /* a late re-send would land by now */
  CHECK_INT(server_count(&f->s, "PUT", "/blob"), 1);
  CHECK_INT(f->r.outcome, LL_OUTCOME_UNKNOWN);
  CHECK_INT(f->r.curl_code, CURLE_GOT_NOTHING);
  CHECK_INT(f->r.emitted_requests, 1);
  CHECK_INT(f->r.status, 0);
  CHECK(f->r.transport_error[0] != '\0');
  CHECK_INT(NREQ(f->s), 2);
  CHECK(req_at(&f->s, 1).conn != req_at(&f->s, 0).conn);
  CHECK_INT(req_at(&f->s, 1).body_len, 7);

  /* reads may still reuse the earlier read connection */
  CHECK_INT(EX(f, "GET", "/after", 0, NULL), LL_OK);
  CHECK_INT(f->r.status, 200);
  CHECK_INT(NREQ(f->s), 3);
  CHECK_INT(req_at(&f->s, 2).conn, req_at(&f->s, 0).conn);
  fx_close(f);
}

/* The on_wire hook: once per exchange, whether the request connects first
 * or reuses a connection; one that fails before a connection is set up
 * stops the request there (NOT_SENT, nothing reaches the server). */
typedef struct {
  int calls, fail;
} wire_count;

static int count_wire(void *ctx) {
  wire_count *w = ctx;
  w->calls++;
  return w->fail ? -1 : 0;
}

static ll_status wired(fixture *f, const char *method, const char *path,
                       int mutation, wire_count *w) {
  char url[256];
  snprintf(url, sizeof url, "http://127.0.0.1:%d%s", f->s.port, path);
  ll_http_request req = {.method = method,
                         .url = url,
                         .mutation = mutation,
                         .on_wire = count_wire,
                         .wire_ctx = w};
  ll_headers_init(&req.headers);
  ll_error err = {0};
  ll_status st = f->t->exchange(f->t, &req, &f->r, &err);
  ll_headers_cleanup(&req.headers);
  return st;
}

static void test_on_wire(void) {
  fixture *f = fx_open(NULL, 0, 0, 0, 5000);
  wire_count w = {0, 0};
  CHECK_INT(wired(f, "GET", "/a", 0, &w), LL_OK); /* connects first */
  CHECK_INT(w.calls, 1);
  CHECK_INT(f->r.status, 200);
  CHECK_INT(wired(f, "GET", "/b", 0, &w), LL_OK); /* reuses it */
  CHECK_INT(w.calls, 2);
  CHECK_INT(NCONNS(f->s), 1);
  w.fail = 1;
  CHECK_INT(wired(f, "PUT", "/blob", 1, &w), LL_OK); /* a fresh one */
  CHECK_INT(w.calls, 3);
  CHECK_INT(f->r.outcome, LL_OUTCOME_NOT_SENT);
  CHECK_INT(f->r.emitted_requests, 0);
  sleep_ms(100);
  CHECK_INT(server_count(&f->s, "PUT", "/blob"), 0);
  CHECK_INT(NREQ(f->s), 2);
  fx_close(f);
}

static void test_not_listening(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = loopback(0);
  socklen_t al = sizeof a;
  CHECK(bind(fd, (struct sockaddr *)&a, sizeof a) == 0);
  CHECK(getsockname(fd, (struct sockaddr *)&a, &al) == 0);
  close(fd); /* bound, never listened: connect is refused */

  fixture *f = fx_open(NULL, 0, 0, 0, 2000);
  CHECK_INT(exchange_to(f, ntohs(a.sin_port), "PUT", "/blob", 1, "x"), LL_OK);
  CHECK_INT(f->r.outcome, LL_OUTCOME_NOT_SENT);
  CHECK_INT(f->r.emitted_requests, 0);
  CHECK_INT(f->r.curl_code, CURLE_COULDNT_CONNECT);
  CHECK(strstr(f->r.transport_error, "onnect") != NULL);
  CHECK(f->r.mono_end_ns >= f->r.mono_start_ns);
  CHECK(f->r.utc_start_ms > 0);
  fx_close(f);
}

static void test_headers_reset_at_status_line(void) {
  static const char raw[] = "HTTP/1.1 100 Continue\r\nX-Junk: a\r\n\r\n"
                            "HTTP/1.1 201 Created\r\n"
                            "x-ms-request-id:   r1  \r\n"
                            "ETag: \"0x8D\"\r\n"
                            "Content-Length: 0\r\n\r\n";
  step script[1] = {{RAW, raw, sizeof raw - 1}};
  fixture *f = fx_open(script, 1, 0, 0, 5000);
  CHECK_INT(EX(f, "PUT", "/blob", 1, "abc"), LL_OK);
  CHECK_INT(f->r.outcome, LL_OUTCOME_RESPONSE);
  CHECK_INT(f->r.status, 201);
  CHECK(ll_headers_get(&f->r.headers, "X-Junk") == NULL);
  CHECK_STR(ll_headers_get(&f->r.headers, "X-MS-Request-Id"), "r1");
  CHECK_STR(ll_headers_get(&f->r.headers, "etag"), "\"0x8D\"");
  CHECK_INT(f->r.headers.n, 3);
  CHECK_INT(f->r.body_len, 0);
  CHECK(f->r.body != NULL);
  fx_close(f);
}

static char *big_response(size_t header_bytes, size_t body_bytes, size_t *len) {
  size_t cap = header_bytes + body_bytes + 256;
  char *p = malloc(cap);
  size_t n = (size_t)snprintf(p, cap, "HTTP/1.1 200 OK\r\n");
  for (int i = 0; n < header_bytes; i++)
    n += (size_t)snprintf(p + n, cap - n, "X-Pad-%05d: %090d\r\n", i, 0);
  n += (size_t)snprintf(p + n, cap - n, "Content-Length: %zu\r\n\r\n",
                        body_bytes);
  memset(p + n, 'b', body_bytes);
  *len = n + body_bytes;
  return p;
}

static void test_caps(void) {
  size_t blen, hlen;
  char *body = big_response(0, 10 * 1024, &blen);
  char *heads = big_response(100 * 1024, 10, &hlen);
  step script[1] = {{RAW, body, blen}};
  fixture *f = fx_open(script, 1, 1024, 0, 5000);
  CHECK_INT(EX(f, "GET", "/big-body", 0, NULL), LL_OK);
  CHECK_INT(f->r.outcome, LL_OUTCOME_UNKNOWN);
  CHECK_INT(f->r.body_truncated, 1);
  CHECK(f->r.body_len <= 1024);
  CHECK_INT(f->r.status, 0);
  CHECK_STR(f->r.transport_error, "response body exceeds 1024 bytes");
  fx_close(f);

  script[0] = (step){RAW, heads, hlen};
  f = fx_open(script, 1, 0, 0, 5000);
  CHECK_INT(EX(f, "GET", "/big-head", 0, NULL), LL_OK);
  CHECK_INT(f->r.outcome, LL_OUTCOME_UNKNOWN);
  CHECK_INT(f->r.emitted_requests, 1);
  CHECK_INT(f->r.body_truncated, 0);
  CHECK_STR(f->r.transport_error, "response headers exceed 65536 bytes");
  CHECK(f->r.headers.n < 1000);
  fx_close(f);
  free(body);
  free(heads);
}

static void test_garbage_and_timeout(void) {
  static const char junk[] = "hello\r\n\r\n";
  step script[2] = {{RAW, junk, sizeof junk - 1}, {HOLD, NULL, 0}};
  fixture *f = fx_open(script, 2, 0, 0, 300);
  CHECK_INT(EX(f, "GET", "/junk", 0, NULL), LL_OK);
  CHECK(f->r.outcome != LL_OUTCOME_RESPONSE);
  CHECK_INT(f->r.outcome, LL_OUTCOME_UNKNOWN);
  CHECK(f->r.curl_code != 0);

  CHECK_INT(EX(f, "PUT", "/slow", 1, "x"), LL_OK);
  CHECK_INT(f->r.outcome, LL_OUTCOME_UNKNOWN);
  CHECK_INT(f->r.emitted_requests, 1);
  CHECK_INT(f->r.curl_code, CURLE_OPERATION_TIMEDOUT);
  int64_t took_ms = (f->r.mono_end_ns - f->r.mono_start_ns) / 1000000;
  CHECK(took_ms >= 250 && took_ms < 3000);
  CHECK_INT(server_count(&f->s, "PUT", "/slow"), 1);
  fx_close(f);
}

static void test_put_on_the_wire(void) {
  fixture *f = fx_open(NULL, 0, 0, 0, 5000);
  const char *payload = "{\"purpose\":\"lease-handoff-lab\",\"revision\":1,"
                        "\"writer\":\"A\"}";
  CHECK_INT(EX(f, "PUT", "/c/b?comp=x", 1, payload), LL_OK);
  CHECK_INT(f->r.status, 200);
  CHECK_INT(f->r.emitted_requests, 1);
  CHECK_INT(EX(f, "PUT", "/empty", 1, ""), LL_OK);
  CHECK_INT(f->r.status, 200);
  CHECK_INT(EX(f, "HEAD", "/head", 0, NULL), LL_OK);
  CHECK_INT(f->r.status, 200);
  CHECK_INT(f->r.body_len, 0);
  CHECK_INT(EX(f, "GET", "/get", 0, NULL), LL_OK);
  CHECK_STR((const char *)f->r.body, "ok");
  CHECK_INT(EX(f, "DELETE", "/del", 1, NULL), LL_OK);
  CHECK_INT(f->r.status, 200);

  CHECK_INT(NREQ(f->s), 5);
  /* every mutation on a connection of its own, never reused afterwards;
   * the GET reuses the HEAD's connection */
  CHECK_INT(NCONNS(f->s), 4);
  static const int want_conn[] = {0, 1, 2, 2, 3};
  for (int i = 0; i < 5; i++)
    CHECK_INT(req_at(&f->s, i).conn, want_conn[i]);
  received put = req_at(&f->s, 0), empty = req_at(&f->s, 1);
  CHECK_STR(put.method, "PUT");
  CHECK_STR(put.path, "/c/b?comp=x");
  char want[64];
  snprintf(want, sizeof want, "\r\nContent-Length: %zu\r\n", strlen(payload));
  CHECK(strstr(put.head, want) != NULL);
  CHECK_INT(put.body_len, strlen(payload));
  CHECK(memcmp(put.body, payload, strlen(payload)) == 0);
  CHECK(strcasestr(put.head, "\r\nExpect:") == NULL);
  CHECK(strstr(put.head, "\r\nContent-Type: application/octet-stream\r\n"));
  CHECK(strstr(put.head, "\r\nx-ms-version: " LL_API_VERSION "\r\n"));
  CHECK(strcasestr(put.head, "urlencoded") == NULL);
  CHECK(strstr(empty.head, "\r\nContent-Length: 0\r\n") != NULL);
  CHECK(strcasestr(empty.head, "\r\nExpect:") == NULL);
  CHECK_STR(req_at(&f->s, 2).method, "HEAD");
  CHECK_STR(req_at(&f->s, 4).method, "DELETE");
  CHECK_INT(req_at(&f->s, 4).body_len, 0);
  fx_close(f);
}

static void test_check_url(void) {
  static const struct {
    const char *url;
    ll_code want;
  } rows[] = {
      {"https://acct.blob.core.windows.net", LL_OK},
      {"https://acct.blob.core.windows.net/c/b?sv=1&sig=abc", LL_OK},
      {"http://127.0.0.1:10000", LL_OK},
      {"http://127.9.8.7/x", LL_OK},
      {"http://localhost", LL_OK},
      {"HTTP://LOCALHOST:10000/devstoreaccount1", LL_OK},
      {"http://[::1]:1", LL_OK},
      {"http://example.com", LL_E_INSECURE},
      {"http://0.0.0.0:1", LL_E_INSECURE},
      {"http://128.0.0.1", LL_E_INSECURE},
      {"http://localhost.example.com", LL_E_INSECURE},
      {"http://[::2]", LL_E_INSECURE},
      {"ftp://x", LL_E_BAD_URL},
      {"not a url", LL_E_BAD_URL},
      {"acct.blob.core.windows.net/c", LL_E_BAD_URL},
      {"https://user@host", LL_E_BAD_URL},
      {"https://user:pw@host/x", LL_E_BAD_URL},
      {"https://host/x#frag", LL_E_BAD_URL},
      {"https://host/a b", LL_E_BAD_URL},
      {"https://host/a\r\nX: y", LL_E_BAD_URL},
      {"https://", LL_E_BAD_URL},
      {"https:///x", LL_E_BAD_URL},
      {"https:/x", LL_E_BAD_URL},
      {"http://127.0.0.1:80@evil.com/", LL_E_BAD_URL},
      {"", LL_E_BAD_URL},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    ll_error err = {0};
    ll_status st = ll_http_check_url(rows[i].url, &err);
    if (st != rows[i].want)
      fprintf(stderr, "row %zu: %s\n", i, err.message);
    CHECK_INT(st, rows[i].want);
    if (st != LL_OK) {
      CHECK(err.message[0] != '\0');
      CHECK(strchr(err.message, '\n') == NULL);
    }
  }
  ll_error err = {0};
  CHECK_INT(ll_http_check_url("http://evil.com/?sig=SECRET", &err),
            LL_E_INSECURE);
  CHECK(strstr(err.message, "SECRET") == NULL);
  CHECK(strstr(err.message, "evil.com") != NULL);
  CHECK(strstr(err.message, "https") != NULL);
  CHECK_INT(ll_http_check_url("https://u:SECRET@h/?sig=SECRET", &err),
            LL_E_BAD_URL);
  CHECK(strstr(err.message, "SECRET") == NULL);
}

/* On Linux, 0.0.0.0 reaches the loopback listener: the policy, not the
 * network, is what keeps this request home. */
static void test_insecure_never_connects(void) {
  fixture *f = fx_open(NULL, 0, 0, 0, 2000);
  char url[128];
  snprintf(url, sizeof url, "http://0.0.0.0:%d/c/b?sig=SECRET", f->s.port);
  ll_http_request req = {.method = "GET", .url = url};
  ll_error err = {0};
  CHECK_INT(f->t->exchange(f->t, &req, &f->r, &err), LL_E_INSECURE);
  CHECK(strstr(err.message, "SECRET") == NULL);
  CHECK_INT(f->r.outcome, LL_OUTCOME_NOT_SENT);
  CHECK_INT(f->r.emitted_requests, 0);
  sleep_ms(50);
  CHECK_INT(NCONNS(f->s), 0);
  CHECK_INT(NREQ(f->s), 0);

  /* premise: the same address does reach the server */
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = loopback(f->s.port);
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
  sleep_ms(100);
  CHECK_INT(NCONNS(f->s), 1);
  close(fd);

  /* misuse is refused before any I/O */
  req.url = "http://127.0.0.1:1/";
  req.method = "POST";
  CHECK_INT(f->t->exchange(f->t, &req, &f->r, &err), LL_E_USAGE);
  req.method = "GET";
  req.body = (const unsigned char *)"x";
  req.body_len = 1;
  CHECK_INT(f->t->exchange(f->t, &req, &f->r, &err), LL_E_USAGE);
  fx_close(f);
}

static void test_names(void) {
  CHECK_STR(ll_outcome_name(LL_OUTCOME_RESPONSE), "RESPONSE");
  CHECK_STR(ll_outcome_name(LL_OUTCOME_NOT_SENT), "NOT_SENT");
  CHECK_STR(ll_outcome_name(LL_OUTCOME_UNKNOWN), "UNKNOWN");
  CHECK(strncmp(ll_http_curl_version(), "libcurl/", 8) == 0);
  CHECK(strlen(ll_http_curl_version()) > 8);
  CHECK(ll_http_ssl_version() != NULL && *ll_http_ssl_version());
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  /* a proxy from the environment would stand between client and server */
  const char *proxies[] = {"http_proxy", "https_proxy", "HTTPS_PROXY",
                           "all_proxy",  "ALL_PROXY",   NULL};
  for (const char **p = proxies; *p; p++)
    unsetenv(*p);
  clk = ll_clock_new_real();

  test_names();
  test_check_url();
  test_resend_on_reused_read();
  test_mutation_fresh_connection();
  test_idle_reuse_limit();
  test_on_wire();
  test_not_listening();
  test_headers_reset_at_status_line();
  test_caps();
  test_garbage_and_timeout();
  test_put_on_the_wire();
  test_insecure_never_connects();

  ll_clock_free(clk);
  return ll_test_report("test_http");
}
