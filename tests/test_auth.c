/* Credentials: every token source, the expiry preflight, SAS and bearer
 * application, and a scan that no error message ever carries a secret.
 * Managed identity is in test_auth_identity.c. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auth_fixture.h"
#include "jwt.h"
#include "testlib.h"

static void test_b64url(void) {
  static const struct {
    const char *in, *want;
  } rows[] = {{"", ""},
              {"f", "Zg"},
              {"fo", "Zm8"},
              {"foo", "Zm9v"},
              {"\xfb\xff", "-_8"}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    char *e =
        ll_b64url_encode((const unsigned char *)rows[i].in, strlen(rows[i].in));
    CHECK_STR(e, rows[i].want);
    unsigned char *d = NULL;
    size_t n = 0;
    CHECK_INT(ll_b64url_decode(e, strlen(e), &d, &n), LL_OK);
    CHECK_INT(n, strlen(rows[i].in));
    CHECK(d && memcmp(d, rows[i].in, n) == 0);
    free(d);
    free(e);
  }
  unsigned char *d = NULL;
  size_t n;
  CHECK_INT(ll_b64url_decode("Zm8=", 4, &d, &n), LL_OK); /* padding ok */
  CHECK_INT(n, 2);
  free(d);
  CHECK_INT(ll_b64url_decode("Zm+v", 4, &d, &n), LL_E_PARSE);  /* not url */
  CHECK_INT(ll_b64url_decode("Zm9vY", 5, &d, &n), LL_E_PARSE); /* len%4 */
  CHECK(d == NULL);
}

static void test_jwt_exp_table(void) {
  static const char hdr[] = "{\"alg\":\"RS256\",\"typ\":\"JWT\"}";
  static const struct {
    const char *header, *payload; /* NULL header: raw is the whole token */
    const char *raw;
    ll_code code;
    int64_t exp;
  } rows[] = {
      {hdr, "{\"exp\":1796022000}", NULL, LL_OK, 1796022000},
      {hdr, "{\"exp\":1796022000.9,\"nbf\":1}", NULL, LL_OK, 1796022000},
      {hdr, "{\"nbf\":1796022000}", NULL, LL_E_PARSE, 0},
      {hdr, "{\"exp\":\"1796022000\"}", NULL, LL_E_PARSE, 0},
      {hdr, "{\"exp\":-5}", NULL, LL_E_PARSE, 0},
      {hdr, "{\"exp\":1e300}", NULL, LL_E_PARSE, 0},
      {hdr, "[1796022000]", NULL, LL_E_PARSE, 0},
      {hdr, "not json", NULL, LL_E_PARSE, 0},
      {"not json", "{\"exp\":1796022000}", NULL, LL_E_PARSE, 0},
      {NULL, NULL, "", LL_E_PARSE, 0},
      {NULL, NULL, "opaque-token-value", LL_E_PARSE, 0},
      {NULL, NULL, "eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjF9", LL_E_PARSE, 0},
      {NULL, NULL, "a.b.c.d", LL_E_PARSE, 0},
      {NULL, NULL, "eyJhbGciOiJSUzI1NiJ9..c2ln", LL_E_PARSE, 0},
      {NULL, NULL, "eyJhbGciOiJSUzI1NiJ9.ey!!.c2ln", LL_E_PARSE, 0},
      {NULL, NULL, "eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjF9x.c2ln", LL_E_PARSE, 0},
      /* {"exp":1} with no signature: still three segments */
      {NULL, NULL, "eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjF9.", LL_OK, 1},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    char *tok = rows[i].header ? jwt_of(rows[i].header, rows[i].payload)
                               : strdup(rows[i].raw);
    int64_t exp = -1;
    ll_error err = {0};
    ll_status st = ll_jwt_exp(tok, &exp, &err);
    if (st != rows[i].code)
      fprintf(stderr, "jwt row %zu: %s\n", i, err.message);
    CHECK_STR(ll_code_name(st), ll_code_name(rows[i].code));
    if (rows[i].code == LL_OK)
      CHECK_INT(exp, rows[i].exp);
    else
      CHECK(strstr(err.message, tok) == NULL || !*tok);
    free(tok);
  }
}

