/* One evidence run: every request passes manifest, guard, durable intent,
 * one attempt on the wire, and a classified outcome row, in that order. */
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "endpoint.h"
#include "guard.h"
#include "hash.h"
#include "manifest.h"
#include "payload.h"
#include "run_impl.h"
#include "verify.h"

ll_status ll_run_dead(ll_run *r, ll_error *err) {
  if (r->nomem)
    return ll_fail(err, LL_E_NOMEM,
                   "out of memory: an allocation failed earlier in this run, "
                   "so its evidence could be incomplete; nothing more is sent "
                   "or recorded");
  return ll_fail(err, LL_E_DURABILITY,
                 "the evidence ledger failed earlier: nothing more is sent");
}

ll_status ll_run_check_alloc(ll_run *r, ll_error *err) {
  if (!r->nomem && !ll_alloc_failed_since(r->alloc_mark))
    return LL_OK;
  r->dead = r->nomem = 1;
  return ll_run_dead(r, err);
}

ll_status ll_run_settle(ll_run *r, ll_status st, cJSON **out, ll_error *err) {
  if (st != LL_E_NOMEM && !r->nomem && !ll_alloc_failed_since(r->alloc_mark))
    return st;
  if (out) {
    cJSON_Delete(*out);
    *out = NULL;
  }
  int first = !r->nomem;
  r->dead = r->nomem = 1;
  if (st == LL_E_NOMEM && first)
    return st; /* its own message says what could not be allocated */
  return ll_run_dead(r, err);
}

/* Appends row to the ledger, folding it into the model first so derived
 * fields are filled. A failure makes the run dead: no more requests. A row
 * built, folded or written across a failed allocation is never written (or
 * is the last one): the run dies with LL_E_NOMEM. */
ll_status ll_run_append(ll_run *r, cJSON *row, ll_error *err) {
  if (r->replay_failure.code) {
    if (err)
      *err = r->replay_failure;
    return r->replay_failure.code;
  }
  if (r->dead)
    return ll_run_dead(r, err);
  ll_status st = ll_run_check_alloc(r, err);
  if (st != LL_OK)
    return st;
  if (!row) {
    r->dead = r->nomem = 1;
    return ll_run_dead(r, err);
  }
  st = ll_model_apply(r->model, row, 1, err);
  if (st == LL_E_NOMEM || ll_run_check_alloc(r, err) != LL_OK) {
    r->dead = r->nomem = 1;
    return ll_run_dead(r, err);
  }
  if (st != LL_OK)
    return st;
  /* Write-ahead where it protects something: an intent that can change
   * the service is fsync'd before it leaves; a read changes nothing, and
   * the decision is synced in both files. */
  const cJSON *rec = cJSON_GetObjectItemCaseSensitive(row, "record");
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(row, "http_method");
  ll_sync sync = LL_SYNC_NONE;
  if (cJSON_IsString(rec) && strcmp(rec->valuestring, "decision") == 0)
    sync = LL_SYNC_BOTH;
  else if (cJSON_IsString(rec) && strcmp(rec->valuestring, "intent") == 0 &&
           !(cJSON_IsString(method) &&
             (strcmp(method->valuestring, "GET") == 0 ||
              strcmp(method->valuestring, "HEAD") == 0)))
    sync = LL_SYNC_PROTECTED;
  long seq = 0;
  st = ll_ledger_append_sync(r->ledger, row, sync, &seq, err);
  if (st == LL_E_NOMEM || ll_run_check_alloc(r, err) != LL_OK) {
    r->dead = r->nomem = 1;
    return ll_run_dead(r, err);
  }
  if (st != LL_OK) {
    r->dead = 1;
    return st;
  }
  return LL_OK;
}

cJSON *ll_run_last_export(ll_run *r) {
  const cJSON *rows = ll_ledger_export_rows(r->ledger);
  int n = cJSON_GetArraySize(rows);
  return n > 0 ? cJSON_Duplicate(cJSON_GetArrayItem(rows, n - 1), 1) : NULL;
}

