/* The operator's configuration: options taken out of argv (the rest kept
 * in order for the script), values range-checked, credential sources
 * counted, and the whole-configuration rules. */
#include <stdlib.h>
#include <string.h>

#include "operator.h"
#include "testlib.h"

/* A fake environment: NAME=VALUE pairs, NULL-terminated. */
static const char *const *fake_env;
static const char *fake_get(const char *name) {
  size_t n = strlen(name);
  for (const char *const *e = fake_env; e && *e; e++)
    if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
      return *e + n + 1;
  return NULL;
}

/* Parses argv under env; fills o; returns the status of the whole. */
static ll_status parse(const char *const *env, int argc,
                       const char *const *argv, ll_operator *o, char **rest,
                       int *nrest, ll_error *err) {
  fake_env = env;
  ll_operator_defaults(o);
  ll_status st = ll_operator_from_env(o, fake_get, err);
  if (st == LL_OK)
    st = ll_operator_from_args(o, argc, (char **)argv, rest, nrest, err);
  if (st == LL_OK)
    st = ll_operator_finish(o, err);
  return st;
}

static const char *const LIVE[] = {
    "AZURE_STORAGE_ACCOUNT_URL=https://acct.blob.core.windows.net",
    "AZURE_STORAGE_TOKEN=t", NULL};

static void test_split(void) {
  const char *argv[] = {
      "--break-period", "5", "--manifest=m.json", "--evidence",   "ev",
      "--stop-after",   "3", "--recover",         "--timeout-ms", "250"};
  ll_operator o;
  char *rest[16];
  int nrest = 0;
  ll_error err = {0};
  CHECK_INT(parse(LIVE, 10, argv, &o, rest, &nrest, &err), LL_OK);
  CHECK_STR(o.manifest, "m.json");
  CHECK_STR(o.evidence, "ev");
  CHECK_INT(o.recover, 1);
  CHECK_INT(o.total_timeout_ms, 250);
  CHECK_INT(nrest, 4); /* the script's own, in order */
  CHECK_STR(rest[0], "--break-period");
  CHECK_STR(rest[1], "5");
  CHECK_STR(rest[2], "--stop-after");
  CHECK_STR(rest[3], "3");
  CHECK_STR(o.container, LL_DEFAULT_CONTAINER);
  CHECK_STR(o.blob, LL_DEFAULT_BLOB);
  CHECK_INT(o.auth_kind, LL_AUTH_TOKEN_ENV);
}

static const struct {
  const char *const *env;
  int argc;
  const char *argv[4];
  ll_code code;
  const char *says;
} refused[] = {
    {LIVE, 1, {"--manifest"}, LL_E_USAGE, "--manifest needs a value"},
    {LIVE, 2, {"--manifest", ""}, LL_E_USAGE, "non-empty value"},
    {LIVE, 4, {"--evidence", "a", "--evidence", "b"}, LL_E_USAGE, "twice"},
    {LIVE, 2, {"--timeout-ms", "0"}, LL_E_USAGE, "from 1 to 600000"},
    {LIVE, 2, {"--timeout-ms", "12x"}, LL_E_USAGE, "from 1 to 600000"},
    {LIVE, 1, {"--deadline-s=86401"}, LL_E_USAGE, "from 1 to 86400"},
    {LIVE, 1, {"--recover=yes"}, LL_E_USAGE, "takes no value"},
    {LIVE,
     3,
     {"--token-file", "f", "--managed-identity"},
     LL_E_USAGE,
     "both name a credential"},
    {LIVE, 2, {"--token-file", "f"}, LL_E_USAGE, "2 credentials"},
    {LIVE, 3, {"--record", "r", "--replay"}, LL_E_USAGE, "needs a value"},
    {LIVE,
     4,
     {"--record", "r", "--replay", "p"},
     LL_E_USAGE,
     "cannot be combined"},
    {LIVE, 1, {"--recover"}, LL_E_USAGE, "--recover needs --evidence"},
    {LIVE, 1, {"--destructive"}, LL_E_USAGE, "go together"},
    {LIVE, 2, {"--after", "d"}, LL_E_USAGE, "go together"},
    {(const char *const[]){"AZURE_STORAGE_TOKEN=t", NULL},
     0,
     {NULL},
     LL_E_USAGE,
     "no target"},
    {(const char *const[]){"AZURE_STORAGE_ACCOUNT_URL=https://a",
                           "AZURE_STORAGE_TOKEN=t", "AZURE_STORAGE_SAS=sv=1",
                           NULL},
     0,
     {NULL},
     LL_E_USAGE,
     "2 credentials"},
    {(const char *const[]){"AZURE_STORAGE_ACCOUNT_URL=https://a", NULL},
     0,
     {NULL},
     LL_E_AUTH,
     "no credential"},
};

