/* The two JSON forms of Azure Monitor's resource logs for blobs (logs.h):
 * a diagnostic setting's JSON lines and the StorageBlobLogs rows that
 * `az monitor log-analytics query` prints. Parsed with cJSON. */
#include "logs_json.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"

static const cJSON *get(const cJSON *o, const char *k) {
  return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

/* A string value into a field; a missing or non-string value leaves "". */
static void take(char *dst, size_t cap, const cJSON *v) {
  if (cJSON_IsString(v) && v->valuestring)
    (void)ll_log_put(dst, cap, v->valuestring, strlen(v->valuestring));
}

/* A status as the log wrote it: a string as it is, an integral number
 * printed in decimal. 0 when it is neither (a record the parser refuses). */
static int take_status(char *dst, size_t cap, const cJSON *v) {
  if (!v || cJSON_IsNull(v))
    return 1; /* missing: ll_log_finish names it */
  if (cJSON_IsString(v)) {
    take(dst, cap, v);
    return 1;
  }
  /* the range first: the cast is then defined (no libm needed) */
  if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1000 &&
      (double)(int)v->valuedouble == v->valuedouble) {
    snprintf(dst, cap, "%d", (int)v->valuedouble);
    return 1;
  }
  return 0;
}

static void take_path(ll_log_rec *r, const cJSON *v) {
  if (cJSON_IsString(v) && v->valuestring)
    ll_log_put_uri(r, v->valuestring, strlen(v->valuestring));
}

static ll_status bad(ll_log_set *s, int file, long line, ll_error *err,
                     const char *what) {
  return ll_fail(err, LL_E_USAGE, "%s: line %ld: %s", s->files[file], line,
                 what);
}

/* {"time":...,"category":...,"operationName":...,"statusCode":201,...,
 *  "identity":{"type":...,"requester":{"objectId":...,"tenantId":...}},
 *  "properties":{"clientRequestId":...}} */
static ll_status diagnostic_record(ll_log_set *s, int file, long line,
                                   const cJSON *o, ll_error *err) {
  if (!cJSON_IsObject(o))
    return bad(s, file, line, err,
               "not a JSON object (diagnostic-setting logs hold one object "
               "per line)");
  ll_log_rec *r = ll_log_push(s, file, line, err);
  if (!r)
    return err->code;
  r->format = LL_LOG_DIAGNOSTIC;
  take(r->time, sizeof r->time, get(o, "time"));
  take(r->category, sizeof r->category, get(o, "category"));
  take(r->operation, sizeof r->operation, get(o, "operationName"));
  if (!take_status(r->status, sizeof r->status, get(o, "statusCode"))) {
    ll_log_pop(s);
    return bad(s, file, line, err, "statusCode is neither text nor a code");
  }
  take(r->status_text, sizeof r->status_text, get(o, "statusText"));
  take(r->request_id, sizeof r->request_id, get(o, "correlationId"));
  take(r->caller_ip, sizeof r->caller_ip, get(o, "callerIpAddress"));
  take_path(r, get(o, "uri"));
  const cJSON *id = get(o, "identity");
  take(r->auth_type, sizeof r->auth_type, get(id, "type"));
  const cJSON *req = get(id, "requester");
  take(r->oid, sizeof r->oid, get(req, "objectId"));
  take(r->tid, sizeof r->tid, get(req, "tenantId"));
  take(r->client_request_id, sizeof r->client_request_id,
       get(get(o, "properties"), "clientRequestId"));
  return ll_log_finish(s, r, err);
}

static ll_status diagnostic_line(ll_log_set *s, int file, long line,
                                 const char *p, size_t len, ll_error *err) {
  const char *stop = NULL;
  unsigned long mark = ll_alloc_failures();
  cJSON *o = cJSON_ParseWithLengthOpts(p, len, &stop, 0);
  if (!o && ll_alloc_failed_since(mark))
    return ll_fail(err, LL_E_NOMEM, "out of memory reading %s", s->files[file]);
  if (!o)
    return bad(s, file, line, err, "not JSON (truncated or malformed record)");
  while (stop && stop < p + len && (*stop == ' ' || *stop == '\t'))
    stop++;
  ll_status st = stop != p + len ? bad(s, file, line, err,
                                       "text after the record's JSON object")
                                 : diagnostic_record(s, file, line, o, err);
  cJSON_Delete(o);
  return st;
}

