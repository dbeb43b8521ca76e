/* A tiny in-process Blob service behind the transport vtable, for the run
 * tests that need ll_run_open without a network: it keeps one blob (bytes,
 * ETag and lease state), answers as the documentation says for the few
 * steps the tests send (If-None-Match: * and If-Match included), counts
 * what arrived, and can lose the answer to the next mutation (an UNKNOWN
 * outcome after the service applied it). Header-only: every function is
 * static. */
#ifndef LL_FAKE_WIRE_H
#define LL_FAKE_WIRE_H

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "manifest.h"
#include "run.h"
#include "testlib.h"

typedef struct {
  char *body; /* NULL: no blob */
  size_t len;
  char state[16]; /* available | leased | broken */
  char etag[24];  /* the blob's ETag: each accepted Put makes a new one */
  int puts;
  char holder[64];
  int requests, mutations;
  int lose_next_mutation;
  /* an acquire proposing no ID gets this one, also echoed as the
   * x-ms-request-id (a hostile server: the ID in a header rows record) */
  const char *service_id;
  /* an acquire proposing an ID gets this one instead, echoed the same way */
  const char *swap_id;
  /* what the x-ms-request-id of a service_id or swap_id answer says
   * instead of the ID itself (another form of it, say) */
  const char *echo_id;
  /* a change answers 200 naming this ID instead of the proposed one ("":
   * no x-ms-lease-id at all) */
  const char *change_id;
  /* a second x-ms-lease-id header on a change's answer, with this value */
  const char *change_dup;
} fake_wire;

static inline void fw_head(ll_http_response *resp, long status) {
  resp->outcome = LL_OUTCOME_RESPONSE;
  resp->status = status;
  resp->emitted_requests = 1;
  if (ll_headers_add(&resp->headers, "x-ms-request-id",
                     "7d2c1c62-1111-4e0a-9a55-3a1f0c0a0001") != LL_OK ||
      ll_headers_add(&resp->headers, "x-ms-version", "2023-11-03") != LL_OK ||
      ll_headers_add(&resp->headers, "Server", "FakeWire/1") != LL_OK)
    resp->outcome = LL_OUTCOME_UNKNOWN;
}

static inline void fw_error(ll_http_response *resp, long status,
                            const char *code) {
  fw_head(resp, status);
  if (ll_headers_add(&resp->headers, "x-ms-error-code", code) != LL_OK)
    resp->outcome = LL_OUTCOME_UNKNOWN;
}

static inline void fw_lease_headers(fake_wire *w, ll_http_response *resp) {
  int locked = strcmp(w->state, "leased") == 0;
  if (ll_headers_add(&resp->headers, "x-ms-lease-state", w->state) != LL_OK ||
      ll_headers_add(&resp->headers, "x-ms-lease-status",
                     locked ? "locked" : "unlocked") != LL_OK ||
      ll_headers_add(&resp->headers, "ETag", w->etag) != LL_OK)
    resp->outcome = LL_OUTCOME_UNKNOWN;
}

