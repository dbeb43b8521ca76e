/* A small builder of synthetic ledger rows for the model, decide and guard
 * tests. Rows carry the fields core/run/run_row.c (ll_row_outcome) and
 * core/run/flow.c write, shaped after a real exported ledger of a live Azurite
 * ACCEPT run. Each step appends an intent (for requests) and its outcome,
 * applies both to the model with fill=1, and keeps the filled rows so a
 * second pass can re-derive them with fill=0 (verify). Header-only: every
 * function is static inline, so a test uses what it needs. */
#ifndef LL_ROWS_H
#define LL_ROWS_H

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "guard.h"
#include "model.h"
#include "payload.h"
#include "testlib.h"

enum {
  S_END = 0,
  S_LIFE,     /* lifecycle; n: 1 destructive */
  S_PUT,      /* a: lease alias (NULL omitted), n: revision, st, b: code */
  S_READ,     /* n: revision whose bytes come back */
  S_PROPS,    /* a: lease state, b: lease status */
  S_ACQ,      /* a: proposed alias, st, b: code */
  S_RENEW,    /* a: alias, st, b: code */
  S_RELEASE,  /* a: alias, st, b: code */
  S_BREAK,    /* n: break period, st, b: code */
  S_DELETE,   /* a: lease alias, st, b: code */
  S_WINDOW,   /* window finding over the last three outcomes */
  S_LATE,     /* window finding of a late probe: last outcome, no write */
  S_POLL,     /* a: result, b: reason */
  S_RECON,    /* reconcile row built by ll_model_reconcile_row */
  S_DECIDE,   /* decision row */
  S_PREFLIGHT /* the preflight properties read; st, b: code (4xx) */
};

enum {
  F_UNKNOWN = 1,       /* transport: outcome UNKNOWN, no response */
  F_EMIT2 = 2,         /* two request heads for one attempt */
  F_GARBAGE = 4,       /* a read returns bytes nobody declared */
  F_VER_NEW = 8,       /* the response names x-ms-version 2026-06-06 */
  F_NOT_SENT = 16,     /* transport: refused before sending */
  F_OTHER_ID = 32,     /* an acquire answers with another lease ID */
  F_CREATE = 64,       /* a Put sent with If-None-Match: * (invariant 15) */
  F_IF_MATCH = 128,    /* a Delete sent with If-Match on RB_ETAG */
  F_CELL = 256,        /* a lease-table attempt of cell RB_CELL */
  F_LEASE_FREE = 512,  /* a content read's lease headers: available/unlocked */
  F_LEASE_HELD = 1024, /* a content read's lease headers: leased/locked */
  F_NO_OUTCOME = 2048, /* the intent only: the process never saw an answer */
  F_ETAG_OTHER = 4096, /* the response names RB_ETAG_OTHER: another writer's
                          object, which no write of the run was answered with */
  F_NO_ETAG = 8192     /* the response names no ETag */
};

/* The lease-table cell an F_CELL step attempts. */
#define RB_CELL "Leased (A)/read, no lease"

/* Every response's ETag, unless a step says otherwise. */
#define RB_ETAG "\"0x1DC235DC4CE9210\""
#define RB_ETAG_OTHER "\"0x8DC0FFEE0BADF00\""

typedef struct {
  int op;
  const char *a;
  long n;
  long st;
  const char *b;
  unsigned flags;
  int mark; /* remember this row as the scenario's marked row */
} ll_step;

#define LIFE(d)                                                                \
  { S_LIFE, NULL, d, 0, NULL, 0, 0 }
#define PUT(l, r, st, code)                                                    \
  { S_PUT, l, r, st, code, 0, 0 }
#define PUTF(l, r, st, code, f)                                                \
  { S_PUT, l, r, st, code, f, 0 }
#define PUTM(l, r, st, code, f)                                                \
  { S_PUT, l, r, st, code, f, 1 }
