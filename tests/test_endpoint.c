/* core/transport/endpoint.c: which account hosts are Azure, loopback or the
 * replay placeholder, and whether an endpoint kind agrees with its host (the
 * rule the manifest applies before a run and verify after). Table-driven. */
#include <string.h>
#include <strings.h>

#include "endpoint.h"
#include "testlib.h"

static void test_classify(void) {
  static const struct {
    const char *host; /* as recorded in account_host */
    ll_host_class want;
  } t[] = {
      {"acct.blob.core.windows.net", LL_HOST_AZURE},
      {"ACCT.Blob.Core.Windows.Net", LL_HOST_AZURE},
      {"acct.blob.core.windows.net:443", LL_HOST_AZURE},
      {"acct-secondary.blob.core.windows.net", LL_HOST_AZURE},
      {"acct.privatelink.blob.core.windows.net", LL_HOST_AZURE},
      {"acct.blob.core.chinacloudapi.cn", LL_HOST_AZURE},
      {"acct.blob.core.usgovcloudapi.net", LL_HOST_AZURE},
      {"acct.z23.blob.storage.azure.net", LL_HOST_AZURE},
      {"blob.core.windows.net", LL_HOST_OTHER},  /* no account */
      {".blob.core.windows.net", LL_HOST_OTHER}, /* empty account */
      {"acct.blob.core.windows.net.evil.example", LL_HOST_OTHER},
      {"acct.blob.core.windows.netx", LL_HOST_OTHER},
      {"acct_x.blob.core.windows.net", LL_HOST_OTHER},
      {"acct.zz3.blob.storage.azure.net", LL_HOST_OTHER},
      {"acct.file.core.windows.net", LL_HOST_OTHER}, /* not blob */
      {"127.0.0.1:10000", LL_HOST_LOOPBACK},
      {"127.3.4.5", LL_HOST_LOOPBACK},
      {"localhost:8443", LL_HOST_LOOPBACK},
      {"[::1]:10000", LL_HOST_LOOPBACK},
      {"localhost.example.com", LL_HOST_OTHER},
      {"128.0.0.1", LL_HOST_OTHER},
      {"10.0.0.5", LL_HOST_OTHER},
      {"replay.invalid", LL_HOST_REPLAY},
      {"replay.invalid:443", LL_HOST_REPLAY},
      {"storage.contoso.com", LL_HOST_OTHER},
      {"", LL_HOST_OTHER},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    char bare[256];
    ll_endpoint_bare_host(t[i].host, bare, sizeof bare);
    if (ll_endpoint_classify(bare) != t[i].want)
      fprintf(stderr, "classify %s\n", t[i].host);
    CHECK_INT(ll_endpoint_classify(bare), t[i].want);
  }
}

static void test_declarable(void) {
  CHECK(ll_endpoint_declarable("storage.contoso.com"));
  CHECK(ll_endpoint_declarable("Storage.Contoso.com"));
  CHECK(ll_endpoint_declarable("acct.blob.local.azurestack.external"));
  CHECK(!ll_endpoint_declarable("storage.contoso.com:443")); /* a port */
  CHECK(!ll_endpoint_declarable("https://storage.contoso.com"));
  CHECK(!ll_endpoint_declarable("localhost"));
  CHECK(!ll_endpoint_declarable("127.0.0.1"));
  CHECK(!ll_endpoint_declarable("replay.invalid"));
  CHECK(!ll_endpoint_declarable("acct.blob.core.windows.net"));
  CHECK(!ll_endpoint_declarable("nodot"));
  CHECK(!ll_endpoint_declarable("trailing.dot."));
  CHECK(!ll_endpoint_declarable(""));
  CHECK(!ll_endpoint_declarable(NULL));
}

