/* The wire. One attempt per request, no retry at any layer (invariant 1).
 * A transport is a vtable so that fixture replay and recording can stand in
 * for libcurl without the rest of the core knowing. */
#ifndef LL_HTTP_H
#define LL_HTTP_H

#include <stdint.h>

#include "clock.h"
#include "ll.h"

#define LL_BODY_CAP_DEFAULT (4u * 1024u * 1024u)

typedef struct {
  const char *method; /* GET, HEAD, PUT, DELETE */
  const char *url;    /* absolute; may carry a SAS query (never logged) */
  ll_headers headers; /* caller-owned */
  const unsigned char *body;
  size_t body_len;
  int mutation; /* nonzero: fresh connection, never reused afterwards */
  /* Optional: called once per exchange when the request is on its way:
   * when its head has left on a connection already open (then while the
   * answer is awaited), or before a new connection is set up (a name
   * resolved, a socket opened: DNS, TCP, TLS and a proxy's CONNECT can
   * take up to the connect timeout). The run writes there what may wait
   * that long and no longer (a read intent's export line,
   * ll_ledger_flush_hook). Nonzero: that failed; a request not yet on its
   * way is then not sent (NOT_SENT), one whose head left is answered as
   * usual. */
  int (*on_wire)(void *ctx);
  void *wire_ctx;
  /* Optional: at most this long (ms) to set a new connection up, when
   * less than the transport's connect timeout (the run's deadline is that
   * close: a connection not up by then is NOT_SENT); 0: the transport's */
  long connect_limit_ms;
} ll_http_request;

typedef enum {
  LL_OUTCOME_RESPONSE = 0, /* a complete response was received */
  LL_OUTCOME_NOT_SENT,     /* provably never left: no request head emitted */
  LL_OUTCOME_UNKNOWN       /* may have reached the server: timeout, reset,
                              truncated or missing response */
} ll_outcome;

typedef struct {
  ll_outcome outcome;
  long status;        /* 0 unless outcome == RESPONSE */
  ll_headers headers; /* of the final response only */
  unsigned char *body;
  size_t body_len;
  int body_truncated;   /* body exceeded the cap: outcome is UNKNOWN */
  int emitted_requests; /* request heads seen leaving (CURLINFO_HEADER_OUT) */
  int curl_code;        /* 0 when no transport error */
  char transport_error[1024];
  int64_t mono_start_ns, mono_end_ns;
  int64_t utc_start_ms, utc_end_ms;
} ll_http_response;

void ll_http_response_init(ll_http_response *r);
void ll_http_response_cleanup(ll_http_response *r);

typedef struct ll_transport ll_transport;
struct ll_transport {
  /* Performs exactly one attempt. Fills resp (times included, from the
   * transport's clock). Returns LL_OK when resp->outcome is meaningful,
   * including NOT_SENT and UNKNOWN; other codes are local misuse. */
  ll_status (*exchange)(ll_transport *t, const ll_http_request *req,
                        ll_http_response *resp, ll_error *err);
  void (*free)(ll_transport *t);
  void *impl;
  /* Optional (NULL for libcurl; core/fixture.h sets them). finish is called
   * when the run records its decision and again when it closes: a replay
   * reports the exchanges never requested (LL_E_REPLAY), a recording
   * writes its fixture file. It may be called more than once. detail is
   * the full text behind the last LL_E_REPLAY (the diff), or NULL. */
  ll_status (*finish)(ll_transport *t, ll_error *err);
  const char *(*detail)(ll_transport *t);
  /* Filled by the run that owns the transport (ll_run_open): what a
   * recording transport may ask about that run. alias_of names the writer
   * a lease ID the run generated belongs to (NULL: not one of its own);
   * endpoint_kind is the manifest's. */
  void *run_ctx;
  const char *(*alias_of)(void *run_ctx, const char *lease_id);
  const char *(*endpoint_kind)(void *run_ctx);
  /* secret_of gives the run's credential secrets, i from 0: the secret
   * ("" for an empty slot) and in *name its placeholder's name ("token",
   * "sas"); NULL past the last. Asked at every exchange: a recording
   * replaces them by {{secret:NAME}} wherever the service echoed them. */
  const char *(*secret_of)(void *run_ctx, int i, const char **name);
};

typedef struct {
  const char *ca_file;     /* extra trust for the emulator; NULL: system */
  long connect_timeout_ms; /* default 10000 */
  long total_timeout_ms;   /* default 60000 */
  size_t body_cap;         /* default LL_BODY_CAP_DEFAULT */
  size_t header_cap;       /* total response header bytes, default 64 KiB */
  long max_idle_reuse_s;   /* reads reuse a connection idle for fewer whole
                              seconds than this plus one; default 2 */
  const char *proxy;       /* CURLOPT_PROXY (proxy.h); NULL: none, never the
                              environment's */
  const char *noproxy;     /* CURLOPT_NOPROXY; NULL: none */
} ll_http_options;

/* libcurl transport. The clock is borrowed and must outlive it. */
ll_transport *ll_http_new(const ll_http_options *opts, ll_clock *clock,
                          ll_error *err);
void ll_transport_free(ll_transport *t);

/* Invariant 10: https everywhere except loopback (127.0.0.0/8, ::1,
 * localhost). Also validates the URL shape. No I/O. */
ll_status ll_http_check_url(const char *url, ll_error *err) LL_WARN_UNUSED;

const char *ll_outcome_name(ll_outcome o);
/* libcurl and OpenSSL versions, for the manifest. */
const char *ll_http_curl_version(void);
const char *ll_http_ssl_version(void);

#endif
