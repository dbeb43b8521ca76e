/* One request as a pipeline: guard, build, intent, send, outcome. Each
 * step is a function over one request state; the release sequence is
 * written once, at cleanup. With the reads invariant 15 adds whatever the
 * script: the preflight before the run's first mutation, and the
 * properties read that records a blob found in the way of a create. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "endpoint.h"
#include "guard.h"
#include "jsonx.h"
#include "payload.h"
#include "run_impl.h"
#include "run_row.h"
#include "sanitize.h"

/* One request on its way through the pipeline. */
typedef struct {
  ll_run *r;
  const ll_req_spec *s;
  ll_writer *lw, *pw;      /* the writers of the lease and proposed aliases */
  const char *lease_alias; /* the alias the request carries */
  ll_payload p;            /* a Put's declared payload */
  char client_id[LL_GUID_LEN];
  char changed[LL_GUID_LEN]; /* a change's new lease ID, bound "proposed" */
  const char *proposed;      /* the ID an acquire or change proposed, as sent */
  char if_match[128];
  ll_op_params op;
  ll_http_request q;
  char *url, *authed;
  const cJSON *in; /* the intent's protected form, once the ledger holds it */
  ll_http_response resp;
} req;

static ll_status refuse(req *q, ll_status code, ll_error *err) {
  const ll_req_spec *s = q->s;
  return ll_run_refusal(q->r, s->step ? s->step : "", ll_op_name(s->op),
                        s->actor ? s->actor : "", code, err);
}