static void test_check(void) {
  static const struct {
    const char *kind, *host, *label, *declared;
    int ok;
    const char *why; /* substring of the message when refused */
  } t[] = {
      {"azure", "acct.blob.core.windows.net", NULL, NULL, 1, NULL},
      {"azure", "acct.blob.core.chinacloudapi.cn", NULL, NULL, 1, NULL},
      {"azure", "storage.contoso.com", NULL, "storage.contoso.com", 1, NULL},
      {"azure", "storage.contoso.com:443", NULL, "storage.contoso.com", 1,
       NULL},
      {"azure", "storage.contoso.com", NULL, NULL, 0,
       "is not an Azure Storage blob host"},
      {"azure", "127.0.0.1:10000", NULL, NULL, 0,
       "account host 127.0.0.1 is not an Azure Storage blob host"},
      {"azure", "127.0.0.1:10000", NULL, "127.0.0.1", 0, "cannot be declared"},
      {"azure", "other.contoso.com", NULL, "storage.contoso.com", 0,
       "is not the account host other.contoso.com"},
      {"azure", "replay.invalid", NULL, NULL, 0, "not an Azure"},
      {"emulator", "127.0.0.1:10000", NULL, NULL, 1, NULL},
      {"emulator", "[::1]:10000", NULL, NULL, 1, NULL},
      {"emulator", "localhost", NULL, NULL, 1, NULL},
      {"emulator", "acct.blob.core.windows.net", NULL, NULL, 0,
       "is not loopback"},
      {"emulator", "10.0.0.5:10000", NULL, NULL, 0, "is not loopback"},
      {"emulator", "127.0.0.1", NULL, "storage.contoso.com", 0,
       "only an azure endpoint may be declared"},
      {"replay", "replay.invalid", "emulator", NULL, 1, NULL},
      {"replay", "replay.invalid", "documented", NULL, 1, NULL},
      {"replay", "replay.invalid", NULL, NULL, 0, "fixture label is missing"},
      {"replay", "replay.invalid", "cloud", NULL, 0, "not emulator, azure"},
      {"replay", "127.0.0.1:10000", "emulator", NULL, 0,
       "is not the replay placeholder"},
      {"cloud", "acct.blob.core.windows.net", NULL, NULL, 0,
       "is not azure, emulator or replay"},
      {NULL, "acct.blob.core.windows.net", NULL, NULL, 0, "(missing)"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    ll_error e = {0};
    ll_status st =
        ll_endpoint_check(t[i].kind, t[i].host, t[i].label, t[i].declared, &e);
    if ((st == LL_OK) != t[i].ok || (t[i].why && !strstr(e.message, t[i].why)))
      fprintf(stderr, "check %s %s: %s\n", t[i].kind ? t[i].kind : "-",
              t[i].host, e.message);
    CHECK_INT(st == LL_OK, t[i].ok);
    if (!t[i].ok) {
      CHECK_INT(st, LL_E_MANIFEST);
      CHECK(t[i].why && strstr(e.message, t[i].why) != NULL);
    }
  }
}

/* One server, however spelt: the key the lock takes and the earlier-run
 * check compares (helper-30). */
static void test_server_key(void) {
  static const char *const same[][2] = {
      {"localhost:10000", "127.0.0.1:10000"},
      {"[::1]:10000", "LOCALHOST:10000"},
      {"127.0.0.2:10000", "127.0.0.1:10000"},
      {"acct.blob.core.windows.net:443", "ACCT.blob.core.windows.net"},
      {"acct.blob.core.windows.net:80", "acct.blob.core.windows.net"},
  };
  static const char *const differ[][2] = {
      {"127.0.0.1:10000", "127.0.0.1:10001"},
      {"localhost:10000", "localhost"},
      {"acct.blob.core.windows.net:8443", "acct.blob.core.windows.net"},
      {"a.blob.core.windows.net", "b.blob.core.windows.net"},
      {"127.0.0.1:10000", "example.com:10000"},
  };
  for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
    CHECK(ll_endpoint_same_server(same[i][0], same[i][1]));
    /* what allows (recovery, --after, corroboration) stays exact
     * (helper-31: 127.0.0.2 may be another listener) */
    CHECK(strcasecmp(same[i][0], same[i][1]) == 0 ||
          !ll_endpoint_same_host(same[i][0], same[i][1]));
  }
  for (size_t i = 0; i < sizeof differ / sizeof *differ; i++)
    CHECK(!ll_endpoint_same_server(differ[i][0], differ[i][1]));
  CHECK(!ll_endpoint_same_server(NULL, "localhost"));
  CHECK(ll_endpoint_same_host("LAB.blob.core.windows.net",
                              "lab.BLOB.core.windows.net"));
  CHECK(!ll_endpoint_same_host("127.0.0.2:10000", "127.0.0.1:10000"));
  CHECK(!ll_endpoint_same_host("[::1]:10000", "localhost:10000"));
  /* the name "loopback" is a DNS name like any other */
  CHECK(!ll_endpoint_same_server("loopback:9", "127.0.0.1:9"));
  char k[300];
  ll_endpoint_server_key("[::1]:9", k, sizeof k);
  CHECK_STR(k, "[loopback]:9");
  ll_endpoint_server_key("Acct.blob.core.windows.net:443", k, sizeof k);
  CHECK_STR(k, "acct.blob.core.windows.net");
}

int main(void) {
  test_server_key();
  test_classify();
  test_declarable();
  test_check();
  return ll_test_report("test_endpoint");
}
