/* The fixture format leaselua-fixture/1: the request view that replay
 * matches and recording keeps, and loading with clear errors. */
#define _GNU_SOURCE /* strcasestr */
#include "jsonx.h"
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "fixture_impl.h"

const char *const fx_request_headers[] = {"x-ms-version",
                                          "x-ms-blob-type",
                                          "x-ms-lease-action",
                                          "x-ms-lease-duration",
                                          "x-ms-lease-break-period",
                                          "x-ms-lease-id",
                                          "x-ms-proposed-lease-id",
                                          "if-match",
                                          "if-none-match",
                                          "if-modified-since",
                                          "if-unmodified-since",
                                          "x-ms-if-tags",
                                          NULL};

const char *const fx_response_headers[] = {"x-ms-request-id",
                                           "x-ms-version",
                                           "x-ms-lease-state",
                                           "x-ms-lease-status",
                                           "x-ms-lease-duration",
                                           "x-ms-lease-id",
                                           "x-ms-lease-time",
                                           "etag",
                                           "last-modified",
                                           "content-length",
                                           "content-type",
                                           "x-ms-error-code",
                                           "server",
                                           "date",
                                           NULL};

int fx_is_lease_header(const char *name) {
  return strcmp(name, "x-ms-lease-id") == 0 ||
         strcmp(name, "x-ms-proposed-lease-id") == 0;
}

/* ---- the request view -------------------------------------------------- */

void fx_req_cleanup(fx_req *r) {
  free(r->path);
  free(r->query);
  ll_headers_cleanup(&r->headers);
  memset(r, 0, sizeof *r);
}

void fx_req_line(const fx_req *r, char *buf, size_t cap) {
  snprintf(buf, cap, "%s %s%s%s", r->method, r->path ? r->path : "?",
           r->query && *r->query ? "?" : "", r->query ? r->query : "");
}

/* Keeps the parameters that name the operation; drops everything else, a
 * SAS (sv, sig, se, ...) included. */
static char *filter_query(const char *q, size_t n) {
  char *out = malloc(n + 1);
  size_t o = 0, i = 0;
  if (!out)
    return NULL;
  while (i < n) {
    size_t k = i;
    while (k < n && q[k] != '&')
      k++;
    size_t key = strcspn(q + i, "=&");
    if (key > k - i)
      key = k - i;
    if ((key == 4 && strncmp(q + i, "comp", 4) == 0) ||
        (key == 7 && strncmp(q + i, "restype", 7) == 0)) {
      if (o)
        out[o++] = '&';
      memcpy(out + o, q + i, k - i);
      o += k - i;
    }
    i = k + 1;
  }
  out[o] = '\0';
  return out;
}

ll_status fx_req_from_http(const ll_http_request *q, const char *account_path,
                           fx_req *out, ll_error *err) {
  memset(out, 0, sizeof *out);
  ll_headers_init(&out->headers);
  const char *u = q->url ? strstr(q->url, "://") : NULL;
  if (!q->method || !u)
    return ll_fail(err, LL_E_USAGE, "request without method or URL");
  ll_strlcpy(out->method, q->method, sizeof out->method);
  const char *path = strchr(u + 3, '/');
  if (!path)
    path = "/";
  size_t plen = strcspn(path, "?#");
  size_t alen = account_path ? strlen(account_path) : 0;
  if (alen > 0 && plen >= alen && strncmp(path, account_path, alen) == 0 &&
      (plen == alen || path[alen] == '/')) {
    path += alen;
    plen -= alen;
  }
  out->path = plen ? strndup(path, plen) : strdup("/");
  const char *qs = path[plen] == '?' ? path + plen + 1 : "";
  out->query = filter_query(qs, strcspn(qs, "#"));
  ll_status st = out->path && out->query ? LL_OK : LL_E_NOMEM;
  for (const char *const *h = fx_request_headers; *h && st == LL_OK; h++) {
    const char *v = ll_headers_get(&q->headers, *h);
    if (v)
      st = ll_headers_add(&out->headers, *h, v);
  }
  if (st == LL_OK && q->body_len > 0) {
    out->has_body = 1;
    st = ll_sha256_hex(q->body, q->body_len, out->body_sha);
  }
  if (st != LL_OK) {
    fx_req_cleanup(out);
    return ll_fail(err, st, "out of memory reading a request");
  }
  return LL_OK;
}

/* ---- loading ----------------------------------------------------------- */

typedef struct {
  const char *name;
  size_t idx; /* 1-based exchange, 0: top level */
  ll_error *err;
} ctx;

