/* Managed identity: IMDS and App Service against a forked loopback
 * server, the endpoint checks, and no secret in any error message. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auth_fixture.h"
#include "testlib.h"

/* A one-shot HTTP server in a child process: answers one request, then
 * sends the request head back through a pipe. */
typedef struct {
  pid_t pid;
  int rfd;
  int port;
} server;

static int server_start(server *s, int status, const char *body) {
  int lfd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t sl = sizeof sa;
  int p[2];
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
      listen(lfd, 1) != 0 ||
      getsockname(lfd, (struct sockaddr *)&sa, &sl) != 0 || pipe(p) != 0)
    return -1;
  s->port = ntohs(sa.sin_port);
  fflush(NULL);
  s->pid = fork();
  if (s->pid == 0) {
    close(p[0]);
    struct pollfd pf = {.fd = lfd, .events = POLLIN};
    if (poll(&pf, 1, 10000) != 1)
      _exit(2);
    int fd = accept(lfd, NULL, NULL);
    char req[8192];
    size_t n = 0;
    while (n < sizeof req - 1) {
      ssize_t r = read(fd, req + n, sizeof req - 1 - n);
      if (r <= 0)
        break;
      n += (size_t)r;
      req[n] = '\0';
      if (strstr(req, "\r\n\r\n"))
        break;
    }
    char head[256];
    int hl = snprintf(head, sizeof head,
                      "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
                      "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                      status, strlen(body));
    if (write(fd, head, (size_t)hl) < 0 || write(fd, body, strlen(body)) < 0 ||
        write(p[1], req, n) < 0)
      _exit(3);
    close(fd);
    _exit(0);
  }
  close(lfd);
  close(p[1]);
  s->rfd = p[0];
  return s->pid > 0 ? 0 : -1;
}