#define READ(r)                                                                \
  { S_READ, NULL, r, 200, NULL, 0, 0 }
#define READF(r, f)                                                            \
  { S_READ, NULL, r, 200, NULL, f, 0 }
#define READM(r, f)                                                            \
  { S_READ, NULL, r, 200, NULL, f, 1 }
#define PROPS(s, t)                                                            \
  { S_PROPS, s, 0, 200, t, 0, 0 }
#define PROPSF(s, t, f)                                                        \
  { S_PROPS, s, 0, 200, t, f, 0 }
#define PROPSM(s, t, f)                                                        \
  { S_PROPS, s, 0, 200, t, f, 1 }
#define ACQ(l, st, code)                                                       \
  { S_ACQ, l, 0, st, code, 0, 0 }
#define ACQF(l, st, code, f)                                                   \
  { S_ACQ, l, 0, st, code, f, 0 }
#define ACQM(l, st, code, f)                                                   \
  { S_ACQ, l, 0, st, code, f, 1 }
#define RENEW(l, st, code)                                                     \
  { S_RENEW, l, 0, st, code, 0, 0 }
#define RENEWM(l, st, code)                                                    \
  { S_RENEW, l, 0, st, code, 0, 1 }
#define RELEASE(l, st)                                                         \
  { S_RELEASE, l, 0, st, NULL, 0, 0 }
#define BREAK(p)                                                               \
  { S_BREAK, NULL, p, 202, NULL, 0, 0 }
#define DELETE(l, st)                                                          \
  { S_DELETE, l, 0, st, NULL, 0, 0 }
#define WINDOW                                                                 \
  { S_WINDOW, NULL, 3, 0, NULL, 0, 0 }
#define WINDOWM                                                                \
  { S_WINDOW, NULL, 3, 0, NULL, 0, 1 }
#define LATE                                                                   \
  { S_LATE, NULL, 3, 0, NULL, 0, 0 }
#define LATEM                                                                  \
  { S_LATE, NULL, 3, 0, NULL, 0, 1 }
#define POLL(res, why)                                                         \
  { S_POLL, res, 0, 0, why, 0, 0 }
#define RECON                                                                  \
  { S_RECON, NULL, 0, 0, NULL, 0, 0 }
#define RECONM                                                                 \
  { S_RECON, NULL, 0, 0, NULL, 0, 1 }
#define DECIDE                                                                 \
  { S_DECIDE, NULL, 0, 0, NULL, 0, 0 }
#define PREFLIGHT(st, code)                                                    \
  { S_PREFLIGHT, NULL, 0, st, code, 0, 0 }
#define PREFLIGHTF(st, code, f)                                                \
  { S_PREFLIGHT, NULL, 0, st, code, f, 0 }

/* The main chain of the seed, in pieces a scenario can cut or replace. */
#define CHAIN_SETUP                                                            \
  LIFE(0), PUT(NULL, 0, 201, NULL), READ(0), ACQ("A", 201, NULL),              \
      PUT("A", 1, 201, NULL), READ(1), PUT(NULL, 2, 412, "LeaseIdMissing"),    \
      READ(1)
#define CHAIN_BREAK PROPS("leased", "locked"), BREAK(30)
#define CHAIN_PROBE                                                            \
  PROPS("breaking", "locked"), PUT("A", 3, 201, NULL),                         \
      PROPS("breaking", "locked"), WINDOW, READ(3)
#define CHAIN_EARLY_B                                                          \
  PROPS("breaking", "locked"),                                                 \
      ACQ("B", 409, "LeaseIsBreakingAndCannotBeAcquired")
#define CHAIN_BROKEN                                                           \
  PROPS("broken", "unlocked"), POLL("BROKEN", "broken/unlocked observed")
