/* The libcurl transport: one attempt per request on one reused easy handle,
 * a fresh connection for every mutation, and a count of the request heads
 * that actually left (DESIGN.md section 2, invariants 1 and 10). */
#include "http.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_ca.h"
#include "http_head.h"
#include "input.h"
#include "secret.h"
#include "url.h"

#define HEADER_CAP_DEFAULT (64u * 1024u)
#define CONNECT_TIMEOUT_DEFAULT 10000L
#define TOTAL_TIMEOUT_DEFAULT 60000L
/* A read reuses a connection only if it has been idle for less than this
 * many whole seconds (CURLOPT_MAXAGE_CONN compares idle time truncated to
 * seconds, so 2 means under 3 s). Servers close idle connections on their
 * own clock (Node's http server, so Azurite, after 5 s): a read sent just as
 * the server closes is one libcurl 7.88 silently sends again, and its row
 * becomes EVIDENCE_ERROR. A poller that slept 5 s would race that close;
 * a fresh connection after a long idle never does. */
#define MAX_IDLE_REUSE_DEFAULT 2L

typedef struct {
  ll_transport t;
  CURL *curl;
  char errbuf[CURL_ERROR_SIZE];
  ll_clock *clock; /* borrowed */
  /* The CA file's bytes, read once at creation (input.h) and handed to
   * libcurl as a blob: what was checked is what is trusted, and a file
   * swapped during the run changes nothing. NULL: the system's CAs. */
  ll_buf ca;
  /* The same bytes parsed once (http_ca.c), added to each new
   * connection's store instead of being parsed again for it. NULL when
   * libcurl's TLS backend is not OpenSSL or the bytes are not plainly
   * certificates: then the bytes go to libcurl as CURLOPT_CAINFO_BLOB,
   * errors and all. */
  void *ca_certs;
  /* The last URL that passed ll_http_check_url, which depends on the text
   * alone: the same URL again (a poller's reads) is not parsed again. */
  char *checked_url;
  char *proxy, *noproxy; /* CURLOPT_PROXY, CURLOPT_NOPROXY; "": none */
  long connect_ms, total_ms, max_idle_s;
  size_t body_cap, header_cap;

  /* Per exchange: what the callbacks fill. */
  ll_http_response *resp;
  const ll_http_request *req; /* its on_wire hook */
  int wired;                  /* on_wire was called for this exchange */
  size_t body_alloc;
  size_t header_bytes;
  int header_overflow, body_overflow, nomem;
  const unsigned char *up;
  size_t up_len, up_off;
} http_transport;

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_FAILED_INIT;
static char curl_version_str[64] = "libcurl/unknown";

static void global_init(void) {
  global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
  const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
  if (v && v->version)
    snprintf(curl_version_str, sizeof curl_version_str, "libcurl/%s",
             v->version);
}

const char *ll_http_curl_version(void) {
  pthread_once(&global_once, global_init);
  return curl_version_str;
}

const char *ll_http_ssl_version(void) {
  pthread_once(&global_once, global_init);
  const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
  return v && v->ssl_version ? v->ssl_version : "none";
}

const char *ll_outcome_name(ll_outcome o) {
  switch (o) {
  case LL_OUTCOME_RESPONSE:
    return "RESPONSE";
  case LL_OUTCOME_NOT_SENT:
    return "NOT_SENT";
  case LL_OUTCOME_UNKNOWN:
    return "UNKNOWN";
  }
  return "UNKNOWN";
}

/* Nothing has happened yet, so the honest default outcome is NOT_SENT. */
void ll_http_response_init(ll_http_response *r) {
  memset(r, 0, sizeof *r);
  r->outcome = LL_OUTCOME_NOT_SENT;
  ll_headers_init(&r->headers);
}

void ll_http_response_cleanup(ll_http_response *r) {
  ll_headers_cleanup(&r->headers);
  free(r->body);
  ll_http_response_init(r);
}

void ll_transport_free(ll_transport *t) {
  if (t && t->free)
    t->free(t);
}

/* ---- URL policy (invariant 10) ---------------------------------------- */

/* The rule and its messages are url.h's: they name only the scheme or
 * host, as the query may hold a SAS signature. */
ll_status ll_http_check_url(const char *url, ll_error *err) {
  return ll_url_check(url, LL_URL_HTTP_LOOPBACK, err);
}

/* ---- libcurl callbacks: collect in C, never log header values ---------- */

