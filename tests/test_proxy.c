/* core/transport/proxy.c: which proxy a run uses, from which source, and
 * what is recorded of it (never its userinfo). The environment is a table
 * passed as the lookup function, not setenv. */
#include <stdio.h>
#include <string.h>

#include "proxy.h"
#include "testlib.h"

static const char *const *table; /* name, value, ..., NULL */

static const char *lookup(const char *name) {
  for (size_t i = 0; table[i]; i += 2)
    if (strcmp(table[i], name) == 0)
      return table[i + 1];
  return NULL;
}

static void test_precedence(void) {
  static const struct {
    const char *opt, *account;
    const char *env[12];
    const char *shown, *source;
  } t[] = {
      {NULL, "https://a.blob.core.windows.net", {NULL}, "", "none"},
      {NULL,
       "https://a",
       {"ALL_PROXY", "http://p4:4", "all_proxy", "http://p3:3", "HTTPS_PROXY",
        "http://p2:2", "https_proxy", "http://p1:1", NULL},
       "http://p1:1",
       "https_proxy"},
      {NULL,
       "https://a",
       {"ALL_PROXY", "http://p4:4", "all_proxy", "http://p3:3", "HTTPS_PROXY",
        "http://p2:2", NULL},
       "http://p2:2",
       "HTTPS_PROXY"},
      {NULL,
       "https://a",
       {"ALL_PROXY", "http://p4:4", "all_proxy", "http://p3:3", NULL},
       "http://p3:3",
       "all_proxy"},
      {NULL,
       "https://a",
       {"ALL_PROXY", "http://p4:4", NULL},
       "http://p4:4",
       "ALL_PROXY"},
      /* an empty variable is not set */
      {NULL,
       "https://a",
       {"https_proxy", "", "ALL_PROXY", "http://p4:4", NULL},
       "http://p4:4",
       "ALL_PROXY"},
      /* https ignores http_proxy; http ignores HTTPS_PROXY and HTTP_PROXY */
      {NULL, "https://a", {"http_proxy", "http://h:1", NULL}, "", "none"},
      {NULL,
       "http://127.0.0.1:10000",
       {"HTTPS_PROXY", "http://p2:2", "HTTP_PROXY", "http://H:1", NULL},
       "",
       "none"},
      {NULL,
       "http://127.0.0.1:10000",
       {"http_proxy", "http://[::1]:1", "all_proxy", "http://p3:3", NULL},
       "http://[::1]:1",
       "http_proxy"},
      /* the option wins over every variable */
      {"https://opt.example:8443",
       "https://a",
       {"https_proxy", "http://p1:1", NULL},
       "https://opt.example:8443",
       "--proxy"},
      /* default ports, userinfo stripped */
      {NULL,
       "https://a",
       {"HTTPS_PROXY", "http://user:secret@127.0.0.1:9", NULL},
       "http://127.0.0.1:9",
       "HTTPS_PROXY"},
      {"http://u:pw@proxy.corp",
       "https://a",
       {NULL},
       "http://proxy.corp:1080", /* libcurl's default, not http's 80 */
       "--proxy"},
      {"https://proxy.corp",
       "https://a",
       {NULL},
       "https://proxy.corp:443",
       "--proxy"},
      {"socks5h://u@s.corp",
       "https://a",
       {NULL},
       "socks5h://s.corp:1080",
       "--proxy"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    table = t[i].env;
    ll_proxy p;
    ll_error err = {0};
    ll_status st =
        ll_proxy_resolve(t[i].opt, NULL, t[i].account, lookup, &p, &err);
    if (st != LL_OK || strcmp(p.shown, t[i].shown) != 0 ||
        strcmp(p.source, t[i].source) != 0)
      fprintf(stderr, "row %zu: %s %s (%s)\n", i, p.shown, p.source,
              err.message);
    CHECK_INT(st, LL_OK);
    CHECK_STR(p.shown, t[i].shown);
    CHECK_STR(p.source, t[i].source);
    /* what libcurl gets is the text as given, credentials and all */
    const char *given = t[i].opt ? t[i].opt : NULL;
    if (given)
      CHECK_STR(p.url, given);
    CHECK(strstr(p.shown, "secret") == NULL && strstr(p.shown, "pw") == NULL &&
          strchr(p.shown, '@') == NULL);
    ll_proxy_clear(&p);
    CHECK_STR(p.url, "");
  }
}

static void test_noproxy(void) {
  static const char *const env[] = {"NO_PROXY", "b.example", "no_proxy",
                                    "a.example", NULL};
  static const char *const upper[] = {"NO_PROXY", "b.example", NULL};
  ll_proxy p;
  ll_error err = {0};
  table = env;
  CHECK_INT(ll_proxy_resolve(NULL, NULL, "https://a", lookup, &p, &err), LL_OK);
  CHECK_STR(p.noproxy, "a.example");
  CHECK_STR(p.noproxy_source, "no_proxy");
  CHECK_INT(ll_proxy_resolve(NULL, "c.example", "https://a", lookup, &p, &err),
            LL_OK);
  CHECK_STR(p.noproxy, "c.example");
  CHECK_STR(p.noproxy_source, "--no-proxy");
  table = upper;
  CHECK_INT(ll_proxy_resolve(NULL, NULL, "https://a", lookup, &p, &err), LL_OK);
  CHECK_STR(p.noproxy, "b.example");
  CHECK_STR(p.noproxy_source, "NO_PROXY");
  /* no lookup: the environment is not read at all */
  CHECK_INT(ll_proxy_resolve(NULL, NULL, "https://a", NULL, &p, &err), LL_OK);
  CHECK_STR(p.url, "");
  CHECK_STR(p.source, "none");
  CHECK_STR(p.noproxy, "");
}

static void test_bad(void) {
  static const char *const bad[] = {"notaurl", "ftp://p:21", "http://", "://x",
                                    "http://u:secret@"};
  static const char *const none[] = {NULL};
  table = none;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ll_proxy p;
    ll_error err = {0};
    CHECK_INT(ll_proxy_resolve(bad[i], NULL, "https://a", lookup, &p, &err),
              LL_E_USAGE);
    CHECK(strstr(err.message, "--proxy") != NULL);
    CHECK(strstr(err.message, "secret") == NULL);
    CHECK(strchr(err.message, '\n') == NULL);
    CHECK_STR(p.url, "");
  }
  static const char *const env[] = {"https_proxy", "nope", NULL};
  table = env;
  ll_proxy p;
  ll_error err = {0};
  CHECK_INT(ll_proxy_resolve(NULL, NULL, "https://a", lookup, &p, &err),
            LL_E_USAGE);
  CHECK(strstr(err.message, "https_proxy") != NULL);
}

