/* The join of a run's export with the service's logs (corroborate.h):
 * every request seen once with its operation and status, unknown outcomes
 * settled, no unrecorded actor on the blob, identities, coverage. */
#include "corroborate.h"
#include "corroborate_load.h"
#include "corroborate_match.h"
#include "corroborate_query.h"
#include "corroborate_settle.h"
#include "corroborate_write.h"
#include "log_rec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "jsonx.h"
#include "ledger.h"

const char *ll_corr_verdict_name(ll_corr_verdict v) {
  return v == LL_CORR_CORROBORATED ? "CORROBORATED"
         : v == LL_CORR_INCOMPLETE ? "INCOMPLETE"
                                   : "CONTRADICTED";
}

/* The fingerprint the manifest's identity record gives an actor (actors16's
 * contract), else the row's own principal; NULL when not recorded. */
static const char *actor_fp(const cJSON *manifest, const ll_corr_req *q) {
  const char *p = ll_json_str(q->row, "principal");
  if (p)
    return p;
  const cJSON *ids = cJSON_GetObjectItemCaseSensitive(manifest, "identities");
  const cJSON *a =
      q->actor ? cJSON_GetObjectItemCaseSensitive(ids, q->actor) : NULL;
  return ll_json_str(a, "fingerprint");
}

typedef struct {
  cJSON *contradictions, *missing, *listed, *settled, *inferred;
  long n_contra, n_missing, n_listed, n_settled, n_inferred;
  long id_checked, id_unchecked;
  int id_recorded;
} tally;

static const char *source(const ll_log_set *logs, const ll_log_rec *r,
                          char *buf, size_t cap) {
  snprintf(buf, cap, "%s:%ld", logs->files[r->file], r->line);
  return buf;
}

static int numeric_status(const char *s) {
  if (!s[0])
    return 0;
  for (const char *p = s; *p; p++)
    if (*p < '0' || *p > '9')
      return 0;
  return 1;
}

static void check_identity(const cJSON *manifest, const ll_corr_req *q,
                           const ll_log_rec *r, tally *t) {
  const char *want = actor_fp(manifest, q);
  if (!want || !r->oid[0] || !r->tid[0]) {
    t->id_unchecked++;
    if (t->id_recorded && want)
      ll_corr_note(t->missing, &t->n_missing, "identity",
                   "seq %ld %s by %s: the service's record lacks the "
                   "requester's %s, so who sent it is unchecked",
                   q->seq, q->operation, q->actor ? q->actor : "?",
                   !r->oid[0] && !r->tid[0] ? "object and tenant IDs"
                   : !r->oid[0]             ? "object ID"
                                            : "tenant ID");
    return;
  }
  char got[17];
  if (ll_corr_fingerprint(r->tid, r->oid, got) != LL_OK) {
    t->id_unchecked++;
    return;
  }
  t->id_checked++;
  if (strcmp(got, want) != 0)
    ll_corr_note(t->contradictions, &t->n_contra, "identity",
                 "seq %ld %s by %s: the service logged principal %s, not the "
                 "actor's %s",
                 q->seq, q->operation, q->actor ? q->actor : "?", got, want);
}

static void settle(const ll_log_set *logs, const ll_corr_req *q,
                   const ll_log_rec *r, tally *t) {
  char src[320];
  if (!numeric_status(r->status)) {
    ll_corr_note(t->missing, &t->n_missing, "settled",
                 "seq %ld %s (%s): the service logged status %s, so whether "
                 "it was processed stays unknown",
                 q->seq, q->operation, q->outcome, r->status);
    return;
  }
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return;
  cJSON_AddStringToObject(o, "record", "settlement");
  cJSON_AddNumberToObject(o, "outcome_seq", (double)q->seq);
  if (q->event_id)
    cJSON_AddStringToObject(o, "event_id", q->event_id);
  if (q->operation)
    cJSON_AddStringToObject(o, "operation", q->operation);
  if (q->crid)
    cJSON_AddStringToObject(o, "client_request_id", q->crid);
  cJSON_AddStringToObject(o, "ledger_outcome", q->outcome);
  cJSON_AddStringToObject(o, "logged_operation", r->operation);
  cJSON_AddStringToObject(o, "logged_status", r->status);
  cJSON_AddStringToObject(o, "logged_status_text", r->status_text);
  cJSON_AddStringToObject(o, "logged_utc", r->time);
  cJSON_AddStringToObject(o, "source", source(logs, r, src, sizeof src));
  cJSON_AddStringToObject(o, "format", ll_log_format_name(r->format));
  cJSON_AddItemToArray(t->settled, o);
  t->n_settled++;
}