static void test_dev_token(void) {
  int64_t now = 1796022000;
  char *t = ll_auth_dev_token(now, 3600);
  CHECK(t != NULL);
  CHECK(strchr(t, '=') == NULL);
  int64_t exp = 0;
  CHECK_INT(ll_jwt_exp(t, &exp, NULL), LL_OK);
  CHECK_INT(exp, now + 3600);
  const char *d1 = strchr(t, '.');
  unsigned char *p = NULL;
  size_t n;
  CHECK_INT(
      ll_b64url_decode(d1 + 1, (size_t)(strchr(d1 + 1, '.') - d1 - 1), &p, &n),
      LL_OK);
  CHECK(p && strstr((char *)p, "\"aud\":\"https://storage.azure.com\""));
  CHECK(p && strstr((char *)p, "\"iss\":\"https://sts.windows.net/"
                               "ab1f708d-50f6-404c-a006-d71b2ac7a606/\""));
  CHECK(p && strstr((char *)p, "\"nbf\":1796021700"));
  free(p);
  CHECK_STR(strrchr(t, '.') + 1, "bGVhc2VsdWEtZGV2LXVuc2lnbmVk");
  free(t);
}

static void test_none_and_env(ll_clock *c) {
  ll_auth_options o = {.kind = LL_AUTH_NONE};
  ll_error err = expect_fail(&o, c, 0, LL_E_AUTH);
  CHECK(strstr(err.message, "no credential") != NULL);

  o.kind = LL_AUTH_TOKEN_ENV;
  unsetenv("AZURE_STORAGE_TOKEN");
  err = expect_fail(&o, c, 0, LL_E_AUTH);
  CHECK(strstr(err.message, "AZURE_STORAGE_TOKEN") != NULL);
  setenv("AZURE_STORAGE_TOKEN", "", 1);
  err = expect_fail(&o, c, 0, LL_E_AUTH);
  CHECK(strstr(err.message, "AZURE_STORAGE_TOKEN") != NULL);

  char *tok = keep(ll_auth_dev_token(now_s(), 3600));
  setenv("AZURE_STORAGE_TOKEN", tok, 1);
  ll_auth *a = ll_auth_new(&o, c, 0, &err);
  CHECK(a != NULL);
  CHECK_INT(ll_auth_get_kind(a), LL_AUTH_TOKEN_ENV);
  CHECK_STR(ll_auth_kind_name(ll_auth_get_kind(a)), "token_env");
  CHECK_STR(ll_auth_kind_name(LL_AUTH_MANAGED_IDENTITY), "managed_identity");
  CHECK_STR(ll_auth_kind_name((ll_auth_kind)42), "unknown");
  CHECK_STR(ll_auth_secret(a, 0), tok);
  CHECK(ll_auth_secret(a, 1) == NULL);
  int64_t exp;
  CHECK_INT(ll_jwt_exp(tok, &exp, NULL), LL_OK);
  CHECK_INT(ll_auth_expires_utc_ms(a), exp * 1000);

  /* Bearer: header added, URL copied unchanged. */
  ll_headers h;
  ll_headers_init(&h);
  char *url = NULL;
  CHECK_INT(ll_auth_apply(a, "https://acct.blob.core.windows.net/c/b?comp=x",
                          &url, &h, &err),
            LL_OK);
  CHECK_STR(url, "https://acct.blob.core.windows.net/c/b?comp=x");
  char want[4096];
  snprintf(want, sizeof want, "Bearer %s", tok);
  CHECK_STR(ll_headers_get(&h, "authorization"), want);
  CHECK_INT(h.n, 1);
  free(url);
  ll_headers_cleanup(&h);
  ll_auth_free(a);

  /* A token that could split a header is refused. */
  char bad[4200];
  snprintf(bad, sizeof bad, "%s\r\nX-Evil: 1", tok);
  setenv("AZURE_STORAGE_TOKEN", bad, 1);
  err = expect_fail(&o, c, 0, LL_E_AUTH);
  CHECK(strstr(err.message, "whitespace") != NULL);

  setenv("AZURE_STORAGE_TOKEN", "opaque-secret-token-1234", 1);
  add_secret("opaque-secret-token-1234");
  err = expect_fail(&o, c, 0, LL_E_AUTH);
  CHECK(strstr(err.message, "not a JWT; cannot check its expiry") != NULL);
  unsetenv("AZURE_STORAGE_TOKEN");
}