static ll_writer *find_writer(ll_run *r, const char *alias) {
  for (int i = 0; alias && i < r->nwriters; i++)
    if (strcmp(r->writers[i].alias, alias) == 0)
      return &r->writers[i];
  return NULL;
}

int ll_run_is_bound(const ll_run *r, const char *alias) {
  return find_writer((ll_run *)r, alias) != NULL;
}

static int alias_ok(const char *a) {
  size_t n = a ? strlen(a) : 0;
  if (n == 0 || n >= LL_ALIAS_MAX)
    return 0;
  for (size_t i = 0; i < n; i++)
    if (!((a[i] >= 'A' && a[i] <= 'Z') || (a[i] >= 'a' && a[i] <= 'z') ||
          (a[i] >= '0' && a[i] <= '9') || a[i] == '_' || a[i] == '-'))
      return 0;
  return 1;
}

/* Records alias -> lease ID (protected only) and tells the sanitizer. */
static ll_status bind_row(ll_run *r, const char *alias, const char *id,
                          const char *state, ll_error *err) {
  ll_status st = ll_ledger_bind_alias(r->ledger, alias, id, err);
  if (st != LL_OK)
    return st;
  cJSON *row = cJSON_CreateObject();
  cJSON_AddStringToObject(row, "record", "lease_bind");
  cJSON_AddStringToObject(row, "alias", alias);
  cJSON_AddStringToObject(row, "lease_real_id", id);
  if (state)
    cJSON_AddStringToObject(row, "state", state);
  st = ll_run_append(r, row, err);
  cJSON_Delete(row);
  return st;
}

static int plan_has_actor(const ll_run *r, const char *alias) {
  for (int i = 0; i < r->plan.nactors; i++)
    if (strcmp(r->plan.actors[i], alias) == 0)
      return 1;
  return 0;
}

/* A break period or another lifecycle outside what the flow declared. */
static ll_status plan_refuses(const ll_run *r, const ll_req_spec *s,
                              ll_error *err) {
  if (!r->planned || s->op != LL_OP_LEASE_BREAK || r->plan.nbreaks == 0)
    return LL_OK;
  for (int i = 0; i < r->plan.nbreaks; i++)
    if (r->plan.break_periods[i] == s->break_period)
      return LL_OK;
  return ll_fail(err, LL_E_USAGE,
                 "break period %ld s was not declared at open: the flow "
                 "declares its break periods before the first request",
                 s->break_period);
}

static ll_status bind_writer(ll_run *r, const char *alias, ll_error *err) {
  if (!alias_ok(alias))
    return ll_fail(err, LL_E_USAGE,
                   "writer alias must be 1-15 letters, digits, '-' or '_'");
  if (find_writer(r, alias))
    return LL_OK;
  if (r->planned && r->plan.nactors > 0 && !plan_has_actor(r, alias))
    return ll_fail(err, LL_E_USAGE,
                   "writer %s is not among the actors the flow declared at "
                   "open: declare it in leaselua.open{actors = ...}",
                   alias);
  if (r->nwriters >= LL_MAX_WRITERS)
    return ll_fail(err, LL_E_USAGE, "too many writers (max %d)",
                   LL_MAX_WRITERS);
  ll_writer *w = &r->writers[r->nwriters];
  ll_strlcpy(w->alias, alias, sizeof w->alias);
  ll_status st = ll_guid_v4(w->lease_id);
  if (st != LL_OK)
    return ll_fail(err, st, "could not generate a lease ID");
  st = bind_row(r, alias, w->lease_id, NULL, err);
  if (st == LL_OK)
    r->nwriters++;
  return st;
}

ll_status ll_run_bind(ll_run *r, const char *alias, ll_error *err) {
  if (r->dead)
    return ll_run_dead(r, err);
  return ll_run_settle(r, bind_writer(r, alias, err), NULL, err);
}

