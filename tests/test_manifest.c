/* The run manifest: each refusal of a user manifest, the api_version
 * rules (a YYYY-MM-DD date from the known list, or an unlisted one the
 * operator allowed, recorded as such) and the row that is built. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "manifest.h"
#include "testlib.h"

#define BASE                                                                   \
  "\"resource_owner\":\"storage-team\",\"ticket\":\"CHG-1\","                  \
  "\"cleanup_authority\":\"storage-team\","                                    \
  "\"permitted_actors\":[\"A\",\"B\",\"operator\"]"

static void test_parse_refusals(void) {
  static const struct {
    const char *json;
    ll_code code;
    const char *want; /* NULL: accepted */
  } rows[] = {
      {"{" BASE "}", LL_OK, NULL},
      {"{" BASE ",\"api_version\":\"2023-11-03\"}", LL_OK, NULL},
      /* a well-formed date outside the list passes parse: build decides */
      {"{" BASE ",\"api_version\":\"2099-01-01\"}", LL_OK, NULL},
      {"{" BASE ",\"api_version\":\"banana\"}", LL_E_MANIFEST,
       "manifest field 'api_version' is \"banana\", not a service version "
       "date YYYY-MM-DD such as 2023-11-03"},
      {"{" BASE ",\"api_version\":\"2023-11-3\"}", LL_E_MANIFEST,
       "not a service version date"},
      {"{" BASE ",\"api_version\":\"2023-13-03\"}", LL_E_MANIFEST,
       "not a service version date"},
      {"{" BASE ",\"api_version\":\"2023-02-30\"}", LL_E_MANIFEST,
       "not a service version date"},
      {"{" BASE ",\"api_version\":\"2023-11-03 \"}", LL_E_MANIFEST,
       "not a service version date"},
      {"{" BASE ",\"api_version\":\"2023-11-03\\r\\nX-Evil: 1\"}",
       LL_E_MANIFEST, "\"2023-11-03??X-Evil: 1\""},
      {"{" BASE ",\"api_version\":\"\"}", LL_E_MANIFEST,
       "'api_version' must be a non-empty string"},
      {"{" BASE ",\"api_version\":20231103}", LL_E_MANIFEST,
       "'api_version' must be a non-empty string"},
      /* the checks that were there before */
      {"[]", LL_E_MANIFEST, "not a JSON object"},
      {"{", LL_E_MANIFEST, "not valid JSON"},
      {"{\"ticket\":\"x\",\"cleanup_authority\":\"y\","
       "\"permitted_actors\":[\"A\"]}",
       LL_E_MANIFEST, "'resource_owner' is missing"},
      {"{\"resource_owner\":\"o\",\"ticket\":\"x\",\"cleanup_authority\":\"y\","
       "\"permitted_actors\":[]}",
       LL_E_MANIFEST, "'permitted_actors' is missing or empty"},
      {"{" BASE ",\"run_id\":\"a/b\"}", LL_E_MANIFEST, "'run_id' may hold"},
      {"{" BASE ",\"endpoint_kind\":\"cloud\"}", LL_E_MANIFEST,
       "'endpoint_kind' must be"},
      /* one key twice, at any depth, and one actor twice (helper-34) */
      {"{" BASE ",\"ticket\":\"U\"}", LL_E_MANIFEST,
       "manifest key 'ticket' appears twice in one object"},
      {"{" BASE ",\"credentials\":{\"A\":{\"kind\":\"x\",\"kind\":\"y\"}}}",
       LL_E_MANIFEST, "manifest key 'kind' appears twice"},
      {"{\"resource_owner\":\"o\",\"ticket\":\"x\",\"cleanup_authority\":\"y\","
       "\"permitted_actors\":[\"A\",\"B\",\"A\"]}",
       LL_E_MANIFEST, "'permitted_actors' lists A twice"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    cJSON *m = NULL;
    ll_error err = {0};
    ll_status st =
        ll_manifest_parse(rows[i].json, strlen(rows[i].json), &m, &err);
    CHECK_STR(ll_code_name(st), ll_code_name(rows[i].code));
    if (rows[i].want) {
      if (!strstr(err.message, rows[i].want))
        fprintf(stderr, "parse row %zu: %s\n", i, err.message);
      CHECK(strstr(err.message, rows[i].want) != NULL);
      CHECK(strchr(err.message, '\n') == NULL &&
            strchr(err.message, '\r') == NULL);
      CHECK(m == NULL);
    }
    cJSON_Delete(m);
  }
}