/* One ledger request against its records. */
static void join_one(const ll_log_set *logs, const cJSON *manifest,
                     const ll_corr_target *g, ll_corr_req *q, int64_t lo,
                     int64_t hi, tally *t, unsigned char *used) {
  char src[320];
  int any = 0;
  long any_rec = -1;
  int container = ll_streq(q->operation, "Create Container");
  if (q->crid && !ll_corr_guid_shape(q->crid))
    ll_corr_note(t->missing, &t->n_missing, "seen-once",
                 "seq %ld %s: its client request ID \"%s\" is not a GUID, "
                 "so the join cannot rest on it",
                 q->seq, q->operation, q->crid);
  for (size_t i = 0; q->crid && i < logs->n; i++) {
    const ll_log_rec *r = &logs->recs[i];
    if (!ll_corr_crid_eq(r->client_request_id, q->crid))
      continue;
    used[i] = 1;
    if (any++ == 0)
      any_rec = (long)i;
    if (strcmp(r->client_request_id, q->crid) != 0)
      ll_corr_note(t->inferred, &t->n_inferred, "seen-once",
                   "seq %ld %s: %s logs its client request ID as \"%s\" "
                   "(the same GUID up to case and blanks: counted as it)",
                   q->seq, q->operation, source(logs, r, src, sizeof src),
                   r->client_request_id);
    ll_corr_tgt k = ll_corr_target_of(g, r, container);
    if (k == LL_TGT_OTHER) {
      ll_corr_note(t->contradictions, &t->n_contra, "target",
                   "seq %ld %s: the record with its client request ID (%s) "
                   "is for %s%s, not the run's %s%s",
                   q->seq, q->operation, source(logs, r, src, sizeof src),
                   r->host, r->path, g->host,
                   container ? g->container : g->blob);
      continue;
    }
    if (k != LL_TGT_OK) {
      ll_corr_note(t->missing, &t->n_missing, "target",
                   "seq %ld %s: the record with its client request ID (%s) "
                   "%s: whether it is for the run's blob is unknown",
                   q->seq, q->operation, source(logs, r, src, sizeof src),
                   ll_corr_tgt_problem(k));
      continue;
    }
    if (q->matches++ == 0)
      q->rec = (long)i;
  }
  int unknown = ll_streq(q->outcome, "UNKNOWN") || ll_streq(q->outcome, "OPEN");
  if (ll_streq(q->outcome, "NOT_SENT")) {
    if (any > 0)
      ll_corr_note(t->contradictions, &t->n_contra, "seen-once",
                   "seq %ld %s was recorded as not sent, yet the service "
                   "logged it (%s)",
                   q->seq, q->operation,
                   source(logs, &logs->recs[any_rec], src, sizeof src));
    return;
  }
  if (q->matches == 0) {
    if (q->t0 < 0 || q->t0 < lo || q->t0 > hi)
      ll_corr_note(t->missing, &t->n_missing, "coverage",
                   "seq %ld %s was sent outside the logs' time span", q->seq,
                   q->operation);
    /* never dropped, whatever the logs' span: a request without its
     * record is missing */
    for (size_t i = 0; q->xreq && i < logs->n; i++)
      if (logs->recs[i].request_id[0] &&
          strcmp(logs->recs[i].request_id, q->xreq) == 0)
        ll_corr_note(t->inferred, &t->n_inferred, "second-key",
                     "seq %ld %s: no record with its client request ID; %s "
                     "has its x-ms-request-id (%s) under client request ID "
                     "\"%s\"",
                     q->seq, q->operation,
                     source(logs, &logs->recs[i], src, sizeof src),
                     logs->recs[i].format == LL_LOG_CLASSIC ? "documented key"
                                                            : "inferred key",
                     logs->recs[i].client_request_id);
    if (unknown)
      ll_corr_note(t->missing, &t->n_missing, "settled",
                   "seq %ld %s (%s outcome) is not in the logs: whether the "
                   "service processed it stays unknown",
                   q->seq, q->operation, q->outcome);
    else
      ll_corr_note(t->missing, &t->n_missing, "seen-once",
                   "no log record of seq %ld %s %ld (client request ID %s)",
                   q->seq, q->operation, q->status, q->crid ? q->crid : "-");
    return;
  }
  const ll_log_rec *r = &logs->recs[q->rec];
  if (q->matches > 1)
    ll_corr_note(t->contradictions, &t->n_contra, "seen-once",
                 "hidden re-send: seq %ld %s's client request ID %s is logged "
                 "%d times (first at %s)",
                 q->seq, q->operation, q->crid, q->matches,
                 source(logs, r, src, sizeof src));
  if (!q->logged_op || strcmp(q->logged_op, r->operation) != 0)
    ll_corr_note(t->contradictions, &t->n_contra, "operation",
                 "seq %ld %s was logged as %s (%s)", q->seq, q->operation,
                 r->operation, source(logs, r, src, sizeof src));
  if (unknown) {
    settle(logs, q, r, t);
  } else {
    char want[24];
    snprintf(want, sizeof want, "%ld", q->status);
    if (strcmp(want, r->status) != 0)
      ll_corr_note(t->contradictions, &t->n_contra, "status",
                   "seq %ld %s: the ledger holds %s, the service logged %s %s "
                   "(%s)",
                   q->seq, q->operation, want, r->status, r->status_text,
                   source(logs, r, src, sizeof src));
  }
  if (q->xreq && r->request_id[0] && strcmp(q->xreq, r->request_id) != 0) {
    if (r->format == LL_LOG_CLASSIC)
      ll_corr_note(t->contradictions, &t->n_contra, "second-key",
                   "seq %ld %s: request-id-header %s is not the "
                   "x-ms-request-id %s the run received (documented equal)",
                   q->seq, q->operation, r->request_id, q->xreq);
    else
      ll_corr_note(t->inferred, &t->n_inferred, "second-key",
                   "seq %ld %s: correlationId %s differs from x-ms-request-id "
                   "%s (their equality is inferred, not documented: noted "
                   "only)",
                   q->seq, q->operation, r->request_id, q->xreq);
  }
  check_identity(manifest, q, r, t);
}