/* Invariant 10: a loopback target never goes through a proxy on another
 * host (helper-34: http_proxy off loopback carried the bearer token in
 * clear, and the run was labelled "emulator"). */
static void test_loopback_target(void) {
  static const struct {
    const char *opt, *account, *env_name, *env_value;
    ll_status want;
    const char *says;
  } t[] = {
      {NULL, "http://127.0.0.1:10000/devstoreaccount1", "http_proxy",
       "http://192.0.2.1:3128", LL_E_INSECURE,
       "the proxy from http_proxy (http://192.0.2.1:3128) is not on loopback, "
       "and the account URL names loopback: requests and the token, in "
       "clear, would leave this machine; unset http_proxy for this run"},
      {NULL, "https://localhost:10000/devstoreaccount1", "all_proxy",
       "socks5h://proxy.corp", LL_E_INSECURE,
       "the proxy from all_proxy (socks5h://proxy.corp:1080) is not on "
       "loopback, and the account URL names loopback: requests would leave "
       "this machine"},
      {"https://proxy.corp", "https://[::1]:10000/devstoreaccount1", NULL, NULL,
       LL_E_INSECURE, "drop --proxy for this run"},
      {NULL, "http://127.0.0.1:10000/devstoreaccount1", "http_proxy",
       "http://127.0.0.1:3128", LL_OK, NULL},
      {NULL, "https://a.blob.core.windows.net", "https_proxy",
       "http://192.0.2.1:3128", LL_OK, NULL},
  };
  /* what the no-proxy list sends direct, as libcurl does (helper-35: the
   * refusal came before the list was read) */
  static const struct {
    const char *account, *noproxy;
    ll_status want;
  } np[] = {
      {"https://127.0.0.1:10000/x", "127.0.0.1,localhost", LL_OK},
      {"https://127.0.0.1:10000/x", " .example.com , 127.0.0.1 ", LL_OK},
      {"https://127.0.0.1:10000/x", "*", LL_OK},
      {"https://127.0.0.2:10000/x", "127.0.0.0/8", LL_OK},
      {"https://LOCALHOST:10000/x", "localhost", LL_OK},
      {"https://[::1]:10000/x", "[::1]", LL_OK},
      {"https://[::1]:10000/x", "::1", LL_OK},
      {"https://127.0.0.1:10000/x", "localhost", LL_E_INSECURE},
      {"https://127.0.0.1:10000/x", "127.0.0.10", LL_E_INSECURE},
      {"https://127.0.0.1:10000/x", "10.0.0.0/8", LL_E_INSECURE},
      {"https://127.0.0.1:10000/x", "", LL_E_INSECURE},
  };
  for (size_t i = 0; i < sizeof np / sizeof np[0]; i++) {
    const char *none[] = {NULL};
    table = none;
    ll_proxy p;
    ll_error err = {0};
    CHECK_INT(ll_proxy_resolve("http://proxy.corp.example:3128", np[i].noproxy,
                               np[i].account, lookup, &p, &err),
              np[i].want);
    if (np[i].want != LL_OK)
      CHECK(strstr(err.message, "to no_proxy") != NULL);
    if (ll_test_fail)
      fprintf(stderr, "  no-proxy row %zu: %s\n", i, err.message);
  }
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    const char *env[] = {t[i].env_name, t[i].env_value, NULL};
    table = env;
    ll_proxy p;
    ll_error err = {0};
    ll_status st =
        ll_proxy_resolve(t[i].opt, NULL, t[i].account, lookup, &p, &err);
    CHECK_INT(st, t[i].want);
    if (t[i].says)
      CHECK(strstr(err.message, t[i].says) != NULL);
    if (st != LL_OK)
      CHECK_STR(p.url, "");
    if (ll_test_fail)
      fprintf(stderr, "  loopback row %zu: %s\n", i, err.message);
  }
}

int main(void) {
  test_precedence();
  test_loopback_target();
  test_noproxy();
  test_bad();
  return ll_test_report("test_proxy");
}