ll_status ll_log_parse_diagnostic(ll_log_set *s, int file, const char *buf,
                                  size_t n, ll_error *err) {
  return ll_log_lines(s, file, buf, n, 1, diagnostic_line, err);
}

/* One StorageBlobLogs row as az prints it: an object keyed by column. */
static ll_status analytics_record(ll_log_set *s, int file, long item,
                                  const cJSON *o, ll_error *err) {
  if (!cJSON_IsObject(o))
    return ll_fail(err, LL_E_USAGE,
                   "%s: item %ld is not an object (a StorageBlobLogs row "
                   "keyed by column)",
                   s->files[file], item);
  ll_log_rec *r = ll_log_push(s, file, item, err);
  if (!r)
    return err->code;
  r->format = LL_LOG_ANALYTICS;
  take(r->time, sizeof r->time, get(o, "TimeGenerated"));
  take(r->category, sizeof r->category, get(o, "Category"));
  take(r->operation, sizeof r->operation, get(o, "OperationName"));
  if (!take_status(r->status, sizeof r->status, get(o, "StatusCode"))) {
    ll_log_pop(s);
    return ll_fail(err, LL_E_USAGE,
                   "%s: item %ld: StatusCode is neither text nor a code",
                   s->files[file], item);
  }
  take(r->status_text, sizeof r->status_text, get(o, "StatusText"));
  take(r->request_id, sizeof r->request_id, get(o, "CorrelationId"));
  take(r->client_request_id, sizeof r->client_request_id,
       get(o, "ClientRequestId"));
  take(r->caller_ip, sizeof r->caller_ip, get(o, "CallerIpAddress"));
  take(r->auth_type, sizeof r->auth_type, get(o, "AuthenticationType"));
  take(r->oid, sizeof r->oid, get(o, "RequesterObjectId"));
  take(r->tid, sizeof r->tid, get(o, "RequesterTenantId"));
  take_path(r, get(o, "Uri"));
  return ll_log_finish(s, r, err);
}

ll_status ll_log_parse_analytics(ll_log_set *s, int file, const char *buf,
                                 size_t n, ll_error *err) {
  const char *stop = NULL;
  unsigned long mark = ll_alloc_failures();
  cJSON *a = cJSON_ParseWithLengthOpts(buf, n, &stop, 0);
  if (!a)
    return ll_alloc_failed_since(mark)
               ? ll_fail(err, LL_E_NOMEM, "out of memory reading %s",
                         s->files[file])
               : ll_fail(err, LL_E_USAGE,
                         "%s: not JSON (truncated or malformed near byte "
                         "%zu); expected the array az monitor log-analytics "
                         "query prints",
                         s->files[file],
                         stop && stop >= buf ? (size_t)(stop - buf) : n);
  ll_status st = LL_OK;
  while (stop && stop < buf + n &&
         (*stop == ' ' || *stop == '\n' || *stop == '\r' || *stop == '\t'))
    stop++;
  if (stop != buf + n)
    st = ll_fail(err, LL_E_USAGE, "%s: text after the JSON array",
                 s->files[file]);
  else if (!cJSON_IsArray(a))
    st = ll_fail(err, LL_E_USAGE, "%s: not a JSON array of rows",
                 s->files[file]);
  long item = 0;
  const cJSON *o;
  if (st == LL_OK)
    cJSON_ArrayForEach(o, a) {
      st = analytics_record(s, file, ++item, o, err);
      if (st != LL_OK)
        break;
    }
  cJSON_Delete(a);
  if (st == LL_OK && s->file_records[file] == 0)
    st = ll_fail(err, LL_E_USAGE, "%s: no rows", s->files[file]);
  return st;
}
