/* Manifest parsing and the manifest row. A missing field is a usage error
 * naming it, before anything is sent. */
#include "manifest.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "endpoint.h"
#include "http.h"
#include "jsonx.h"

static const char *const required[] = {"resource_owner", "ticket",
                                       "cleanup_authority", NULL};

static int nonempty_string(const cJSON *v) {
  return cJSON_IsString(v) && v->valuestring[0] != '\0' &&
         strlen(v->valuestring) < 256;
}

ll_status ll_manifest_check(const cJSON *user, ll_error *err) {
  if (!cJSON_IsObject(user))
    return ll_fail(err, LL_E_MANIFEST,
                   "manifest is not a JSON object: see docs/EVIDENCE.md");
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
  if (len > 65536)
    return ll_fail(err, LL_E_MANIFEST, "manifest larger than 64 KiB");
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

ll_status ll_manifest_build(const cJSON *user, const ll_target *t,
                            const char *lua_version, const char *fixture_label,
                            cJSON **out_row, ll_error *err) {
  char host[256], path[512], kind[16], run_id[160];
  *out_row = NULL;
  ll_status st = ll_manifest_check(user, err);
  if (st != LL_OK)
    return st;
  /* A replay talks to no host: whatever URL it was given, its evidence
   * names the placeholder, so it cannot pass for a run on that host. */
  if (fixture_label)
    ll_strlcpy(host, LL_REPLAY_HOST, sizeof host);
  else
    ll_manifest_account_host(t->account_url, host, sizeof host);
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
  const cJSON *api = cJSON_GetObjectItemCaseSensitive(user, "api_version");
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
  cJSON_AddStringToObject(row, "api_version",
                          api ? api->valuestring : LL_API_VERSION);
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
