/* Manifest parsing and the manifest row. A missing field is a usage error
 * naming it, before anything is sent. */
#include "manifest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "endpoint.h"
#include "http.h"
#include "input.h"
#include "jsonx.h"

static const char *const required[] = {"resource_owner", "ticket",
                                       "cleanup_authority", NULL};

/* Azure Storage service versions, from 2019-02-02 to the newest
 * documented. Sources: "Versioning for Azure Storage"
 * (https://learn.microsoft.com/rest/api/storageservices/
 * versioning-for-the-azure-storage-services; as of June 3, 2026 it names
 * 2026-04-06 fully deployed and 2026-06-06 globally enabled), "Previous
 * Azure Storage service versions" (.../previous-azure-storage-service-
 * versions), and the versions enumerated by the Azure SDK's
 * BlobServiceVersion (https://learn.microsoft.com/java/api/
 * com.azure.storage.blob.blobserviceversion). A version outside this list
 * needs the operator's --allow-api-version and is recorded as unlisted. */
static const char *const api_versions[] = {
    "2019-02-02", "2019-07-07", "2019-12-12", "2020-02-10", "2020-04-08",
    "2020-06-12", "2020-08-04", "2020-10-02", "2020-12-06", "2021-02-12",
    "2021-04-10", "2021-06-08", "2021-08-06", "2021-10-04", "2021-12-02",
    "2022-11-02", "2023-01-03", "2023-05-03", "2023-08-03", "2023-11-03",
    "2024-02-04", "2024-05-04", "2024-08-04", "2024-11-04", "2025-01-05",
    "2025-05-05", "2025-07-05", "2025-11-05", "2026-02-06", "2026-04-06",
    "2026-06-06", NULL};

const char *const *ll_manifest_api_versions(void) {
  return api_versions;
}

/* YYYY-MM-DD naming a real calendar date. */
static int is_date(const char *v) {
  if (strlen(v) != 10 || v[4] != '-' || v[7] != '-')
    return 0;
  for (int i = 0; i < 10; i++)
    if (i != 4 && i != 7 && (v[i] < '0' || v[i] > '9'))
      return 0;
  int y = atoi(v), m = atoi(v + 5), d = atoi(v + 8);
  static const int days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m >= 1 && m <= 12 && d >= 1 && d <= days[m - 1] &&
         !(m == 2 && d == 29 && !leap);
}

/* A value fit to repeat in a one-line message: printable ASCII, short. */
static void shown(const char *v, char *buf, size_t cap) {
  size_t n = 0;
  for (; v[n] && n + 4 < cap; n++)
    buf[n] = (v[n] >= 0x20 && v[n] < 0x7f) ? v[n] : '?';
  buf[n] = '\0';
  if (v[n])
    strcat(buf, "...");
}

ll_status ll_manifest_api_version_check(const char *v, int allow_unlisted,
                                        int *out_listed, ll_error *err) {
  if (out_listed)
    *out_listed = 0;
  char s[40];
  if (!v || !is_date(v)) {
    shown(v ? v : "", s, sizeof s);
    return ll_fail(err, LL_E_MANIFEST,
                   "api_version \"%s\" is not a service version date "
                   "YYYY-MM-DD such as %s: fix the manifest's api_version",
                   s, LL_API_VERSION);
  }
  for (const char *const *k = api_versions; *k; k++)
    if (strcmp(*k, v) == 0) {
      if (out_listed)
        *out_listed = 1;
      return LL_OK;
    }
  if (allow_unlisted)
    return LL_OK;
  return ll_fail(
      err, LL_E_MANIFEST,
      "api_version %s is not an Azure Storage service version "
      "leaselua knows (%s to %s): use a listed one, or pass "
      "--allow-api-version to send it anyway (recorded in the "
      "manifest)",
      v, api_versions[0],
      api_versions[sizeof api_versions / sizeof api_versions[0] - 2]);
}