/* The request's on_wire hook, once per exchange: what the run lets wait
 * until the request is on its way is written now. 0, or -1 when that
 * failed (the run's ledger is then unusable): a request not yet on its way
 * is then not sent. */
static int on_wire(http_transport *h) {
  if (!h->req || !h->req->on_wire || h->wired)
    return 0;
  h->wired = 1;
  return h->req->on_wire(h->req->wire_ctx) == 0 ? 0 : -1;
}

/* A new connection is about to be set up: curl starts resolving a name
 * (a reused connection resolves none), or opens a socket (every new
 * connection, the name resolved or cached). The set-up (DNS, TCP, TLS, a
 * proxy's CONNECT) can last up to the connect timeout, so what waits for
 * the request to be on its way is written first; if that fails, nothing
 * is connected and the request is not sent. */
static int on_resolve(void *resolver, void *reserved, void *ud) {
  (void)resolver;
  (void)reserved;
  return on_wire(ud) == 0 ? 0 : 1;
}

static int on_socket(void *ud, curl_socket_t fd, curlsocktype purpose) {
  (void)fd;
  (void)purpose;
  return on_wire(ud) == 0 ? CURL_SOCKOPT_OK : CURL_SOCKOPT_ERROR;
}

/* One CURLINFO_HEADER_OUT callback per request head that leaves; a silent
 * re-send on a fresh connection shows up as a second one. An http(s)
 * proxy's tunnel request ("CONNECT host:port", sent to the proxy before
 * the request) is not a request to the service and is not counted: a
 * refused CONNECT leaves 0 (NOT_SENT, the request never left), an
 * established one 1. Everything else (including curl's informational
 * text) is dropped, so nothing reaches stderr although CURLOPT_VERBOSE is
 * on. */
static int on_debug(CURL *c, curl_infotype type, char *data, size_t size,
                    void *ud) {
  (void)c;
  http_transport *h = ud;
  if (type == CURLINFO_HEADER_OUT &&
      !(size >= 8 && memcmp(data, "CONNECT ", 8) == 0)) {
    h->resp->emitted_requests++;
    (void)on_wire(h); /* the head left on a connection already open: a
                         failure is the next append's to report */
  }
  return 0;
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *ud) {
  http_transport *h = ud;
  size_t n = size * nitems;
  h->header_bytes += n;
  if (h->header_bytes > h->header_cap) {
    h->header_overflow = 1;
    return 0;
  }
  if (!ll_http_head_line(&h->resp->headers, buf, n)) {
    h->nomem = 1;
    return 0;
  }
  return n;
}

static size_t on_write(char *buf, size_t size, size_t nmemb, void *ud) {
  http_transport *h = ud;
  ll_http_response *r = h->resp;
  size_t n = size * nmemb;
  size_t take = n;
  if (r->body_len + n > h->body_cap) {
    take = h->body_cap - r->body_len;
    h->body_overflow = 1;
  }
  if (r->body_len + take + 1 > h->body_alloc) {
    size_t cap = h->body_alloc ? h->body_alloc : 1024;
    while (cap < r->body_len + take + 1)
      cap *= 2;
    unsigned char *nb = realloc(r->body, cap);
    if (!nb) {
      h->nomem = 1;
      return 0;
    }
    r->body = nb;
    h->body_alloc = cap;
  }
  memcpy(r->body + r->body_len, buf, take);
  r->body_len += take;
  r->body[r->body_len] = '\0';
  return h->body_overflow ? 0 : n;
}

/* No seek callback on purpose: should libcurl ever try to re-send a PUT
 * (which needs a rewind), the rewind fails and nothing is re-sent. */
static size_t on_read(char *buf, size_t size, size_t nitems, void *ud) {
  http_transport *h = ud;
  size_t room = size * nitems, left = h->up_len - h->up_off;
  size_t n = left < room ? left : room;
  if (n)
    memcpy(buf, h->up + h->up_off, n);
  h->up_off += n;
  return n;
}

/* ---- one exchange ----------------------------------------------------- */

