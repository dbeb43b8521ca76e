/* Strict replay: the transport is served by a fixture, in order. A request
 * that does not match the next exchange is answered with nothing but a
 * diff (LL_E_REPLAY), and so is every call after it. The virtual clock
 * moves to each exchange's t_ms and on by its elapsed_ms: nothing sleeps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blob.h"
#include "fixture_impl.h"
#include "input.h"

#define MAX_BINDINGS 32

typedef struct {
  char name[FX_NAME_MAX];
  char id[LL_GUID_LEN];
} binding;

typedef struct {
  ll_transport t;
  fx_fixture f;
  char *file;
  char *account_path;
  ll_clock *clock; /* made here, owned by the caller */
  size_t next;     /* the exchange the next request must match */
  binding b[MAX_BINDINGS];
  size_t nb;
  int failed;
  ll_error failure;
  char *detail;
} replay;

static const char *bound_id(const binding *b, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(b[i].name, name) == 0)
      return b[i].id;
  return NULL;
}

static const char *bound_name(const binding *b, size_t n, const char *id) {
  for (size_t i = 0; i < n; i++)
    if (ll_lease_id_equal(b[i].id, id))
      return b[i].name;
  return NULL;
}

/* One header: a literal, or a lease placeholder binding one ID. The
 * tentative bindings of this exchange are appended to b[*n...]. */
static int header_ok(binding *b, size_t *n, const char *name, const char *ev,
                     const char *av) {
  char ph[FX_NAME_MAX];
  if (!ev || !av)
    return !ev && !av;
  if (!fx_is_lease_header(name) || !fx_placeholder(ev, ph))
    return strcmp(ev, av) == 0;
  const char *id = bound_id(b, *n, ph);
  if (id)
    return ll_lease_id_equal(id, av);
  if (bound_name(b, *n, av) || *n >= MAX_BINDINGS || strlen(av) >= LL_GUID_LEN)
    return 0;
  ll_strlcpy(b[*n].name, ph, sizeof b[*n].name);
  ll_strlcpy(b[*n].id, av, sizeof b[*n].id);
  (*n)++;
  return 1;
}

/* Matches x against a; on success the new bindings are kept. */
static int match(replay *r, const fx_exchange *x, const fx_req *a) {
  binding b[MAX_BINDINGS];
  size_t n = r->nb;
  memcpy(b, r->b, sizeof b);
  if (strcmp(x->req.method, a->method) != 0 ||
      strcmp(x->req.path, a->path) != 0 ||
      strcmp(x->req.query, a->query) != 0 || x->req.has_body != a->has_body ||
      (a->has_body && strcmp(x->req.body_sha, a->body_sha) != 0))
    return 0;
  for (const char *const *h = fx_request_headers; *h; h++)
    if (!header_ok(b, &n, *h, ll_headers_get(&x->req.headers, *h),
                   ll_headers_get(&a->headers, *h)))
      return 0;
  memcpy(r->b, b, sizeof b);
  r->nb = n;
  return 1;
}

/* How an actual lease ID is shown: never the ID itself. */
static void show_lease(const replay *r, const char *av, const char *ev,
                       char *buf, size_t cap) {
  char ph[FX_NAME_MAX];
  const char *name = bound_name(r->b, r->nb, av);
  if (name)
    snprintf(buf, cap, "{{lease:%s}}", name);
  else if (ev && fx_placeholder(ev, ph) && !bound_id(r->b, r->nb, ph))
    snprintf(buf, cap, "%s", ev); /* would bind on first appearance */
  else
    snprintf(buf, cap, "{{lease:?}} (an ID bound to no placeholder yet)");
}

static void diff_line(fx_buf *b, const char *e, const char *a) {
  if (e && a && strcmp(e, a) == 0) {
    ll_buf_printf(b, "\n    %s", e);
    return;
  }
  if (e)
    ll_buf_printf(b, "\n  - %s", e);
  if (a)
    ll_buf_printf(b, "\n  + %s", a);
}