static int nonempty_string(const cJSON *v) {
  return cJSON_IsString(v) && v->valuestring[0] != '\0' &&
         strlen(v->valuestring) < 256;
}

/* The first name an object of v holds twice, at any depth (NULL: none).
 * cJSON keeps both and reads the first, while another JSON reader may take
 * the last: the manifest would say two things. */
static const char *twice(const cJSON *v, int depth) {
  if (depth > 16 || !(cJSON_IsObject(v) || cJSON_IsArray(v)))
    return NULL;
  for (const cJSON *a = v->child; a; a = a->next) {
    for (const cJSON *b = a->next; cJSON_IsObject(v) && b; b = b->next)
      if (a->string && b->string && strcmp(a->string, b->string) == 0)
        return a->string;
    const char *in = twice(a, depth + 1);
    if (in)
      return in;
  }
  return NULL;
}

ll_status ll_manifest_check(const cJSON *user, ll_error *err) {
  if (!cJSON_IsObject(user))
    return ll_fail(err, LL_E_MANIFEST,
                   "manifest is not a JSON object: see docs/EVIDENCE.md");
  const char *dup = twice(user, 0);
  if (dup)
    return ll_fail(err, LL_E_MANIFEST,
                   "manifest key '%.64s' appears twice in one object: JSON "
                   "readers differ on which one counts; keep one",
                   dup);
  for (const char *const *f = required; *f; f++)
    if (!nonempty_string(cJSON_GetObjectItemCaseSensitive(user, *f)))
      return ll_fail(err, LL_E_MANIFEST,
                     "manifest field '%s' is missing or not a non-empty "
                     "string: add it to the manifest",
                     *f);
  const cJSON *actors =
      cJSON_GetObjectItemCaseSensitive(user, "permitted_actors");
  if (!cJSON_IsArray(actors) || cJSON_GetArraySize(actors) == 0)
    return ll_fail(err, LL_E_MANIFEST,
                   "manifest field 'permitted_actors' is missing or empty: "
                   "list the actors, e.g. [\"A\",\"B\",\"operator\"]");
  const cJSON *a;
  cJSON_ArrayForEach(a, actors) {
    if (!nonempty_string(a))
      return ll_fail(err, LL_E_MANIFEST,
                     "manifest field 'permitted_actors' must hold non-empty "
                     "strings");
    for (const cJSON *b = a->next; b; b = b->next)
      if (cJSON_IsString(b) && strcmp(a->valuestring, b->valuestring) == 0)
        return ll_fail(err, LL_E_MANIFEST,
                       "manifest field 'permitted_actors' lists %.64s twice: "
                       "list each actor once",
                       a->valuestring);
  }
  const char *opt[] = {"run_id", "endpoint_kind", "api_version", NULL};
  for (const char **f = opt; *f; f++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(user, *f);
    if (v && !nonempty_string(v))
      return ll_fail(err, LL_E_MANIFEST,
                     "manifest field '%s' must be a non-empty string", *f);
  }
  const cJSON *rid = cJSON_GetObjectItemCaseSensitive(user, "run_id");
  if (rid) {
    for (const char *p = rid->valuestring; *p; p++)
      if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
        return ll_fail(err, LL_E_MANIFEST,
                       "manifest field 'run_id' may hold only letters, "
                       "digits, '-', '_' and '.'");
  }
  const cJSON *api = cJSON_GetObjectItemCaseSensitive(user, "api_version");
  if (api && !is_date(api->valuestring)) {
    char s[40];
    shown(api->valuestring, s, sizeof s);
    return ll_fail(err, LL_E_MANIFEST,
                   "manifest field 'api_version' is \"%s\", not a service "
                   "version date YYYY-MM-DD such as %s: fix it or leave it "
                   "out",
                   s, LL_API_VERSION);
  }
  const cJSON *kind = cJSON_GetObjectItemCaseSensitive(user, "endpoint_kind");
  if (kind && strcmp(kind->valuestring, "azure") != 0 &&
      strcmp(kind->valuestring, "emulator") != 0)
    return ll_fail(err, LL_E_MANIFEST,
                   "manifest field 'endpoint_kind' must be \"azure\" or "
                   "\"emulator\"");
  const cJSON *decl =
      cJSON_GetObjectItemCaseSensitive(user, "declared_azure_host");
  if (decl &&
      !(cJSON_IsString(decl) && ll_endpoint_declarable(decl->valuestring)))
    return ll_fail(err, LL_E_MANIFEST,
                   "manifest field 'declared_azure_host' must be the account's "
                   "bare DNS name (no scheme or port), and not loopback, the "
                   "replay host or an <account>.blob.core... name");
  return LL_OK;
}