static ll_status declare(ll_run *r, long revision, const char *writer,
                         cJSON **out_row, ll_error *err) {
  ll_payload p;
  ll_status st = ll_payload_build(revision, writer, &p, err);
  if (st != LL_OK)
    return st;
  if (out_row)
    *out_row = NULL;
  if (!ll_model_declared(r->model, revision, writer)) {
    if (ll_model_declared(r->model, revision, NULL))
      return ll_fail(err, LL_E_USAGE,
                     "revision %ld is already declared for another writer",
                     revision);
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "record", "declare");
    cJSON_AddNumberToObject(row, "revision", revision);
    cJSON_AddStringToObject(row, "writer", writer);
    cJSON_AddStringToObject(row, "payload", p.bytes);
    cJSON_AddStringToObject(row, "payload_sha256", p.sha256);
    st = ll_run_append(r, row, err);
    cJSON_Delete(row);
    if (st != LL_OK)
      return st;
    r->expected_dirty = 1;
  }
  if (out_row) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "revision", revision);
    cJSON_AddStringToObject(o, "writer", writer);
    cJSON_AddStringToObject(o, "payload", p.bytes);
    cJSON_AddStringToObject(o, "payload_sha256", p.sha256);
    *out_row = o;
  }
  return LL_OK;
}

ll_status ll_run_declare(ll_run *r, long revision, const char *writer,
                         cJSON **out_row, ll_error *err) {
  if (out_row)
    *out_row = NULL;
  ll_status st = declare(r, revision, writer, out_row, err);
  return ll_run_settle(r, st, out_row, err);
}

/* The gap control overwrites the blob without a lease: it is authorised
 * only by an accepted, cleaned-up main handoff on the same target. A live
 * gap control needs a live one (emulator or azure, never a replay, which
 * proves nothing about any real blob) on the same endpoint kind, account
 * host, container and blob, whose cleanup was confirmed by a read that
 * found the blob absent. A replayed gap control sends nothing: it is
 * authorised by a replayed main handoff of the same target, whose
 * recorded delete was accepted. */
ll_status ll_run_check_after(ll_run *r, const char *after, ll_error *err) {
  ll_verify_report rep;
  char path[512], host[256];
  const char *kind = ll_model_endpoint_kind(r->model);
  int replay = strcmp(kind, "replay") == 0;
  if (!after || !*after)
    return ll_fail(err, LL_E_USAGE,
                   "a destructive lifecycle needs --after DIR naming the "
                   "evidence of an accepted main handoff on this blob");
  ll_status st = ll_verify_dir(after, &rep, err);
  if (st == LL_E_NOMEM)
    return st;
  if (st != LL_OK)
    return ll_fail(err, LL_E_USAGE,
                   "--after %s does not verify (%s): run the main handoff "
                   "first",
                   after, rep.problem[0] ? rep.problem : err->message);
  int live = strcmp(rep.endpoint_kind, "emulator") == 0 ||
             strcmp(rep.endpoint_kind, "azure") == 0;
  if (!replay && !live)
    return ll_fail(err, LL_E_USAGE,
                   "--after %s is %s evidence: a gap control on a live blob "
                   "needs a live main handoff (emulator or azure), never a "
                   "replay",
                   after, rep.endpoint_kind);
  if (strcmp(rep.decision, "ACCEPT") != 0 || rep.destructive)
    return ll_fail(err, LL_E_USAGE,
                   "--after %s is not an accepted main handoff (decision "
                   "%s%s): the gap control runs only after one",
                   after, rep.decision[0] ? rep.decision : "none",
                   rep.destructive ? ", and it was itself destructive" : "");
  if (strcmp(rep.endpoint_kind, kind) != 0)
    return ll_fail(err, LL_E_USAGE,
                   "--after %s ran against endpoint kind %s, this run against "
                   "%s: use a main handoff on the same endpoint",
                   after, rep.endpoint_kind, kind);
  if (replay) /* what a replay records (manifest.c) */
    ll_strlcpy(host, LL_REPLAY_HOST, sizeof host);
  else
    ll_manifest_account_host(r->target.account_url, host, sizeof host);
  if (strcasecmp(rep.account_host, host) != 0)
    return ll_fail(err, LL_E_USAGE,
                   "--after %s ran on account host %s, not %s: use a main "
                   "handoff on the same account",
                   after, rep.account_host, host);
  ll_target_blob_path(&r->target, path, sizeof path);
  if (strcmp(rep.container, r->target.container) != 0 ||
      strcmp(rep.blob_path, path) != 0)
    return ll_fail(err, LL_E_USAGE,
                   "--after %s concerns %s, not %s: use the same owned blob "
                   "path",
                   after, rep.blob_path, path);
  if (!rep.cleanup_confirmed)
    return ll_fail(err, LL_E_USAGE,
                   "--after %s did not confirm its cleanup: finish and clean "
                   "up the main fixture first",
                   after);
  if (!replay && !rep.absent_confirmed)
    return ll_fail(err, LL_E_USAGE,
                   "--after %s did not confirm its cleanup by a read that "
                   "found the blob absent (404 after the accepted delete): "
                   "the gap control needs that observation",
                   after);
  return LL_OK;
}