static inline ll_status fw_exchange(ll_transport *t, const ll_http_request *q,
                                    ll_http_response *resp, ll_error *err) {
  (void)err;
  fake_wire *w = t->impl;
  const char *action = ll_headers_get(&q->headers, "x-ms-lease-action");
  const char *lease = ll_headers_get(&q->headers, "x-ms-lease-id");
  int container = strstr(q->url, "restype=container") != NULL;
  w->requests++;
  if (q->mutation)
    w->mutations++;
  if (strcmp(q->method, "GET") == 0 || strcmp(q->method, "HEAD") == 0) {
    if (!w->body) {
      fw_error(resp, 404, "BlobNotFound");
      return LL_OK;
    }
    fw_head(resp, 200);
    fw_lease_headers(w, resp);
    if (strcmp(q->method, "GET") == 0) {
      resp->body = malloc(w->len + 1);
      if (resp->body)
        memcpy(resp->body, w->body, w->len);
      resp->body_len = resp->body ? w->len : 0;
    }
    return LL_OK;
  }
  const char *inm = ll_headers_get(&q->headers, "If-None-Match");
  const char *im = ll_headers_get(&q->headers, "If-Match");
  if (container) {
    fw_head(resp, 201);
  } else if (inm && w->body) {
    fw_error(resp, 409, "BlobAlreadyExists");
  } else if (im && (!w->body || strcmp(im, w->etag) != 0)) {
    fw_error(resp, 412, "ConditionNotMet");
  } else if (strcmp(q->method, "DELETE") == 0) {
    free(w->body);
    w->body = NULL;
    strcpy(w->state, "available");
    fw_head(resp, 202);
  } else if (action && strcmp(action, "acquire") == 0) {
    const char *id = ll_headers_get(&q->headers, "x-ms-proposed-lease-id");
    const char *chosen = id ? w->swap_id : w->service_id;
    snprintf(w->holder, sizeof w->holder, "%s",
             chosen ? chosen : (id ? id : ""));
    strcpy(w->state, "leased");
    if (chosen) {
      resp->outcome = LL_OUTCOME_RESPONSE;
      resp->status = 201;
      resp->emitted_requests = 1;
      if (ll_headers_add(&resp->headers, "x-ms-request-id",
                         w->echo_id ? w->echo_id : w->holder) != LL_OK ||
          ll_headers_add(&resp->headers, "x-ms-version", "2023-11-03") != LL_OK)
        resp->outcome = LL_OUTCOME_UNKNOWN;
    } else {
      fw_head(resp, 201);
    }
    if (ll_headers_add(&resp->headers, "x-ms-lease-id", w->holder) != LL_OK)
      resp->outcome = LL_OUTCOME_UNKNOWN;
  } else if (action && strcmp(action, "break") == 0) {
    strcpy(w->state, "broken");
    fw_head(resp, 202);
    if (ll_headers_add(&resp->headers, "x-ms-lease-time", "0") != LL_OK)
      resp->outcome = LL_OUTCOME_UNKNOWN;
  } else if (action && strcmp(action, "release") == 0) {
    strcpy(w->state, "available");
    fw_head(resp, 200);
  } else if (action && strcmp(action, "change") == 0) {
    /* Lease Blob: a change answers with the new ID, as the service does */
    const char *id = ll_headers_get(&q->headers, "x-ms-proposed-lease-id");
    if (w->change_id)
      id = w->change_id;
    snprintf(w->holder, sizeof w->holder, "%s", id ? id : "");
    fw_head(resp, 200);
    if ((w->holder[0] &&
         ll_headers_add(&resp->headers, "x-ms-lease-id", w->holder) != LL_OK) ||
        (w->change_dup && ll_headers_add(&resp->headers, "x-ms-lease-id",
                                         w->change_dup) != LL_OK))
      resp->outcome = LL_OUTCOME_UNKNOWN;
  } else if (action) {
    fw_head(resp, 200);
  } else if (strcmp(w->state, "leased") == 0 && !lease) {
    fw_error(resp, 412, "LeaseIdMissing");
  } else {
    free(w->body);
    w->body = malloc(q->body_len + 1);
    if (w->body)
      memcpy(w->body, q->body, q->body_len);
    w->len = w->body ? q->body_len : 0;
    snprintf(w->etag, sizeof w->etag, "\"0x8DC%04X\"", ++w->puts);
    fw_head(resp, 201);
    if (ll_headers_add(&resp->headers, "ETag", w->etag) != LL_OK)
      resp->outcome = LL_OUTCOME_UNKNOWN;
  }
  if (q->mutation && w->lose_next_mutation) {
    /* applied, but the answer never came back */
    w->lose_next_mutation = 0;
    ll_headers_clear(&resp->headers);
    resp->outcome = LL_OUTCOME_UNKNOWN;
    resp->status = 0;
    snprintf(resp->transport_error, sizeof resp->transport_error,
             "response lost after request was sent (fake wire)");
  }
  return LL_OK;
}

static inline void fw_free(ll_transport *t) {
  free(t); /* the wire itself belongs to the test */
}

static inline ll_transport *fw_transport(fake_wire *w) {
  ll_transport *t = calloc(1, sizeof *t);
  if (!t)
    return NULL;
  t->exchange = fw_exchange;
  t->free = fw_free;
  t->impl = w;
  return t;
}