static void test_expiry(void) {
  int64_t now = 1796022000; /* a fixed instant on a virtual clock */
  ll_clock *c = ll_clock_new_virtual(now * 1000);
  ll_auth_options o = {.kind = LL_AUTH_TOKEN_ENV};

  char *expired =
      keep(ll_auth_dev_token(now - 3660, 3600)); /* exp = now - 60 */
  setenv("AZURE_STORAGE_TOKEN", expired, 1);
  ll_error err = expect_fail(&o, c, 0, LL_E_AUTH);
  CHECK(strstr(err.message, "expired at") != NULL);
  char stamp[40];
  ll_clock_format_utc((now - 60) * 1000, stamp, sizeof stamp);
  CHECK(strstr(err.message, stamp) != NULL);

  char *soon = keep(ll_auth_dev_token(now, 600)); /* exp = now + 600 */
  setenv("AZURE_STORAGE_TOKEN", soon, 1);
  err = expect_fail(&o, c, (now + 900) * 1000, LL_E_AUTH);
  CHECK(strstr(err.message, "before the run's deadline") != NULL);
  ll_clock_format_utc((now + 600) * 1000, stamp, sizeof stamp);
  CHECK(strstr(err.message, stamp) != NULL);
  ll_clock_format_utc((now + 900) * 1000, stamp, sizeof stamp);
  CHECK(strstr(err.message, stamp) != NULL);

  /* The same token is fine for a deadline it outlives, and for none. */
  ll_auth *a = ll_auth_new(&o, c, (now + 500) * 1000, &err);
  CHECK(a != NULL);
  ll_auth_free(a);
  a = ll_auth_new(&o, c, 0, &err);
  CHECK(a != NULL);
  ll_auth_free(a);
  /* ... until the virtual clock passes its exp. */
  ll_clock_sleep_ms(c, 601 * 1000);
  err = expect_fail(&o, c, 0, LL_E_AUTH);
  CHECK(strstr(err.message, "expired") != NULL);

  unsetenv("AZURE_STORAGE_TOKEN");
  ll_clock_free(c);
}

static void test_file(ll_clock *c, const char *dir) {
  char path[600];
  snprintf(path, sizeof path, "%s/token", dir);
  char *tok = keep(ll_auth_dev_token(now_s(), 3600));
  FILE *f = fopen(path, "w");
  fprintf(f, "%s\n\n", tok);
  fclose(f);
  ll_auth_options o = {.kind = LL_AUTH_TOKEN_FILE, .token_file = path};
  ll_error err = {0};
  ll_auth *a = ll_auth_new(&o, c, 0, &err);
  CHECK(a != NULL);
  CHECK_STR(ll_auth_secret(a, 0), tok);
  ll_auth_free(a);

  f = fopen(path, "w");
  fputs(" \n", f);
  fclose(f);
  err = expect_fail(&o, c, 0, LL_E_AUTH);
  CHECK(strstr(err.message, "empty") != NULL);

  snprintf(path, sizeof path, "%s/missing", dir);
  err = expect_fail(&o, c, 0, LL_E_AUTH);
  CHECK(strstr(err.message, "missing") != NULL);
  o.token_file = dir; /* a directory */
  expect_fail(&o, c, 0, LL_E_AUTH);
  o.token_file = NULL;
  expect_fail(&o, c, 0, LL_E_USAGE);
}