/* The request as diff lines; x NULL: only the actual side. */
static void diff(const replay *r, const fx_exchange *x, const fx_req *a,
                 fx_buf *b) {
  char el[1024], al[1024], ev[600], av[600];
  if (x)
    fx_req_line(&x->req, el, sizeof el);
  fx_req_line(a, al, sizeof al);
  diff_line(b, x ? el : NULL, al);
  for (const char *const *h = fx_request_headers; *h; h++) {
    const char *e = x ? ll_headers_get(&x->req.headers, *h) : NULL;
    const char *v = ll_headers_get(&a->headers, *h);
    char shown[128];
    if (v && fx_is_lease_header(*h)) {
      show_lease(r, v, e, shown, sizeof shown);
      v = shown;
    }
    snprintf(ev, sizeof ev, "%s: %s", *h, e ? e : "");
    snprintf(av, sizeof av, "%s: %s", *h, v ? v : "");
    if (e || v)
      diff_line(b, e ? ev : NULL, v ? av : NULL);
  }
  snprintf(ev, sizeof ev, "body sha256: %s",
           x && x->req.has_body ? x->req.body_sha : "(no body)");
  snprintf(av, sizeof av, "body sha256: %s",
           a->has_body ? a->body_sha : "(no body)");
  if (x || a->has_body)
    diff_line(b, x ? ev : NULL, av);
}

static ll_status fail(replay *r, fx_buf *detail, ll_error *err) {
  r->failed = 1;
  free(r->detail);
  r->detail = detail->oom ? NULL : detail->p;
  if (detail->oom)
    free(detail->p);
  if (err)
    *err = r->failure;
  return LL_E_REPLAY;
}

static ll_status mismatch(replay *r, const fx_req *a, ll_error *err) {
  fx_buf b = {0};
  char al[512], el[512];
  size_t no = r->next + 1;
  fx_req_line(a, al, sizeof al);
  if (r->next >= r->f.n) {
    ll_fail(&r->failure, LL_E_REPLAY,
            "strict replay: request #%zu (%.120s) comes after the last of the "
            "%zu exchanges of %s: the recording made no such request (a "
            "hidden retry, or an added step?)",
            no, al, r->f.n, r->file);
    fx_puts(&b, r->failure.message);
    ll_buf_printf(&b, "\n  +++ actual: request #%zu, with no exchange left",
                  no);
    diff(r, NULL, a, &b);
    return fail(r, &b, err);
  }
  fx_req_line(&r->f.x[r->next].req, el, sizeof el);
  /* A recording from before the run conditioned its acquire and break
   * (If-Match, invariant 15) differs by that header alone: say so. */
  const char *act = ll_headers_get(&a->headers, "x-ms-lease-action");
  int unconditioned =
      act && (strcmp(act, "acquire") == 0 || strcmp(act, "break") == 0) &&
      ll_headers_get(&a->headers, "If-Match") &&
      !ll_headers_get(&r->f.x[r->next].req.headers, "If-Match");
  ll_fail(&r->failure, LL_E_REPLAY,
          "strict replay: request #%zu (%.100s) does not match exchange #%zu "
          "(%.100s) of %s%s",
          no, al, no, el, r->file,
          unconditioned ? " (its lease operation has no If-Match: recorded "
                          "before leaselua conditioned acquire and break on "
                          "the run's ETag; record it again)"
                        : "");
  fx_puts(&b, r->failure.message);
  ll_buf_printf(&b, "\n  --- expected: exchange #%zu of %s", no, r->file);
  ll_buf_printf(&b, "\n  +++ actual: request #%zu", no);
  diff(r, &r->f.x[r->next], a, &b);
  return fail(r, &b, err);
}

/* text with every {{lease:NAME}} replaced by the ID bound to NAME (a name
 * never bound gets a fresh random ID: a lease the run did not propose). */