static ll_status bad(const ctx *c, const char *fmt, ...) LL_PRINTF(2, 3);
static ll_status bad(const ctx *c, const char *fmt, ...) {
  char what[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (c->idx)
    return ll_fail(c->err, LL_E_PARSE, "fixture %s: exchange %zu: %s", c->name,
                   c->idx, what);
  return ll_fail(c->err, LL_E_PARSE, "fixture %s: %s", c->name, what);
}
static ll_status need_str(const ctx *c, const cJSON *o, const char *k,
                          const char **out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  if (!v)
    return bad(c, "'%s' is missing", k);
  if (!cJSON_IsString(v) || !v->valuestring[0])
    return bad(c, "'%s' must be a non-empty string", k);
  *out = v->valuestring;
  return LL_OK;
}

static ll_status headers(const ctx *c, const cJSON *o, const char *where,
                         int request, ll_headers *out) {
  const cJSON *hs = cJSON_GetObjectItemCaseSensitive(o, "headers");
  if (!hs)
    return LL_OK;
  if (!cJSON_IsObject(hs))
    return bad(c, "%s.headers must be an object", where);
  const cJSON *h;
  cJSON_ArrayForEach(h, hs) {
    char name[64];
    /* a response's header the service sent more than once: every copy,
     * in order (fixture_record.c), each a header of its own again */
    int copies = !request && cJSON_IsArray(h) && cJSON_GetArraySize(h) > 1;
    const cJSON *e = NULL;
    if (copies)
      cJSON_ArrayForEach(e, h) {
        if (!cJSON_IsString(e))
          return bad(c,
                     "%s header '%.60s' must be a string or an array of "
                     "two or more strings",
                     where, h->string);
      }
    if (!copies && !cJSON_IsString(h))
      return bad(c, "%s header '%.60s' must be a string%s", where, h->string,
                 request ? "" : " or an array of two or more strings");
    ll_strlcpy(name, h->string, sizeof name);
    for (char *p = name; *p; p++)
      *p = (char)tolower((unsigned char)*p);
    int known = !request;
    for (const char *const *w = fx_request_headers; request && *w; w++)
      known |= strcmp(*w, name) == 0;
    if (!known)
      return bad(c,
                 "request header '%s' is not one a fixture keeps (see "
                 "fixtures/README.md): replay could never match it",
                 name);
    char ph[FX_NAME_MAX];
    if (request && fx_is_lease_header(name) &&
        !fx_placeholder(h->valuestring, ph))
      return bad(c, "request header %s must be a {{lease:ALIAS}} placeholder",
                 name);
    for (e = copies ? h->child : h; e; e = copies ? e->next : NULL)
      if (ll_headers_add(out, name, e->valuestring) != LL_OK)
        return ll_fail(c->err, LL_E_NOMEM, "out of memory loading a fixture");
  }
  return LL_OK;
}

static ll_status number(const ctx *c, const cJSON *o, const char *k,
                        int required, double *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  *out = 0;
  if (!v && !required)
    return LL_OK;
  if (!v)
    return bad(c, "'%s' is missing", k);
  if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1e10)
    return bad(c, "'%s' must be a number of milliseconds >= 0", k);
  *out = v->valuedouble;
  return LL_OK;
}