#define CHAIN_STALE PUT("A", 4, 412, "LeaseNotPresentWithBlobOperation")
#define CHAIN_B ACQ("B", 201, NULL), PUT("B", 5, 201, NULL), READ(5)
#define CHAIN_END PUT("A", 6, 412, "LeaseIdMismatchWithBlobOperation"), READ(5)
#define CHAIN_TO_BROKEN CHAIN_SETUP, CHAIN_BREAK, CHAIN_PROBE, CHAIN_EARLY_B
#define CHAIN_FULL                                                             \
  CHAIN_TO_BROKEN, CHAIN_BROKEN, CHAIN_STALE, CHAIN_B, CHAIN_END

typedef struct {
  const char *kind;  /* azure | emulator | replay */
  const char *label; /* fixture_label for replay, or NULL */
  const char *server;
  const char *ok_version;  /* returned x-ms-version on 2xx */
  const char *err_version; /* on 4xx; NULL: the header is absent */
} ll_profile;

static const ll_profile LL_AZURE = {
    "azure", NULL, "Windows-Azure-Blob/1.0 Microsoft-HTTPAPI/2.0", "2023-11-03",
    "2023-11-03"};
static const ll_profile LL_AZURITE = {"emulator", NULL, "Azurite-Blob/3.37.0",
                                      "2026-06-06", NULL};

typedef struct {
  ll_model *m;
  cJSON *rows; /* every row as applied, derived fields filled */
  ll_profile p;
  long seq, events, epoch;
  char ev[256][24]; /* event id of each outcome, in order */
  int nev;
  cJSON *mark; /* the marked row (in rows) */
  int failed;  /* applies that did not return LL_OK */
  ll_error err;
} ll_rb;

static inline const char *rb_writer_of(long rev) {
  return rev == 5 || rev == 102 ? "B" : "A";
}

static inline void rb_sha(long rev, char *out) {
  ll_payload p;
  ll_error e;
  if (ll_payload_build(rev, rb_writer_of(rev), &p, &e) == LL_OK)
    memcpy(out, p.sha256, LL_SHA256_HEX);
  else
    out[0] = '\0';
}

/* Appends row (taking it) and applies it with fill=1. */
static inline cJSON *rb_apply(ll_rb *b, cJSON *row) {
  cJSON_AddNumberToObject(row, "seq", (double)++b->seq);
  ll_status st = ll_model_apply(b->m, row, 1, &b->err);
  if (st != LL_OK) {
    b->failed++;
    fprintf(stderr, "apply of row %ld failed: %s\n", b->seq, b->err.message);
  }
  cJSON_AddItemToArray(b->rows, row);
  return row;
}

static inline void rb_declare(ll_rb *b, long rev) {
  ll_payload p;
  ll_error e;
  if (ll_payload_build(rev, rb_writer_of(rev), &p, &e) != LL_OK)
    return;
  cJSON *d = cJSON_CreateObject();
  cJSON_AddStringToObject(d, "record", "declare");
  cJSON_AddNumberToObject(d, "revision", (double)rev);
  cJSON_AddStringToObject(d, "writer", p.writer);
  cJSON_AddStringToObject(d, "payload", p.bytes);
  cJSON_AddStringToObject(d, "payload_sha256", p.sha256);
  rb_apply(b, d);
}

/* A fresh model with the manifest, declarations 0..6 and 100..102, and the
 * two lease bindings (no manifest when with_manifest is 0). */
