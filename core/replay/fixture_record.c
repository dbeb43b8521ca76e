/* Recording: every exchange passes through to the wire unchanged and is
 * kept in fixture form, sanitized by the export's own code (sanitize.c)
 * with {{lease:ALIAS}} as the lease IDs' replacement and {{secret:NAME}}
 * for the run's credential wherever the service echoed it. The record
 * file must not exist; finish writes it atomically, never through a
 * link (fixture_place.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "blob.h"
#include "fixture_impl.h"
#include "ledger.h"
#include "sanitize.h"
#include "secret.h"
#include "text.h"

typedef struct {
  ll_transport t;
  ll_transport *inner;
  char *path, *account_path, *label, *description;
  fx_place place;  /* where finish puts the file (fixture_place.c) */
  ll_clock *clock; /* borrowed */
  int64_t t0_ns, t0_utc_ms;
  cJSON *exchanges;
  char server[128];
  fx_known ids; /* every lease ID learnt, and its "{{lease:ALIAS}}" */
  int dirty, written;
  ll_error broken;         /* code != LL_OK: the recording cannot be trusted */
  ll_fixture_context *ctx; /* NULL: the header names no target or flow */
} recorder;

/* The lease ID's placeholder, if it was learnt. */
static const char *known(const recorder *r, const char *id) {
  return fx_known_placeholder(&r->ids, id);
}

/* Gives id its placeholder: the run's alias (fx_known_learn). */
static void learn(recorder *r, const char *id, const char *hint) {
  if (!id || !*id || known(r, id) || r->broken.code)
    return;
  const char *alias = r->t.alias_of ? r->t.alias_of(r->t.run_ctx, id) : NULL;
  if (!alias)
    alias = hint ? hint : "unknown";
  if (fx_known_learn(&r->ids, id, alias, &r->broken) != LL_OK)
    return; /* r->broken says why: the recording is refused */
}

/* learn, for every header name in h. */
static void learn_all(recorder *r, const ll_headers *h, const char *name) {
  for (size_t i = 0; i < h->n; i++)
    if (strcasecmp(h->v[i].name, name) == 0)
      learn(r, h->v[i].value, NULL);
}

/* The alias part of a known ID's placeholder, for a change's new ID. */
static const char *alias_part(const recorder *r, const char *id, char *buf,
                              size_t cap) {
  char name[FX_NAME_MAX];
  const char *ph = id ? known(r, id) : NULL;
  if (!ph || !fx_placeholder(ph, name))
    return NULL;
  size_t n = strlen(name);
  while (n > 1 && name[n - 1] >= '0' && name[n - 1] <= '9')
    n--;
  name[n] = '\0';
  ll_strlcpy(buf, name, cap);
  return buf;
}

static double round1(double v) {
  return v <= 0 ? 0 : (double)(int64_t)(v * 10 + 0.5) / 10;
}

/* Whether a body that is not UTF-8 holds a lease ID or a secret once its
 * NUL bytes are dropped: text in UTF-16 (either order), which the byte
 * scan reads past. what says which; running out of memory is a hit. */
static int wide_holds(const recorder *r, const fx_known *sec, const ll_buf *b,
                      char *what, size_t cap) {
  if (!memchr(b->p, '\0', b->n))
    return 0;
  char *narrow = malloc(b->n ? b->n : 1);
  if (!narrow) {
    snprintf(what, cap, "a body it ran out of memory searching");
    return 1;
  }
  size_t m = 0;
  for (size_t i = 0; i < b->n; i++)
    if (b->p[i])
      narrow[m++] = b->p[i];
  int hit = ll_secret_scan(narrow, m, (const char *const *)r->ids.v, r->ids.n,
                           (const char *const *)sec->v, sec->n, what, cap) > 0;
  if (hit)
    snprintf(what + strlen(what), cap - strlen(what), " (as UTF-16)");
  free(narrow);
  return hit;
}

/* Whether bytes b[0..n) start as a compressed stream does (gzip, zlib,
 * zstd, xz, bzip2), whatever the headers said: what such a body holds no
 * scan can read. Raw deflate and brotli have no such mark. */