static void test_version_list(void) {
  const char *const *v = ll_manifest_api_versions();
  size_t n = 0;
  int have_default = 0, have_2021 = 0;
  for (; v[n]; n++) {
    if (n > 0)
      CHECK(strcmp(v[n - 1], v[n]) < 0); /* sorted, no duplicates */
    have_default |= strcmp(v[n], LL_API_VERSION) == 0;
    have_2021 |= strcmp(v[n], "2021-12-02") == 0;
  }
  CHECK(n >= 31);
  CHECK_STR(v[0], "2019-02-02");
  CHECK(strncmp(v[n - 1], "2026-", 5) == 0);
  CHECK(have_default && have_2021);
  static const struct {
    const char *v;
    int allow;
    ll_code code;
    int listed;
  } rows[] = {
      {"2023-11-03", 0, LL_OK, 1},         {"2019-02-02", 0, LL_OK, 1},
      {"2025-11-05", 0, LL_OK, 1},         {"2026-06-06", 0, LL_OK, 1},
      {"2099-01-01", 0, LL_E_MANIFEST, 0}, {"2099-01-01", 1, LL_OK, 0},
      {"2018-11-09", 0, LL_E_MANIFEST, 0}, {"banana", 1, LL_E_MANIFEST, 0},
      {"", 1, LL_E_MANIFEST, 0},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    int listed = -1;
    ll_error err = {0};
    ll_status st =
        ll_manifest_api_version_check(rows[i].v, rows[i].allow, &listed, &err);
    CHECK_STR(ll_code_name(st), ll_code_name(rows[i].code));
    CHECK_INT(listed, rows[i].listed);
  }
  ll_error err = {0};
  CHECK_INT(ll_manifest_api_version_check(NULL, 1, NULL, &err), LL_E_MANIFEST);
}