static ll_status request(const ctx *c, const cJSON *rq, fx_req *r) {
  const char *m = NULL, *p = NULL;
  ll_headers_init(&r->headers);
  if (!cJSON_IsObject(rq))
    return bad(c, "'request' is missing or not an object");
  ll_status st = need_str(c, rq, "method", &m);
  if (st == LL_OK)
    st = need_str(c, rq, "path", &p);
  if (st != LL_OK)
    return st;
  if (strlen(m) >= sizeof r->method)
    return bad(c, "request.method '%.20s' is not an HTTP method", m);
  if (p[0] != '/')
    return bad(c, "request.path must start with '/' (relative to the "
                  "account)");
  const cJSON *q = cJSON_GetObjectItemCaseSensitive(rq, "query");
  if (q && !cJSON_IsString(q))
    return bad(c, "request.query must be a string");
  ll_strlcpy(r->method, m, sizeof r->method);
  r->path = strdup(p);
  r->query = strdup(q ? q->valuestring : "");
  if (!r->path || !r->query)
    return ll_fail(c->err, LL_E_NOMEM, "out of memory loading a fixture");
  if (strcasestr(r->query, "sig=")) /* any case, as the scan looks */
    return bad(c, "request.query holds a SAS signature (sig=)");
  st = headers(c, rq, "request", 1, &r->headers);
  if (st != LL_OK)
    return st;
  const cJSON *body = cJSON_GetObjectItemCaseSensitive(rq, "body");
  const char *sha = ll_json_str(rq, "body_sha256");
  if (body && !cJSON_IsString(body))
    return bad(c, "request.body must be a string");
  if (cJSON_GetObjectItemCaseSensitive(rq, "body_sha256") &&
      (!sha || strlen(sha) != 64))
    return bad(c, "request.body_sha256 must be 64 hex digits");
  if (body) {
    char got[LL_SHA256_HEX];
    if (ll_sha256_hex(body->valuestring, strlen(body->valuestring), got) !=
        LL_OK)
      return ll_fail(c->err, LL_E_INTERNAL, "sha256 failed");
    if (sha && strcmp(sha, got) != 0)
      return bad(c, "request.body_sha256 is not the SHA-256 of request.body");
    sha = got;
    memcpy(r->body_sha, got, sizeof got);
  } else if (sha) {
    ll_strlcpy(r->body_sha, sha, sizeof r->body_sha);
  }
  r->has_body = sha != NULL;
  return LL_OK;
}

static ll_status response(const ctx *c, const cJSON *rs, fx_exchange *x) {
  if (!cJSON_IsObject(rs))
    return bad(c, "'response' must be an object");
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(rs, "status");
  /* range first: converting an out-of-range double is undefined */
  if (!cJSON_IsNumber(s) || s->valuedouble < 100 || s->valuedouble > 599 ||
      s->valuedouble != (double)(long)s->valuedouble)
    return bad(c, "response.status must be an HTTP status (100-599)");
  x->status = (long)s->valuedouble;
  ll_status st = headers(c, rs, "response", 0, &x->headers);
  if (st != LL_OK)
    return st;
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(rs, "body");
  const cJSON *b64 = cJSON_GetObjectItemCaseSensitive(rs, "body_base64");
  if ((b && !cJSON_IsString(b)) || (b64 && !cJSON_IsString(b64)) || (b && b64))
    return bad(c, "response needs at most one of body (text) and "
                  "body_base64, as a string");
  if (b64) {
    st = fx_unbase64(b64->valuestring, &x->body, &x->body_len);
    if (st != LL_OK)
      return bad(c, "response.body_base64 is not base64");
  } else {
    const char *t = b ? b->valuestring : "";
    x->body_len = strlen(t);
    x->body = malloc(x->body_len + 1);
    if (!x->body)
      return ll_fail(c->err, LL_E_NOMEM, "out of memory loading a fixture");
    memcpy(x->body, t, x->body_len + 1);
  }
  return LL_OK;
}

static ll_status exchange(const ctx *c, const cJSON *e, fx_exchange *x,
                          double prev_t) {
  x->emitted = 1;
  x->outcome = LL_OUTCOME_RESPONSE;
  ll_headers_init(&x->headers);
  if (!cJSON_IsObject(e))
    return bad(c, "not an object");
  ll_status st = number(c, e, "t_ms", 1, &x->t_ms);
  if (st == LL_OK)
    st = number(c, e, "elapsed_ms", 0, &x->elapsed_ms);
  if (st != LL_OK)
    return st;
  if (x->t_ms < prev_t)
    return bad(c, "t_ms %.1f is earlier than the exchange before it (%.1f)",
               x->t_ms, prev_t);
  st = request(c, cJSON_GetObjectItemCaseSensitive(e, "request"), &x->req);
  if (st != LL_OK)
    return st;
  const cJSON *rs = cJSON_GetObjectItemCaseSensitive(e, "response");
  const cJSON *te = cJSON_GetObjectItemCaseSensitive(e, "transport_error");
  if ((rs != NULL) == (te != NULL))
    return bad(c, "needs exactly one of 'response' and 'transport_error'");
  const cJSON *em = cJSON_GetObjectItemCaseSensitive(e, "emitted_requests");
  if (em &&
      (!cJSON_IsNumber(em) || em->valuedouble < 0 || em->valuedouble > 10 ||
       em->valuedouble != (double)(int)em->valuedouble))
    return bad(c, "emitted_requests must be an integer 0-10");
  if (rs)
    st = response(c, rs, x);
  if (te) {
    const char *oc = ll_json_str(e, "outcome");
    if (!cJSON_IsString(te) || !te->valuestring[0])
      return bad(c, "transport_error must be a non-empty string");
    if (cJSON_GetObjectItemCaseSensitive(e, "outcome") &&
        (!oc || (strcmp(oc, "UNKNOWN") != 0 && strcmp(oc, "NOT_SENT") != 0)))
      return bad(c, "outcome must be UNKNOWN or NOT_SENT");
    x->outcome = oc && strcmp(oc, "NOT_SENT") == 0 ? LL_OUTCOME_NOT_SENT
                                                   : LL_OUTCOME_UNKNOWN;
    x->emitted = x->outcome == LL_OUTCOME_NOT_SENT ? 0 : 1;
    x->transport_error = strdup(te->valuestring);
    if (!x->transport_error)
      return ll_fail(c->err, LL_E_NOMEM, "out of memory loading a fixture");
  }
  if (em)
    x->emitted = (int)em->valuedouble;
  return st;
}