static int looks_compressed(const unsigned char *b, size_t n) {
  if (n < 4)
    return 0;
  return (b[0] == 0x1f && b[1] == 0x8b) ||
         /* zlib: deflate, a window of at most 32K, no preset dictionary
          * (HTTP never uses one), and its check bits */
         ((b[0] & 0x0f) == 8 && (b[0] >> 4) <= 7 && !(b[1] & 0x20) &&
          ((b[0] << 8) | b[1]) % 31 == 0) ||
         (b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd) ||
         (b[0] == 0xfd && b[1] == '7' && b[2] == 'z' && b[3] == 'X') ||
         (b[0] == 'B' && b[1] == 'Z' && b[2] == 'h' && b[3] >= '1' &&
          b[3] <= '9');
}

/* A body as the fixture keeps it: its lease IDs and the run's secrets
 * replaced as bytes, before it may be base64'd, where no later step reads
 * it (*hit: the secrets found, for the notes); the hash, when asked for,
 * is of the bytes as they were. A body kept as base64 that the scan
 * still finds one in is not kept: the recording is refused (r->broken).
 * 0 then, or when out of memory. */
static int add_body(recorder *r, cJSON *o, const unsigned char *b, size_t n,
                    int sha, const fx_known *sec, unsigned *hit) {
  const char *const *ids = (const char *const *)r->ids.v;
  ll_buf clean = {0};
  *hit = fx_scrub_bytes(&r->ids, sec, (const char *)b, n, &clean);
  int ok = !clean.oom;
  char what[128], *t = NULL;
  if (ok && ll_utf8_valid((const unsigned char *)clean.p, clean.n)) {
    t = strndup(clean.p, clean.n);
    ok = t && cJSON_AddStringToObject(o, "body", t);
  } else if (ok && looks_compressed(b, n)) {
    ok = 0;
    ll_fail(&r->broken, LL_E_INTERNAL,
            "recording refused: a body of %zu bytes is compressed, and no "
            "scan can read it for lease IDs and secrets",
            n);
  } else if (ok && (ll_secret_scan(clean.p, clean.n, ids, r->ids.n,
                                   (const char *const *)sec->v, sec->n, what,
                                   sizeof what) > 0 ||
                    wide_holds(r, sec, &clean, what, sizeof what))) {
    ok = 0;
    ll_fail(&r->broken, LL_E_INTERNAL,
            "recording refused: a body kept as base64 would hold %s", what);
  } else if (ok) {
    t = fx_base64((const unsigned char *)clean.p, clean.n);
    ok = t && cJSON_AddStringToObject(o, "body_base64", t);
  }
  char hex[LL_SHA256_HEX];
  if (ok && sha && ll_sha256_hex(b, n, hex) == LL_OK)
    ok = cJSON_AddStringToObject(o, "body_sha256", hex) != NULL;
  free(t);
  free(clean.p);
  return ok;
}

/* Each kept header with every copy the message carried, in order: one
 * as a string, more as an array of strings, so that a replay shows the
 * run's judgement the same copies (helper-30: keeping the first turned a
 * disagreement the run held on into a fixture that replays to ACCEPT). */
static cJSON *headers(const ll_headers *h, const char *const *keep) {
  cJSON *o = cJSON_CreateObject();
  for (const char *const *k = keep; o && *k; k++) {
    cJSON *all = cJSON_CreateArray();
    for (size_t i = 0; all && i < h->n; i++)
      if (strcasecmp(h->v[i].name, *k) == 0)
        cJSON_AddItemToArray(all, cJSON_CreateString(h->v[i].value));
    int n = cJSON_GetArraySize(all);
    cJSON *v = n == 1 ? cJSON_DetachItemFromArray(all, 0) : all;
    if (v != all)
      cJSON_Delete(all);
    if (n == 0 || !cJSON_AddItemToObject(o, *k, v))
      cJSON_Delete(v); /* a failed allocation is counted (alloc.h) */
  }
  return o;
}

/* The exchange with real values; the caller sanitizes it. The bodies
 * alone are redacted here, as bytes (add_body): body_hit[0] and [1] get
 * what was found in the request's and in the response's. NULL when out
 * of memory or refused (r->broken). */