static void test_build(void) {
  ll_target t;
  ll_error err = {0};
  CHECK_INT(ll_target_init(&t, "https://127.0.0.1:10000/devstoreaccount1",
                           "lease-handoff-lab", "writer-handoff.json", &err),
            LL_OK);
  static const struct {
    const char *manifest_version; /* NULL: absent */
    const char *flag_version;     /* --api-version, NULL: absent */
    int allow;
    ll_code code;
    const char *sent;
    int unlisted;
    const char *want;
  } rows[] = {
      {NULL, NULL, 0, LL_OK, "2023-11-03", 0, NULL},
      {"2021-12-02", NULL, 0, LL_OK, "2021-12-02", 0, NULL},
      {NULL, "2025-05-05", 0, LL_OK, "2025-05-05", 0, NULL},
      {"2025-05-05", "2025-05-05", 0, LL_OK, "2025-05-05", 0, NULL},
      {"2099-01-01", NULL, 0, LL_E_MANIFEST, NULL, 0,
       "api_version 2099-01-01 is not an Azure Storage service version "
       "leaselua knows (2019-02-02 to 2026-06-06): use a listed one, or pass "
       "--allow-api-version"},
      {"2099-01-01", NULL, 1, LL_OK, "2099-01-01", 1, NULL},
      {NULL, "2099-01-01", 1, LL_OK, "2099-01-01", 1, NULL},
      {NULL, "banana", 1, LL_E_MANIFEST, NULL, 0, "\"banana\" is not a"},
      {"2023-11-03", "2025-05-05", 0, LL_E_MANIFEST, NULL, 0,
       "the manifest's api_version 2023-11-03 and --api-version 2025-05-05 "
       "differ"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    char json[512];
    if (rows[i].manifest_version)
      snprintf(json, sizeof json, "{" BASE ",\"api_version\":\"%s\"}",
               rows[i].manifest_version);
    else
      snprintf(json, sizeof json, "{" BASE "}");
    cJSON *m = cJSON_Parse(json), *row = NULL;
    ll_manifest_input in = {"Lua 5.4", NULL, rows[i].flag_version,
                            rows[i].allow};
    err = (ll_error){0};
    ll_status st = ll_manifest_build_with(m, &t, &in, &row, &err);
    CHECK_STR(ll_code_name(st), ll_code_name(rows[i].code));
    if (st == LL_OK) {
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, "api_version");
      CHECK(cJSON_IsString(v));
      CHECK_STR(cJSON_IsString(v) ? v->valuestring : NULL, rows[i].sent);
      const cJSON *u =
          cJSON_GetObjectItemCaseSensitive(row, "api_version_unlisted");
      CHECK_INT(cJSON_IsTrue(u), rows[i].unlisted);
      CHECK(rows[i].unlisted || u == NULL); /* only when it is unlisted */
    } else {
      CHECK(row == NULL);
      if (!strstr(err.message, rows[i].want))
        fprintf(stderr, "build row %zu: %s\n", i, err.message);
      CHECK(strstr(err.message, rows[i].want) != NULL);
    }
    cJSON_Delete(row);
    cJSON_Delete(m);
  }
  /* The older entry point keeps working, and refuses an unlisted version. */
  cJSON *m = cJSON_Parse("{" BASE ",\"api_version\":\"2099-01-01\"}");
  cJSON *row = NULL;
  CHECK_INT(ll_manifest_build(m, &t, "Lua 5.4", NULL, &row, &err),
            LL_E_MANIFEST);
  cJSON_Delete(m);
  m = cJSON_Parse("{" BASE "}");
  CHECK_INT(ll_manifest_build(m, &t, "Lua 5.4", "emulator", &row, &err), LL_OK);
  CHECK_STR(cJSON_GetObjectItemCaseSensitive(row, "endpoint_kind")->valuestring,
            "replay");
  cJSON_Delete(row);
  cJSON_Delete(m);
}

/* The one host rule of the same-blob checks (recovery, the gap
 * control's --after, the lock's scan of earlier bundles) and of
 * corroboration's log records, in endpoint.h. */
static void test_same_host(void) {
  ll_target t = {0};
  char host[256];
  snprintf(t.account_url, sizeof t.account_url, "%s",
           "https://Acct.blob.core.windows.net");
  ll_manifest_recorded_host(&t, 0, host, sizeof host);
  CHECK(strcmp(host, "Acct.blob.core.windows.net") == 0);
  ll_manifest_recorded_host(&t, 1, host, sizeof host);
  CHECK(strcmp(host, LL_REPLAY_HOST) == 0); /* a replay names no host */
  CHECK(ll_endpoint_same_host("Acct.blob.core.windows.net",
                              "acct.blob.core.windows.net"));
  CHECK(ll_endpoint_same_host("127.0.0.1:10000", "127.0.0.1:10000"));
  CHECK(!ll_endpoint_same_host("127.0.0.1:10000", "127.0.0.1:10001"));
  CHECK(!ll_endpoint_same_host("acct.blob.core.windows.net",
                               "acct2.blob.core.windows.net"));
  CHECK(!ll_endpoint_same_host(NULL, "acct.blob.core.windows.net"));
  CHECK(!ll_endpoint_same_host("acct.blob.core.windows.net", NULL));
  CHECK(!ll_endpoint_same_host(NULL, NULL));
}

int main(void) {
  test_same_host();
  test_parse_refusals();
  test_version_list();
  test_build();
  return ll_test_report("test_manifest");
}
