/* The SAS preflight (st/se/skt/ske against the clock and the deadline,
 * the time forms Azure Storage accepts) and the one-credential rule:
 * ll_auth_choose and the SAS/token conflict in ll_auth_new. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth_fixture.h"
#include "auth_impl.h"
#include "testlib.h"

/* 2026-11-30T12:00:00Z */
#define NOW_S 1796040000LL
#define SIG "c2FzLXNpZ25hdHVyZS1zZWNyZXQ%3D"

static void test_time_forms(void) {
  static const struct {
    const char *in;
    int ok;
    int64_t ms;
  } rows[] = {
      {"2026-12-01T10:00:00Z", 1, 1796119200000LL},
      {"2026-12-01T10:00Z", 1, 1796119200000LL},
      {"2026-12-01T10:00:00", 1, 1796119200000LL}, /* no suffix: UTC */
      {"2026-12-01", 1, 1796083200000LL},          /* midnight UTC */
      {"2026-12-01T10:00:00.5Z", 1, 1796119200500LL},
      {"2026-12-01T10:00:00.1234567Z", 1, 1796119200123LL},
      {"2026-12-01T11:00:00+01:00", 1, 1796119200000LL},
      {"2026-12-01T05:30:00-04:30", 1, 1796119200000LL},
      {"2028-02-29T00:00:00Z", 1, 1835395200000LL}, /* leap day */
      {"1970-01-01T00:00:00Z", 1, 0},
      {"", 0, 0},
      {"banana", 0, 0},
      {"2026-12-1T10:00:00Z", 0, 0},
      {"2026-13-01T10:00:00Z", 0, 0},
      {"2026-00-01", 0, 0},
      {"2026-11-31", 0, 0},
      {"2027-02-29", 0, 0}, /* not a leap year */
      {"2026-12-01T24:00:00Z", 0, 0},
      {"2026-12-01T10:60:00Z", 0, 0},
      {"2026-12-01T10:00:60Z", 0, 0},
      {"2026-12-01T10Z", 0, 0},
      {"2026-12-01 10:00:00Z", 0, 0},
      {"2026-12-01T10:00:00.Z", 0, 0},
      {"2026-12-01T10:00:00.12345678Z", 0, 0},
      {"2026-12-01T10:00:00,5Z", 0, 0},
      {"2026-12-01T10:00:00+24:00", 0, 0},
      {"2026-12-01T10:00:00+0100", 0, 0},
      {"2026-12-01T10:00:00ZZ", 0, 0},
      {"2026-12-01Z", 0, 0},
      {"1969-12-31T23:59:59Z", 0, 0},
      {"+2026-12-01", 0, 0},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    int64_t ms = -1;
    ll_status st = ll_auth_sas_time(rows[i].in, strlen(rows[i].in), &ms);
    if ((st == LL_OK) != rows[i].ok)
      fprintf(stderr, "time row %zu (%s): %s\n", i, rows[i].in,
              ll_code_name(st));
    CHECK_INT(st == LL_OK, rows[i].ok);
    if (rows[i].ok)
      CHECK_INT(ms, rows[i].ms);
  }
}

/* Each SAS differs from a good one in one respect; deadline is
 * NOW + 1 h unless a row says otherwise. */