/* A refusal row: what was refused, the code and the invariant it names. */
static ll_status refusal_row(ll_run *r, const char *step, const char *op,
                             const char *actor, ll_status code, ll_error *err) {
  ll_error keep = *err;
  cJSON *row = cJSON_CreateObject();
  cJSON_AddStringToObject(row, "record", "refusal");
  cJSON_AddNumberToObject(row, "fixture_epoch", ll_model_epoch(r->model));
  cJSON_AddStringToObject(row, "step", r->step[0] ? r->step : step);
  cJSON_AddStringToObject(row, "operation", op);
  cJSON_AddStringToObject(row, "actor_alias", actor);
  cJSON_AddStringToObject(row, "code", ll_code_name(code));
  cJSON_AddNumberToObject(row, "invariant", ll_code_invariant(code));
  cJSON_AddStringToObject(row, "message", keep.message);
  ll_status st = ll_run_append(r, row, err);
  cJSON_Delete(row);
  if (st != LL_OK)
    return st;
  *err = keep;
  return code;
}

static ll_status lifecycle(ll_run *r, int destructive, const char *reason,
                           const char *after_dir, ll_error *err) {
  if (!destructive && r->planned && r->plan.window_attempts > 0 &&
      ll_model_epoch(r->model) >= r->plan.window_attempts)
    return ll_fail(err, LL_E_USAGE,
                   "lifecycle %ld exceeds the %ld window attempts the flow "
                   "declared at open",
                   ll_model_epoch(r->model) + 1, r->plan.window_attempts);
  if (destructive) {
    ll_status st = ll_run_check_after(r, after_dir, err);
    if (st != LL_OK)
      return st;
  }
  /* The guard's scope is the blob: a lifecycle starts only from a known
   * state, and resets neither the latch nor the read-back rule. */
  ll_error why = {0};
  ll_status gst = ll_guard_lifecycle(r->model, &why);
  if (gst != LL_OK) {
    if (err)
      *err = why;
    return refusal_row(r, "lifecycle", "Lifecycle", "operator", gst,
                       err ? err : &why);
  }
  cJSON *row = cJSON_CreateObject();
  cJSON_AddStringToObject(row, "record", "lifecycle");
  cJSON_AddNumberToObject(row, "fixture_epoch", ll_model_epoch(r->model) + 1);
  cJSON_AddBoolToObject(row, "destructive", destructive);
  cJSON_AddStringToObject(row, "reason", reason ? reason : "");
  if (destructive)
    cJSON_AddStringToObject(row, "after_run", after_dir);
  ll_status st = ll_run_append(r, row, err);
  cJSON_Delete(row);
  return st;
}