/* A record of the blob no ledger request accounts for. */
static void unrecorded(const ll_log_set *logs, const ll_log_rec *r,
                       const ll_corr_req *reqs, size_t nreq, tally *t) {
  char src[320], fp[17] = "";
  const char *who = "no requester object ID";
  if (r->oid[0] && r->tid[0] && ll_corr_fingerprint(r->tid, r->oid, fp) == 0)
    who = fp;
  else if (r->oid[0])
    who = "an object ID without a tenant";
  int accepted = numeric_status(r->status) && r->status[0] == '2';
  int mutation = !ll_log_is_read(r->operation);
  const ll_corr_req *inside = NULL;
  for (size_t i = 0; i < nreq && !inside; i++)
    if (reqs[i].logged_op && strcmp(reqs[i].logged_op, r->operation) == 0 &&
        r->utc_ms >= reqs[i].t0 - LL_CORR_SKEW_MS &&
        r->utc_ms <= reqs[i].t1 + LL_CORR_SKEW_MS)
      inside = &reqs[i];
  cJSON *o = cJSON_CreateObject();
  if (o) {
    cJSON_AddStringToObject(o, "operation", r->operation);
    cJSON_AddStringToObject(o, "status", r->status);
    cJSON_AddStringToObject(o, "status_text", r->status_text);
    cJSON_AddStringToObject(o, "logged_utc", r->time);
    if (fp[0])
      cJSON_AddStringToObject(o, "principal", fp);
    else
      cJSON_AddNullToObject(o, "principal");
    cJSON_AddStringToObject(o, "authentication", r->auth_type);
    cJSON_AddStringToObject(o, "source", source(logs, r, src, sizeof src));
    if (cJSON_GetArraySize(t->listed) < LL_CORR_LIST_MAX)
      cJSON_AddItemToArray(t->listed, o);
    else
      cJSON_Delete(o);
  }
  t->n_listed++;
  if (inside && mutation)
    ll_corr_note(t->contradictions, &t->n_contra, "seen-once",
                 "hidden re-send or second writer: %s %s at %s (%s, by %s) "
                 "inside seq %ld %s's attempt, under a client request ID the "
                 "ledger does not hold",
                 r->operation, r->status, r->time,
                 source(logs, r, src, sizeof src), who, inside->seq,
                 inside->operation);
  else if (accepted && mutation)
    ll_corr_note(t->contradictions, &t->n_contra, "unrecorded-actor",
                 "unrecorded accepted %s %s at %s by %s (%s): someone else "
                 "changed the blob while the run watched",
                 r->operation, r->status, r->time, who,
                 source(logs, r, src, sizeof src));
}