void fx_fixture_free(fx_fixture *f) {
  for (size_t i = 0; f->x && i < f->n; i++) {
    fx_req_cleanup(&f->x[i].req);
    free(f->x[i].transport_error);
    ll_headers_cleanup(&f->x[i].headers);
    free(f->x[i].body);
  }
  free(f->x);
  memset(f, 0, sizeof *f);
}

static ll_status load_tree(const cJSON *j, fx_fixture *f, ctx *c) {
  const char *fmt = ll_json_str(j, "format"), *kind = NULL, *s = NULL;
  if (!cJSON_IsObject(j))
    return bad(c, "not a JSON object");
  if (!fmt || strcmp(fmt, LL_FIXTURE_FORMAT) != 0)
    return bad(c, "format is '%.40s', expected '" LL_FIXTURE_FORMAT "'",
               fmt ? fmt : "(missing)");
  ll_status st = need_str(c, j, "endpoint_kind", &kind);
  if (st == LL_OK && strcmp(kind, "emulator") != 0 &&
      strcmp(kind, "azure") != 0 && strcmp(kind, "documented") != 0)
    st = bad(c, "endpoint_kind '%.20s' must be emulator, azure or documented",
             kind);
  if (st == LL_OK)
    st = need_str(c, j, "description", &s);
  if (st == LL_OK)
    st = need_str(c, j, "source", &s);
  if (st != LL_OK)
    return st;
  ll_strlcpy(f->label, kind, sizeof f->label);
  f->started_utc_ms = 1798761600000; /* 2027-01-01T00:00:00Z */
  if (cJSON_GetObjectItemCaseSensitive(j, "started_utc") &&
      !fx_parse_utc(ll_json_str(j, "started_utc"), &f->started_utc_ms))
    return bad(c, "started_utc must be a UTC time like "
                  "2026-11-30T07:09:39.123Z");
  const cJSON *xs = cJSON_GetObjectItemCaseSensitive(j, "exchanges");
  if (!cJSON_IsArray(xs))
    return bad(c, "'exchanges' is missing or not an array");
  size_t n = (size_t)cJSON_GetArraySize(xs);
  f->x = calloc(n ? n : 1, sizeof *f->x);
  if (!f->x)
    return ll_fail(c->err, LL_E_NOMEM, "out of memory loading a fixture");
  const cJSON *e;
  double prev = 0;
  cJSON_ArrayForEach(e, xs) {
    c->idx = f->n + 1;
    st = exchange(c, e, &f->x[f->n], prev);
    f->n++;
    if (st != LL_OK)
      return st;
    prev = f->x[f->n - 1].t_ms;
  }
  return LL_OK;
}

ll_status fx_load(const char *text, size_t len, const char *name, fx_fixture *f,
                  ll_error *err) {
  memset(f, 0, sizeof *f);
  ctx c = {name ? name : "(text)", 0, err};
  ll_alloc_init();
  unsigned long mark = ll_alloc_failures();
  cJSON *j = cJSON_ParseWithLength(text, len);
  if (ll_alloc_failed_since(mark)) { /* not the fixture's fault */
    cJSON_Delete(j);
    return ll_fail(err, LL_E_NOMEM, "out of memory loading fixture %s", c.name);
  }
  if (!j) {
    const char *at = cJSON_GetErrorPtr();
    long off = at && at >= text && at <= text + len ? (long)(at - text) : -1;
    return bad(&c, "not valid JSON (near byte %ld)", off);
  }
  ll_status st = load_tree(j, f, &c);
  cJSON_Delete(j);
  if (st != LL_OK)
    fx_fixture_free(f);
  return st;
}