ll_status ll_run_lifecycle(ll_run *r, int destructive, const char *reason,
                           const char *after_dir, ll_error *err) {
  ll_status st = lifecycle(r, destructive, reason, after_dir, err);
  return ll_run_settle(r, st, NULL, err);
}

ll_status ll_run_note(ll_run *r, const char *step, const char *text,
                      ll_error *err) {
  cJSON *row = cJSON_CreateObject();
  cJSON_AddStringToObject(row, "record", "note");
  cJSON_AddStringToObject(row, "step", step ? step : "");
  cJSON_AddStringToObject(row, "text", text ? text : "");
  ll_status st = ll_run_append(r, row, err);
  cJSON_Delete(row);
  return ll_run_settle(r, st, NULL, err);
}

static ll_status refuse(ll_run *r, const ll_req_spec *s, ll_status code,
                        ll_error *err) {
  return refusal_row(r, s->step ? s->step : "", ll_op_name(s->op),
                     s->actor ? s->actor : "", code, err);
}

static void shape(const ll_http_request *q, const char *url, char *buf,
                  size_t cap) {
  const char *query = strchr(url, '?');
  const char *bt = ll_headers_get(&q->headers, "x-ms-blob-type");
  const char *act = ll_headers_get(&q->headers, "x-ms-lease-action");
  const char *inm = ll_headers_get(&q->headers, "If-None-Match");
  const char *im = ll_headers_get(&q->headers, "If-Match");
  char qs[64] = "";
  if (query) {
    /* only the operation selector, never a SAS */
    if (strstr(query, "comp=lease"))
      ll_strlcpy(qs, "?comp=lease", sizeof qs);
    else if (strstr(query, "restype=container"))
      ll_strlcpy(qs, "?restype=container", sizeof qs);
  }
  /* The conditions are shown whole: an ETag is not a secret. */
  snprintf(buf, cap, "%s %s%s%s%s%s%s body=%zu lease_header=%s%s%s%s%s",
           q->method, "<blob>", qs, bt ? " x-ms-blob-type=" : "", bt ? bt : "",
           act ? " x-ms-lease-action=" : "", act ? act : "", q->body_len,
           ll_headers_get(&q->headers, "x-ms-lease-id") ? "present" : "absent",
           inm ? " if_none_match=" : "", inm ? inm : "", im ? " if_match=" : "",
           im ? im : "");
}

static void add_str_or_null(cJSON *o, const char *k, const char *v) {
  if (v && *v)
    cJSON_AddStringToObject(o, k, v);
  else
    cJSON_AddNullToObject(o, k);
}

/* The guard, the flow's declared plan, then the declared payload of a Put
 * (*p); a refusal is recorded and returned. */
static ll_status admit(ll_run *r, const ll_req_spec *s, const ll_guard_req *g,
                       ll_payload *p, ll_error *err) {
  ll_status st = ll_guard_check(r->model, g, err);
  if (st == LL_OK)
    st = plan_refuses(r, s, err);
  if (st != LL_OK)
    return refuse(r, s, st, err);
  memset(p, 0, sizeof *p);
  if (s->op != LL_OP_PUT_BLOB)
    return LL_OK;
  st = ll_payload_build(s->revision, s->actor, p, err);
  if (st != LL_OK)
    return refuse(r, s, st, err);
  const char *want = ll_model_declared(r->model, s->revision, s->actor);
  if (!want || strcmp(want, p->sha256) != 0)
    return refuse(r, s,
                  ll_fail(err, LL_E_UNDECLARED,
                          "payload of revision %ld differs from its "
                          "declaration",
                          s->revision),
                  err);
  return LL_OK;
}

/* The builder's own checks (size, lease ID syntax, parameters), on a
 * request that is then dropped; a refusal is recorded and returned. */
