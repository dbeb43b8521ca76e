/* core/transport/url.c: one reading of a URL and one transport rule for
 * the three places that judge one (ll_http_check_url for every request,
 * ll_target_init for the account URL, ll_auth_check_identity_url for the
 * managed identity endpoint), and the endpoint class of what they accept.
 * Table-driven with hostile hosts: each row gives what each caller must
 * answer. Rows marked "fixed" are those where a copy of the rule used to
 * answer otherwise (see the comment on the row). */
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "blob.h"
#include "endpoint.h"
#include "http.h"
#include "testlib.h"
#include "url.h"

static void test_host_loopback(void) {
  static const struct {
    const char *host;
    int loopback;
  } t[] = {
      {"localhost", 1},
      {"LocalHost", 1},
      {"LOCALHOST", 1},
      {"localhost.", 0}, /* a different name to the resolver's search */
      {"localhost.evil.com", 0},
      {"127.0.0.1", 1},
      {"127.255.255.254", 1},
      {"127.0.0.1.evil.com", 0},
      {"128.0.0.1", 0},
      {"0.0.0.0", 0}, /* reaches the loopback listener on Linux */
      {"0x7f.1", 0},  /* not a dotted quad; libcurl normalises it first */
      {"2130706433", 0},
      {"[::1]", 1},
      {"::1", 1},
      {"[0:0:0:0:0:0:0:1]", 1},
      {"[::2]", 0},
      {"[::ffff:127.0.0.1]", 0}, /* IPv4-mapped: not taken as loopback */
      {"[::127.0.0.1]", 0},
      {"[::1]:10000", 0}, /* a port is not part of a host */
      {"127.0.0.1:10000", 0},
      {"[::1", 0},
      {"", 0},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    if (ll_url_host_loopback(t[i].host) != t[i].loopback)
      fprintf(stderr, "loopback %s\n", t[i].host);
    CHECK_INT(ll_url_host_loopback(t[i].host), t[i].loopback);
  }
  CHECK(!ll_url_host_loopback(NULL));
  CHECK(ll_url_host_imds("169.254.169.254"));
  CHECK(!ll_url_host_imds("169.254.169.253"));
  CHECK(!ll_url_host_imds("169.254.169.254.evil.com"));
  CHECK(!ll_url_host_imds(NULL));
}

/* What each caller answers for one URL: the request check, the identity
 * endpoint check and the account URL check. */