/* The command runs from an argument vector, never a shell: a test that
 * wants shell behaviour names sh itself, as an operator could. */
static void test_command(ll_clock *c) {
  char *tok = keep(ll_auth_dev_token(now_s(), 3600));
  const char *plain[] = {"printf", "%s", tok, NULL};
  ll_auth_options o = {.kind = LL_AUTH_TOKEN_COMMAND, .token_argv = plain};
  ll_error err = {0};
  ll_auth *a = ll_auth_new(&o, c, 0, &err);
  CHECK(a != NULL);
  CHECK_STR(ll_auth_secret(a, 0), tok);
  CHECK_INT(ll_auth_get_kind(a), LL_AUTH_TOKEN_COMMAND);
  ll_auth_free(a);

  /* az account get-access-token prints JSON. */
  char json[4200];
  snprintf(json, sizeof json,
           "{\"accessToken\":\"%s\",\"tokenType\":\"Bearer\"}\n", tok);
  const char *az[] = {"printf", "%s", json, NULL};
  o.token_argv = az;
  a = ll_auth_new(&o, c, 0, &err);
  CHECK(a != NULL);
  CHECK_STR(ll_auth_secret(a, 0), tok);
  ll_auth_free(a);

  /* Output of a failing command never reaches the message. */
  add_secret("command-output-secret-77");
  static const struct {
    const char *argv[4];
    const char *want;
  } rows[] = {
      {{"sh", "-c", "exit 3", NULL}, "exit 3"},
      {{"sh", "-c", "printf %s command-output-secret-77; exit 4", NULL},
       "exit 4"},
      {{"printf", "%s", "command-output-secret-77", NULL}, "not a JWT"},
      {{"true", NULL}, "no output"},
      {{"sh", "-c", "kill -TERM $$", NULL}, "signal 15"},
      {{"sh", "-c", "head -c 70000 /dev/zero | tr '\\0' a", NULL}, "64 KiB"},
      {{"printf", "{\"tokenType\":\"Bearer\"}", NULL}, "accessToken"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    o.token_argv = rows[i].argv;
    err = expect_fail(&o, c, 0, LL_E_AUTH);
    if (!strstr(err.message, rows[i].want))
      fprintf(stderr, "command row %zu: %s\n", i, err.message);
    CHECK(strstr(err.message, rows[i].want) != NULL);
  }
}

/* On a virtual clock before every se= below (2026-11-30T00:00:00Z). */
static void test_sas(void) {
  ll_clock *c = ll_clock_new_virtual(1795996800LL * 1000);
  static const char sas[] =
      "?sv=2023-11-03&ss=b&srt=co&sp=rwdl&se=2026-12-01T00%3A00%3A00Z"
      "&sig=Zm9vYmFyc2VjcmV0c2ln%2B%2F%3D";
  static const char sig[] = "Zm9vYmFyc2VjcmV0c2ln%2B%2F%3D";
  add_secret(sig);
  ll_auth_options o = {.kind = LL_AUTH_SAS};
  static const struct {
    const char *env, *url, *want;
  } rows[] = {
      {sas, "https://a.blob.core.windows.net/c/b",
       "https://a.blob.core.windows.net/c/b?sv=2023-11-03&ss=b&srt=co&sp=rwdl"
       "&se=2026-12-01T00%3A00%3A00Z&sig=Zm9vYmFyc2VjcmV0c2ln%2B%2F%3D"},
      {sas + 1, "https://a.blob.core.windows.net/c/b?comp=lease",
       "https://a.blob.core.windows.net/c/b?comp=lease&sv=2023-11-03&ss=b"
       "&srt=co&sp=rwdl&se=2026-12-01T00%3A00%3A00Z"
       "&sig=Zm9vYmFyc2VjcmV0c2ln%2B%2F%3D"},
      {"sp=r&se=2026-12-01&sig=abc", "https://h/c/b?",
       "https://h/c/b?sp=r&se=2026-12-01&sig=abc"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    setenv("AZURE_STORAGE_SAS", rows[i].env, 1);
    ll_error err = {0};
    ll_auth *a = ll_auth_new(&o, c, 0, &err);
    CHECK(a != NULL);
    if (!a)
      continue;
    CHECK(ll_auth_secret(a, 0) == NULL);
    CHECK_STR(ll_auth_secret(a, 1), i < 2 ? sig : "abc");
    CHECK_INT(ll_auth_expires_utc_ms(a), 0);
    ll_headers h;
    ll_headers_init(&h);
    char *url = NULL;
    CHECK_INT(ll_auth_apply(a, rows[i].url, &url, &h, &err), LL_OK);
    CHECK_STR(url, rows[i].want);
    CHECK_INT(h.n, 0);
    free(url);
    CHECK_INT(ll_auth_apply(a, "https://h/c/b#frag", &url, &h, &err),
              LL_E_BAD_URL);
    CHECK(url == NULL);
    check_clean(&err);
    ll_auth_free(a);
  }
  static const char *const bad[] = {
      "",
      "?",
      "sv=2023-11-03&sp=r",
      "sv=2023-11-03&sig=",
      "just some words sig=x",
      "sv=1&&sig=abc",
      "=x&sig=abc",
      "sig=abc&sig=def",
      "sp=r&sig=ab#c",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("AZURE_STORAGE_SAS", bad[i], 1);
    ll_error err = expect_fail(&o, c, 0, LL_E_AUTH);
    CHECK(strstr(err.message, "AZURE_STORAGE_SAS") != NULL);
  }
  unsetenv("AZURE_STORAGE_SAS");
  expect_fail(&o, c, 0, LL_E_AUTH);
  ll_clock_free(c);
}

/* No shell: text a shell would act on reaches the program as it is. The
 * marker file would exist if a shell had run the command substitution. */
static void test_command_no_shell(ll_clock *c, const char *dir) {
  char *tok = keep(ll_auth_dev_token(now_s(), 3600));
  char marker[600], cmd[4800], want[4800];
  snprintf(marker, sizeof marker, "%s/marker", dir);
  snprintf(cmd, sizeof cmd, "printf %%s %s$(touch %s);`touch %s`|tee %s", tok,
           marker, marker, marker);
  /* printf reuses its format for each argument and joins them */
  snprintf(want, sizeof want, "%s$(touch%s);`touch%s`|tee%s", tok, marker,
           marker, marker);
  ll_auth_options o = {.kind = LL_AUTH_TOKEN_COMMAND, .token_command = cmd};
  ll_error err = {0};
  ll_auth *a = ll_auth_new(&o, c, 0, &err);
  if (!a)
    fprintf(stderr, "no-shell: %s\n", err.message);
  CHECK(a != NULL);
  CHECK_STR(ll_auth_secret(a, 0), want);
  CHECK(access(marker, F_OK) != 0);
  ll_auth_free(a);
}

int main(void) {
  clear_credential_env();
  ll_clock *c = ll_clock_new_real();
  char *dir = ll_test_tmpdir();
  CHECK(dir != NULL);

  test_b64url();
  test_jwt_exp_table();
  test_dev_token();
  test_none_and_env(c);
  test_expiry();
  if (dir)
    test_file(c, dir);
  test_command(c);
  if (dir)
    test_command_no_shell(c, dir);
  test_sas();

  fprintf(stderr, "secrets scanned for: %d\n", secret_count());
  CHECK(secret_count() >= 8); /* the scan had secrets to look for */
  if (dir) {
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
  }
  free(dir);
  free_kept();
  ll_clock_free(c);
  return ll_test_report("test_auth");
}