ll_status ll_manifest_parse(const char *text, size_t len, cJSON **out,
                            ll_error *err) {
  *out = NULL;
  if (len > LL_MANIFEST_FILE_MAX)
    return ll_fail(err, LL_E_MANIFEST, "manifest larger than %u KiB",
                   LL_MANIFEST_FILE_MAX / 1024);
  ll_alloc_init();
  unsigned long mark = ll_alloc_failures();
  cJSON *j = cJSON_ParseWithLength(text, len);
  if (ll_alloc_failed_since(mark)) {
    cJSON_Delete(j);
    return ll_fail(err, LL_E_NOMEM, "out of memory reading the manifest");
  }
  if (!j)
    return ll_fail(err, LL_E_MANIFEST,
                   "manifest is not valid JSON: fix the file");
  ll_status st = ll_manifest_check(j, err);
  if (st != LL_OK) {
    cJSON_Delete(j);
    return st;
  }
  *out = j;
  return LL_OK;
}

void ll_manifest_account_host(const char *url, char *buf, size_t cap) {
  const char *p = strstr(url, "://");
  p = p ? p + 3 : url;
  size_t n = strcspn(p, "/");
  if (n >= cap)
    n = cap - 1;
  memcpy(buf, p, n);
  buf[n] = '\0';
}

void ll_manifest_recorded_host(const ll_target *t, int replay, char *buf,
                               size_t cap) {
  if (replay)
    ll_strlcpy(buf, LL_REPLAY_HOST, cap);
  else
    ll_manifest_account_host(t->account_url, buf, cap);
}

/* The version to send: the operator's, the manifest's (equal when both
 * are given) or the default, checked against the list. */
static ll_status choose_api_version(const cJSON *user,
                                    const ll_manifest_input *in,
                                    const char **out, int *out_listed,
                                    ll_error *err) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(user, "api_version");
  const char *mv = m ? m->valuestring : NULL;
  if (in->api_version && mv && strcmp(in->api_version, mv) != 0) {
    char a[40], b[40];
    shown(mv, a, sizeof a);
    shown(in->api_version, b, sizeof b);
    return ll_fail(err, LL_E_MANIFEST,
                   "the manifest's api_version %s and --api-version %s "
                   "differ: give one of them",
                   a, b);
  }
  *out = in->api_version ? in->api_version : mv ? mv : LL_API_VERSION;
  return ll_manifest_api_version_check(*out, in->allow_unlisted_api_version,
                                       out_listed, err);
}

ll_status ll_manifest_build(const cJSON *user, const ll_target *t,
                            const char *lua_version, const char *fixture_label,
                            cJSON **out_row, ll_error *err) {
  ll_manifest_input in = {.lua_version = lua_version,
                          .fixture_label = fixture_label};
  return ll_manifest_build_with(user, t, &in, out_row, err);
}