static const struct {
  const char *url;
  ll_code http, identity, account;
  const char *host; /* as parsed, when the URL parses */
} rows[] = {
    {"https://acct.blob.core.windows.net", LL_OK, LL_OK, LL_OK,
     "acct.blob.core.windows.net"},
    {"HTTPS://ACCT.BLOB.CORE.WINDOWS.NET", LL_OK, LL_OK, LL_OK,
     "ACCT.BLOB.CORE.WINDOWS.NET"},
    {"http://127.0.0.1", LL_OK, LL_OK, LL_OK, "127.0.0.1"}, /* no port */
    {"http://127.0.0.1:10000/devstoreaccount1", LL_OK, LL_OK, LL_OK,
     "127.0.0.1"},
    {"http://[::1]:10000/devstoreaccount1", LL_OK, LL_OK, LL_OK, "[::1]"},
    {"http://[0:0::1]:10000/x", LL_OK, LL_OK, LL_OK, "[::1]"},
    {"http://0x7f.1:10000/x", LL_OK, LL_OK, LL_OK, "127.0.0.1"},
    {"http://2130706433/", LL_OK, LL_OK, LL_OK, "127.0.0.1"},
    {"http://localhost:10000", LL_OK, LL_OK, LL_OK, "localhost"},
    /* fixed: the identity copy compared "localhost" case-sensitively */
    {"HTTP://LOCALHOST:8081/msi/token", LL_OK, LL_OK, LL_OK, "LOCALHOST"},
    {"http://localhost./x", LL_E_INSECURE, LL_E_INSECURE, LL_E_INSECURE,
     "localhost."},
    {"http://localhost.evil.com/x", LL_E_INSECURE, LL_E_INSECURE, LL_E_INSECURE,
     "localhost.evil.com"},
    {"http://127.0.0.1.evil.com/x", LL_E_INSECURE, LL_E_INSECURE, LL_E_INSECURE,
     "127.0.0.1.evil.com"},
    {"http://[::ffff:127.0.0.1]/x", LL_E_INSECURE, LL_E_INSECURE, LL_E_INSECURE,
     "[::ffff:127.0.0.1]"},
    {"http://[::2]:10000/x", LL_E_INSECURE, LL_E_INSECURE, LL_E_INSECURE,
     "[::2]"},
    {"http://[fe80::1%25eth0]/x", LL_E_INSECURE, LL_E_INSECURE, LL_E_INSECURE,
     "[fe80::1]"},
    {"http://0.0.0.0:10000/x", LL_E_INSECURE, LL_E_INSECURE, LL_E_INSECURE,
     "0.0.0.0"},
    /* IMDS: plain http for the identity endpoint only */
    {"http://169.254.169.254/metadata/identity/oauth2/token", LL_E_INSECURE,
     LL_OK, LL_E_INSECURE, "169.254.169.254"},
    {"http://0xa9.254.169.254/metadata", LL_E_INSECURE, LL_OK, LL_E_INSECURE,
     "169.254.169.254"},
    {"http://169.254.169.253/metadata", LL_E_INSECURE, LL_E_INSECURE,
     LL_E_INSECURE, "169.254.169.253"},
    /* fixed: the identity copy did not look at userinfo; it passed the
     * https ones and judged the http ones by the host after the @ */
    {"https://127.0.0.1@evil.com/", LL_E_BAD_URL, LL_E_BAD_URL, LL_E_BAD_URL,
     NULL},
    {"http://127.0.0.1@evil.com/", LL_E_BAD_URL, LL_E_BAD_URL, LL_E_BAD_URL,
     NULL},
    {"http://evil.com@127.0.0.1/", LL_E_BAD_URL, LL_E_BAD_URL, LL_E_BAD_URL,
     NULL},
    {"http://127.0.0.1:80@evil.com/", LL_E_BAD_URL, LL_E_BAD_URL, LL_E_BAD_URL,
     NULL},
    {"https://u:pw@acct.blob.core.windows.net", LL_E_BAD_URL, LL_E_BAD_URL,
     LL_E_BAD_URL, NULL},
    /* fixed: curl reads "https:/x" and "https:///x" as host x; the
     * identity and account copies took both */
    {"https:/x", LL_E_BAD_URL, LL_E_BAD_URL, LL_E_BAD_URL, NULL},
    {"https:///x", LL_E_BAD_URL, LL_E_BAD_URL, LL_E_BAD_URL, NULL},
    /* fixed: the identity copy did not refuse a fragment */
    {"https://h/x#frag", LL_E_BAD_URL, LL_E_BAD_URL, LL_E_BAD_URL, NULL},
    {"http://[::1/x", LL_E_BAD_URL, LL_E_BAD_URL, LL_E_BAD_URL, NULL},
    {"http://127.0.0.1:99999/x", LL_E_BAD_URL, LL_E_BAD_URL, LL_E_BAD_URL,
     NULL},
    {"ftp://127.0.0.1/x", LL_E_BAD_URL, LL_E_BAD_URL, LL_E_BAD_URL, NULL},
    {"127.0.0.1/x", LL_E_BAD_URL, LL_E_BAD_URL, LL_E_BAD_URL, NULL},
    {"https://h/a b", LL_E_BAD_URL, LL_E_BAD_URL, LL_E_BAD_URL, NULL},
    {"", LL_E_BAD_URL, LL_E_BAD_URL, LL_E_BAD_URL, NULL},
};