static inline void rb_init(ll_rb *b, const ll_profile *p, int with_manifest) {
  memset(b, 0, sizeof *b);
  b->m = ll_model_new();
  b->rows = cJSON_CreateArray();
  b->p = *p;
  if (!with_manifest)
    return;
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "record", "manifest");
  cJSON_AddStringToObject(r, "run_id", "run-20261130T070346Z");
  cJSON_AddStringToObject(r, "endpoint_kind", p->kind);
  if (p->label)
    cJSON_AddStringToObject(r, "fixture_label", p->label);
  cJSON_AddStringToObject(r, "account_host",
                          strcmp(p->kind, "azure") == 0
                              ? "lab.blob.core.windows.net"
                              : "127.0.0.1:38843");
  cJSON_AddStringToObject(r, "container", "lease-handoff-lab");
  cJSON_AddStringToObject(r, "blob_path",
                          "/lease-handoff-lab/writer-handoff.json");
  cJSON_AddStringToObject(r, "api_version", "2023-11-03");
  cJSON_AddStringToObject(r, "resource_owner", "storage-team");
  cJSON_AddStringToObject(r, "ticket", "LAB-1");
  cJSON_AddStringToObject(r, "cleanup_authority", "storage-team");
  const char *actors[] = {"A", "B", "operator", "observer"};
  cJSON_AddItemToObject(r, "permitted_actors",
                        cJSON_CreateStringArray(actors, 4));
  cJSON_AddNumberToObject(r, "retries", 0);
  rb_apply(b, r);
  for (long rev = 0; rev <= 6; rev++)
    rb_declare(b, rev);
  for (long rev = 100; rev <= 102; rev++)
    rb_declare(b, rev);
  for (int i = 0; i < 2; i++) {
    cJSON *l = cJSON_CreateObject();
    cJSON_AddStringToObject(l, "record", "lease_bind");
    cJSON_AddStringToObject(l, "alias", i ? "B" : "A");
    rb_apply(b, l);
  }
}

static inline void rb_free(ll_rb *b) {
  ll_model_free(b->m);
  cJSON_Delete(b->rows);
  b->m = NULL;
  b->rows = NULL;
}

static inline void rb_str_or_null(cJSON *o, const char *k, const char *v) {
  if (v)
    cJSON_AddStringToObject(o, k, v);
  else
    cJSON_AddNullToObject(o, k);
}

static inline const char *rb_op_name(int op) {
  switch (op) {
  case S_PUT:
    return "Put Blob";
  case S_READ:
    return "Get Blob";
  case S_PROPS:
    return "Get Blob Properties";
  case S_ACQ:
    return "Lease Acquire";
  case S_RENEW:
    return "Lease Renew";
  case S_RELEASE:
    return "Lease Release";
  case S_BREAK:
    return "Lease Break";
  case S_PREFLIGHT:
    return "Get Blob Properties";
  default:
    return "Delete Blob";
  }
}