static ll_status dry_build(ll_run *r, const ll_req_spec *s, const ll_writer *lw,
                           const ll_writer *pw, const ll_payload *p,
                           ll_error *err) {
  ll_op_params op = {0};
  op.lease_id = lw ? lw->lease_id : NULL;
  op.proposed_id = pw                                  ? pw->lease_id
                   : s->op == LL_OP_LEASE_CHANGE && lw ? lw->lease_id
                                                       : NULL;
  op.lease_duration = s->lease_duration;
  op.break_period = s->break_period;
  if (s->op == LL_OP_PUT_BLOB) {
    op.body = (const unsigned char *)p->bytes;
    op.body_len = r->oversize_for_test ? r->oversize_for_test : p->len;
  }
  op.max_single_put = r->max_single_put;
  op.api_version = ll_model_api_version(r->model);
  ll_http_request q;
  memset(&q, 0, sizeof q);
  ll_headers_init(&q.headers);
  char *url = NULL;
  ll_status st = ll_blob_build(&r->target, s->op, &op, &q, &url, err);
  ll_headers_cleanup(&q.headers);
  free(url);
  return st == LL_OK ? LL_OK : refuse(r, s, st, err);
}

static ll_status request(ll_run *r, const ll_req_spec *s, cJSON **out_row,
                         ll_error *err) {
  *out_row = NULL;
  if (r->dead)
    return ll_run_dead(r, err);
  ll_writer *lw = find_writer(r, s->lease);
  ll_writer *pw = find_writer(r, s->proposed);
  if ((s->lease && !lw) || (s->proposed && !pw))
    return ll_fail(err, LL_E_USAGE, "lease alias %s is not bound to a writer",
                   s->lease ? s->lease : s->proposed);
  const char *lease_alias =
      s->op == LL_OP_LEASE_ACQUIRE ? s->proposed : s->lease;
  ll_guard_req g = {s->op,    s->actor,    lease_alias,
                    s->bound, s->revision, s->control};
  if (s->op == LL_OP_LEASE_ACQUIRE)
    g.lease = s->proposed;
  ll_payload p;
  ll_status st;
  if (ll_op_is_mutation(s->op) && ll_model_has_manifest(r->model) &&
      !ll_model_preflight_done(r->model)) {
    /* A request refused anyway sends nothing, not even the preflight:
     * every input is checked before the first request (invariant 15). */
    st = admit(r, s, &g, &p, err);
    if (st == LL_OK)
      st = dry_build(r, s, lw, pw, &p, err);
    if (st == LL_OK)
      st = ll_run_preflight(r, s, err);
    if (st != LL_OK)
      return st; /* refused and recorded, or the ledger or a replay failed */
  }
  st = admit(r, s, &g, &p, err);
  if (st != LL_OK)
    return st;
  char client_id[LL_GUID_LEN];
  if (ll_guid_v4(client_id) != LL_OK)
    return ll_fail(err, LL_E_INTERNAL, "no randomness for a request ID");
  ll_op_params op = {0};
  op.lease_id = lw ? lw->lease_id : NULL;
  op.proposed_id = pw ? pw->lease_id : NULL;
  char changed[LL_GUID_LEN] = "";
  if (s->op == LL_OP_LEASE_CHANGE) {
    /* The new ID is bound (protected, "proposed") before it is sent, so
     * the sanitizer knows it even if the process dies mid-request. */
    if (!lw || ll_guid_v4(changed) != LL_OK)
      return ll_fail(err, LL_E_USAGE, "change needs a bound writer");
    st = bind_row(r, lw->alias, changed, "proposed", err);
    if (st != LL_OK)
      return st;
    op.proposed_id = changed;
  }
  op.lease_duration = s->lease_duration;
  op.break_period = s->break_period;
  if (s->op == LL_OP_PUT_BLOB) {
    op.body = (const unsigned char *)p.bytes;
    op.body_len = p.len;
  }
  op.max_single_put = r->max_single_put;
  op.api_version = ll_model_api_version(r->model);
  op.client_request_id = client_id;
  /* Invariant 15, decided here and not by the script. */
  if (s->op == LL_OP_PUT_BLOB && ll_model_creates(r->model))
    op.if_none_match = "*";
  char if_match[128] = "";
  if (s->op == LL_OP_DELETE_BLOB) {
    ll_strlcpy(if_match, ll_model_cleanup_etag(r->model), sizeof if_match);
    op.if_match = if_match[0] ? if_match : NULL; /* "": the guard refused */
  }
  if (r->oversize_for_test && s->op == LL_OP_PUT_BLOB)
    op.body_len = r->oversize_for_test;

  ll_http_request q;
  memset(&q, 0, sizeof q);
  ll_headers_init(&q.headers);
  char *url = NULL, *authed = NULL;
  st = ll_blob_build(&r->target, s->op, &op, &q, &url, err);
  if (st == LL_OK && r->auth)
    st = ll_auth_apply(r->auth, url, &authed, &q.headers, err);
  if (st != LL_OK) {
    ll_headers_cleanup(&q.headers);
    free(url);
    free(authed);
    return refuse(r, s, st, err);
  }
  q.url = authed ? authed : url;

  char event[24], started[40], path[512], shp[400];
  snprintf(event, sizeof event, "e%04ld", ++r->events);
  ll_clock_utc_str(r->clock, started, sizeof started);
  ll_target_blob_path(&r->target, path, sizeof path);
  shape(&q, url, shp, sizeof shp);
  long rev = s->op == LL_OP_PUT_BLOB ? s->revision : -1;

  cJSON *in = cJSON_CreateObject();
  cJSON_AddStringToObject(in, "record", "intent");
  cJSON_AddStringToObject(in, "run_id", r->run_id);
  cJSON_AddStringToObject(in, "event_id", event);
  cJSON_AddNumberToObject(in, "fixture_epoch", ll_model_epoch(r->model));
  cJSON_AddStringToObject(in, "step",
                          r->step[0] ? r->step : (s->step ? s->step : ""));
  cJSON_AddStringToObject(in, "operation", ll_op_name(s->op));
  cJSON_AddStringToObject(in, "actor_alias", s->actor ? s->actor : "");
  cJSON_AddStringToObject(in, "request_started_utc", started);
  cJSON_AddStringToObject(in, "http_method", q.method);
  cJSON_AddStringToObject(in, "blob_path", path);
  cJSON_AddStringToObject(in, "requested_api_version", op.api_version);
  cJSON_AddStringToObject(in, "lease_alias_supplied",
                          lease_alias ? lease_alias : "omitted");
  add_str_or_null(in, "lease_real_id",
                  lw ? lw->lease_id : (pw ? pw->lease_id : NULL));
  if (rev >= 0) {
    cJSON_AddNumberToObject(in, "payload_revision", rev);
    cJSON_AddStringToObject(in, "payload_sha256", p.sha256);
  } else {
    cJSON_AddNullToObject(in, "payload_revision");
    cJSON_AddNullToObject(in, "payload_sha256");
  }
  cJSON_AddStringToObject(in, "request_shape", shp);
  cJSON_AddStringToObject(in, "client_request_id", client_id);
  if (op.if_none_match)
    cJSON_AddStringToObject(in, "if_none_match", op.if_none_match);
  if (op.if_match)
    cJSON_AddStringToObject(in, "if_match", op.if_match);
  if (s->preflight)
    cJSON_AddBoolToObject(in, "preflight", 1);
  st = ll_run_append(r, in, err);
  if (st != LL_OK) {
    cJSON_Delete(in);
    ll_headers_cleanup(&q.headers);
    free(url);
    free(authed);
    return st; /* nothing was sent: the intent is not durable */
  }

  ll_http_response resp;
  ll_http_response_init(&resp);
  st = r->transport->exchange(r->transport, &q, &resp, err);
  ll_headers_cleanup(&q.headers);
  free(url);
  free(authed);
  if (st == LL_E_REPLAY || st == LL_E_NOMEM) {
    /* Nothing was served: no outcome row, and the run stops here. Out of
     * memory, the transport cannot say what left: the intent stays open,
     * which recovery reads as UNKNOWN_OUTCOME, the safe side. */
    if (st == LL_E_REPLAY)
      r->replay_failure = *err;
    cJSON_Delete(in);
    ll_http_response_cleanup(&resp);
    return st;
  }
  if (st != LL_OK) {
    resp.outcome = LL_OUTCOME_NOT_SENT;
    snprintf(resp.transport_error, sizeof resp.transport_error, "%s",
             err->message);
  }
  cJSON *row = ll_run_outcome_row(r, in, s, &resp, pw);
  cJSON_Delete(in);
  ll_outcome oc = resp.outcome;
  int change_ok = changed[0] && oc == LL_OUTCOME_RESPONSE && resp.status == 200;
  ll_http_response_cleanup(&resp);
  st = ll_run_append(r, row, err);
  cJSON_Delete(row);
  if (st != LL_OK)
    return st;
  ll_code stopped = LL_OK;
  if (op.if_none_match && oc == LL_OUTCOME_RESPONSE &&
      ll_model_stop(r->model, &stopped) && stopped == LL_E_TARGET_EXISTS) {
    cJSON *keep = ll_run_last_export(r);
    st = ll_run_record_existing(r, err);
    if (st != LL_OK) {
      cJSON_Delete(keep);
      return st;
    }
    *out_row = keep;
    return LL_OK;
  }
  if (change_ok) {
    cJSON *keep = ll_run_last_export(r);
    st = bind_row(r, lw->alias, changed, "active", err);
    if (st == LL_OK)
      ll_strlcpy(lw->lease_id, changed, sizeof lw->lease_id);
    if (st != LL_OK) {
      cJSON_Delete(keep);
      return st;
    }
    *out_row = keep;
    return LL_OK;
  }
  *out_row = ll_run_last_export(r);
  if (oc != LL_OUTCOME_RESPONSE)
    return ll_fail(err, LL_E_TRANSPORT, "%s: outcome %s", ll_op_name(s->op),
                   ll_outcome_name(oc));
  return LL_OK;
}