static void test_sas_window(ll_clock *c) {
  add_secret("c2FzLXNpZ25hdHVyZS1zZWNyZXQ");
  static const struct {
    const char *sas;
    int64_t deadline_s; /* 0: none */
    ll_code code;
    const char *want[3];
  } rows[] = {
      /* accepted */
      {"sv=2023-11-03&sp=rw&se=2026-12-01T10%3A00%3A00Z&sig=" SIG,
       3600,
       LL_OK,
       {NULL}},
      {"sv=2023-11-03&st=2026-11-30T11:00:00Z&se=2026-12-01T10:00:00Z&sig=" SIG,
       3600,
       LL_OK,
       {NULL}},
      {"se=2026-12-01&sig=" SIG, 3600, LL_OK, {NULL}},
      /* st within the skew: a SAS minted on a fast clock */
      {"st=2026-11-30T12%3A04%3A00Z&se=2026-12-01&sig=" SIG,
       3600,
       LL_OK,
       {NULL}},
      {"se=2026-11-30T14:00:00%2B01:00&sig=" SIG, 0, LL_OK, {NULL}},
      /* user delegation key valid for the run */
      {"skt=2026-11-30T00:00:00Z&ske=2026-12-01T00:00:00Z&se=2026-12-01&"
       "sig=" SIG,
       3600,
       LL_OK,
       {NULL}},
      /* refused */
      {"sv=2023-11-03&sp=rw&sig=" SIG, 3600, LL_E_AUTH, {"no se= expiry"}},
      {"se=2026-11-30T12:30:00Z&sig=" SIG,
       3600,
       LL_E_AUTH,
       {"expires at 2026-11-30T12:30:00.000Z",
        "before the run's deadline "
        "2026-11-30T13:00:00.000Z",
        "issue a SAS valid for the whole run, or shorten the deadline"}},
      {"se=2026-11-30T11:00:00Z&sig=" SIG,
       0,
       LL_E_AUTH,
       {"expired at 2026-11-30T11:00:00.000Z", "issue a new SAS"}},
      {"se=2026-11-30T12:00:00Z&sig=" SIG, 0, LL_E_AUTH, {"expired at"}},
      {"st=2026-11-30T12:06:00Z&se=2026-12-01&sig=" SIG,
       3600,
       LL_E_AUTH,
       {"not valid before 2026-11-30T12:06:00.000Z (st=)",
        "more than 300 s after now"}},
      {"st=2026-12-02&se=2026-12-01&sig=" SIG,
       3600,
       LL_E_AUTH,
       {"starts at 2026-12-02T00:00:00.000Z (st=), not before it expires"}},
      {"se=banana&sig=" SIG,
       3600,
       LL_E_AUTH,
       {"AZURE_STORAGE_SAS se=banana is not a time", "2026-12-01T10:00:00Z"}},
      {"st=2026-02-30&se=2026-12-01&sig=" SIG,
       3600,
       LL_E_AUTH,
       {"st=2026-02-30 is not a time"}},
      {"se=2026-12-01T10%3A00%3&sig=" SIG, 3600, LL_E_AUTH, {"se="}},
      {"se=2026-12-01T10%3A00%GGZ&sig=" SIG,
       3600,
       LL_E_AUTH,
       {"is not a time"}},
      {"se=2026-12-01&se=2027-12-01&sig=" SIG,
       3600,
       LL_E_AUTH,
       {"two se= parameters"}},
      {"st=2026-11-01&st=2026-11-02&se=2026-12-01&sig=" SIG,
       3600,
       LL_E_AUTH,
       {"two st= parameters"}},
      {"se=2026-12-01", 3600, LL_E_AUTH, {"no sig= value"}},
      {"se=2026-12-01&sig=", 3600, LL_E_AUTH, {"no sig= value"}},
      {"se=2026-12-01\x01&sig=" SIG, 3600, LL_E_AUTH, {"characters"}},
      {"skt=2026-11-30T00:00:00Z&ske=2026-11-30T12:10:00Z&se=2026-12-01&"
       "sig=" SIG,
       3600,
       LL_E_AUTH,
       {"the user delegation key of AZURE_STORAGE_SAS expires at "
        "2026-11-30T12:10:00.000Z (ske=)",
        "before the run's deadline"}},
      {"ske=notatime&se=2026-12-01&sig=" SIG,
       3600,
       LL_E_AUTH,
       {"ske=notatime is not a time"}},
  };
  ll_auth_options o = {.kind = LL_AUTH_SAS};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    setenv("AZURE_STORAGE_SAS", rows[i].sas, 1);
    int64_t deadline =
        rows[i].deadline_s ? (NOW_S + rows[i].deadline_s) * 1000 : 0;
    if (rows[i].code == LL_OK) {
      ll_error err = {0};
      ll_auth *a = ll_auth_new(&o, c, deadline, &err);
      if (!a)
        fprintf(stderr, "sas row %zu: %s\n", i, err.message);
      CHECK(a != NULL);
      CHECK_STR(ll_auth_secret(a, 1), SIG);
      ll_auth_free(a);
      continue;
    }
    ll_error err = expect_fail(&o, c, deadline, rows[i].code);
    for (int k = 0; k < 3 && rows[i].want[k]; k++) {
      if (!strstr(err.message, rows[i].want[k]))
        fprintf(stderr, "sas row %zu: want \"%s\" in: %s\n", i, rows[i].want[k],
                err.message);
      CHECK(strstr(err.message, rows[i].want[k]) != NULL);
    }
    CHECK(strstr(err.message, "c2FzLXNp") == NULL); /* no part of the sig */
    CHECK(strchr(err.message, '\n') == NULL);
  }
  unsetenv("AZURE_STORAGE_SAS");
}

/* A SAS and a token both configured: refused before anything is fetched,
 * whichever kind was asked for. */