/* One request: its intent row, then its outcome row. */
static inline cJSON *rb_request(ll_rb *b, const ll_step *s) {
  char event[24], shape[128], sha[LL_SHA256_HEX], started[40];
  const char *op = rb_op_name(s->op);
  int pre = s->op == S_PREFLIGHT;
  int get = s->op == S_READ || s->op == S_PROPS || pre;
  const char *actor = s->op == S_PUT ? rb_writer_of(s->n)
                      : get          ? "observer"
                      : s->op == S_BREAK || s->op == S_DELETE ? "operator"
                                                              : s->a;
  const char *lease = get || s->op == S_BREAK ? NULL : s->a;
  snprintf(event, sizeof event, "e%04ld", ++b->events);
  snprintf(started, sizeof started, "2026-11-30T07:03:%02ld.%03ldZ",
           b->events % 60, b->events * 7 % 1000);
  snprintf(shape, sizeof shape, "%s <blob>%s%s body=%d lease_header=%s",
           get ? "GET" : (s->op == S_DELETE ? "DELETE" : "PUT"),
           s->op == S_PUT || s->op == S_READ || s->op == S_PROPS || pre ||
                   s->op == S_DELETE
               ? ""
               : "?comp=lease",
           s->op == S_PUT ? " x-ms-blob-type=BlockBlob" : "",
           s->op == S_PUT ? 57 : 0,
           lease && s->op != S_ACQ ? "present" : "absent");
  cJSON *in = cJSON_CreateObject();
  cJSON_AddStringToObject(in, "record", "intent");
  cJSON_AddStringToObject(in, "run_id", "run-20261130T070346Z");
  cJSON_AddStringToObject(in, "event_id", event);
  cJSON_AddNumberToObject(in, "fixture_epoch", (double)b->epoch);
  cJSON_AddStringToObject(in, "step", op);
  cJSON_AddStringToObject(in, "operation", op);
  cJSON_AddStringToObject(in, "actor_alias", actor);
  cJSON_AddStringToObject(in, "request_started_utc", started);
  cJSON_AddStringToObject(in, "http_method",
                          get ? "GET" : (s->op == S_DELETE ? "DELETE" : "PUT"));
  cJSON_AddStringToObject(in, "blob_path",
                          "/lease-handoff-lab/writer-handoff.json");
  cJSON_AddStringToObject(in, "requested_api_version", "2023-11-03");
  cJSON_AddStringToObject(in, "lease_alias_supplied",
                          lease ? lease : "omitted");
  if (s->op == S_PUT) {
    rb_sha(s->n, sha);
    cJSON_AddNumberToObject(in, "payload_revision", (double)s->n);
    cJSON_AddStringToObject(in, "payload_sha256", sha);
  } else {
    cJSON_AddNullToObject(in, "payload_revision");
    cJSON_AddNullToObject(in, "payload_sha256");
  }
  cJSON_AddStringToObject(in, "request_shape", shape);
  cJSON_AddStringToObject(in, "client_request_id",
                          "49a39174-ead6-4292-9219-20a56e0e6806");
  if (s->flags & F_CREATE)
    cJSON_AddStringToObject(in, "if_none_match", "*");
  if (s->flags & F_IF_MATCH)
    cJSON_AddStringToObject(in, "if_match", RB_ETAG);
  if (pre)
    cJSON_AddBoolToObject(in, "preflight", 1);
  if (s->flags & F_NO_OUTCOME)
    return rb_apply(b, in);
  cJSON *out = cJSON_Duplicate(in, 1);
  rb_apply(b, in);

  int got = !(s->flags & (F_UNKNOWN | F_NOT_SENT));
  int ok = got && s->st >= 200 && s->st < 300;
  const char *ver = !got                     ? NULL
                    : (s->flags & F_VER_NEW) ? "2026-06-06"
                    : ok                     ? b->p.ok_version
                                             : b->p.err_version;
  cJSON_ReplaceItemInObject(out, "record", cJSON_CreateString("outcome"));
  cJSON_AddStringToObject(out, "response_received_utc", started);
  rb_str_or_null(out, "returned_api_version", ver);
  if (got)
    cJSON_AddNumberToObject(out, "http_status", (double)s->st);
  else
    cJSON_AddNullToObject(out, "http_status");
  rb_str_or_null(out, "azure_error_code",
                 got && s->op != S_PROPS ? s->b : NULL);
  /* a preflight that finds the blob reads like a properties row */
  ll_step as_props = {S_PROPS, "available", 0, 200, "unlocked", s->flags, 0};
  if (pre && got && s->st == 200) {
    s = &as_props;
    cJSON_AddStringToObject(out, "content_length", "31");
  }
  rb_str_or_null(out, "x_ms_request_id",
                 got ? "699c6290-db91-448e-91ee-99138aa023a2" : NULL);
  cJSON_AddNullToObject(out, "lease_state_before");
  cJSON_AddNullToObject(out, "lease_status_before");
  int props = got && s->op == S_PROPS;
  /* a content read's own lease headers, when the step gives them */
  int avail = got && s->op == S_READ && (s->flags & F_LEASE_FREE);
  int held = got && s->op == S_READ && (s->flags & F_LEASE_HELD);
  rb_str_or_null(out, "lease_state_after",
                 props   ? s->a
                 : avail ? "available"
                 : held  ? "leased"
                         : NULL);
  rb_str_or_null(out, "lease_status_after",
                 props   ? s->b
                 : avail ? "unlocked"
                 : held  ? "locked"
                         : NULL);
  rb_str_or_null(out, "etag",
                 !got || (s->flags & F_NO_ETAG) ? NULL
                 : (s->flags & F_ETAG_OTHER)    ? RB_ETAG_OTHER
                                                : RB_ETAG);
  cJSON_AddNullToObject(out, "result_classification");
  cJSON_AddNullToObject(out, "notes");
  cJSON_AddStringToObject(out, "endpoint_kind", b->p.kind);
  cJSON_AddNumberToObject(out, "emitted_requests",
                          (s->flags & F_NOT_SENT) ? 0
                          : (s->flags & F_EMIT2)  ? 2
                                                  : 1);
  cJSON_AddNumberToObject(out, "mono_start_ns", 982812773717.0 + b->seq);
  cJSON_AddNumberToObject(out, "mono_end_ns", 982817890895.0 + b->seq);
  char lt[16];
  snprintf(lt, sizeof lt, "%ld", s->n);
  rb_str_or_null(out, "x_ms_lease_time", ok && s->op == S_BREAK ? lt : NULL);
  cJSON_AddNullToObject(out, "expectation");
  cJSON_AddNullToObject(out, "discrepancy");
  cJSON_AddStringToObject(out, "outcome",
                          (s->flags & F_UNKNOWN)    ? "UNKNOWN"
                          : (s->flags & F_NOT_SENT) ? "NOT_SENT"
                                                    : "RESPONSE");
  rb_str_or_null(out, "transport_error",
                 got                       ? NULL
                 : (s->flags & F_NOT_SENT) ? "connection refused: not sent"
                                           : "response lost after request was "
                                             "sent");
  rb_str_or_null(out, "error_message", got && !ok ? "lease error" : NULL);
  rb_str_or_null(out, "server", got ? b->p.server : NULL);
  rb_str_or_null(out, "observed_lease_state", props ? s->a : NULL);
  rb_str_or_null(out, "observed_lease_status", props ? s->b : NULL);
  rb_str_or_null(out, "observed_lease_duration",
                 props && s->a && strcmp(s->a, "leased") == 0 ? "infinite"
                                                              : NULL);
  if (got && s->op == S_READ && s->st == 200) {
    if (s->flags & F_GARBAGE) {
      if (ll_sha256_hex("garbage", 7, sha) != LL_OK)
        sha[0] = '\0';
    } else {
      rb_sha(s->n, sha);
    }
    cJSON_AddStringToObject(out, "content_sha256", sha);
  }
  if (s->op == S_BREAK)
    cJSON_AddNumberToObject(out, "break_period", (double)s->n);
  if (s->flags & F_CELL)
    cJSON_AddStringToObject(out, "cell", RB_CELL);
  if (s->op == S_ACQ)
    cJSON_AddBoolToObject(out, "returned_lease_matches_proposed",
                          ok && !(s->flags & F_OTHER_ID));
  memcpy(b->ev[b->nev++ % 256], event, sizeof event);
  return rb_apply(b, out);
}