static void test_refused(void) {
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    ll_operator o;
    char *rest[8];
    int nrest = 0;
    ll_error err = {0};
    ll_status st = parse(refused[i].env, refused[i].argc, refused[i].argv, &o,
                         rest, &nrest, &err);
    CHECK_INT(st, refused[i].code);
    if (!strstr(err.message, refused[i].says))
      fprintf(stderr, "case %zu: \"%s\" lacks \"%s\"\n", i, err.message,
              refused[i].says);
    CHECK(strstr(err.message, refused[i].says) != NULL);
    CHECK(strchr(err.message, '\n') == NULL);
  }
}

static void test_replay_needs_no_target_nor_credential(void) {
  const char *argv[] = {"--replay", "f.json"};
  const char *const env[] = {NULL};
  ll_operator o;
  char *rest[4];
  int nrest = 0;
  ll_error err = {0};
  CHECK_INT(parse(env, 2, argv, &o, rest, &nrest, &err), LL_OK);
  CHECK_STR(o.account_url, LL_REPLAY_ACCOUNT_URL);
}

static void test_one_flag_credential(void) {
  const char *argv[] = {"--token-command", "az account get-access-token"};
  const char *const env[] = {"AZURE_STORAGE_ACCOUNT_URL=https://a", NULL};
  ll_operator o;
  char *rest[4];
  int nrest = 0;
  ll_error err = {0};
  CHECK_INT(parse(env, 2, argv, &o, rest, &nrest, &err), LL_OK);
  CHECK_INT(o.auth_kind, LL_AUTH_TOKEN_COMMAND);
  CHECK_STR(o.token_command, "az account get-access-token");
  const char *const sas[] = {"AZURE_STORAGE_ACCOUNT_URL=https://a",
                             "AZURE_STORAGE_SAS=sv=1&sig=x", NULL};
  CHECK_INT(parse(sas, 0, argv, &o, rest, &nrest, &err), LL_OK);
  CHECK_INT(o.auth_kind, LL_AUTH_SAS);
}

static void test_hints(void) {
  char buf[160];
  CHECK(ll_operator_hint("account_url", buf, sizeof buf));
  CHECK(strstr(buf, "AZURE_STORAGE_ACCOUNT_URL") != NULL);
  CHECK(ll_operator_hint("ca_file", buf, sizeof buf));
  CHECK_STR(buf, "pass --ca-file on the command line");
  CHECK(ll_operator_hint("total_timeout_ms", buf, sizeof buf));
  CHECK_STR(buf, "pass --timeout-ms on the command line");
  CHECK(!ll_operator_hint("break_period", buf, sizeof buf));
  CHECK(!ll_operator_hint("name", buf, sizeof buf));
}

static void test_usage_lists_every_option(void) {
  static const char *const names[] = {
      "--manifest",    "--evidence",      "--ca-file",
      "--token-file",  "--token-command", "--managed-identity",
      "--record",      "--replay",        "--recover",
      "--destructive", "--after",         "--timeout-ms",
      "--deadline-s",  "--api-version",   "--allow-api-version"};
  ll_buf b = {0};
  ll_operator_usage(&b);
  CHECK(b.p && !b.oom);
  for (size_t i = 0; b.p && i < sizeof names / sizeof names[0]; i++)
    CHECK(strstr(b.p, names[i]) != NULL);
  for (const char *line = b.p; line && *line;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    CHECK(len <= 79);
    line = nl ? nl + 1 : line + len;
  }
  free(b.p);
}

/* --api-version: one version is the run's; several are the host's loop;
 * each checked, none twice, and several refuse what makes one run. */