static void test_callers_agree(void) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const char *url = rows[i].url;
    ll_error e1 = {0}, e2 = {0}, e3 = {0};
    ll_status h = ll_http_check_url(url, &e1);
    ll_status id = ll_auth_check_identity_url(url, &e2);
    ll_target t;
    ll_status acct = ll_target_init(&t, url, "lease-lab", "b.json", &e3);
    if (h != rows[i].http || id != rows[i].identity || acct != rows[i].account)
      fprintf(stderr,
              "row %zu %s: http %s (%s), identity %s (%s), account %s "
              "(%s)\n",
              i, url, ll_code_name(h), e1.message, ll_code_name(id), e2.message,
              ll_code_name(acct), e3.message);
    CHECK_STR(ll_code_name(h), ll_code_name(rows[i].http));
    CHECK_STR(ll_code_name(id), ll_code_name(rows[i].identity));
    CHECK_STR(ll_code_name(acct), ll_code_name(rows[i].account));
    ll_url u;
    ll_error pe = {0};
    ll_status ps = ll_url_parse(url, &u, &pe);
    CHECK_INT(ps == LL_OK, rows[i].host != NULL);
    if (ps != LL_OK) {
      CHECK_INT(ps, LL_E_BAD_URL);
      CHECK(pe.message[0] != '\0');
      CHECK(strchr(pe.message, '\n') == NULL);
      continue;
    }
    CHECK_STR(u.host, rows[i].host);
    CHECK(strcmp(u.scheme, "http") == 0 || strcmp(u.scheme, "https") == 0);
    /* The endpoint class of the host agrees with the transport rule: what
     * http may reach is what the manifest calls an emulator. */
    if (strcmp(u.scheme, "http") == 0) {
      char bare[256];
      ll_endpoint_bare_host(u.host, bare, sizeof bare);
      CHECK_INT(ll_endpoint_classify(bare) == LL_HOST_LOOPBACK,
                rows[i].http == LL_OK);
    }
    ll_url_free(&u);
  }
}

/* The account URL is stored as libcurl reads it: the host libcurl will
 * connect to is the host the evidence names. */
static void test_account_normalised(void) {
  static const struct {
    const char *in, *stored;
  } t[] = {
      {"http://0x7f.1:10000/devstoreaccount1",
       "http://127.0.0.1:10000/devstoreaccount1"},
      {"http://[0:0::1]:10000/", "http://[::1]:10000"},
      {"HTTP://LocalHost:10000/x", "http://LocalHost:10000/x"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    ll_target tg;
    CHECK_INT(ll_target_init(&tg, t[i].in, "lease-lab", "b.json", NULL), LL_OK);
    CHECK_STR(tg.account_url, t[i].stored);
  }
}

/* Messages name the host or scheme, never the query or the userinfo. */
static void test_messages(void) {
  ll_error e = {0};
  CHECK_INT(
      ll_url_check("http://evil.com/c/b?sig=SECRET", LL_URL_HTTP_LOOPBACK, &e),
      LL_E_INSECURE);
  CHECK(strstr(e.message, "evil.com") != NULL);
  CHECK(strstr(e.message, "https") != NULL);
  CHECK(strstr(e.message, "SECRET") == NULL);
  CHECK_INT(ll_url_check("http://evil.com/?sig=SECRET",
                         LL_URL_HTTP_LOOPBACK_OR_IMDS, &e),
            LL_E_INSECURE);
  CHECK(strstr(e.message, "IMDS") != NULL);
  CHECK(strstr(e.message, "SECRET") == NULL);
  CHECK_INT(ll_url_check("https://u:SECRET@h/", LL_URL_HTTP_LOOPBACK, &e),
            LL_E_BAD_URL);
  CHECK(strstr(e.message, "SECRET") == NULL);
  CHECK(strstr(e.message, "userinfo") != NULL);
  CHECK_INT(ll_auth_check_identity_url("http://example.com/?sig=SECRET", &e),
            LL_E_INSECURE);
  CHECK(strstr(e.message, "managed identity endpoint") != NULL);
  CHECK(strstr(e.message, "example.com") != NULL);
  CHECK(strstr(e.message, "SECRET") == NULL);
  ll_target t;
  CHECK_INT(
      ll_target_init(&t, "http://example.com/a", "lease-lab", "b.json", &e),
      LL_E_INSECURE);
  CHECK(strstr(e.message, "account URL") != NULL);
  CHECK(strstr(e.message, "example.com") != NULL);
  /* what ll_url_text hands back is the caller's to free() */
  ll_url u;
  char *text = NULL;
  CHECK_INT(ll_url_parse("https://[0::1]:1/a/../b", &u, &e), LL_OK);
  CHECK_STR(u.path, "/a/../b"); /* as written: blob.c refuses dot segments */
  CHECK_INT(ll_url_text(&u, &text, &e), LL_OK);
  CHECK_STR(text, "https://[::1]:1/a/../b");
  free(text);
  ll_url_free(&u);
  ll_url_free(&u); /* idempotent */
}

int main(void) {
  test_host_loopback();
  test_callers_agree();
  test_account_normalised();
  test_messages();
  return ll_test_report("test_url");
}