static ll_status build_headers(const ll_headers *hs, int is_put,
                               struct curl_slist **out, ll_error *err) {
  struct curl_slist *list = NULL;
  ll_status st = LL_OK;
  int has_expect = 0;
  for (size_t i = 0; i < hs->n; i++) {
    const char *name = hs->v[i].name,
               *val = hs->v[i].value ? hs->v[i].value : "";
    if (!name || !*name || strpbrk(name, ": \t\r\n") || strpbrk(val, "\r\n")) {
      /* name only: the value may be a credential */
      st = ll_fail(err, LL_E_USAGE, "request header '%.64s' is malformed",
                   name ? name : "");
      goto cleanup;
    }
    if (strcasecmp(name, "Expect") == 0)
      has_expect = 1;
    size_t nn = strlen(name), vn = strlen(val);
    char *line = malloc(nn + vn + 3);
    if (!line) {
      st = ll_fail(err, LL_E_NOMEM, "out of memory building headers");
      goto cleanup;
    }
    /* "Name;" is curl's spelling of a header sent with an empty value. */
    memcpy(line, name, nn);
    if (vn) {
      memcpy(line + nn, ": ", 2);
      memcpy(line + nn + 2, val, vn + 1);
    } else {
      memcpy(line + nn, ";", 2);
    }
    struct curl_slist *nl = curl_slist_append(list, line);
    free(line);
    if (!nl) {
      st = ll_fail(err, LL_E_NOMEM, "out of memory building headers");
      goto cleanup;
    }
    list = nl;
  }
  if (is_put && !has_expect) {
    /* no 100-continue round trip: the body goes out with the head */
    struct curl_slist *nl = curl_slist_append(list, "Expect:");
    if (!nl) {
      st = ll_fail(err, LL_E_NOMEM, "out of memory building headers");
      goto cleanup;
    }
    list = nl;
  }
cleanup:
  if (st != LL_OK) {
    curl_slist_free_all(list);
    list = NULL;
  }
  *out = list;
  return st;
}

/* curl's error text names hosts and ports, not URLs; cut at any '?' anyway
 * so that a query string can never leak through it. */
static void set_transport_error(ll_http_response *r, CURLcode rc,
                                const char *errbuf) {
  char detail[CURL_ERROR_SIZE];
  ll_strlcpy(detail, errbuf, sizeof detail);
  detail[strcspn(detail, "?\r\n")] = '\0';
  if (*detail)
    snprintf(r->transport_error, sizeof r->transport_error, "%.120s: %.120s",
             curl_easy_strerror(rc), detail);
  else
    snprintf(r->transport_error, sizeof r->transport_error, "%s",
             curl_easy_strerror(rc));
}

#define SETOPT(opt, val)                                                       \
  do {                                                                         \
    if (rc == CURLE_OK)                                                        \
      rc = curl_easy_setopt(c, opt, val);                                      \
  } while (0)

