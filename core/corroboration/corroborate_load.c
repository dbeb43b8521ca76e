/* Reading the run for the join (corroborate.h, corroborate_impl.h): the
 * export and its manifest, the requests it sent, the logged operation
 * names, and the result's named notes. */
#include "corroborate_load.h"

#include "log_rec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "jsonx.h"
#include "ledger.h"

const char *ll_corr_logged_op(const char *op) {
  static const char *const map[][2] = {
      {"Put Blob", "PutBlob"},
      {"Get Blob", "GetBlob"},
      {"Get Blob Properties", "GetBlobProperties"},
      {"Delete Blob", "DeleteBlob"},
      {"Create Container", "CreateContainer"},
      {"Lease Acquire", "AcquireBlobLease"},
      {"Lease Break", "BreakBlobLease"},
      {"Lease Release", "ReleaseBlobLease"},
      {"Lease Renew", "RenewBlobLease"},
      {"Lease Change", "ChangeBlobLease"},
  };
  for (size_t i = 0; op && i < sizeof map / sizeof *map; i++)
    if (strcmp(op, map[i][0]) == 0)
      return map[i][1];
  return NULL;
}

void ll_corr_note(cJSON *list, long *total, const char *check, const char *fmt,
                  ...) {
  char text[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  (*total)++;
  if (cJSON_GetArraySize(list) >= LL_CORR_LIST_MAX)
    return;
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return;
  cJSON_AddStringToObject(o, "check", check);
  cJSON_AddStringToObject(o, "text", text);
  cJSON_AddItemToArray(list, o);
}

ll_status ll_corr_load(const char *dir, cJSON **rows, const cJSON **manifest,
                       ll_error *err) {
  char path[4096];
  long bad = 0;
  *rows = NULL;
  *manifest = NULL;
  int n = snprintf(path, sizeof path, "%s/export/ledger.jsonl", dir);
  if (n < 0 || (size_t)n >= sizeof path)
    return ll_fail(err, LL_E_USAGE, "evidence directory path too long");
  ll_error e = {0};
  ll_status st = ll_ledger_read_file(path, rows, &bad, &e);
  if (st == LL_E_IO) {
    cJSON_Delete(*rows);
    *rows = NULL;
    return ll_fail(err, LL_E_USAGE,
                   "%s: not an evidence directory (no export/ledger.jsonl); "
                   "pass the DIR a run wrote",
                   dir);
  }
  if (st != LL_OK) {
    cJSON_Delete(*rows);
    *rows = NULL;
    return ll_fail(err, st, "%s: export ledger: %s (run leaselua verify %s)",
                   dir, e.message, dir);
  }
  if (!(*manifest = ll_corr_manifest(*rows, dir, err))) {
    cJSON_Delete(*rows);
    *rows = NULL;
    return LL_E_USAGE;
  }
  return LL_OK;
}

const cJSON *ll_corr_manifest(const cJSON *rows, const char *dir,
                              ll_error *err) {
  const cJSON *first = rows ? rows->child : NULL;
  if (ll_json_is(first, "record", "manifest") &&
      ll_json_str(first, "blob_path"))
    return first;
  ll_fail(err, LL_E_USAGE,
          "%s: the export ledger does not begin with a manifest row "
          "naming the blob",
          dir);
  return NULL;
}

static int64_t when(const cJSON *row, const char *key) {
  int64_t t = 0;
  const char *s = ll_json_str(row, key);
  return s && ll_log_parse_time(s, &t) == 0 ? t : -1;
}

/* The requests of the run: every outcome row, and every intent whose
 * outcome row never came (a crash: its outcome is open). */
ll_status ll_corr_collect(const cJSON *rows, ll_corr_req **out, size_t *n,
                          ll_error *err) {
  size_t cap = 0;
  *out = NULL;
  *n = 0;
  const cJSON *row;
  cJSON_ArrayForEach(row, rows) {
    const char *rec = ll_json_str(row, "record");
    int outcome = ll_streq(rec, "outcome");
    if (!outcome && !ll_streq(rec, "intent"))
      continue;
    const char *ev = ll_json_str(row, "event_id");
    if (!outcome) {
      int answered = 0;
      for (const cJSON *r2 = row->next; r2 && !answered; r2 = r2->next)
        answered = ll_json_is(r2, "record", "outcome") &&
                   ll_json_is(r2, "event_id", ev);
      if (answered)
        continue;
    }
    if (*n == cap) {
      size_t nc = cap ? cap * 2 : 64;
      ll_corr_req *r = ll_realloc(*out, nc * sizeof *r);
      if (!r)
        return ll_fail(err, LL_E_NOMEM, "out of memory joining the logs");
      *out = r;
      cap = nc;
    }
    ll_corr_req *q = &(*out)[(*n)++];
    memset(q, 0, sizeof *q);
    q->row = row;
    q->seq = ll_json_long(row, "seq", 0);
    q->event_id = ev;
    q->operation = ll_json_str(row, "operation");
    q->logged_op = ll_corr_logged_op(q->operation);
    q->actor = ll_json_str(row, "actor_alias");
    q->crid = ll_json_str(row, "client_request_id");
    q->xreq = ll_json_str(row, "x_ms_request_id");
    q->outcome = outcome ? ll_json_str(row, "outcome") : "OPEN";
    q->status = ll_json_long(row, "http_status", -1);
    q->t0 = when(row, "request_started_utc");
    q->t1 = when(row, "response_received_utc");
    if (q->t1 < 0)
      q->t1 = q->t0;
    q->rec = -1;
  }
  return LL_OK;
}