static unsigned char *subst(replay *r, const unsigned char *in, size_t n,
                            size_t *out_n) {
  fx_buf b = {0};
  size_t i = 0;
  ll_buf_put(&b, "", 0);
  while (i < n) {
    const unsigned char *p = memchr(in + i, '{', n - i);
    size_t k = p ? (size_t)(p - in) : n;
    ll_buf_put(&b, (const char *)in + i, k - i);
    if (!p)
      break;
    const unsigned char *end = NULL;
    for (size_t j = k; j + 1 < n && j < k + 8 + FX_NAME_MAX + 2; j++)
      if (in[j] == '}' && in[j + 1] == '}') {
        end = in + j + 2;
        break;
      }
    char tok[40], name[FX_NAME_MAX];
    size_t len = end ? (size_t)(end - p) : 0;
    if (len && len < sizeof tok) {
      memcpy(tok, p, len);
      tok[len] = '\0';
    }
    if (!len || len >= sizeof tok || !fx_placeholder(tok, name)) {
      ll_buf_put(&b, (const char *)p, 1);
      i = k + 1;
      continue;
    }
    const char *id = bound_id(r->b, r->nb, name);
    if (!id && r->nb < MAX_BINDINGS && ll_guid_v4(r->b[r->nb].id) == LL_OK) {
      ll_strlcpy(r->b[r->nb].name, name, sizeof r->b[r->nb].name);
      id = r->b[r->nb++].id;
    }
    fx_puts(&b, id ? id : tok);
    i = k + len;
  }
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  *out_n = b.n;
  return (unsigned char *)b.p;
}

static int64_t ns(double ms) {
  return (int64_t)(ms * 1e6 + 0.5);
}

static ll_status serve(replay *r, const fx_exchange *x, ll_http_response *resp,
                       ll_error *err) {
  ll_clock_advance_to(r->clock, ns(x->t_ms));
  resp->mono_start_ns = ll_clock_mono_ns(r->clock);
  resp->utc_start_ms = ll_clock_utc_ms(r->clock);
  resp->emitted_requests = x->emitted;
  if (x->transport_error) {
    resp->outcome = x->outcome;
    snprintf(resp->transport_error, sizeof resp->transport_error, "%s",
             x->transport_error);
  } else {
    resp->outcome = LL_OUTCOME_RESPONSE;
    resp->status = x->status;
    for (size_t i = 0; i < x->headers.n; i++) {
      const char *v = x->headers.v[i].value;
      size_t n = 0;
      unsigned char *s = subst(r, (const unsigned char *)v, strlen(v), &n);
      ll_status st = s ? ll_headers_add(&resp->headers, x->headers.v[i].name,
                                        (const char *)s)
                       : LL_E_NOMEM;
      free(s);
      if (st != LL_OK)
        return ll_fail(err, LL_E_NOMEM, "out of memory serving a replay");
    }
    resp->body = subst(r, x->body, x->body_len, &resp->body_len);
    if (!resp->body)
      return ll_fail(err, LL_E_NOMEM, "out of memory serving a replay");
  }
  ll_clock_advance_to(r->clock, resp->mono_start_ns + ns(x->elapsed_ms));
  resp->mono_end_ns = ll_clock_mono_ns(r->clock);
  resp->utc_end_ms = ll_clock_utc_ms(r->clock);
  return LL_OK;
}

static ll_status replay_exchange(ll_transport *t, const ll_http_request *req,
                                 ll_http_response *resp, ll_error *err) {
  replay *r = t->impl;
  ll_http_response_cleanup(resp);
  if (r->failed) {
    *err = r->failure;
    return LL_E_REPLAY;
  }
  fx_req a;
  ll_status st = fx_req_from_http(req, r->account_path, &a, err);
  if (st != LL_OK)
    return st;
  if (r->next >= r->f.n || !match(r, &r->f.x[r->next], &a)) {
    st = mismatch(r, &a, err);
  } else {
    /* the request "left" as the recording says it did: the same hook as
     * the wire's, so a replay writes the ledger as a live run does */
    if (req->on_wire && r->f.x[r->next].emitted > 0)
      (void)req->on_wire(req->wire_ctx); /* the outcome row reports it */
    st = serve(r, &r->f.x[r->next++], resp, err);
  }
  fx_req_cleanup(&a);
  return st;
}