static cJSON *build(recorder *r, const ll_http_request *q, const fx_req *v,
                    ll_status st, const ll_error *err,
                    const ll_http_response *resp, const fx_known *sec,
                    unsigned body_hit[2]) {
  cJSON *x = cJSON_CreateObject();
  int64_t start =
      resp->mono_start_ns ? resp->mono_start_ns : ll_clock_mono_ns(r->clock);
  int64_t end = resp->mono_end_ns ? resp->mono_end_ns : start;
  cJSON_AddNumberToObject(x, "t_ms", round1((double)(start - r->t0_ns) / 1e6));
  cJSON_AddNumberToObject(x, "elapsed_ms", round1((double)(end - start) / 1e6));
  cJSON *rq = cJSON_AddObjectToObject(x, "request");
  cJSON_AddStringToObject(rq, "method", v->method);
  cJSON_AddStringToObject(rq, "path", v->path);
  if (v->query[0])
    cJSON_AddStringToObject(rq, "query", v->query);
  cJSON_AddItemToObject(rq, "headers",
                        headers(&v->headers, fx_request_headers));
  if (q->body_len > 0 &&
      !add_body(r, rq, q->body, q->body_len, 1, sec, &body_hit[0])) {
    cJSON_Delete(x);
    return NULL;
  }
  int expect_emitted = 1;
  if (st != LL_OK) {
    char msg[sizeof err->message + 16];
    snprintf(msg, sizeof msg, "not sent: %s", err->message);
    cJSON_AddStringToObject(x, "transport_error", msg);
    cJSON_AddStringToObject(x, "outcome", "NOT_SENT");
    expect_emitted = 0;
  } else if (resp->outcome != LL_OUTCOME_RESPONSE) {
    cJSON_AddStringToObject(x, "transport_error",
                            resp->transport_error[0] ? resp->transport_error
                                                     : "no response");
    if (resp->outcome == LL_OUTCOME_NOT_SENT) {
      cJSON_AddStringToObject(x, "outcome", "NOT_SENT");
      expect_emitted = 0;
    }
  } else {
    cJSON *rs = cJSON_AddObjectToObject(x, "response");
    cJSON_AddNumberToObject(rs, "status", resp->status);
    cJSON_AddItemToObject(rs, "headers",
                          headers(&resp->headers, fx_response_headers));
    if (resp->body_len == 0)
      cJSON_AddStringToObject(rs, "body", "");
    else if (!add_body(r, rs, resp->body, resp->body_len, 0, sec,
                       &body_hit[1])) {
      cJSON_Delete(x);
      return NULL;
    }
  }
  if (st == LL_OK && resp->emitted_requests != expect_emitted)
    cJSON_AddNumberToObject(x, "emitted_requests", resp->emitted_requests);
  return x;
}

/* Replaces the secrets in exchange x (in place) and says where in its
 * "notes". body_hit: the request's and the response's bodies were
 * redacted as bytes (build), so that one kept as base64 is clean too. 0
 * when out of memory. */
static int redact_exchange(cJSON *x, const fx_known *s,
                           const unsigned body_hit[2]) {
  unsigned found = 0;
  ll_buf where = {0}, note = {0};
  const char *const *v = (const char *const *)s->v, *const *ph =
                                                        (const char *const *)
                                                            s->ph;
  int ok = ll_sanitize_redact(x, v, ph, s->n, &found, &where) == LL_OK;
  static const char *const part[] = {"request.body", "response.body"};
  for (int k = 0; k < 2 && ok; k++)
    if (body_hit[k]) {
      if (where.n)
        ll_buf_put(&where, ", ", 2);
      ll_buf_put(&where, part[k], strlen(part[k]));
      found |= body_hit[k];
    }
  if (ok && found) {
    ll_sanitize_note(&note, where.p, found, ph, s->n);
    ok = !note.oom && cJSON_AddStringToObject(x, "notes", note.p) != NULL;
  }
  ok = ok && !where.oom;
  free(where.p);
  free(note.p);
  return ok;
}

