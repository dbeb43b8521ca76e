/* The run's evidence rows, each built once through one checked builder:
 * every add goes through it, a failed allocation sets its sticky flag,
 * and the one check at the end (ll_row_end) drops the whole row. The
 * built tree is the row the fold fills and the ledger seals and prints.
 * Builders only build: appending is run.c's (ll_run_append_take). */
#include "run_row.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonx.h"
#include "sanitize.h"

static void ll_row_add(ll_row *b, const char *k, cJSON *item);
static void ll_row_null(ll_row *b, const char *k);

void ll_row_begin(ll_row *b, const char *record) {
  b->o = cJSON_CreateObject();
  b->oom = !b->o;
  if (record)
    ll_row_str(b, "record", record);
}

/* Keys are the builders' literals: kept, never copied or freed. */
static void ll_row_add(ll_row *b, const char *k, cJSON *item) {
  if (!item || b->oom || !cJSON_AddItemToObjectCS(b->o, k, item)) {
    cJSON_Delete(item);
    b->oom = 1;
  }
}

void ll_row_str(ll_row *b, const char *k, const char *v) {
  ll_row_add(b, k, b->oom ? NULL : cJSON_CreateString(v ? v : ""));
}

static void ll_row_str_or_null(ll_row *b, const char *k, const char *v) {
  if (v && *v)
    ll_row_str(b, k, v);
  else
    ll_row_null(b, k);
}

void ll_row_num(ll_row *b, const char *k, double v) {
  ll_row_add(b, k, b->oom ? NULL : cJSON_CreateNumber(v));
}

void ll_row_bool(ll_row *b, const char *k, int v) {
  ll_row_add(b, k, b->oom ? NULL : cJSON_CreateBool(v));
}

static void ll_row_null(ll_row *b, const char *k) {
  ll_row_add(b, k, b->oom ? NULL : cJSON_CreateNull());
}

/* src[k] copied, or null when src has no k. */
static void ll_row_copy(ll_row *b, const cJSON *src, const char *k) {
  const cJSON *v = ll_json_get(src, k);
  if (b->oom)
    return;
  ll_row_add(b, k, v ? cJSON_Duplicate(v, 1) : cJSON_CreateNull());
}

cJSON *ll_row_end(ll_row *b) {
  if (b->oom) {
    cJSON_Delete(b->o);
    b->o = NULL;
  }
  return b->o;
}

/* ---- the rows of a request --------------------------------------------- */

cJSON *ll_row_bind(const char *alias, const char *id, const char *state) {
  ll_row b;
  ll_row_begin(&b, "lease_bind");
  ll_row_str(&b, "alias", alias);
  ll_row_str(&b, "lease_real_id", id);
  if (state)
    ll_row_str(&b, "state", state);
  return ll_row_end(&b);
}

cJSON *ll_row_refusal(long epoch, const char *step, const char *op,
                      const char *actor, const char *code, int invariant,
                      const char *message) {
  ll_row b;
  ll_row_begin(&b, "refusal");
  ll_row_num(&b, "fixture_epoch", epoch);
  ll_row_str(&b, "step", step);
  ll_row_str(&b, "operation", op);
  ll_row_str(&b, "actor_alias", actor);
  ll_row_str(&b, "code", code);
  ll_row_num(&b, "invariant", invariant);
  ll_row_str(&b, "message", message);
  return ll_row_end(&b);
}

cJSON *ll_row_intent(const ll_intent_fields *f) {
  ll_row b;
  ll_row_begin(&b, "intent");
  ll_row_str(&b, "run_id", f->run_id);
  ll_row_str(&b, "event_id", f->event_id);
  ll_row_num(&b, "fixture_epoch", f->epoch);
  ll_row_str(&b, "step", f->step);
  ll_row_str(&b, "operation", f->operation);
  ll_row_str(&b, "actor_alias", f->actor);
  ll_row_str_or_null(&b, "principal", f->principal);
  ll_row_str(&b, "request_started_utc", f->started);
  ll_row_str(&b, "http_method", f->method);
  ll_row_str(&b, "blob_path", f->blob_path);
  ll_row_str(&b, "requested_api_version", f->api_version);
  ll_row_str(&b, "lease_alias_supplied",
             f->lease_alias ? f->lease_alias : LL_LEASE_OMITTED);
  ll_row_str_or_null(&b, "lease_real_id", f->lease_real_id);
  if (f->revision >= 0) {
    ll_row_num(&b, "payload_revision", f->revision);
    ll_row_str(&b, "payload_sha256", f->payload_sha256);
  } else {
    ll_row_null(&b, "payload_revision");
    ll_row_null(&b, "payload_sha256");
  }
  ll_row_str(&b, "request_shape", f->shape);
  ll_row_str(&b, "client_request_id", f->client_request_id);
  if (f->if_none_match)
    ll_row_str(&b, "if_none_match", f->if_none_match);
  if (f->if_match)
    ll_row_str(&b, "if_match", f->if_match);
  if (f->preflight)
    ll_row_bool(&b, "preflight", 1);
  return ll_row_end(&b);
}