/* The service logs a request when it receives it: after the client sent
 * it, before the client saw its response. The logs cover the run when
 * they begin no later than the first request's response and end no
 * earlier than the last request was sent. */
static void coverage(const ll_log_set *logs, const ll_corr_req *reqs,
                     size_t nreq, int64_t first, int64_t last_start, int64_t lo,
                     int64_t hi, tally *t) {
  char a[40], b[40];
  if (hi < last_start) {
    ll_corr_fmt_time(hi, a, sizeof a);
    ll_corr_fmt_time(last_start, b, sizeof b);
    ll_corr_note(t->missing, &t->n_missing, "coverage",
                 "the logs end at %s, before the run's last request at %s", a,
                 b);
  }
  if (lo > first) {
    ll_corr_fmt_time(lo, a, sizeof a);
    ll_corr_fmt_time(first, b, sizeof b);
    ll_corr_note(t->missing, &t->n_missing, "coverage",
                 "the logs begin at %s, after the run's first request was "
                 "answered at %s",
                 a, b);
  }
  static const char *const cats[] = {"StorageRead", "StorageWrite",
                                     "StorageDelete"};
  for (size_t c = 0; c < 3; c++) {
    int used = 0, present = 0;
    for (size_t i = 0; i < nreq && !used; i++) {
      const char *cat =
          reqs[i].logged_op ? ll_log_category_of(reqs[i].logged_op) : NULL;
      used = cat && !ll_streq(reqs[i].outcome, "NOT_SENT") &&
             strcmp(cat, cats[c]) == 0;
    }
    for (size_t i = 0; i < logs->n && !present; i++)
      present = strcmp(logs->recs[i].category, cats[c]) == 0;
    if (used && !present)
      ll_corr_note(t->missing, &t->n_missing, "coverage",
                   "no %s records in the logs, though the run sent such "
                   "requests (the diagnostic setting's category, or its "
                   "insights-logs-%s container, is missing)",
                   cats[c],
                   c == 0   ? "storageread"
                   : c == 1 ? "storagewrite"
                            : "storagedelete");
  }
}