static inline const char *rb_back(const ll_rb *b, int k) {
  return b->nev >= k ? b->ev[(b->nev - k) % 256] : "";
}

static inline cJSON *rb_step(ll_rb *b, const ll_step *s) {
  cJSON *r;
  switch (s->op) {
  case S_LIFE:
    r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "record", "lifecycle");
    cJSON_AddNumberToObject(r, "fixture_epoch", (double)++b->epoch);
    cJSON_AddBoolToObject(r, "destructive", s->n != 0);
    cJSON_AddStringToObject(r, "reason",
                            s->n ? "unlocked-gap control" : "main handoff");
    return rb_apply(b, r);
  case S_WINDOW:
  case S_LATE:
    r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "record", "finding");
    cJSON_AddStringToObject(r, "kind", "window");
    cJSON_AddNumberToObject(r, "fixture_epoch", (double)b->epoch);
    cJSON_AddStringToObject(r, "writer", "A");
    cJSON_AddNumberToObject(r, "revision", (double)s->n);
    cJSON_AddStringToObject(r, "before_event",
                            rb_back(b, s->op == S_WINDOW ? 3 : 1));
    cJSON_AddStringToObject(r, "put_event",
                            s->op == S_WINDOW ? rb_back(b, 2) : "");
    cJSON_AddStringToObject(r, "after_event",
                            s->op == S_WINDOW ? rb_back(b, 1) : "");
    cJSON_AddStringToObject(r, "reason", "");
    cJSON_AddNullToObject(r, "result");
    return rb_apply(b, r);
  case S_POLL:
    r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "record", "finding");
    cJSON_AddStringToObject(r, "kind", "poll");
    cJSON_AddNumberToObject(r, "fixture_epoch", (double)b->epoch);
    cJSON_AddStringToObject(r, "result", s->a);
    cJSON_AddStringToObject(r, "reason", s->b);
    cJSON_AddNumberToObject(r, "polls", 2);
    cJSON_AddStringToObject(r, "last_event", rb_back(b, 1));
    cJSON_AddNumberToObject(r, "hint_s", 30);
    cJSON_AddStringToObject(r, "cadence", "adaptive, floor 50 ms");
    return rb_apply(b, r);
  case S_RECON:
    r = ll_model_reconcile_row(b->m, &b->err);
    if (!r) {
      b->failed++;
      return NULL;
    }
    cJSON_AddStringToObject(r, "step", "reconcile");
    return rb_apply(b, r);
  case S_DECIDE:
    r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "record", "decision");
    cJSON_AddNumberToObject(r, "fixture_epoch", (double)b->epoch);
    cJSON_AddStringToObject(r, "endpoint_kind", b->p.kind);
    cJSON_AddNullToObject(r, "decision");
    cJSON_AddNullToObject(r, "reasons");
    cJSON_AddNullToObject(r, "window_finding");
    cJSON_AddNullToObject(r, "statement");
    return rb_apply(b, r);
  default:
    return rb_request(b, s);
  }
}