ll_status ll_run_request(ll_run *r, const ll_req_spec *s, cJSON **out_row,
                         ll_error *err) {
  ll_status st = request(r, s, out_row, err);
  return ll_run_settle(r, st, out_row, err);
}

ll_status ll_run_end_transport(ll_run *r, ll_error *err) {
  if (r->nomem)
    return ll_run_dead(r, err);
  if (r->replay_failure.code) {
    *err = r->replay_failure;
    return r->replay_failure.code;
  }
  if (!r->transport->finish)
    return LL_OK;
  ll_status st = r->transport->finish(r->transport, err);
  if (st == LL_E_REPLAY)
    r->replay_failure = *err;
  return st;
}

const char *ll_run_replay_detail(const ll_run *r) {
  if (r->replay_failure.code != LL_E_REPLAY)
    return NULL;
  const char *d =
      r->transport->detail ? r->transport->detail(r->transport) : NULL;
  return d ? d : r->replay_failure.message;
}

void ll_run_set_step(ll_run *r, const char *label) {
  ll_strlcpy(r->step, label ? label : "", sizeof r->step);
}

const ll_model *ll_run_model(const ll_run *r) {
  return r->model;
}
ll_ledger *ll_run_ledger(ll_run *r) {
  return r->ledger;
}
ll_clock *ll_run_clock(ll_run *r) {
  return r->clock;
}
const char *ll_run_id(const ll_run *r) {
  return r->run_id;
}
