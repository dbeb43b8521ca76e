/* `leaselua corroborate DIR --print-query` (corroborate.h): how to fetch
 * the service's logs of this run in one command. */
#include "corroborate_query.h"

#include "corroborate_load.h"
#include "log_rec.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "jsonx.h"

void ll_corr_fmt_time(int64_t ms, char *buf, size_t cap) {
  ll_clock_format_utc(ms, buf, (unsigned)cap);
}

/* A KQL string literal: only [A-Za-z0-9-_./:%~] pass, anything else makes
 * the value unusable in a query (it is left out, and said so). */
static int kql_safe(const char *s) {
  if (!s || !*s)
    return 0;
  for (const char *p = s; *p; p++)
    if (!ll_alias_char(*p) && !strchr("./:%~", *p))
      return 0;
  return 1;
}

/* The storage account of an Azure host name, or a placeholder. */
static void account_of(const char *host, char *out, size_t cap) {
  const char *dot = host ? strchr(host, '.') : NULL;
  if (dot && strstr(dot, ".blob.") && (size_t)(dot - host) < cap) {
    memcpy(out, host, (size_t)(dot - host));
    out[dot - host] = '\0';
    for (char *p = out; *p; p++)
      if (*p >= 'a' && *p <= 'z')
        *p = (char)(*p - 'a' + 'A');
  } else {
    ll_strlcpy(out, "<ACCOUNT>", cap);
  }
}

/* The KQL's columns: every one corroborate reads from a StorageBlobLogs
 * row (logs_json.c). */
static const char *const columns =
    "TimeGenerated, Category, OperationName, StatusCode, StatusText, "
    "CorrelationId, ClientRequestId, Uri, CallerIpAddress, "
    "AuthenticationType, RequesterObjectId, RequesterTenantId";

ll_status ll_corr_query_rows(const cJSON *rows, const char *dir, int margin_s,
                             ll_buf *out, ll_error *err) {
  const cJSON *manifest = ll_corr_manifest(rows, dir, err);
  if (!manifest)
    return LL_E_USAGE;
  int64_t first = INT64_MAX, last = INT64_MIN;
  const cJSON *row;
  cJSON_ArrayForEach(row, rows) {
    const char *rec = ll_json_str(row, "record");
    if (!rec || (strcmp(rec, "intent") && strcmp(rec, "outcome")))
      continue;
    int64_t t;
    const char *s = ll_json_str(row, "request_started_utc");
    if (s && ll_log_parse_time(s, &t) == 0 && t < first)
      first = t;
    s = ll_json_str(row, "response_received_utc");
    if (s && ll_log_parse_time(s, &t) == 0 && t > last)
      last = t;
    if (s == NULL && (s = ll_json_str(row, "request_started_utc")) &&
        ll_log_parse_time(s, &t) == 0 && t > last)
      last = t;
  }
  if (first == INT64_MAX)
    return ll_fail(err, LL_E_USAGE, "%s: the run sent no requests", dir);
  char a[40], b[40], ws[40], we[40], acct[64];
  int64_t m = (int64_t)margin_s * 1000;
  ll_corr_fmt_time(first, a, sizeof a);
  ll_corr_fmt_time(last, b, sizeof b);
  ll_corr_fmt_time(first - m, ws, sizeof ws);
  ll_corr_fmt_time(last + m, we, sizeof we);
  const char *blob = ll_json_str(manifest, "blob_path");
  const char *run = ll_json_pstr(manifest, "run_id");
  account_of(ll_json_str(manifest, "account_host"), acct, sizeof acct);
  ll_buf_printf(out, "# leaselua corroborate: the service's logs of run %s\n",
                run);
  ll_buf_printf(
      out,
      "# blob: %s\n# window: %s .. %s; queried with a margin of %d s: "
      "%s .. %s\n",
      blob, a, b, margin_s, ws, we);
  ll_buf_printf(out, "#\n# 1. Log Analytics (a diagnostic setting sending to a "
                     "workspace): save the KQL\n#    between the markers as "
                     "corroborate.kql, then run\n");
  ll_buf_printf(out,
                "az monitor log-analytics query --workspace "
                "\"$LOG_ANALYTICS_WORKSPACE_ID\" --analytics-query \"$(cat "
                "corroborate.kql)\" --timespan \"%s/%s\" --output json > "
                "storageblob-logs.json\n",
                ws, we);
  ll_buf_printf(out, "# --- corroborate.kql ---\nStorageBlobLogs\n");
  ll_buf_printf(
      out, "| where TimeGenerated between (datetime(%s) .. datetime(%s))\n", ws,
      we);
  ll_buf_printf(out, "| where Uri contains \"%s\"", kql_safe(blob) ? blob : "");
  int crids = 0;
  cJSON_ArrayForEach(row, rows) {
    const char *rec = ll_json_str(row, "record");
    const char *c = ll_json_str(row, "client_request_id");
    if (!rec || strcmp(rec, "intent") || !kql_safe(c))
      continue;
    ll_buf_printf(
        out, crids++ ? ",\n    \"%s\"" : " or ClientRequestId in (\n    \"%s\"",
        c);
  }
  ll_buf_printf(out, "%s\n", crids ? ")" : "");
  ll_buf_printf(out, "| project %s\n| order by TimeGenerated asc\n", columns);
  ll_buf_printf(
      out, "# --- end ---\n#\n# 2. A diagnostic setting archiving to a "
           "storage account writes JSON lines, one\n#    blob per category "
           "and hour, under these prefixes (fill in the IDs):\n");
  static const char *const cats[] = {"storageread", "storagewrite",
                                     "storagedelete"};
  for (int64_t h = (first - m) / 3600000; h <= (last + m) / 3600000; h++) {
    char t[40];
    ll_corr_fmt_time(h * 3600000, t, sizeof t);
    for (int c = 0; c < 3; c++)
      ll_buf_printf(
          out,
          "insights-logs-%s/resourceId=/SUBSCRIPTIONS/<SUBSCRIPTION-ID>/"
          "RESOURCEGROUPS/<RESOURCE-GROUP>/PROVIDERS/MICROSOFT.STORAGE/"
          "STORAGEACCOUNTS/%s/BLOBSERVICES/DEFAULT/y=%.4s/m=%.2s/d=%.2s/"
          "h=%.2s/m=00/PT1H.json\n",
          cats[c], acct, t, t + 5, t + 8, t + 11);
  }
  ll_buf_printf(
      out,
      "#\n# 3. Classic Storage Analytics logging (version 2.0 records "
      "the requester's\n#    object and tenant IDs): $logs/blob/"
      "YYYY/MM/DD/hhmm/ of the same hours.\n#\n# then: leaselua "
      "corroborate %s --logs FILE...\n",
      dir);
  if (out->oom)
    return ll_fail(err, LL_E_NOMEM, "out of memory printing the query");
  return LL_OK;
}

ll_status ll_corr_query(const char *dir, int margin_s, ll_buf *out,
                        ll_error *err) {
  cJSON *rows = NULL;
  const cJSON *manifest = NULL;
  ll_status st = ll_corr_load(dir, &rows, &manifest, err);
  if (st == LL_OK)
    st = ll_corr_query_rows(rows, dir, margin_s, out, err);
  cJSON_Delete(rows);
  return st;
}