static ll_status replay_finish(ll_transport *t, ll_error *err) {
  replay *r = t->impl;
  if (r->failed) {
    *err = r->failure;
    return LL_E_REPLAY;
  }
  if (r->next >= r->f.n)
    return LL_OK;
  fx_buf b = {0};
  char line[512];
  fx_req_line(&r->f.x[r->next].req, line, sizeof line);
  ll_fail(&r->failure, LL_E_REPLAY,
          "strict replay: %zu of the %zu exchanges of %s were never requested "
          "(a skipped step?), from #%zu (%.120s)",
          r->f.n - r->next, r->f.n, r->file, r->next + 1, line);
  fx_puts(&b, r->failure.message);
  for (size_t i = r->next; i < r->f.n; i++) {
    const char *act =
        ll_headers_get(&r->f.x[i].req.headers, "x-ms-lease-action");
    fx_req_line(&r->f.x[i].req, line, sizeof line);
    ll_buf_printf(&b, "\n  - #%zu %s%s%s", i + 1, line,
                  act ? " lease-action " : "", act ? act : "");
  }
  return fail(r, &b, err);
}

static const char *replay_detail(ll_transport *t) {
  replay *r = t->impl;
  return r->failed ? (r->detail ? r->detail : r->failure.message) : NULL;
}

static void replay_free(ll_transport *t) {
  replay *r = t->impl;
  fx_fixture_free(&r->f);
  free(r->file);
  free(r->account_path);
  free(r->detail);
  memset(r->b, 0, sizeof r->b);
  free(r);
}

ll_transport *ll_fixture_replay_text(const char *text, size_t len,
                                     const char *name, const char *account_path,
                                     ll_clock **out_clock, char *label,
                                     size_t label_cap, ll_error *err) {
  *out_clock = NULL;
  replay *r = calloc(1, sizeof *r);
  if (!r) {
    ll_fail(err, LL_E_NOMEM, "out of memory for a replay");
    return NULL;
  }
  r->t.impl = r;
  r->file = strdup(name ? name : "(fixture)");
  r->account_path = strdup(account_path ? account_path : "");
  if (!r->file || !r->account_path) {
    ll_fail(err, LL_E_NOMEM, "out of memory for a replay");
    replay_free(&r->t);
    return NULL;
  }
  if (fx_load(text, len, r->file, &r->f, err) != LL_OK) {
    replay_free(&r->t);
    return NULL;
  }
  r->clock = ll_clock_new_virtual(r->f.started_utc_ms);
  if (!r->clock) {
    ll_fail(err, LL_E_NOMEM, "out of memory for the virtual clock");
    replay_free(&r->t);
    return NULL;
  }
  if (label)
    ll_strlcpy(label, r->f.label, label_cap);
  r->t.exchange = replay_exchange;
  r->t.free = replay_free;
  r->t.finish = replay_finish;
  r->t.detail = replay_detail;
  *out_clock = r->clock;
  return &r->t;
}

ll_transport *ll_fixture_replay_open(const char *path, const char *account_path,
                                     ll_clock **out_clock, char *label,
                                     size_t label_cap, ll_error *err) {
  *out_clock = NULL;
  ll_buf b = {0};
  ll_status st =
      ll_input_read(path, "fixture", "--replay", LL_FIXTURE_FILE_MAX, &b, err);
  if (st != LL_OK) {
    free(b.p);
    return NULL;
  }
  ll_transport *t = ll_fixture_replay_text(b.p, b.n, path, account_path,
                                           out_clock, label, label_cap, err);
  free(b.p);
  return t;
}
