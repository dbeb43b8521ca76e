/* The Azure Blob REST operations this tool may send, built as requests and
 * parsed from responses. There is no Put Block / Put Block List path
 * (invariant 7). No I/O; the only clock read is time(NULL) for x-ms-date. */
#ifndef LL_BLOB_H
#define LL_BLOB_H

#include <time.h>

#include "http.h"
#include "lease_id.h"
#include "ll.h"

/* Lease Blob's ranges: x-ms-lease-duration is -1 (infinite) or 15 to 60
 * seconds, x-ms-lease-break-period 0 to 60 seconds. */
#define LL_LEASE_INFINITE (-1)
#define LL_LEASE_DURATION_MIN 15
#define LL_LEASE_DURATION_MAX 60
#define LL_BREAK_PERIOD_MAX 60
/* A break that sends no x-ms-lease-break-period (0 is sent, and breaks at
 * once). */
#define LL_BREAK_PERIOD_OMIT (-1)

typedef enum {
  LL_OP_CREATE_CONTAINER = 0,
  LL_OP_PUT_BLOB,
  LL_OP_GET_BLOB,
  LL_OP_GET_PROPERTIES,
  LL_OP_LEASE_ACQUIRE,
  LL_OP_LEASE_BREAK,
  LL_OP_LEASE_RELEASE,
  LL_OP_LEASE_RENEW,
  LL_OP_LEASE_CHANGE,
  LL_OP_DELETE_BLOB,
  LL_OP__COUNT
} ll_op;

/* "Put Blob", "Get Blob", "Lease Acquire", ... as written in the ledger.
 * NULL for an op out of range (so is ll_op_method). */
const char *ll_op_name(ll_op op);
/* Inverse of ll_op_name; -1 when unknown. */
int ll_op_from_name(const char *name);
int ll_op_is_mutation(ll_op op); /* everything but GET/HEAD; 1 if unknown */
/* The Lease Blob actions the run conditions on its own ETag (If-Match,
 * invariant 15): acquire and break, which name no lease of the run's.
 * Change, release and renew name the run's own lease ID instead. */
int ll_op_lease_conditioned(ll_op op);
const char *ll_op_method(ll_op op);

/* Target: https://host[:port]/<account path?>, container, blob. */
typedef struct {
  char account_url[512]; /* scheme://host[:port][/account] without trailing / */
  char account_path[512]; /* its path: "/devstoreaccount1", or "" */
  char container[64];
  char blob[256];
} ll_target;

/* Validates scheme, host, container name rules and blob name (no "..", no
 * query or fragment). Invariant 10 is checked here too. The URL is parsed by
 * curl's URL API: userinfo, query or fragment -> LL_E_BAD_URL; http to a
 * non-loopback host -> LL_E_INSECURE; one trailing '/' is stripped. Bad
 * container or blob names -> LL_E_USAGE. On failure *t is zeroed. */
ll_status ll_target_init(ll_target *t, const char *account_url,
                         const char *container, const char *blob,
                         ll_error *err) LL_WARN_UNUSED;
/* Path relative to the host, account path included when the URL has one:
 * /devstoreaccount1/lease-handoff-lab/writer-handoff.json (Azurite) or
 * /lease-handoff-lab/writer-handoff.json. Names as given, not escaped. */
void ll_target_blob_path(const ll_target *t, char *buf, size_t cap);

typedef struct {
  const char *lease_id;    /* x-ms-lease-id, or NULL */
  const char *proposed_id; /* acquire/change */
  long lease_duration;     /* acquire: LL_LEASE_INFINITE or 15..60 */
  long break_period;       /* break: 0..60, LL_BREAK_PERIOD_OMIT (0 is sent!) */
  const unsigned char *body; /* Put Blob */
  size_t body_len;
  size_t max_single_put;         /* 0: LL_MAX_SINGLE_PUT */
  const char *api_version;       /* NULL: LL_API_VERSION */
  const char *client_request_id; /* NULL: a fresh GUID */
  /* Conditions (invariant 15): If-None-Match is "*" only, on Put Blob (a
   * create); If-Match is an ETag as the service returned it, on Put Blob,
   * Delete Blob, or a Lease Blob acquire or break. NULL: not sent. */
  const char *if_none_match;
  const char *if_match;
} ll_op_params;

/* Builds the request: method, url (malloc'd into *out_url, caller frees;
 * req->url aliases it), headers appended to the caller-initialised
 * req->headers (x-ms-version, x-ms-client-request-id, x-ms-date, lease
 * headers, x-ms-blob-type: BlockBlob, Content-Type). Content-Length is left
 * to the transport: req->body/body_len carry the Put Blob body. Refuses a
 * body over max_single_put (LL_E_TOO_LARGE, checked first) and non-GUID
 * lease IDs (LL_E_BAD_LEASE_ID, value never printed) before anything is
 * sent. A parameter the op does not take (lease_id on acquire/break/create,
 * proposed_id outside acquire/change, a body outside Put Blob, a condition
 * outside Put Blob and Delete Blob, an If-None-Match other than "*") is
 * LL_E_USAGE. On failure nothing is added to req. */
ll_status ll_blob_build(const ll_target *t, ll_op op, const ll_op_params *p,
                        ll_http_request *req, char **out_url,
                        ll_error *err) LL_WARN_UNUSED;

/* What a response says, in the ledger's words. Strings are empty when the
 * header was absent. Values are copied verbatim, never normalised, and
 * never cut: a header longer than its field, or one that came more than
 * once (names compared case-insensitively) with different values, leaves
 * its field empty and is named in header_problems. */
typedef struct {
  long status;
  char error_code[128];    /* x-ms-error-code, else the XML <Code> */
  char error_message[512]; /* XML <Message>, verbatim */
  int error_body_malformed;
  char request_id[128];
  char returned_version[64];
  char lease_state[32];
  char lease_status[32];
  char lease_duration[32];
  char lease_id[64];   /* x-ms-lease-id in the response (secret) */
  char lease_time[32]; /* x-ms-lease-time */
  char etag[128];
  char last_modified[64];
  char content_length[32];
  /* Server, the responder's name: the known deviations are matched on it,
   * so two differing values are a problem like any other header's */
  char server[256];
  int server_kept; /* 1 when Server was absent or agreed and fitted */
  /* "" or why headers were not kept, e.g. "x-ms-lease-id: different
   * values in 2 headers; ETag: longer than 127 bytes" (names, never a
   * value: it may be a lease ID) */
  char header_problems[512];
} ll_blob_result;

/* The XML body is read only when status >= 400; a non-empty body that does
 * not parse sets error_body_malformed and still returns LL_OK. */
ll_status ll_blob_parse(const ll_http_response *resp,
                        ll_blob_result *out) LL_WARN_UNUSED;

/* RFC 1123 date for x-ms-date, e.g. "Mon, 30 Nov 2026 06:48:16 GMT", with
 * English names whatever the locale; buf >= 30. */
void ll_blob_format_date(time_t when, char *buf, size_t cap);

#endif