static void test_conflict(ll_clock *c) {
  char *tok = keep(ll_auth_dev_token(NOW_S, 7200));
  setenv("AZURE_STORAGE_SAS", "se=2026-12-01&sig=" SIG, 1);
  setenv("AZURE_STORAGE_TOKEN", tok, 1);
  static const char *const cmd[] = {"printf", "%s", "x", NULL};
  static const struct {
    ll_auth_kind kind;
    const char *want;
  } rows[] = {
      {LL_AUTH_SAS, "both AZURE_STORAGE_SAS and AZURE_STORAGE_TOKEN are set"},
      {LL_AUTH_TOKEN_ENV,
       "both AZURE_STORAGE_SAS and AZURE_STORAGE_TOKEN are configured"},
      {LL_AUTH_TOKEN_FILE, "(unset AZURE_STORAGE_SAS, or drop --token-file)"},
      {LL_AUTH_TOKEN_COMMAND, "drop --token-command"},
      {LL_AUTH_MANAGED_IDENTITY, "drop --managed-identity"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    ll_auth_options o = {.kind = rows[i].kind,
                         .token_file = "/nonexistent",
                         .token_argv = cmd,
                         .imds_endpoint = "http://127.0.0.1:9/"};
    ll_error err = expect_fail(&o, c, 0, LL_E_USAGE);
    if (!strstr(err.message, rows[i].want))
      fprintf(stderr, "conflict row %zu: %s\n", i, err.message);
    CHECK(strstr(err.message, rows[i].want) != NULL);
  }
  unsetenv("AZURE_STORAGE_SAS");
  unsetenv("AZURE_STORAGE_TOKEN");
}

static void test_choose(void) {
  static const struct {
    ll_auth_sources s;
    ll_code code;
    ll_auth_kind kind;
    const char *want;
  } rows[] = {
      {{.token_env = 1}, LL_OK, LL_AUTH_TOKEN_ENV, NULL},
      {{.sas_env = 1}, LL_OK, LL_AUTH_SAS, NULL},
      {{.token_file = 1}, LL_OK, LL_AUTH_TOKEN_FILE, NULL},
      {{.token_command = 1}, LL_OK, LL_AUTH_TOKEN_COMMAND, NULL},
      {{.managed_identity = 1}, LL_OK, LL_AUTH_MANAGED_IDENTITY, NULL},
      {{0}, LL_E_AUTH, LL_AUTH_NONE, "no credential"},
      {{.token_env = 1, .sas_env = 1},
       LL_E_USAGE,
       LL_AUTH_NONE,
       "2 credentials are configured (AZURE_STORAGE_TOKEN and "
       "AZURE_STORAGE_SAS): keep exactly one"},
      {{.sas_env = 1, .token_command = 1},
       LL_E_USAGE,
       LL_AUTH_NONE,
       "(--token-command and AZURE_STORAGE_SAS)"},
      {{.token_env = 1, .token_file = 1},
       LL_E_USAGE,
       LL_AUTH_NONE,
       "(AZURE_STORAGE_TOKEN and --token-file)"},
      {{1, 1, 1, 1, 1},
       LL_E_USAGE,
       LL_AUTH_NONE,
       "5 credentials are configured (AZURE_STORAGE_TOKEN and --token-file "
       "and --token-command and --managed-identity and AZURE_STORAGE_SAS)"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    ll_auth_kind k = (ll_auth_kind)99;
    ll_error err = {0};
    ll_status st = ll_auth_choose(&rows[i].s, &k, &err);
    CHECK_STR(ll_code_name(st), ll_code_name(rows[i].code));
    CHECK_INT(k, rows[i].kind);
    if (rows[i].want) {
      if (!strstr(err.message, rows[i].want))
        fprintf(stderr, "choose row %zu: %s\n", i, err.message);
      CHECK(strstr(err.message, rows[i].want) != NULL);
    }
  }
  ll_auth_sources s = {.token_file = 1};
  setenv("AZURE_STORAGE_SAS", "sig=x", 1);
  setenv("AZURE_STORAGE_TOKEN", "", 1); /* empty is not set */
  ll_auth_sources_from_env(&s);
  CHECK_INT(s.sas_env, 1);
  CHECK_INT(s.token_env, 0);
  CHECK_INT(s.token_file, 1);
  unsetenv("AZURE_STORAGE_SAS");
  unsetenv("AZURE_STORAGE_TOKEN");
  ll_auth_sources_from_env(&s);
  CHECK_INT(s.sas_env, 0);
}

int main(void) {
  clear_credential_env();
  ll_clock *c = ll_clock_new_virtual(NOW_S * 1000);
  test_time_forms();
  test_sas_window(c);
  test_conflict(c);
  test_choose();
  free_kept();
  ll_clock_free(c);
  return ll_test_report("test_auth_sas");
}