/* A response as the row reads it (redact_response). */
typedef struct {
  ll_http_response r;
  int owned; /* r.headers and r.body are this view's own copies */
} view;

/* Appends "response header NAME" or "response body" to where. */
static void name_part(ll_buf *where, const char *header) {
  if (where->n)
    ll_buf_put(where, ", ", 2);
  if (header) {
    ll_buf_put(where, "response header ", 16);
    ll_buf_put(where, header, strlen(header));
  } else {
    ll_buf_put(where, "response body", 13);
  }
}

/* resp with every registered secret in its headers and body replaced by
 * its placeholder (and every sig= value that is not REDACTED), before the
 * parser copies, and may cut, a value: not even a prefix of a token is
 * kept. v borrows the rest from resp; the content hash still reads resp's
 * real bytes. *note gets "the service echoed a secret in response header
 * x-ms-request-id, ...; replaced by {{secret:token}}" when one was found.
 * Out of memory: *oom is set, and the row is never written. */
static void redact_response(const ll_ledger *l, const ll_http_response *resp,
                            view *v, ll_buf *note, int *oom) {
  const char *const *sec, *const *ph;
  size_t n = ll_ledger_secrets(l, &sec, &ph);
  unsigned found = 0;
  int bad = 0;
  ll_buf where = {0}, body = {0}, val = {0};
  v->r = *resp;
  v->owned = 0;
  /* Nothing to replace (the usual case): the view is resp itself. */
  int any = n > 0 && ll_sanitize_needs_replace((const char *)resp->body,
                                               resp->body_len, sec, n);
  for (size_t i = 0; i < resp->headers.n && n > 0 && !any; i++)
    any = ll_sanitize_needs_replace(resp->headers.v[i].value,
                                    strlen(resp->headers.v[i].value), sec, n);
  if (!any)
    return;
  ll_headers_init(&v->r.headers);
  for (size_t i = 0; i < resp->headers.n && !bad; i++) {
    const ll_header *h = &resp->headers.v[i];
    val.n = 0;
    unsigned hit =
        ll_sanitize_replace(h->value, strlen(h->value), sec, ph, n, &val);
    if (hit)
      name_part(&where, h->name);
    found |= hit;
    bad = val.oom ||
          ll_headers_add(&v->r.headers, h->name, hit ? val.p : h->value);
  }
  unsigned hit = ll_sanitize_replace((const char *)resp->body, resp->body_len,
                                     sec, ph, n, &body);
  if (hit)
    name_part(&where, NULL);
  found |= hit;
  if (found && !where.oom)
    ll_sanitize_note(note, where.p, found, ph, n);
  bad = bad || body.oom || where.oom || note->oom;
  free(where.p);
  free(val.p);
  if (bad) {
    *oom = 1;
    ll_headers_cleanup(&v->r.headers);
    free(body.p);
    free(note->p);
    memset(note, 0, sizeof *note);
    v->r = *resp;
    return;
  }
  v->r.body = (unsigned char *)body.p;
  v->r.body_len = body.n;
  v->owned = 1;
}

static void view_cleanup(view *v) {
  if (v->owned) {
    ll_headers_cleanup(&v->r.headers);
    free(v->r.body);
  }
}

/* The evidence row, in the seed's field order, then the additions of
 * DESIGN.md section 3. Derived fields start as null and are filled by the
 * model when the row is appended. */