/* The request the server saw; waits for the child. */
static void server_finish(server *s, char *req, size_t cap) {
  size_t n = 0;
  ssize_t r;
  while (n < cap - 1 && (r = read(s->rfd, req + n, cap - 1 - n)) > 0)
    n += (size_t)r;
  req[n] = '\0';
  close(s->rfd);
  int st = 0;
  waitpid(s->pid, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_identity(ll_clock *c) {
  unsetenv("IDENTITY_ENDPOINT");
  unsetenv("IDENTITY_HEADER");
  char *tok = keep(ll_auth_dev_token(now_s(), 3600));
  char body[4200], ep[200], req[8192];
  int64_t on = now_s() + 1800; /* earlier than the JWT's exp */
  snprintf(body, sizeof body,
           "{\"access_token\":\"%s\",\"expires_on\":\"%" PRId64
           "\",\"token_type\":\"Bearer\"}",
           tok, on);
  server s;
  ll_error err = {0};

  /* IMDS on the loopback override. */
  CHECK_INT(server_start(&s, 200, body), 0);
  snprintf(ep, sizeof ep, "http://127.0.0.1:%d/metadata/identity/oauth2/token",
           s.port);
  ll_auth_options o = {.kind = LL_AUTH_MANAGED_IDENTITY,
                       .imds_endpoint = ep,
                       .client_id = "0b7c9e3a-client"};
  ll_auth *a = ll_auth_new(&o, c, 0, &err);
  server_finish(&s, req, sizeof req);
  CHECK(a != NULL);
  CHECK_STR(ll_auth_secret(a, 0), tok);
  CHECK_INT(ll_auth_expires_utc_ms(a), on * 1000);
  ll_auth_free(a);
  CHECK(strncmp(req,
                "GET /metadata/identity/oauth2/token?api-version=2018-02-01"
                "&resource=https%3A%2F%2Fstorage.azure.com%2F"
                "&client_id=0b7c9e3a-client HTTP/1.1\r\n",
                strlen("GET /metadata/identity/oauth2/token?api-version="
                       "2018-02-01&resource=https%3A%2F%2Fstorage.azure.com"
                       "%2F&client_id=0b7c9e3a-client HTTP/1.1\r\n")) == 0);
  CHECK(strstr(req, "\r\nMetadata: true\r\n") != NULL);
  CHECK(strstr(req, "X-IDENTITY-HEADER") == NULL);

  /* App Service wins when both variables are set. */
  CHECK_INT(server_start(&s, 200, body), 0);
  snprintf(ep, sizeof ep, "http://127.0.0.1:%d/msi/token", s.port);
  setenv("IDENTITY_ENDPOINT", ep, 1);
  setenv("IDENTITY_HEADER", "identity-header-secret-5150", 1);
  add_secret("identity-header-secret-5150");
  ll_auth_options ao = {.kind = LL_AUTH_MANAGED_IDENTITY,
                        .imds_endpoint = "http://example.com/unused",
                        .resource = "https://acct.blob.core.windows.net"};
  a = ll_auth_new(&ao, c, 0, &err);
  server_finish(&s, req, sizeof req);
  CHECK(a != NULL);
  CHECK_STR(ll_auth_secret(a, 0), tok);
  ll_auth_free(a);
  CHECK(strstr(req, "GET /msi/token?api-version=2019-08-01&resource=https%3A"
                    "%2F%2Facct.blob.core.windows.net HTTP/1.1\r\n") == req);
  CHECK(strstr(req, "\r\nX-IDENTITY-HEADER: identity-header-secret-5150\r\n"));
  CHECK(strstr(req, "Metadata:") == NULL);

  /* An error answer: the body is never repeated, the error code is. */
  CHECK_INT(server_start(&s, 400,
                         "{\"error\":\"invalid_request\",\"error_description\":"
                         "\"Identity not found imds-body-secret\"}"),
            0);
  snprintf(ep, sizeof ep, "http://127.0.0.1:%d/msi/token", s.port);
  setenv("IDENTITY_ENDPOINT", ep, 1);
  add_secret("imds-body-secret");
  err = expect_fail(&ao, c, 0, LL_E_AUTH);
  server_finish(&s, req, sizeof req);
  CHECK(strstr(err.message, "HTTP 400 invalid_request") != NULL);
  unsetenv("IDENTITY_ENDPOINT");
  unsetenv("IDENTITY_HEADER");

  /* 200 without access_token; then a body that is not JSON. */
  static const char *const bodies[] = {"{\"token_type\":\"Bearer\"}",
                                       "<html>imds-body-secret</html>"};
  for (int i = 0; i < 2; i++) {
    CHECK_INT(server_start(&s, 200, bodies[i]), 0);
    snprintf(ep, sizeof ep, "http://127.0.0.1:%d/token", s.port);
    err = expect_fail(&o, c, 0, LL_E_AUTH);
    server_finish(&s, req, sizeof req);
    CHECK(strstr(err.message, "access_token") != NULL);
  }

  /* An expired token from the endpoint goes through the same preflight. */
  char *old = keep(ll_auth_dev_token(now_s() - 7200, 3600));
  snprintf(body, sizeof body, "{\"access_token\":\"%s\"}", old);
  CHECK_INT(server_start(&s, 200, body), 0);
  snprintf(ep, sizeof ep, "http://127.0.0.1:%d/token", s.port);
  err = expect_fail(&o, c, 0, LL_E_AUTH);
  server_finish(&s, req, sizeof req);
  CHECK(strstr(err.message, "expired") != NULL);

  /* Nobody listening: one attempt, a prompt AUTH failure. */
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t sl = sizeof sa;
  CHECK(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
  CHECK(getsockname(fd, (struct sockaddr *)&sa, &sl) == 0);
  snprintf(ep, sizeof ep, "http://127.0.0.1:%d/token", ntohs(sa.sin_port));
  err = expect_fail(&o, c, 0, LL_E_AUTH);
  CHECK(strstr(err.message, "unreachable") != NULL);
  close(fd);

  o.imds_endpoint = "http://example.com/metadata/identity/oauth2/token";
  expect_fail(&o, c, 0, LL_E_INSECURE);
}

/* The identity endpoint never goes through a proxy: with every proxy
 * variable naming a dead port (nothing listens on 127.0.0.1:9), the token
 * still comes from the loopback server. */
static void test_identity_no_proxy(ll_clock *c) {
  static const char *const vars[] = {"http_proxy",  "HTTP_PROXY", "https_proxy",
                                     "HTTPS_PROXY", "all_proxy",  "ALL_PROXY"};
  unsetenv("IDENTITY_ENDPOINT");
  unsetenv("IDENTITY_HEADER");
  unsetenv("no_proxy");
  unsetenv("NO_PROXY");
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    setenv(vars[i], "http://127.0.0.1:9", 1);
  char *tok = keep(ll_auth_dev_token(now_s(), 3600));
  char body[4200], ep[200], req[8192];
  snprintf(body, sizeof body,
           "{\"access_token\":\"%s\",\"expires_on\":\"%" PRId64
           "\",\"token_type\":\"Bearer\"}",
           tok, now_s() + 1800);
  server s;
  ll_error err = {0};
  CHECK_INT(server_start(&s, 200, body), 0);
  snprintf(ep, sizeof ep, "http://127.0.0.1:%d/metadata/identity/oauth2/token",
           s.port);
  ll_auth_options o = {.kind = LL_AUTH_MANAGED_IDENTITY, .imds_endpoint = ep};
  ll_auth *a = ll_auth_new(&o, c, 0, &err);
  server_finish(&s, req, sizeof req);
  CHECK(a != NULL);
  if (a)
    CHECK_STR(ll_auth_secret(a, 0), tok);
  ll_auth_free(a);
  /* a request through a proxy names the absolute URL */
  CHECK(strncmp(req, "GET /metadata/", 14) == 0);
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    unsetenv(vars[i]);
}

static void test_identity_url_table(void) {
  static const struct {
    const char *url;
    ll_code code;
  } rows[] = {
      {"http://169.254.169.254/metadata/identity/oauth2/token", LL_OK},
      {"http://127.0.0.1:41741/msi/token", LL_OK},
      {"http://127.9.8.7/x", LL_OK},
      {"http://localhost:8081/msi/token", LL_OK},
      {"http://[::1]:8081/msi/token", LL_OK},
      {"https://example.com/token", LL_OK},
      {"http://example.com/token", LL_E_INSECURE},
      {"http://169.254.169.253/metadata", LL_E_INSECURE},
      {"http://127.0.0.1.example.com/x", LL_E_INSECURE},
      {"http://10.0.0.1/x", LL_E_INSECURE},
      {"ftp://127.0.0.1/x", LL_E_BAD_URL},
      {"169.254.169.254/metadata", LL_E_BAD_URL},
      {"", LL_E_BAD_URL},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    ll_error err = {0};
    ll_status st = ll_auth_check_identity_url(rows[i].url, &err);
    if (st != rows[i].code)
      fprintf(stderr, "url row %zu (%s): %s\n", i, rows[i].url, err.message);
    CHECK_STR(ll_code_name(st), ll_code_name(rows[i].code));
  }
}

int main(void) {
  clear_credential_env();
  ll_clock *c = ll_clock_new_real();
  test_identity(c);
  test_identity_no_proxy(c);
  test_identity_url_table();
  fprintf(stderr, "secrets scanned for: %d\n", secret_count());
  CHECK(secret_count() >= 4); /* the scan had secrets to look for */
  free_kept();
  ll_clock_free(c);
  return ll_test_report("test_auth_identity");
}