static cJSON *logs_summary(const ll_log_set *logs) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; a && i < logs->nfiles; i++) {
    cJSON *o = cJSON_CreateObject();
    if (!o)
      continue;
    cJSON_AddStringToObject(o, "file", logs->files[i]);
    cJSON_AddStringToObject(o, "format", ll_log_format_name(logs->formats[i]));
    cJSON_AddNumberToObject(o, "records", (double)logs->file_records[i]);
    cJSON_AddStringToObject(o, "sha256", logs->file_sha256[i]);
    cJSON_AddStringToObject(o, "label", "as given by the operator");
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

static void add_list(cJSON *res, const char *key, cJSON *list, long total) {
  cJSON_AddItemToObject(res, key, list);
  char k[64];
  snprintf(k, sizeof k, "%s_total", key);
  cJSON_AddNumberToObject(res, k, (double)total);
}

ll_status ll_corr_run(const char *dir, const ll_log_set *logs,
                      const ll_corr_opts *opts, cJSON **out,
                      ll_corr_verdict *verdict, ll_error *err) {
  cJSON *rows = NULL, *res = NULL;
  const cJSON *manifest = NULL;
  ll_corr_req *reqs = NULL;
  unsigned char *used = NULL;
  size_t nreq = 0;
  tally t = {0};
  unsigned long mark = ll_alloc_failures();
  *out = NULL;
  ll_status st = ll_corr_load(dir, &rows, &manifest, err);
  if (st == LL_OK)
    st = ll_corr_collect(rows, &reqs, &nreq, err);
  if (st != LL_OK)
    goto cleanup;
  if (nreq == 0) {
    st = ll_fail(err, LL_E_USAGE,
                 "%s: the run sent no requests: nothing to "
                 "corroborate",
                 dir);
    goto cleanup;
  }
  if (!(used = calloc(logs->n ? logs->n : 1, 1))) {
    st = ll_fail(err, LL_E_NOMEM, "out of memory joining the logs");
    goto cleanup;
  }
  int64_t first = INT64_MAX, last = INT64_MIN, last_start = INT64_MIN;
  int64_t first_answer = INT64_MAX; /* the first request's response */
  for (size_t i = 0; i < nreq; i++) {
    if (reqs[i].t0 < 0)
      continue;
    if (reqs[i].t0 < first)
      first = reqs[i].t0, first_answer = reqs[i].t1;
    if (reqs[i].t0 > last_start)
      last_start = reqs[i].t0;
    if (reqs[i].t1 > last)
      last = reqs[i].t1;
  }
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (size_t i = 0; i < logs->n; i++) {
    if (logs->recs[i].utc_ms < lo)
      lo = logs->recs[i].utc_ms;
    if (logs->recs[i].utc_ms > hi)
      hi = logs->recs[i].utc_ms;
  }
  t.contradictions = cJSON_CreateArray();
  t.missing = cJSON_CreateArray();
  t.listed = cJSON_CreateArray();
  t.settled = cJSON_CreateArray();
  t.inferred = cJSON_CreateArray();
  const cJSON *ids = cJSON_GetObjectItemCaseSensitive(manifest, "identities");
  t.id_recorded = cJSON_IsObject(ids);
  ll_corr_target g;
  ll_corr_target_init(manifest, &g);
  for (size_t i = 0; i < nreq; i++)
    join_one(logs, manifest, &g, &reqs[i], lo, hi, &t, used);
  coverage(logs, reqs, nreq, first_answer, last_start, lo, hi, &t);
  const char *blob = ll_json_str(manifest, "blob_path");
  int64_t margin = (int64_t)opts->margin_s * 1000;
  char src[320];
  for (size_t i = 0; i < logs->n; i++) {
    const ll_log_rec *r = &logs->recs[i];
    if (used[i] || r->utc_ms < first - margin || r->utc_ms > last + margin)
      continue;
    ll_corr_tgt k = ll_corr_target_of(&g, r, 0);
    if (k == LL_TGT_OK)
      unrecorded(logs, r, reqs, nreq, &t);
    else if (k != LL_TGT_OTHER)
      ll_corr_note(t.missing, &t.n_missing, "target",
                   "%s %s at %s (%s) %s: whether it changed the run's blob "
                   "is unknown",
                   r->operation, r->status, r->time,
                   source(logs, r, src, sizeof src), ll_corr_tgt_problem(k));
  }
  ll_corr_verdict v = t.n_contra    ? LL_CORR_CONTRADICTED
                      : t.n_missing ? LL_CORR_INCOMPLETE
                                    : LL_CORR_CORROBORATED;
  res = cJSON_CreateObject();
  char a[40], b[40];
  if (!res) {
    st = ll_fail(err, LL_E_NOMEM, "out of memory joining the logs");
    goto cleanup;
  }
  cJSON_AddStringToObject(res, "record", "corroboration");
  cJSON_AddStringToObject(res, "format", "leaselua-corroboration/1");
  const char *run_id = ll_json_str(manifest, "run_id");
  cJSON_AddStringToObject(res, "run_id", run_id ? run_id : "");
  cJSON_AddStringToObject(res, "corroborated_utc",
                          opts->now_utc ? opts->now_utc : "");
  cJSON_AddStringToObject(res, "verdict", ll_corr_verdict_name(v));
  cJSON_AddStringToObject(res, "blob_path", blob);
  cJSON_AddStringToObject(res, "account_host", g.host);
  cJSON *w = cJSON_AddObjectToObject(res, "window");
  ll_corr_fmt_time(first, a, sizeof a);
  ll_corr_fmt_time(last, b, sizeof b);
  cJSON_AddStringToObject(w, "first_request_utc", a);
  cJSON_AddStringToObject(w, "last_response_utc", b);
  cJSON_AddNumberToObject(w, "margin_s", opts->margin_s);
  cJSON *span = cJSON_AddObjectToObject(res, "log_span");
  ll_corr_fmt_time(lo, a, sizeof a);
  ll_corr_fmt_time(hi, b, sizeof b);
  cJSON_AddStringToObject(span, "first_utc", logs->n ? a : "");
  cJSON_AddStringToObject(span, "last_utc", logs->n ? b : "");
  cJSON_AddStringToObject(span, "basis",
                          "every record of the given files, whatever its "
                          "blob or account");
  cJSON_AddBoolToObject(span, "margin_covered",
                        lo <= first - margin && hi >= last + margin);
  cJSON_AddItemToObject(res, "logs", logs_summary(logs));
  cJSON_AddNumberToObject(res, "requests", (double)nreq);
  cJSON_AddNumberToObject(res, "log_records", (double)logs->n);
  add_list(res, "contradictions", t.contradictions, t.n_contra);
  add_list(res, "missing", t.missing, t.n_missing);
  add_list(res, "unrecorded", t.listed, t.n_listed);
  add_list(res, "inferred_key_notes", t.inferred, t.n_inferred);
  add_list(res, "settlements", t.settled, t.n_settled);
  t.contradictions = t.missing = t.listed = t.settled = t.inferred = NULL;
  cJSON *idn = cJSON_AddObjectToObject(res, "identity");
  cJSON_AddStringToObject(idn, "status",
                          !t.id_recorded     ? "identities not recorded"
                          : t.id_checked > 0 ? "checked"
                                             : "nothing to check");
  cJSON_AddNumberToObject(idn, "checked", (double)t.id_checked);
  cJSON_AddNumberToObject(idn, "unchecked", (double)t.id_unchecked);
  /* the export as it stood: its last row, by seq and hash, so a later
   * recovery session appended to it leaves this corroboration checkable */
  const cJSON *tail = rows ? rows->child : NULL;
  while (tail && tail->next)
    tail = tail->next;
  cJSON_AddNumberToObject(res, "export_seq",
                          (double)ll_json_long(tail, "seq", 0));
  const char *th = ll_json_str(tail, "row_hash");
  cJSON_AddStringToObject(res, "export_row_hash", th ? th : "");
  cJSON_AddItemToObject(res, "decision_run", ll_corr_decision_run(rows));
  const cJSON *settled = cJSON_GetObjectItemCaseSensitive(res, "settlements");
  if (cJSON_GetArraySize(settled) > 0) {
    cJSON *re = ll_corr_rederive(rows, settled, err);
    if (!re) {
      st = err->code ? err->code : LL_E_INTERNAL;
      goto cleanup;
    }
    cJSON_AddItemToObject(res, "decision_with_logs", re);
  } else {
    cJSON_AddNullToObject(res, "decision_with_logs");
  }
  cJSON_AddStringToObject(
      res, "note",
      "the run's own decision is unchanged; decision_with_logs is what the "
      "judgement model derives when each settled outcome replaces its "
      "UNKNOWN, in memory only");
  if (ll_alloc_failed_since(mark)) {
    st = ll_fail(err, LL_E_NOMEM, "out of memory joining the logs");
    goto cleanup;
  }
  *verdict = v;
  *out = res;
  res = NULL;
cleanup:
  cJSON_Delete(t.contradictions);
  cJSON_Delete(t.missing);
  cJSON_Delete(t.listed);
  cJSON_Delete(t.settled);
  cJSON_Delete(t.inferred);
  cJSON_Delete(res);
  cJSON_Delete(rows);
  free(reqs);
  free(used);
  return st;
}