static void keep(recorder *r, const ll_http_request *q, ll_status st,
                 const ll_error *err, const ll_http_response *resp) {
  fx_req v;
  ll_error e = {0};
  if (r->broken.code)
    return;
  if (fx_req_from_http(q, r->account_path, &v, &e) != LL_OK) {
    r->broken = e;
    return;
  }
  char hint[FX_NAME_MAX];
  const char *cur = ll_headers_get(&v.headers, "x-ms-lease-id");
  learn_all(r, &q->headers, "x-ms-lease-id"); /* as sent: v keeps one */
  learn(r, ll_headers_get(&v.headers, "x-ms-proposed-lease-id"),
        alias_part(r, cur, hint, sizeof hint));
  if (st == LL_OK && resp->outcome == LL_OUTCOME_RESPONSE) {
    /* every copy of the header: a second one is as much an ID as the
     * first (the run learns each too) */
    learn_all(r, &resp->headers, "x-ms-lease-id");
    learn_all(r, &resp->headers, "x-ms-proposed-lease-id");
    const ll_headers *h = &resp->headers;
    for (size_t i = 0; i < h->n && !r->broken.code; i++)
      if (strcasecmp(h->v[i].name, "Content-Encoding") == 0 && h->v[i].value &&
          *h->v[i].value && strcasecmp(h->v[i].value, "identity") != 0)
        ll_fail(&r->broken, LL_E_INTERNAL,
                "recording refused: a response body in Content-Encoding "
                "%.32s cannot be searched for lease IDs and secrets",
                h->v[i].value);
  }
  fx_known sec;
  unsigned body_hit[2] = {0, 0};
  if (r->broken.code || !fx_known_secrets(&r->t, &sec)) {
    fx_req_cleanup(&v);
    if (!r->broken.code)
      ll_fail(&r->broken, LL_E_NOMEM, "out of memory recording an exchange");
    return;
  }
  const char *server =
      st == LL_OK ? ll_headers_get(&resp->headers, "Server") : NULL;
  if (server && !r->server[0]) {
    /* redacted before it is cut to size: not even a prefix of a secret */
    ll_buf b = {0};
    fx_scrub_bytes(&r->ids, &sec, server, strlen(server), &b);
    ll_buf_put(&b, "", 0);
    ll_strlcpy(r->server, b.oom ? "?" : b.p, sizeof r->server);
    free(b.p);
  }
  cJSON *raw = build(r, q, &v, st, err, resp, &sec, body_hit);
  fx_req_cleanup(&v);
  cJSON *clean = raw ? ll_sanitize_row(raw, (const char *const *)r->ids.v,
                                       (const char *const *)r->ids.ph, r->ids.n)
                     : NULL;
  cJSON_Delete(raw);
  if (clean && !redact_exchange(clean, &sec, body_hit)) {
    cJSON_Delete(clean);
    clean = NULL;
  }
  fx_known_free(&sec);
  if (!clean || !cJSON_AddItemToArray(r->exchanges, clean)) {
    cJSON_Delete(clean);
    if (!r->broken.code) /* a refusal of build's says why itself */
      ll_fail(&r->broken, LL_E_NOMEM, "out of memory recording an exchange");
    return;
  }
  r->dirty = 1;
}

static ll_status rec_exchange(ll_transport *t, const ll_http_request *req,
                              ll_http_response *resp, ll_error *err) {
  recorder *r = t->impl;
  ll_status st = r->inner->exchange(r->inner, req, resp, err);
  keep(r, req, st, err, resp);
  return st;
}