/* An actor, or a break period, outside what the flow declared. */
static ll_status plan_refuses(const ll_run *r, const ll_req_spec *s,
                              ll_error *err) {
  /* a writer, bound or not, is one the flow declared; the roles (the
   * operator's break and container, the observer's reads) are the host's */
  ll_status st = ll_run_role(s->actor)
                     ? LL_OK
                     : ll_run_actor_ok(r, s->actor ? s->actor : "", err);
  if (st != LL_OK)
    return st;
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

/* The guard, the flow's declared plan, then the declared payload of a Put
 * (q->p); a refusal is recorded and returned. */
static ll_status admit(req *q, ll_error *err) {
  ll_run *r = q->r;
  const ll_req_spec *s = q->s;
  ll_guard_req g = {.op = s->op,
                    .actor = s->actor,
                    .lease = q->lease_alias,
                    .bound = s->bound,
                    .revision = s->revision,
                    .control = s->control,
                    .cell = s->cell != NULL};
  ll_status st = ll_guard_check(r->model, &g, err);
  if (st == LL_OK)
    st = plan_refuses(r, s, err);
  if (st != LL_OK)
    return refuse(q, st, err);
  memset(&q->p, 0, sizeof q->p);
  if (s->op != LL_OP_PUT_BLOB)
    return LL_OK;
  st = ll_payload_build(s->revision, s->actor, &q->p, err);
  if (st != LL_OK)
    return refuse(q, st, err);
  const char *want = ll_model_declared(r->model, s->revision, s->actor);
  if (!want || strcmp(want, q->p.sha256) != 0)
    return refuse(q,
                  ll_fail(err, LL_E_UNDECLARED,
                          "payload of revision %ld differs from its "
                          "declaration",
                          s->revision),
                  err);
  return LL_OK;
}

/* The operation's parameters; proposed is the ID a change proposes. */
static ll_op_params params(const req *q, const char *proposed) {
  const ll_req_spec *s = q->s;
  ll_op_params op = {
      .lease_id = q->lw ? q->lw->lease_id : NULL,
      .proposed_id = proposed,
      .lease_duration = s->lease_duration,
      .break_period = s->break_period,
      .max_single_put = q->r->max_single_put,
      .api_version = ll_model_api_version(q->r->model),
  };
  if (s->op == LL_OP_PUT_BLOB) {
    op.body = (const unsigned char *)q->p.bytes;
    op.body_len = q->r->oversize_for_test ? q->r->oversize_for_test : q->p.len;
  }
  return op;
}

/* The builder's own checks (size, lease ID syntax, parameters), on a
 * request that is then dropped; a refusal is recorded and returned. */
static ll_status dry_build(req *q, ll_error *err) {
  const ll_req_spec *s = q->s;
  const char *proposed = q->pw ? q->pw->lease_id
                         : s->op == LL_OP_LEASE_CHANGE && q->lw
                             ? q->lw->lease_id
                             : NULL;
  ll_op_params op = params(q, proposed);
  ll_http_request hq;
  memset(&hq, 0, sizeof hq);
  ll_headers_init(&hq.headers);
  char *url = NULL;
  ll_status st = ll_blob_build(&q->r->target, s->op, &op, &hq, &url, err);
  ll_headers_cleanup(&hq.headers);
  free(url);
  return st == LL_OK ? LL_OK : refuse(q, st, err);
}

/* Invariant 15: one unconditioned Get Blob Properties before the run's
 * first mutation, whatever the script. Its row says what was found; the
 * model turns anything but a 404 into a stop the guard then enforces. Only
 * a failure to record it is returned. */
static ll_status preflight(ll_run *r, const ll_req_spec *next, ll_error *err) {
  char saved[sizeof r->step], label[sizeof r->step];
  ll_strlcpy(saved, r->step, sizeof saved);
  snprintf(label, sizeof label, "preflight: properties before %.60s",
           saved[0] ? saved : ll_op_name(next->op));
  ll_strlcpy(r->step, label, sizeof r->step);
  ll_req_spec s = ll_req_spec_for(LL_OP_GET_PROPERTIES, label, "observer");
  s.preflight = 1;
  cJSON *row = NULL;
  ll_status st = ll_run_request(r, &s, &row, err);
  ll_strlcpy(r->step, saved, sizeof r->step);
  cJSON_Delete(row);
  return st == LL_E_TRANSPORT ? LL_OK : st;
}

/* After a create refused because the blob is there: one properties read
 * records what the run found (invariant 15); nothing else is sent. */
static ll_status record_existing(ll_run *r, ll_error *err) {
  char saved[sizeof r->step];
  ll_strlcpy(saved, r->step, sizeof saved);
  ll_strlcpy(r->step, "target exists: properties", sizeof r->step);
  ll_req_spec s = ll_req_spec_for(LL_OP_GET_PROPERTIES, NULL, "observer");
  cJSON *row = NULL;
  ll_error e = {0};
  ll_status st = ll_run_request(r, &s, &row, &e);
  ll_strlcpy(r->step, saved, sizeof r->step);
  cJSON_Delete(row);
  if (st == LL_OK || st == LL_E_TRANSPORT)
    return LL_OK;
  if (err)
    *err = e;
  return st;
}

/* The operator's deadline bounds every request, the preflight too: a
 * script that waits or loops past it sends nothing more (invariant 14);
 * what is not done by then is left for the operator. */
static ll_status past_deadline(req *q, ll_error *err) {
  ll_run *r = q->r;
  if (!r->deadline_ns || ll_clock_mono_ns(r->clock) <= r->deadline_ns)
    return LL_OK;
  return refuse(q,
                ll_fail(err, LL_E_SCOPE,
                        "the run's deadline passed (--deadline-s %ld since "
                        "the run opened): nothing more is sent; what is "
                        "left undone is the operator's (--recover)",
                        r->deadline_s),
                err);
}

/* 1. guard: the deadline, the writers, the preflight a first mutation
 * needs (and the deadline again after it), then the guard and the
 * declared payload. */
static ll_status guard(req *q, ll_error *err) {
  ll_run *r = q->r;
  const ll_req_spec *s = q->s;
  ll_status dst = past_deadline(q, err);
  if (dst != LL_OK)
    return dst;
  q->lw = ll_run_writer(r, s->lease);
  q->pw = ll_run_writer(r, s->proposed);
  if ((s->lease && !q->lw) || (s->proposed && !q->pw))
    return ll_fail(err, LL_E_USAGE, "lease alias %s is not bound to a writer",
                   s->lease ? s->lease : s->proposed);
  q->lease_alias = s->op == LL_OP_LEASE_ACQUIRE ? s->proposed : s->lease;
  if (ll_op_is_mutation(s->op) && ll_model_has_manifest(r->model) &&
      !ll_model_preflight_done(r->model)) {
    /* A request refused anyway sends nothing, not even the preflight:
     * every input is checked before the first request (invariant 15). */
    ll_status st = admit(q, err);
    if (st == LL_OK)
      st = dry_build(q, err);
    if (st == LL_OK)
      st = preflight(r, s, err);
    if (st != LL_OK)
      return st; /* refused and recorded, or the ledger or a replay failed */
    /* the preflight's answer may come after the deadline (helper-28) */
    if ((st = past_deadline(q, err)) != LL_OK)
      return st;
  }
  return admit(q, err);
}

/* 2. build: the request as it will leave, authorised. */
static ll_status build(req *q, ll_error *err) {
  ll_run *r = q->r;
  const ll_req_spec *s = q->s;
  if (ll_guid_v4(q->client_id) != LL_OK)
    return ll_fail(err, LL_E_INTERNAL, "no randomness for a request ID");
  const char *proposed = q->pw ? q->pw->lease_id : NULL;
  ll_writer *to = s->change_to ? ll_run_writer(r, s->change_to) : NULL;
  if (s->op == LL_OP_LEASE_CHANGE && s->change_to) {
    /* a lease-table cell: the proposed ID is another bound writer's */
    if (!q->lw || !to)
      return ll_fail(err, LL_E_USAGE, "change needs two bound writers");
    proposed = to->lease_id;
  } else if (s->op == LL_OP_LEASE_CHANGE) {
    /* The new ID is bound (protected, "proposed") before it is sent, so
     * the sanitizer knows it even if the process dies mid-request. */
    if (!q->lw || ll_guid_v4(q->changed) != LL_OK)
      return ll_fail(err, LL_E_USAGE, "change needs a bound writer");
    ll_status st =
        ll_run_bind_row(r, q->lw->alias, q->changed, "proposed", err);
    if (st != LL_OK)
      return st;
    proposed = q->changed;
  }
  q->proposed = proposed;
  q->op = params(q, proposed);
  q->op.client_request_id = q->client_id;
  /* Invariant 15, decided here and not by the script. */
  if (s->op == LL_OP_PUT_BLOB && ll_model_creates(r->model))
    q->op.if_none_match = "*";
  /* The Delete goes only on the ETag of the run's last write read back;
   * an acquire or break only on the generation the run's own writes left,
   * so a blob replaced since the last answer is refused 412, not leased or
   * broken. A lease table's cells measure Lease Blob's unconditioned
   * outcomes; its set-up and cleanup are conditioned like the rest. "" is
   * refused by the guard before this. */
  const char *im = s->op == LL_OP_DELETE_BLOB ? ll_model_cleanup_etag(r->model)
                   : ll_op_lease_conditioned(s->op) && !s->cell
                       ? ll_model_lease_etag(r->model)
                       : NULL;
  if (im) {
    ll_strlcpy(q->if_match, im, sizeof q->if_match);
    q->op.if_match = q->if_match[0] ? q->if_match : NULL;
  }
  ll_status st = ll_blob_build(&r->target, s->op, &q->op, &q->q, &q->url, err);
  /* The actor's own credential, chosen here from the request's actor
   * (credentials.h), never by the script; its fingerprint is the row's
   * principal. A run with credentials has one for every actor it sends
   * for (checked at open); NULL is a replay, which sends none. */
  ll_auth *auth = ll_run_auth_for(r, s->actor, NULL);
  if (st == LL_OK && !auth && ll_run_has_credentials(r))
    st = ll_fail(err, LL_E_AUTH, "actor %s has no credential",
                 s->actor ? s->actor : "?");
  if (st == LL_OK && auth)
    st = ll_auth_apply(auth, q->url, &q->authed, &q->q.headers, err);
  if (st != LL_OK)
    return refuse(q, st, err);
  q->q.url = q->authed ? q->authed : q->url;
  q->q.on_wire = ll_ledger_flush_hook;
  q->q.wire_ctx = r->ledger;
  return LL_OK;
}

/* The request's shape: only the operation selector of the query (never a
 * SAS); the conditions shown whole (an ETag is not a secret). */
static void shape(const ll_http_request *q, const char *url, char *buf,
                  size_t cap) {
  const char *query = strchr(url, '?');
  const char *bt = ll_headers_get(&q->headers, "x-ms-blob-type");
  const char *act = ll_headers_get(&q->headers, "x-ms-lease-action");
  const char *inm = ll_headers_get(&q->headers, "If-None-Match");
  const char *im = ll_headers_get(&q->headers, "If-Match");
  char qs[64] = "";
  if (query) {
    if (strstr(query, "comp=lease"))
      ll_strlcpy(qs, "?comp=lease", sizeof qs);
    else if (strstr(query, "restype=container"))
      ll_strlcpy(qs, "?restype=container", sizeof qs);
  }
  snprintf(buf, cap, "%s %s%s%s%s%s%s body=%zu lease_header=%s%s%s%s%s",
           q->method, "<blob>", qs, bt ? " x-ms-blob-type=" : "", bt ? bt : "",
           act ? " x-ms-lease-action=" : "", act ? act : "", q->body_len,
           ll_headers_get(&q->headers, "x-ms-lease-id") ? "present" : "absent",
           inm ? " if_none_match=" : "", inm ? inm : "", im ? " if_match=" : "",
           im ? im : "");
}

/* 3. intent: durable (when it protects something) before anything leaves;
 * on failure nothing is sent. */
static ll_status intent(req *q, ll_error *err) {
  ll_run *r = q->r;
  const ll_req_spec *s = q->s;
  char event[24], started[40], path[512], shp[400];
  snprintf(event, sizeof event, "e%04ld", ++r->events);
  ll_clock_utc_str(r->clock, started, sizeof started);
  ll_target_blob_path(&r->target, path, sizeof path);
  shape(&q->q, q->url, shp, sizeof shp);
  ll_intent_fields f = {
      .run_id = r->run_id,
      .event_id = event,
      .epoch = ll_model_epoch(r->model),
      .step = r->step[0] ? r->step : (s->step ? s->step : ""),
      .operation = ll_op_name(s->op),
      .actor = s->actor ? s->actor : "",
      .principal = ll_run_principal(r, s->actor),
      .started = started,
      .method = q->q.method,
      .blob_path = path,
      .api_version = q->op.api_version,
      .lease_alias = q->lease_alias,
      .lease_real_id =
          q->lw ? q->lw->lease_id : (q->pw ? q->pw->lease_id : NULL),
      .revision = s->op == LL_OP_PUT_BLOB ? s->revision : LL_NO_REVISION,
      .payload_sha256 = q->p.sha256,
      .shape = shp,
      .client_request_id = q->client_id,
      .if_none_match = q->op.if_none_match,
      .if_match = q->op.if_match,
      .preflight = s->preflight,
  };
  ll_status st = ll_run_append_take(r, ll_row_intent(&f), err);
  if (st != LL_OK)
    return st;
  cJSON_Delete(ll_run_last_export(r)); /* the intent's tree: read by none */
  /* The outcome row copies from the intent's protected form (its
   * lease_real_id above all): the fold's copy of the open intent, the
   * newest; the ledger keeps the export form only. */
  const cJSON *open = ll_model_open_intents(r->model);
  const cJSON *last = ll_json_last(open);
  if (!last || !last->string || strcmp(last->string, event) != 0)
    return ll_fail(err, LL_E_INTERNAL,
                   "the fold holds no open intent %s: nothing was sent", event);
  q->in = last;
  return LL_OK;
}

/* 4. send: one attempt. Nothing served (a replay's divergence, or out of
 * memory, when the transport cannot say what left) ends here: no outcome
 * row, the intent stays open, which recovery reads as UNKNOWN_OUTCOME. */
static ll_status send(req *q, ll_error *err) {
  ll_run *r = q->r;
  /* a connection still being set up at the deadline is given up: the
   * request never leaves after it (helper-29: a connect held 8 s by a
   * proxy let a read leave 8 s late) */
  if (r->deadline_ns) {
    int64_t left = (r->deadline_ns - ll_clock_mono_ns(r->clock)) / 1000000;
    q->q.connect_limit_ms = left > 0 ? (long)left : 1;
  }
  ll_status st = r->transport->exchange(r->transport, &q->q, &q->resp, err);
  if (st == LL_E_REPLAY)
    r->replay_failure = *err;
  if (st == LL_E_REPLAY || st == LL_E_NOMEM)
    return st;
  if (st != LL_OK) {
    q->resp.outcome = LL_OUTCOME_NOT_SENT;
    snprintf(q->resp.transport_error, sizeof q->resp.transport_error, "%s",
             err->message);
  }
  return LL_OK;
}

/* Keeps a GUID that no binding of the run names out of both ledgers, as a
 * credential is, in every form a server may echo it: the sanitizer matches
 * a GUID secret in any case, with its hyphens anywhere or none, inside
 * other hex digits too. A value that is not a GUID is not learnt here: as
 * a secret it would be replaced inside every string that holds it, and
 * found by the scan in a row's keys or numbers ("http_status", "1"), so
 * that no row could be written; a service of Lease Blob's contract hands
 * out GUIDs only. */
static ll_status learn_guid(ll_run *r, const char *id, ll_error *err) {
  char norm[LL_SANITIZE_ID_MAX];
  if (!ll_sanitize_norm_id(id, norm))
    return LL_OK;
  return ll_ledger_add_named_secret(r->ledger, id, "lease-id", err);
}

/* A lease-table ID that is not a GUID shorter than this is not kept out
 * (see bind_returned). */
#define SECRET_ID_MIN 8

/* Whether this answer is a lease-table acquire that proposed no ID, answered
 * 201: bind_returned takes its ID, and learn_unbound leaves it. */
static int service_chose(const req *q) {
  return q->s->cell && q->s->op == LL_OP_LEASE_ACQUIRE && !q->pw &&
         q->resp.outcome == LL_OUTCOME_RESPONSE && q->resp.status == 201;
}

/* A lease-table acquire proposed no ID: the one the service returned is
 * bound as "X" (the sanitizer and a recording then know it); it is never
 * sent by the run, a cleanup breaks it. An ID the ledger cannot bind (too
 * long to be a GUID, or not one) fails the request, so the table stops
 * with a lease it cannot name; the ID is first kept out of both ledgers as
 * a credential is, as it came, and row redacted again, unless it is
 * shorter than SECRET_ID_MIN (the scan would find it in every row). What
 * the table writes after it may still hold the value in a key or a number
 * (a service that names its lease "http_status"): those rows are refused,
 * and the run ends without them, never with the value written. */
static ll_status bind_returned(ll_run *r, const ll_http_response *resp,
                               cJSON *row, ll_error *err) {
  int differ = 0;
  const char *id =
      ll_headers_get_agreed(&resp->headers, "x-ms-lease-id", &differ);
  if (differ)
    return ll_fail(err, LL_E_BAD_LEASE_ID,
                   "the service answered an acquire with two different lease "
                   "IDs: they are kept out of the evidence, and the table "
                   "stops (break the lease as the operator)");
  if (!id || !*id)
    return LL_OK;
  size_t n = strlen(id);
  if (n < LL_GUID_LEN) {
    ll_status b = ll_run_bind_row(r, "X", id, "active", err);
    if (b != LL_E_BAD_LEASE_ID)
      return b;
  }
  int kept = n >= SECRET_ID_MIN;
  ll_status st =
      kept ? ll_ledger_add_named_secret(r->ledger, id, "lease-id", err) : LL_OK;
  if (st == LL_OK && kept && row &&
      ll_ledger_redact(r->ledger, row, NULL) != LL_OK)
    st = ll_fail(err, LL_E_NOMEM, "out of memory");
  if (st != LL_OK)
    return st;
  return ll_fail(err, LL_E_BAD_LEASE_ID,
                 "the service answered an acquire with a lease ID of %zu "
                 "characters, not a GUID: %s, and the table stops (break "
                 "the lease as the operator)",
                 n,
                 kept ? "it is kept out of the evidence"
                      : "too short to keep out of the evidence");
}

/* Any other answer that names a lease no binding of the run names (an
 * acquire or change answered with another ID than the one proposed, an ID
 * the service sent where none was asked for, whatever the status) has it
 * learnt before the row is built (learn_guid): the row says whether the
 * IDs matched, and neither ledger carries the ID where the server echoed
 * it. An ID a binding names (a writer's, an earlier one, the table's X)
 * is the sanitizer's: its alias stands in for it. */
static ll_status learn_unbound(req *q, ll_error *err) {
  /* every x-ms-lease-id the answer carries: a second one that differs is
   * as much the server's echo as the first (the row then records neither,
   * header_problems) */
  int differ = 0;
  (void)ll_headers_get_agreed(&q->resp.headers, "x-ms-lease-id", &differ);
  if (service_chose(q) && !differ)
    return LL_OK; /* bind_returned takes the one ID */
  const ll_headers *h = &q->resp.headers;
  for (size_t i = 0; i < h->n; i++) {
    const char *id = h->v[i].value;
    /* the ledger's bindings hold every writer's ID, a change's proposed
     * one (bound before it is sent) and the table's X */
    if (strcasecmp(h->v[i].name, "x-ms-lease-id") != 0 || !id || !*id ||
        ll_ledger_alias_of(q->r->ledger, id))
      continue;
    ll_status st = learn_guid(q->r, id, err);
    if (st != LL_OK)
      return st;
  }
  return LL_OK;
}

/* 5. outcome: the classified row, then what it calls for (the read that
 * records a blob in the way of a create, a change's binding made active). */
static ll_status outcome(req *q, cJSON **out_row, ll_error *err) {
  ll_run *r = q->r;
  ll_status learnt = learn_unbound(q, err);
  if (learnt != LL_OK)
    return learnt;
  ll_outcome_ctx c = {.ledger = r->ledger,
                      .endpoint_kind = ll_model_endpoint_kind(r->model),
                      .now_ms =
                          q->resp.utc_end_ms ? 0 : ll_clock_utc_ms(r->clock),
                      .acquire_match = 1,
                      .op = q->s->op,
                      .preflight = q->s->preflight,
                      .break_period = q->s->break_period};
  cJSON *row = ll_row_outcome(&c, q->in, &q->resp, q->proposed);
  if (row && q->s->cell)
    cJSON_AddStringToObject(row, "cell", q->s->cell);
  ll_outcome oc = q->resp.outcome;
  /* A change binds its new ID only when the answer names that ID: a 200
   * that returned another one leaves the binding "proposed" (the lease's
   * ID is then unknown to the run, and the row is an evidence error). */
  int change_ok =
      q->changed[0] && oc == LL_OUTCOME_RESPONSE && q->resp.status == 200 &&
      ll_lease_id_returned(
          ll_headers_get_agreed(&q->resp.headers, "x-ms-lease-id", &(int){0}),
          q->changed);
  /* The ID the service returned is bound before the outcome row is
   * written, so that row's scan knows it wherever the answer put it (a
   * server may echo it in any header the row records). A refused binding
   * (an ID already bound to another alias, so known to the scan) still
   * records the answer, then fails the request. */
  ll_status bound = LL_OK;
  ll_error berr = {0};
  if (service_chose(q))
    bound = bind_returned(r, &q->resp, row, &berr);
  if (bound == LL_E_NOMEM || bound == LL_E_DURABILITY || bound == LL_E_IO) {
    cJSON_Delete(row);
    if (err)
      *err = berr;
    return bound;
  }
  ll_status st = ll_run_append_take(r, row, err);
  if (st != LL_OK)
    return st;
  cJSON *keep = ll_run_last_export(r);
  if (bound != LL_OK) {
    cJSON_Delete(keep);
    if (err)
      *err = berr;
    return bound;
  }
  ll_code stopped = LL_OK;
  if (q->op.if_none_match && oc == LL_OUTCOME_RESPONSE &&
      ll_model_stop(r->model, &stopped) && stopped == LL_E_TARGET_EXISTS)
    st = record_existing(r, err);
  else if (change_ok) {
    st = ll_run_bind_row(r, q->lw->alias, q->changed, "active", err);
    if (st == LL_OK)
      ll_strlcpy(q->lw->lease_id, q->changed, sizeof q->lw->lease_id);
  } else if (oc != LL_OUTCOME_RESPONSE) {
    *out_row = keep;
    return ll_fail(err, LL_E_TRANSPORT, "%s: outcome %s", ll_op_name(q->s->op),
                   ll_outcome_name(oc));
  }
  if (st != LL_OK) {
    cJSON_Delete(keep);
    return st;
  }
  *out_row = keep;
  return LL_OK;
}

static ll_status request(ll_run *r, const ll_req_spec *s, cJSON **out_row,
                         ll_error *err) {
  req q = {.r = r, .s = s};
  ll_status st;
  ll_headers_init(&q.q.headers);
  ll_http_response_init(&q.resp);
  *out_row = NULL;
  if (r->dead) {
    st = ll_run_dead(r, err);
    goto cleanup;
  }
  if ((st = ll_run_table_refuses(r, ll_op_name(s->op), err)) ||
      (st = guard(&q, err)) || (st = build(&q, err)) ||
      (st = intent(&q, err)) || (st = send(&q, err)))
    goto cleanup;
  st = outcome(&q, out_row, err);
cleanup:
  /* A request that ends without its outcome row (a replay's divergence,
   * out of memory, a run dead after its intent) leaves the run between
   * requests: what waited for it to be on its way is written now, so the
   * export verifies as it is (a no-op when the outcome row took it). */
  (void)ll_ledger_flush_hook(r->ledger); /* a failure: the next append's */
  ll_headers_cleanup(&q.q.headers);
  free(q.url);
  free(q.authed);
  ll_http_response_cleanup(&q.resp);
  return st;
}

ll_req_spec ll_req_spec_for(ll_op op, const char *step, const char *actor) {
  ll_req_spec s = {.op = op,
                   .step = step,
                   .actor = actor,
                   .revision = LL_NO_REVISION,
                   .lease_duration = LL_LEASE_INFINITE,
                   .break_period = LL_BREAK_PERIOD_OMIT};
  return s;
}

ll_status ll_run_request(ll_run *r, const ll_req_spec *s, cJSON **out_row,
                         ll_error *err) {
  ll_status st = request(r, s, out_row, err);
  return ll_run_settle(r, st, out_row, err);
}