/* Runs steps up to S_END; returns the marked row, if any. */
static inline cJSON *rb_run(ll_rb *b, const ll_step *steps) {
  for (const ll_step *s = steps; s->op != S_END; s++) {
    cJSON *r = rb_step(b, s);
    if (s->mark)
      b->mark = r;
  }
  return b->mark;
}

static inline const char *rb_str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Whether some string of the array contains needle. */
static inline int rb_any_contains(const cJSON *arr, const char *needle) {
  const cJSON *it;
  cJSON_ArrayForEach(it, arr) {
    const char *s = cJSON_IsString(it) ? it->valuestring : rb_str(it, "text");
    if (s && strstr(s, needle))
      return 1;
  }
  return 0;
}

/* Re-derives every row in a fresh model with fill=0 (verify). */
static inline ll_status rb_verify(const cJSON *rows, ll_error *err) {
  ll_model *m = ll_model_new();
  ll_status st = LL_OK;
  const cJSON *row;
  cJSON_ArrayForEach(row, rows) {
    cJSON *copy = cJSON_Duplicate(row, 1);
    st = ll_model_apply(m, copy, 0, err);
    cJSON_Delete(copy);
    if (st != LL_OK)
      break;
  }
  ll_model_free(m);
  return st;
}

/* The decision row the fold records, after checking that every row
 * re-derives (rb_verify). */
static inline cJSON *rb_decide(ll_rb *b) {
  ll_step d = DECIDE;
  cJSON *row = rb_step(b, &d);
  CHECK_INT(b->failed, 0);
  ll_error err = {0};
  CHECK_INT(rb_verify(b->rows, &err), LL_OK);
  return row;
}

/* The guard's answer to r over the rows built so far (err cleared first). */
static inline ll_status rb_guard(const ll_rb *b, const ll_guard_req *r,
                                 ll_error *err) {
  memset(err, 0, sizeof *err);
  return ll_guard_check(b->m, r, err);
}

#endif