ll_status ll_manifest_build_with(const cJSON *user, const ll_target *t,
                                 const ll_manifest_input *in, cJSON **out_row,
                                 ll_error *err) {
  char host[256], path[512], kind[16], run_id[160];
  *out_row = NULL;
  ll_status st = ll_manifest_check(user, err);
  if (st != LL_OK)
    return st;
  const char *lua_version = in->lua_version;
  const char *fixture_label = in->fixture_label;
  const char *api = NULL;
  int listed = 0;
  st = choose_api_version(user, in, &api, &listed, err);
  if (st != LL_OK)
    return st;
  ll_manifest_recorded_host(t, fixture_label != NULL, host, sizeof host);
  char bare[256], declared[256] = "";
  ll_endpoint_bare_host(host, bare, sizeof bare);
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(user, "endpoint_kind");
  const cJSON *decl =
      cJSON_GetObjectItemCaseSensitive(user, "declared_azure_host");
  if (decl && !fixture_label) /* a replay talks to no host at all */
    ll_endpoint_bare_host(decl->valuestring, declared, sizeof declared);
  ll_host_class hc = ll_endpoint_classify(bare);
  if (fixture_label)
    ll_strlcpy(kind, "replay", sizeof kind);
  else if (k)
    ll_strlcpy(kind, k->valuestring, sizeof kind);
  else if (hc == LL_HOST_AZURE || declared[0])
    ll_strlcpy(kind, "azure", sizeof kind);
  else if (hc == LL_HOST_LOOPBACK)
    ll_strlcpy(kind, "emulator", sizeof kind);
  else
    return ll_fail(err, LL_E_MANIFEST,
                   "cannot tell whether %s is Azure or an emulator: set "
                   "endpoint_kind in the manifest (and declared_azure_host "
                   "for an Azure custom domain or private endpoint name)",
                   bare);
  /* the rule verify applies to the evidence, applied before anything */
  st = ll_endpoint_check(kind, host, fixture_label,
                         declared[0] ? declared : NULL, err);
  if (st != LL_OK)
    return st;
  const cJSON *rid = cJSON_GetObjectItemCaseSensitive(user, "run_id");
  if (rid) {
    ll_strlcpy(run_id, rid->valuestring, sizeof run_id);
  } else {
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    snprintf(run_id, sizeof run_id, "run-%04d%02d%02dT%02d%02d%02dZ",
             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec);
  }
  ll_target_blob_path(t, path, sizeof path);
  cJSON *row = cJSON_CreateObject();
  if (!row)
    return ll_fail(err, LL_E_NOMEM, "out of memory");
  cJSON_AddStringToObject(row, "record", "manifest");
  cJSON_AddStringToObject(row, "run_id", run_id);
  cJSON_AddStringToObject(row, "endpoint_kind", kind);
  if (fixture_label)
    cJSON_AddStringToObject(row, "fixture_label", fixture_label);
  cJSON_AddStringToObject(row, "account_host", host);
  if (declared[0]) /* Azure by the operator's word, and recorded so */
    cJSON_AddStringToObject(row, "declared_azure_host", declared);
  cJSON_AddStringToObject(row, "container", t->container);
  cJSON_AddStringToObject(row, "blob_path", path);
  cJSON_AddStringToObject(row, "api_version", api);
  if (!listed)
    cJSON_AddBoolToObject(row, "api_version_unlisted", 1);
  for (const char *const *f = required; *f; f++)
    cJSON_AddStringToObject(
        row, *f, cJSON_GetObjectItemCaseSensitive(user, *f)->valuestring);
  ll_json_add(
      row, "permitted_actors",
      cJSON_Duplicate(
          cJSON_GetObjectItemCaseSensitive(user, "permitted_actors"), 1));
  cJSON *v = cJSON_AddObjectToObject(row, "versions");
  cJSON_AddStringToObject(v, "leaselua", LL_VERSION);
  cJSON_AddStringToObject(v, "lua", lua_version ? lua_version : "unknown");
  cJSON_AddStringToObject(v, "libcurl", ll_http_curl_version());
  cJSON_AddStringToObject(v, "openssl", ll_http_ssl_version());
  cJSON_AddNumberToObject(row, "retries", 0);
  *out_row = row;
  return LL_OK;
}