static ll_status http_exchange(ll_transport *t, const ll_http_request *req,
                               ll_http_response *resp, ll_error *err) {
  http_transport *h = t->impl;
  CURL *c = h->curl;
  struct curl_slist *hdrs = NULL;
  ll_status st = LL_OK;

  ll_http_response_cleanup(resp);
  resp->mono_start_ns = ll_clock_mono_ns(h->clock);
  resp->utc_start_ms = ll_clock_utc_ms(h->clock);

  if (!req || !req->method || !req->url || (req->body_len > 0 && !req->body)) {
    st = ll_fail(err, LL_E_USAGE, "http request without method or url");
    goto cleanup;
  }
  if (!h->checked_url || strcmp(h->checked_url, req->url) != 0) {
    st = ll_http_check_url(req->url, err);
    if (st != LL_OK)
      goto cleanup;
    free(h->checked_url);
    h->checked_url = strdup(req->url); /* NULL: checked again next time */
  }
  const char *m = req->method;
  int is_get = strcmp(m, "GET") == 0, is_head = strcmp(m, "HEAD") == 0;
  int is_put = strcmp(m, "PUT") == 0, is_del = strcmp(m, "DELETE") == 0;
  if (!is_get && !is_head && !is_put && !is_del) {
    st = ll_fail(err, LL_E_USAGE, "unsupported http method '%.16s'", m);
    goto cleanup;
  }
  if (req->body_len > 0 && !is_put) {
    st = ll_fail(err, LL_E_USAGE, "%s request with a body", m);
    goto cleanup;
  }
  st = build_headers(&req->headers, is_put, &hdrs, err);
  if (st != LL_OK)
    goto cleanup;

  resp->body = malloc(1);
  if (!resp->body) {
    st = ll_fail(err, LL_E_NOMEM, "out of memory for a response body");
    goto cleanup;
  }
  resp->body[0] = '\0';
  h->resp = resp;
  h->req = req;
  h->wired = 0;
  h->body_alloc = 1;
  h->header_bytes = 0;
  h->header_overflow = h->body_overflow = h->nomem = 0;
  h->up = req->body;
  h->up_len = req->body_len;
  h->up_off = 0;
  h->errbuf[0] = '\0';

  /* Reset keeps the connection cache but drops every per-request option
   * (NOBODY, UPLOAD, CUSTOMREQUEST) of the previous exchange. */
  curl_easy_reset(c);
  /* PUT and DELETE are mutations even if the caller forgot to say so. */
  long fresh = req->mutation || is_put || is_del;
  CURLcode rc = CURLE_OK;
  SETOPT(CURLOPT_URL, req->url);
  SETOPT(CURLOPT_ERRORBUFFER, h->errbuf);
  SETOPT(CURLOPT_PROTOCOLS_STR, "http,https");
  SETOPT(CURLOPT_FOLLOWLOCATION, 0L);
  SETOPT(CURLOPT_NOSIGNAL, 1L);
  SETOPT(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
  SETOPT(CURLOPT_HTTP09_ALLOWED, 0L);
  SETOPT(CURLOPT_SSL_VERIFYPEER, 1L);
  SETOPT(CURLOPT_SSL_VERIFYHOST, 2L);
  if (h->ca_certs) {
    /* what the blob overrides: the default CA bundle file */
    SETOPT(CURLOPT_CAINFO, (char *)NULL);
    SETOPT(CURLOPT_SSL_CTX_FUNCTION, ll_http_ca_ssl_ctx);
    SETOPT(CURLOPT_SSL_CTX_DATA, h->ca_certs);
  } else if (h->ca.p) {
    struct curl_blob blob = {h->ca.p, h->ca.n, CURL_BLOB_NOCOPY};
    SETOPT(CURLOPT_CAINFO_BLOB, &blob); /* h->ca outlives the handle */
  }
  /* resolved once by the operator (proxy.h); "" keeps libcurl from reading
   * the proxy variables itself, so what is recorded is what is used */
  SETOPT(CURLOPT_PROXY, h->proxy);
  SETOPT(CURLOPT_NOPROXY, h->noproxy[0] ? h->noproxy : (char *)NULL);
  /* a plain-http (emulator) target is tunnelled too: a forwarding proxy
   * could re-send a PUT or DELETE on its own, and emitted_requests would
   * still say 1 (invariant 1); through a CONNECT tunnel it sees bytes */
  SETOPT(CURLOPT_HTTPPROXYTUNNEL, 1L);
  SETOPT(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L); /* the proxy's, not ours */
  SETOPT(CURLOPT_CONNECTTIMEOUT_MS,
         req->connect_limit_ms > 0 && req->connect_limit_ms < h->connect_ms
             ? req->connect_limit_ms
             : h->connect_ms);
  SETOPT(CURLOPT_TIMEOUT_MS, h->total_ms);
  SETOPT(CURLOPT_FRESH_CONNECT, fresh);
  SETOPT(CURLOPT_FORBID_REUSE, fresh);
  SETOPT(CURLOPT_MAXAGE_CONN, h->max_idle_s);
  SETOPT(CURLOPT_VERBOSE, 1L);
  SETOPT(CURLOPT_DEBUGFUNCTION, on_debug);
  SETOPT(CURLOPT_DEBUGDATA, h);
  SETOPT(CURLOPT_SOCKOPTFUNCTION, on_socket);
  SETOPT(CURLOPT_SOCKOPTDATA, h);
  SETOPT(CURLOPT_RESOLVER_START_FUNCTION, on_resolve);
  SETOPT(CURLOPT_RESOLVER_START_DATA, h);
  SETOPT(CURLOPT_HEADERFUNCTION, on_header);
  SETOPT(CURLOPT_HEADERDATA, h);
  SETOPT(CURLOPT_WRITEFUNCTION, on_write);
  SETOPT(CURLOPT_WRITEDATA, h);
  SETOPT(CURLOPT_HTTPHEADER, hdrs);
  if (is_head) {
    SETOPT(CURLOPT_NOBODY, 1L);
  } else if (is_put) {
    SETOPT(CURLOPT_UPLOAD, 1L);
    SETOPT(CURLOPT_READFUNCTION, on_read);
    SETOPT(CURLOPT_READDATA, h);
    SETOPT(CURLOPT_INFILESIZE_LARGE, (curl_off_t)req->body_len);
  } else if (is_del) {
    SETOPT(CURLOPT_CUSTOMREQUEST, "DELETE");
  } else {
    SETOPT(CURLOPT_HTTPGET, 1L);
  }
  if (rc != CURLE_OK) {
    st = ll_fail(err, LL_E_INTERNAL, "curl_easy_setopt: %s",
                 curl_easy_strerror(rc));
    goto cleanup;
  }

  rc = curl_easy_perform(c);

  resp->curl_code = (int)rc;
  if (rc == CURLE_OK) {
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    resp->outcome = LL_OUTCOME_RESPONSE;
    resp->status = code;
  } else {
    resp->outcome =
        resp->emitted_requests == 0 ? LL_OUTCOME_NOT_SENT : LL_OUTCOME_UNKNOWN;
    resp->status = 0;
    if (h->header_overflow)
      snprintf(resp->transport_error, sizeof resp->transport_error,
               "response headers exceed %zu bytes", h->header_cap);
    else if (h->body_overflow)
      snprintf(resp->transport_error, sizeof resp->transport_error,
               "response body exceeds %zu bytes", h->body_cap);
    else if (h->nomem)
      snprintf(resp->transport_error, sizeof resp->transport_error,
               "out of memory collecting the response");
    else
      set_transport_error(resp, rc, h->errbuf);
  }
  resp->body_truncated = h->body_overflow;

cleanup:
  /* The handle keeps pointers to the list and to resp: drop them. */
  if (hdrs)
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
  curl_slist_free_all(hdrs);
  h->resp = NULL;
  h->req = NULL;
  h->up = NULL;
  resp->mono_end_ns = ll_clock_mono_ns(h->clock);
  resp->utc_end_ms = ll_clock_utc_ms(h->clock);
  return st;
}

static void http_free(ll_transport *t) {
  http_transport *h = t->impl;
  curl_easy_cleanup(h->curl);
  ll_http_ca_free(h->ca_certs);
  free(h->checked_url);
  ll_secret_free(h->proxy);
  free(h->noproxy);
  free(h->ca.p);
  free(h);
}

ll_transport *ll_http_new(const ll_http_options *opts, ll_clock *clock,
                          ll_error *err) {
  if (!clock) {
    ll_fail(err, LL_E_USAGE, "http transport needs a clock");
    return NULL;
  }
  pthread_once(&global_once, global_init);
  if (global_rc != CURLE_OK) {
    ll_fail(err, LL_E_INTERNAL, "curl_global_init: %s",
            curl_easy_strerror(global_rc));
    return NULL;
  }
  http_transport *h = calloc(1, sizeof *h);
  if (!h) {
    ll_fail(err, LL_E_NOMEM, "out of memory for the http transport");
    return NULL;
  }
  h->clock = clock;
  h->connect_ms = CONNECT_TIMEOUT_DEFAULT;
  h->total_ms = TOTAL_TIMEOUT_DEFAULT;
  h->max_idle_s = MAX_IDLE_REUSE_DEFAULT;
  h->body_cap = LL_BODY_CAP_DEFAULT;
  h->header_cap = HEADER_CAP_DEFAULT;
  if (opts) {
    if (opts->connect_timeout_ms > 0)
      h->connect_ms = opts->connect_timeout_ms;
    if (opts->total_timeout_ms > 0)
      h->total_ms = opts->total_timeout_ms;
    if (opts->max_idle_reuse_s > 0)
      h->max_idle_s = opts->max_idle_reuse_s;
    if (opts->body_cap > 0)
      h->body_cap = opts->body_cap;
    if (opts->header_cap > 0)
      h->header_cap = opts->header_cap;
    if (opts->ca_file && ll_input_read(opts->ca_file, "CA file", "--ca-file",
                                       LL_CA_FILE_MAX, &h->ca, err) != LL_OK) {
      free(h->ca.p);
      free(h);
      return NULL;
    }
  }
  h->proxy = strdup(opts && opts->proxy ? opts->proxy : "");
  h->noproxy = strdup(opts && opts->noproxy ? opts->noproxy : "");
  if (!h->proxy || !h->noproxy) {
    ll_secret_free(h->proxy);
    free(h->noproxy);
    free(h->ca.p);
    free(h);
    ll_fail(err, LL_E_NOMEM, "out of memory for the http transport");
    return NULL;
  }
  h->ca_certs = ll_http_ca_parse(&h->ca);
  h->curl = curl_easy_init();
  if (!h->curl) {
    ll_http_ca_free(h->ca_certs);
    ll_secret_free(h->proxy);
    free(h->noproxy);
    free(h->ca.p);
    free(h);
    ll_fail(err, LL_E_INTERNAL, "curl_easy_init failed");
    return NULL;
  }
  h->t.exchange = http_exchange;
  h->t.free = http_free;
  h->t.impl = h;
  return &h->t;
}