static ll_status rec_finish(ll_transport *t, ll_error *err) {
  recorder *r = t->impl;
  if (r->broken.code) {
    *err = r->broken;
    return r->broken.code;
  }
  if (r->written ? !r->dirty : cJSON_GetArraySize(r->exchanges) == 0)
    return LL_OK; /* nothing new; a run that sent nothing writes no file */
  const char *kind = r->label;
  if (!kind && t->endpoint_kind)
    kind = t->endpoint_kind(t->run_ctx);
  char started[40], source[600];
  ll_clock_format_utc(r->t0_utc_ms, started, sizeof started);
  snprintf(source, sizeof source,
           "recorded by leaselua %s (%s, %s) with --record from a%s %s "
           "endpoint%s%s%s, starting %s",
           LL_VERSION, ll_http_curl_version(), ll_http_ssl_version(),
           kind && kind[0] == 'e' ? "n" : "", kind ? kind : "unknown",
           r->server[0] ? " (server " : "", r->server, r->server[0] ? ")" : "",
           started);
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "format", LL_FIXTURE_FORMAT);
  cJSON_AddStringToObject(root, "endpoint_kind", kind ? kind : "emulator");
  cJSON_AddStringToObject(root, "description", r->description);
  cJSON_AddStringToObject(root, "source", source);
  cJSON_AddStringToObject(root, "started_utc", started);
  if (r->ctx && r->ctx->has_target)
    cJSON_AddItemToObject(root, "target",
                          ll_fixture_context_json(r->ctx, "target"));
  if (r->ctx && r->ctx->has_flow)
    cJSON_AddItemToObject(root, "flow",
                          ll_fixture_context_json(r->ctx, "flow"));
  cJSON_AddItemReferenceToObject(root, "exchanges", r->exchanges);
  char *text = ll_fixture_print(root);
  cJSON_Delete(root);
  if (!text)
    return ll_fail(err, LL_E_NOMEM, "out of memory printing a fixture");
  /* The same refusal as the ledger's: no lease ID survives, nor a sig=,
   * nor the run's credential (each was replaced; this catches a bug). */
  fx_known sec;
  char what[128];
  ll_status st = LL_OK;
  if (!fx_known_secrets(&r->t, &sec))
    st = ll_fail(err, LL_E_NOMEM, "out of memory checking a fixture");
  else if (ll_secret_scan(text, strlen(text), (const char *const *)r->ids.v,
                          r->ids.n, (const char *const *)sec.v, sec.n, what,
                          sizeof what) > 0)
    st = ll_fail(err, LL_E_INTERNAL,
                 "fixture %.200s not written: %s survived sanitizing", r->path,
                 what);
  if (st == LL_OK)
    st = fx_place_write(&r->place, text, err);
  free(text);
  fx_known_free(&sec);
  if (st == LL_OK) {
    r->written = 1;
    r->dirty = 0;
  }
  return st;
}

static void rec_free(ll_transport *t) {
  recorder *r = t->impl;
  fx_place_close(&r->place);
  ll_transport_free(r->inner);
  cJSON_Delete(r->exchanges);
  free(r->path);
  free(r->account_path);
  free(r->label);
  free(r->description);
  free(r->ctx);
  fx_known_free(&r->ids);
  free(r);
}

ll_transport *ll_fixture_record_new(ll_transport *inner, const char *path,
                                    ll_clock *clock, const char *account_path,
                                    const char *label, const char *description,
                                    ll_error *err) {
  recorder *r = inner && path && clock ? calloc(1, sizeof *r) : NULL;
  if (!r) {
    ll_transport_free(inner);
    ll_fail(err, inner && path && clock ? LL_E_NOMEM : LL_E_USAGE,
            "recording needs a transport, a file and a clock");
    return NULL;
  }
  r->t.impl = r;
  r->inner = inner;
  r->clock = clock;
  r->place.dirfd = -1;
  r->path = strdup(path);
  r->account_path = strdup(account_path ? account_path : "");
  r->label = label ? strdup(label) : NULL;
  r->description =
      strdup(description && *description ? description
                                         : "a run recorded with --record");
  r->exchanges = cJSON_CreateArray();
  if (!r->path || !r->account_path || !r->description || !r->exchanges ||
      (label && !r->label) || strlen(path) > 1000) {
    ll_fail(err, LL_E_USAGE, "cannot record to %.200s", path);
    rec_free(&r->t);
    return NULL;
  }
  if (fx_place_open(&r->place, r->path, err) != LL_OK) {
    rec_free(&r->t);
    return NULL;
  }
  r->t0_ns = ll_clock_mono_ns(clock);
  r->t0_utc_ms = ll_clock_utc_ms(clock);
  r->t.exchange = rec_exchange;
  r->t.free = rec_free;
  r->t.finish = rec_finish;
  return &r->t;
}

ll_status ll_fixture_record_context(ll_transport *t,
                                    const ll_fixture_context *c,
                                    ll_error *err) {
  if (!t || t->finish != rec_finish || !c)
    return LL_OK;
  recorder *r = t->impl;
  if (!r->ctx && !(r->ctx = malloc(sizeof *r->ctx)))
    return ll_fail(err, LL_E_NOMEM, "out of memory");
  *r->ctx = *c;
  return LL_OK;
}