cJSON *ll_row_outcome(const ll_outcome_ctx *c, const cJSON *in,
                      const ll_http_response *real, const char *proposed_id) {
  view v;
  ll_buf note = {0};
  int oom = 0;
  redact_response(c->ledger, real, &v, &note, &oom);
  const ll_http_response *resp = &v.r;
  ll_blob_result br;
  memset(&br, 0, sizeof br);
  int got =
      resp->outcome == LL_OUTCOME_RESPONSE && ll_blob_parse(resp, &br) == LL_OK;
  char received[40];
  ll_clock_format_utc(resp->utc_end_ms ? resp->utc_end_ms : c->now_ms, received,
                      sizeof received);
  ll_row b;
  ll_row_begin(&b, "outcome");
  b.oom |= oom;
  ll_row_copy(&b, in, "run_id");
  ll_row_copy(&b, in, "event_id");
  ll_row_copy(&b, in, "fixture_epoch");
  ll_row_copy(&b, in, "step");
  ll_row_copy(&b, in, "operation");
  ll_row_copy(&b, in, "actor_alias");
  if (cJSON_GetObjectItemCaseSensitive(in, "principal")) /* older intents */
    ll_row_copy(&b, in, "principal");
  ll_row_copy(&b, in, "request_started_utc");
  ll_row_str(&b, "response_received_utc", received);
  ll_row_copy(&b, in, "http_method");
  ll_row_copy(&b, in, "blob_path");
  ll_row_copy(&b, in, "requested_api_version");
  ll_row_str_or_null(&b, "returned_api_version",
                     got ? br.returned_version : NULL);
  ll_row_copy(&b, in, "lease_alias_supplied");
  ll_row_copy(&b, in, "lease_real_id");
  ll_row_copy(&b, in, "payload_revision");
  ll_row_copy(&b, in, "payload_sha256");
  if (got)
    ll_row_num(&b, "http_status", br.status);
  else
    ll_row_null(&b, "http_status");
  ll_row_str_or_null(&b, "azure_error_code", got ? br.error_code : NULL);
  ll_row_str_or_null(&b, "x_ms_request_id", got ? br.request_id : NULL);
  ll_row_null(&b, "lease_state_before");
  ll_row_null(&b, "lease_status_before");
  int props = c->op == LL_OP_GET_PROPERTIES && got;
  /* a content read's response carries the lease headers too: its own
   * observation, which the fold checks against the modelled lease */
  int reads = (props || c->op == LL_OP_GET_BLOB) && got;
  ll_row_str_or_null(&b, "lease_state_after", reads ? br.lease_state : NULL);
  ll_row_str_or_null(&b, "lease_status_after", reads ? br.lease_status : NULL);
  ll_row_str_or_null(&b, "etag", got ? br.etag : NULL);
  ll_row_copy(&b, in, "request_shape");
  ll_row_null(&b, "result_classification");
  ll_row_str_or_null(&b, "notes", note.p); /* an echoed secret, if any */
  ll_row_str(&b, "endpoint_kind", c->endpoint_kind);
  ll_row_num(&b, "emitted_requests", resp->emitted_requests);
  ll_row_num(&b, "mono_start_ns", (double)resp->mono_start_ns);
  ll_row_num(&b, "mono_end_ns", (double)resp->mono_end_ns);
  ll_row_str_or_null(&b, "x_ms_lease_time", got ? br.lease_time : NULL);
  ll_row_null(&b, "expectation");
  ll_row_null(&b, "discrepancy");
  ll_row_str(&b, "outcome", ll_outcome_name(resp->outcome));
  ll_row_str_or_null(&b, "transport_error", resp->transport_error);
  ll_row_str_or_null(&b, "error_message", got ? br.error_message : NULL);
  if (got && br.error_body_malformed)
    ll_row_bool(&b, "error_body_malformed", 1); /* kept verbatim */
  /* headers the parser did not keep (two values, or too long): the
   * baseline makes the row an EVIDENCE_ERROR */
  if (got && br.header_problems[0])
    ll_row_str(&b, "header_problems", br.header_problems);
  /* as received, or null when it was absent or not kept (two differing
   * values, or too long: then header_problems names it) */
  ll_row_str_or_null(&b, "server",
                     got && br.server_kept &&
                             ll_headers_get(&resp->headers, "Server")
                         ? br.server
                         : NULL);
  ll_row_str_or_null(&b, "observed_lease_state", props ? br.lease_state : NULL);
  ll_row_str_or_null(&b, "observed_lease_status",
                     props ? br.lease_status : NULL);
  ll_row_str_or_null(&b, "observed_lease_duration",
                     props ? br.lease_duration : NULL);
  if (c->op == LL_OP_GET_BLOB && got && br.status == 200) {
    char sha[LL_SHA256_HEX]; /* of the bytes received, never the view's */
    if (ll_sha256_hex(real->body ? (const void *)real->body : "",
                      real->body_len, sha) == LL_OK)
      ll_row_str(&b, "content_sha256", sha);
  }
  ll_row_copy(&b, in, "client_request_id");
  /* invariant 15: the conditions sent, and the preflight's findings */
  static const char *const cond[] = {"if_none_match", "if_match", "preflight"};
  for (size_t i = 0; i < sizeof cond / sizeof cond[0]; i++)
    if (ll_json_get(in, cond[i]))
      ll_row_copy(&b, in, cond[i]);
  if (c->preflight && got) {
    ll_row_str_or_null(&b, "content_length", br.content_length);
    ll_row_str_or_null(&b, "last_modified", br.last_modified);
  }
  if (c->op == LL_OP_LEASE_BREAK && c->break_period == LL_BREAK_PERIOD_UNKNOWN)
    ll_row_null(&b, "break_period");
  else if (c->op == LL_OP_LEASE_BREAK)
    ll_row_num(&b, "break_period", c->break_period);
  if ((c->op == LL_OP_LEASE_ACQUIRE || c->op == LL_OP_LEASE_CHANGE) &&
      c->acquire_match)
    ll_row_bool(&b, "returned_lease_matches_proposed",
                got && proposed_id &&
                    ll_lease_id_returned(br.lease_id, proposed_id));
  /* What the service sent back may echo the credential: replaced (above,
   * in the response; here, in any other value) and noted, so the outcome
   * of a request that left is never refused. Out of memory drops the row:
   * it is not written, the intent stays open. */
  if (!b.oom && ll_ledger_redact(c->ledger, b.o, NULL) == LL_E_NOMEM)
    b.oom = 1;
  view_cleanup(&v);
  free(note.p);
  return ll_row_end(&b);
}