static void test_api_versions(void) {
  ll_operator o;
  char *rest[8];
  int nrest = 0;
  ll_error err = {0};
  const char *one[] = {"--api-version", "2021-12-02"};
  CHECK_INT(parse(LIVE, 2, one, &o, rest, &nrest, &err), LL_OK);
  CHECK_STR(o.api_version, "2021-12-02");
  CHECK_INT(o.n_api_versions, 1);
  const char *two[] = {"--api-version=2021-12-02,2023-11-03"};
  CHECK_INT(parse(LIVE, 1, two, &o, rest, &nrest, &err), LL_OK);
  CHECK_INT(o.n_api_versions, 2);
  CHECK_STR(o.api_version, ""); /* set by the host for each run */
  CHECK_STR(o.api_versions[0], "2021-12-02");
  CHECK_STR(o.api_versions[1], "2023-11-03");
  const char *unlisted[] = {"--api-version", "2099-01-01,2023-11-03",
                            "--allow-api-version"};
  CHECK_INT(parse(LIVE, 3, unlisted, &o, rest, &nrest, &err), LL_OK);
  CHECK_STR(o.api_versions[0], "2099-01-01");
  static const struct {
    const char *v, *extra, *says;
  } bad[] = {
      {"2099-01-01", NULL, "2099-01-01 is not an Azure Storage service"},
      {"2023-11-03,2099-01-01", NULL, "--allow-api-version"},
      {"banana", NULL, "\"banana\" is not a service version date"},
      {"2023-02-30", NULL, "is not a service version date"},
      {"2023-11-03,2023-11-03", NULL, "names 2023-11-03 twice"},
      {"2023-11-03,", NULL, "an empty entry"},
      {",2023-11-03", NULL, "an empty entry"},
      {"2023-11-03,,2021-12-02", NULL, "an empty entry"},
      {"2023-11-03 ,2021-12-02", NULL, "is not a service version date"},
      {"2023-11-03,2021-12-02", "--recover", "--recover reopens one"},
      {"2023-11-03,2021-12-02", "--record", "--record writes one fixture"},
      {"2023-11-03,2021-12-02", "--replay", "--replay replays one"},
      {"2019-02-02,2019-07-07,2019-12-12,2020-02-10,2020-04-08,2020-06-12,"
       "2020-08-04,2020-10-02,2020-12-06,2021-02-12,2021-04-10,2021-06-08,"
       "2021-08-06,2021-10-04,2021-12-02,2022-11-02,2023-01-03",
       NULL, "more than 16 versions"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const char *argv[5] = {"--api-version", bad[i].v};
    int argc = 2;
    if (bad[i].extra && strcmp(bad[i].extra, "--recover") == 0)
      argv[argc++] = "--recover", argv[argc++] = "--evidence",
      argv[argc++] = "ev";
    else if (bad[i].extra)
      argv[argc++] = bad[i].extra, argv[argc++] = "f.json";
    memset(&err, 0, sizeof err);
    ll_status st = parse(LIVE, argc, argv, &o, rest, &nrest, &err);
    CHECK_INT(st, LL_E_USAGE);
    if (!strstr(err.message, bad[i].says))
      fprintf(stderr, "version case %zu: \"%s\" lacks \"%s\"\n", i, err.message,
              bad[i].says);
    CHECK(strstr(err.message, bad[i].says) != NULL);
    CHECK(strchr(err.message, '\n') == NULL);
    CHECK_INT(ll_code_exit(st), 64);
  }
}

static void test_default_evidence(void) {
  ll_operator o;
  ll_operator_defaults(&o);
  ll_strlcpy(o.evidence_root, "/nonexistent-root", sizeof o.evidence_root);
  char buf[600];
  ll_error err = {0};
  CHECK_INT(
      ll_operator_default_evidence(&o, "main-handoff", buf, sizeof buf, &err),
      LL_OK);
  CHECK(strncmp(buf, "/nonexistent-root/main-handoff-", 31) == 0);
  CHECK(strlen(buf) == strlen("/nonexistent-root/main-handoff-") + 16);
}

int main(void) {
  test_split();
  test_refused();
  test_replay_needs_no_target_nor_credential();
  test_one_flag_credential();
  test_hints();
  test_usage_lists_every_option();
  test_default_evidence();
  test_api_versions();
  return ll_test_report("test_operator");
}