static inline void fw_init(fake_wire *w) {
  memset(w, 0, sizeof *w);
  strcpy(w->state, "available");
}

static inline void fw_cleanup(fake_wire *w) {
  free(w->body);
  w->body = NULL;
}

static inline cJSON *fw_manifest(void) {
  cJSON *m = cJSON_CreateObject();
  cJSON_AddStringToObject(m, "resource_owner", "storage-team");
  cJSON_AddStringToObject(m, "ticket", "LAB-TEST");
  cJSON_AddStringToObject(m, "cleanup_authority", "storage-team");
  const char *actors[] = {"A", "B", "operator", "observer"};
  cJSON_AddItemToObject(m, "permitted_actors",
                        cJSON_CreateStringArray(actors, 4));
  return m;
}

/* Opens a run on blob (account http://127.0.0.1:9/devstoreaccount1, never
 * contacted) against w, locking in lock_dir; NULL with err on failure. */
static inline ll_run *fw_open(fake_wire *w, const char *evidence,
                              const char *blob, const char *lock_dir,
                              int recover, ll_error *err) {
  cJSON *man = recover ? NULL : fw_manifest();
  ll_run_config cfg = {0};
  cfg.evidence_dir = evidence;
  cfg.recover = recover;
  cfg.manifest = man;
  cfg.account_url = "http://127.0.0.1:9/devstoreaccount1";
  cfg.container = "lease-handoff-lab";
  cfg.blob = blob;
  cfg.lua_version = "Lua 5.4.6";
  cfg.transport = fw_transport(w);
  cfg.clock = ll_clock_new_real();
  cfg.lock_dir = lock_dir;
  ll_run *r = ll_run_open(&cfg, err);
  cJSON_Delete(man);
  return r;
}

/* Shorthands for the requests the tests send. */
static inline ll_status fw_send(ll_run *r, ll_op op, const char *actor,
                                const char *lease, int bound, long rev,
                                cJSON **row, ll_error *err) {
  ll_req_spec s = {.op = op,
                   .step = "test",
                   .actor = actor,
                   .lease = op == LL_OP_LEASE_ACQUIRE ? NULL : lease,
                   .proposed = op == LL_OP_LEASE_ACQUIRE ? lease : NULL,
                   .bound = bound,
                   .revision = rev,
                   .lease_duration = -1,
                   .break_period = op == LL_OP_LEASE_BREAK ? 0 : -1};
  cJSON *tmp = NULL;
  ll_status st = ll_run_request(r, &s, row ? row : &tmp, err);
  cJSON_Delete(tmp);
  return st;
}

/* A row's string member k, or NULL. */
static inline const char *fw_str(const cJSON *o, const char *k) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* A row's number member k, or -1. */
static inline long fw_num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? (long)v->valuedouble : -1;
}

/* How many export rows of the run have record rec. */
static inline int fw_count(ll_run *r, const char *rec) {
  int n = 0;
  const cJSON *row;
  cJSON_ArrayForEach(row, ll_ledger_export_rows(ll_run_ledger(r))) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, "record");
    if (cJSON_IsString(v) && strcmp(v->valuestring, rec) == 0)
      n++;
  }
  return n;
}

/* The last export row (borrowed). */
static inline const cJSON *fw_last(ll_run *r) {
  const cJSON *rows = ll_ledger_export_rows(ll_run_ledger(r));
  return cJSON_GetArrayItem(rows, cJSON_GetArraySize(rows) - 1);
}

/* A refused request: st is code, the last row is its refusal naming code
 * and invariant, and the wire saw no more than sent_before requests. */
static inline void fw_check_refused(ll_run *r, fake_wire *w, ll_status st,
                                    ll_code code, long invariant,
                                    int sent_before) {
  CHECK_INT(st, code);
  const cJSON *last = fw_last(r);
  const cJSON *inv = cJSON_GetObjectItemCaseSensitive(last, "invariant");
  CHECK_STR(
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(last, "record")),
      "refusal");
  CHECK_STR(
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(last, "code")),
      ll_code_name(code));
  CHECK_INT(cJSON_IsNumber(inv) ? (long)inv->valuedouble : -1, invariant);
  CHECK_INT(w->requests, sent_before);
}

#endif
