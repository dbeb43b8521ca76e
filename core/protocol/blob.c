/* Builds the Azure Blob REST requests this tool may send and reads their
 * responses. Validation happens before anything is allocated, so a refused
 * request leaves nothing behind. */
#include "blob.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "hash.h"
#include "url.h"
#include "xmlerr.h"

/* Name in the ledger, HTTP method, query, x-ms-lease-action. */
static const struct {
  const char *name, *method, *query, *action;
} ops[LL_OP__COUNT] = {
    [LL_OP_CREATE_CONTAINER] = {"Create Container", "PUT", "restype=container",
                                NULL},
    [LL_OP_PUT_BLOB] = {"Put Blob", "PUT", NULL, NULL},
    [LL_OP_GET_BLOB] = {"Get Blob", "GET", NULL, NULL},
    [LL_OP_GET_PROPERTIES] = {"Get Blob Properties", "HEAD", NULL, NULL},
    [LL_OP_LEASE_ACQUIRE] = {"Lease Acquire", "PUT", "comp=lease", "acquire"},
    [LL_OP_LEASE_BREAK] = {"Lease Break", "PUT", "comp=lease", "break"},
    [LL_OP_LEASE_RELEASE] = {"Lease Release", "PUT", "comp=lease", "release"},
    [LL_OP_LEASE_RENEW] = {"Lease Renew", "PUT", "comp=lease", "renew"},
    [LL_OP_LEASE_CHANGE] = {"Lease Change", "PUT", "comp=lease", "change"},
    [LL_OP_DELETE_BLOB] = {"Delete Blob", "DELETE", NULL, NULL},
};

static int op_ok(ll_op op) {
  return (int)op >= 0 && op < LL_OP__COUNT;
}

const char *ll_op_name(ll_op op) {
  return op_ok(op) ? ops[op].name : NULL;
}

int ll_op_from_name(const char *name) {
  if (!name)
    return -1;
  for (int i = 0; i < LL_OP__COUNT; i++)
    if (strcmp(ops[i].name, name) == 0)
      return i;
  return -1;
}

const char *ll_op_method(ll_op op) {
  return op_ok(op) ? ops[op].method : NULL;
}

/* An unknown op counts as a mutation: the cautious answer for the guard. */
int ll_op_lease_conditioned(ll_op op) {
  return op == LL_OP_LEASE_ACQUIRE || op == LL_OP_LEASE_BREAK;
}

int ll_op_is_mutation(ll_op op) {
  if (!op_ok(op))
    return 1;
  return strcmp(ops[op].method, "GET") != 0 &&
         strcmp(ops[op].method, "HEAD") != 0;
}

/* ---- target ---------------------------------------------------------- */

/* The account path after one trailing '/' is stripped: empty, or segments
 * that are neither empty nor dot segments. */
static int account_path_ok(const char *path) {
  size_t n = strlen(path);
  if (n > 0 && path[n - 1] == '/')
    n--;
  size_t i = 0;
  while (i < n) {
    if (path[i] != '/')
      return 0;
    size_t j = i + 1;
    while (j < n && path[j] != '/')
      j++;
    size_t seg = j - i - 1;
    if (seg == 0 || (seg == 1 && path[i + 1] == '.') ||
        (seg == 2 && path[i + 1] == '.' && path[i + 2] == '.'))
      return 0;
    i = j;
  }
  return 1;
}

/* The account URL: url.h's reading and transport rule, then its own
 * shape (no query, an account path at most). */
static ll_status check_account_url(ll_target *t, const char *url,
                                   ll_error *err) {
  /* Checked on the raw text too: curl drops an empty "?" or "#". */
  if (strchr(url, '?') || strchr(url, '#'))
    return ll_fail(err, LL_E_BAD_URL,
                   "account URL must not carry a query or fragment: give "
                   "scheme://host[:port][/account] and pass SAS separately");
  ll_url u;
  ll_error inner = {0};
  char *full = NULL;
  ll_status rc = ll_url_parse(url, &u, &inner);
  if (rc != LL_OK)
    return ll_fail(err, rc,
                   "account URL: %s: give https://host[:port][/account]",
                   inner.message);
  if (u.has_query) {
    rc = ll_fail(err, LL_E_BAD_URL,
                 "account URL must not carry a query or fragment");
    goto cleanup;
  }
  if (!account_path_ok(u.path)) {
    rc = ll_fail(err, LL_E_BAD_URL,
                 "account URL path must be empty or /account, without empty, "
                 "'.' or '..' segments");
    goto cleanup;
  }
  if ((rc = ll_url_check_secure(&u, LL_URL_HTTP_LOOPBACK, &inner)) != LL_OK ||
      (rc = ll_url_text(&u, &full, &inner)) != LL_OK) {
    rc = ll_fail(err, rc, "account URL: %s", inner.message);
    goto cleanup;
  }
  size_t n = strlen(full);
  if (n > 0 && full[n - 1] == '/')
    full[--n] = '\0';
  if (!ll_strlcpy(t->account_url, full, sizeof t->account_url))
    rc = ll_fail(err, LL_E_BAD_URL, "account URL is longer than %zu bytes",
                 sizeof t->account_url - 1);
cleanup:
  free(full);
  ll_url_free(&u);
  return rc;
}

static int is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static ll_status check_container(const char *c, ll_error *err) {
  size_t n = strlen(c);
  if (n < 3 || n > 63)
    return ll_fail(err, LL_E_USAGE,
                   "container name must be 3 to 63 characters long (got %zu)",
                   n);
  if (!is_lower_alnum(c[0]))
    return ll_fail(err, LL_E_USAGE,
                   "container name must start with a lowercase letter or a "
                   "digit");
  if (!is_lower_alnum(c[n - 1]))
    return ll_fail(err, LL_E_USAGE,
                   "container name must end with a lowercase letter or a "
                   "digit");
  for (size_t i = 0; i < n; i++) {
    if (c[i] == '-') {
      if (c[i + 1] == '-')
        return ll_fail(err, LL_E_USAGE,
                       "container name must not contain consecutive hyphens");
    } else if (!is_lower_alnum(c[i])) {
      return ll_fail(err, LL_E_USAGE,
                     "container name may contain only lowercase letters, "
                     "digits and hyphens");
    }
  }
  return LL_OK;
}

static ll_status check_blob(const char *b, ll_error *err) {
  size_t n = strlen(b);
  if (n < 1 || n > 255)
    return ll_fail(err, LL_E_USAGE,
                   "blob name must be 1 to 255 characters long (got %zu)", n);
  if (b[0] == '/')
    return ll_fail(err, LL_E_USAGE, "blob name must not start with '/'");
  if (b[n - 1] == '/' || strstr(b, "//"))
    return ll_fail(err, LL_E_USAGE,
                   "blob name must not end with '/' or contain '//'");
  if (strstr(b, ".."))
    return ll_fail(err, LL_E_USAGE, "blob name must not contain '..'");
  if (strcmp(b, ".") == 0 || strncmp(b, "./", 2) == 0 || strstr(b, "/./") ||
      (n >= 2 && strcmp(b + n - 2, "/.") == 0))
    return ll_fail(err, LL_E_USAGE, "blob name must not have a '.' segment");
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)b[i];
    if (c < 0x20 || c == 0x7f)
      return ll_fail(err, LL_E_USAGE,
                     "blob name must not contain control characters");
    if (c == '?' || c == '#' || c == '\\')
      return ll_fail(err, LL_E_USAGE,
                     "blob name must not contain '?', '#' or '\\'");
  }
  return LL_OK;
}

/* The account URL's path, once, at init: every request's intent row names
 * the blob path, and parsing the URL again for each was 2% of a read. */
static void set_account_path(ll_target *t) {
  char *path = NULL;
  CURLU *u = curl_url();
  if (u &&
      curl_url_set(u, CURLUPART_URL, t->account_url, CURLU_PATH_AS_IS) ==
          CURLUE_OK &&
      curl_url_get(u, CURLUPART_PATH, &path, 0) == CURLUE_OK &&
      strcmp(path, "/") != 0)
    ll_strlcpy(t->account_path, path, sizeof t->account_path);
  curl_free(path);
  curl_url_cleanup(u);
}

ll_status ll_target_init(ll_target *t, const char *account_url,
                         const char *container, const char *blob,
                         ll_error *err) {
  if (!t)
    return ll_fail(err, LL_E_USAGE, "target: no output given");
  memset(t, 0, sizeof *t);
  if (!account_url || !container || !blob)
    return ll_fail(err, LL_E_USAGE,
                   "target needs an account URL, a container and a blob name");
  ll_status rc = check_account_url(t, account_url, err);
  if (rc == LL_OK)
    rc = check_container(container, err);
  if (rc == LL_OK)
    rc = check_blob(blob, err);
  if (rc != LL_OK) {
    memset(t, 0, sizeof *t);
    return rc;
  }
  ll_strlcpy(t->container, container, sizeof t->container);
  ll_strlcpy(t->blob, blob, sizeof t->blob);
  set_account_path(t);
  return LL_OK;
}

void ll_target_blob_path(const ll_target *t, char *buf, size_t cap) {
  if (!buf || cap == 0)
    return;
  buf[0] = '\0';
  if (t)
    snprintf(buf, cap, "%s/%s/%s", t->account_path, t->container, t->blob);
}

/* ---- request --------------------------------------------------------- */

void ll_blob_format_date(time_t when, char *buf, size_t cap) {
  /* Fixed English names: strftime's %a/%b follow the locale. */
  static const char *const days[] = {"Sun", "Mon", "Tue", "Wed",
                                     "Thu", "Fri", "Sat"};
  static const char *const months[] = {"Jan", "Feb", "Mar", "Apr",
                                       "May", "Jun", "Jul", "Aug",
                                       "Sep", "Oct", "Nov", "Dec"};
  struct tm tm;
  if (!buf || cap == 0)
    return;
  if (!gmtime_r(&when, &tm)) {
    buf[0] = '\0';
    return;
  }
  int year = tm.tm_year + 1900;
  if (cap >= 30 && year >= 1000 && year <= 9999) {
    /* every request carries one: put in place, as snprintf prints it */
    char *p = buf;
    memcpy(p, days[tm.tm_wday], 3);
    memcpy(p + 3, ", 00 ", 5);
    p[5] = (char)('0' + tm.tm_mday / 10);
    p[6] = (char)('0' + tm.tm_mday % 10);
    memcpy(p + 8, months[tm.tm_mon], 3);
    p[11] = ' ';
    for (int i = 3, y = year; i >= 0; i--, y /= 10)
      p[12 + i] = (char)('0' + y % 10);
    int hms[3] = {tm.tm_hour, tm.tm_min, tm.tm_sec};
    for (int i = 0; i < 3; i++) {
      p[16 + 3 * i] = i ? ':' : ' ';
      p[17 + 3 * i] = (char)('0' + hms[i] / 10);
      p[18 + 3 * i] = (char)('0' + hms[i] % 10);
    }
    memcpy(p + 25, " GMT", 5);
    return;
  }
  snprintf(buf, cap, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[tm.tm_wday],
           tm.tm_mday, months[tm.tm_mon], year, tm.tm_hour, tm.tm_min,
           tm.tm_sec);
}

static int header_value_ok(const char *v) {
  if (!v[0])
    return 0;
  for (const unsigned char *s = (const unsigned char *)v; *s; s++)
    if (*s < 0x20 || *s == 0x7f)
      return 0;
  return 1;
}

static ll_status check_lease(const char *id, const char *what, ll_error *err) {
  if (ll_lease_id_valid(id))
    return LL_OK;
  /* The value is a secret: name the field, never print it. */
  return ll_fail(err, LL_E_BAD_LEASE_ID,
                 "%s is not a GUID (8-4-4-4-12 hex): pass the lease ID exactly "
                 "as generated (value not shown)",
                 what);
}

/* All parameter checks for op, before anything is allocated. */
static ll_status check_params(ll_op op, const ll_op_params *p, ll_error *err) {
  int takes_lease = op == LL_OP_PUT_BLOB || op == LL_OP_GET_BLOB ||
                    op == LL_OP_GET_PROPERTIES || op == LL_OP_DELETE_BLOB ||
                    op == LL_OP_LEASE_RELEASE || op == LL_OP_LEASE_RENEW ||
                    op == LL_OP_LEASE_CHANGE;
  int needs_lease = op == LL_OP_LEASE_RELEASE || op == LL_OP_LEASE_RENEW ||
                    op == LL_OP_LEASE_CHANGE;
  int takes_proposed = op == LL_OP_LEASE_ACQUIRE || op == LL_OP_LEASE_CHANGE;
  ll_status rc;

  if (op != LL_OP_PUT_BLOB && (p->body || p->body_len))
    return ll_fail(err, LL_E_USAGE, "%s sends no body: pass none",
                   ll_op_name(op));
  if (op == LL_OP_PUT_BLOB && !p->body && p->body_len)
    return ll_fail(err, LL_E_USAGE, "Put Blob body is NULL but has a length");
  if (p->lease_id && !takes_lease)
    return ll_fail(err, LL_E_USAGE,
                   "%s takes no x-ms-lease-id: do not pass lease_id",
                   ll_op_name(op));
  if (!p->lease_id && needs_lease)
    return ll_fail(err, LL_E_USAGE, "%s needs the current lease ID (lease_id)",
                   ll_op_name(op));
  if (p->proposed_id && !takes_proposed)
    return ll_fail(err, LL_E_USAGE,
                   "%s takes no proposed lease ID: do not pass proposed_id",
                   ll_op_name(op));
  if (!p->proposed_id && op == LL_OP_LEASE_CHANGE)
    return ll_fail(err, LL_E_USAGE,
                   "Lease Change needs the new lease ID (proposed_id)");
  if (p->lease_id && (rc = check_lease(p->lease_id, "lease ID", err)))
    return rc;
  if (p->proposed_id &&
      (rc = check_lease(p->proposed_id, "proposed lease ID", err)))
    return rc;
  if (op == LL_OP_LEASE_ACQUIRE && p->lease_duration != LL_LEASE_INFINITE &&
      (p->lease_duration < LL_LEASE_DURATION_MIN ||
       p->lease_duration > LL_LEASE_DURATION_MAX))
    return ll_fail(err, LL_E_USAGE,
                   "lease duration %ld is invalid: use -1 (infinite) or %d to "
                   "%d seconds",
                   p->lease_duration, LL_LEASE_DURATION_MIN,
                   LL_LEASE_DURATION_MAX);
  if (op == LL_OP_LEASE_BREAK &&
      ((p->break_period < 0 && p->break_period != LL_BREAK_PERIOD_OMIT) ||
       p->break_period > LL_BREAK_PERIOD_MAX))
    return ll_fail(err, LL_E_USAGE,
                   "break period %ld is invalid: use 0 to %d seconds, or -1 "
                   "to omit it",
                   p->break_period, LL_BREAK_PERIOD_MAX);
  if (p->api_version && !header_value_ok(p->api_version))
    return ll_fail(err, LL_E_USAGE,
                   "api_version is empty or has control characters");
  if (p->client_request_id && !header_value_ok(p->client_request_id))
    return ll_fail(err, LL_E_USAGE,
                   "client_request_id is empty or has control characters");
  if (p->if_none_match &&
      (op != LL_OP_PUT_BLOB || strcmp(p->if_none_match, "*") != 0))
    return ll_fail(err, LL_E_USAGE,
                   "If-None-Match is sent only as \"*\" on the Put Blob that "
                   "creates a lifecycle's blob");
  if (p->if_match && op != LL_OP_PUT_BLOB && op != LL_OP_DELETE_BLOB &&
      !ll_op_lease_conditioned(op))
    return ll_fail(err, LL_E_USAGE,
                   "%s takes no If-Match: do not pass if_match",
                   ll_op_name(op));
  if (p->if_match &&
      (!header_value_ok(p->if_match) || strlen(p->if_match) > 127))
    return ll_fail(err, LL_E_USAGE,
                   "If-Match must be an ETag as the service returned it (1 to "
                   "127 characters, no control characters)");
  if (p->if_match && p->if_none_match)
    return ll_fail(err, LL_E_USAGE,
                   "If-Match and If-None-Match are never sent together");
  return LL_OK;
}

/* account_url/container[/escaped blob][?query]; each blob segment is
 * percent-encoded on its own so that '/' stays a separator. */
static char *build_url(const ll_target *t, ll_op op) {
  const char *query = ops[op].query;
  /* Every byte escapes to at most three. */
  size_t cap = strlen(t->account_url) + 1 + strlen(t->container) + 1 +
               3 * strlen(t->blob) + 32;
  char *url = malloc(cap);
  if (!url)
    return NULL;
  size_t len =
      (size_t)snprintf(url, cap, "%s/%s", t->account_url, t->container);
  if (op != LL_OP_CREATE_CONTAINER) {
    const char *seg = t->blob;
    while (*seg) {
      size_t n = strcspn(seg, "/");
      char *esc = curl_easy_escape(NULL, seg, (int)n);
      if (!esc) {
        free(url);
        return NULL;
      }
      len += (size_t)snprintf(url + len, cap - len, "/%s", esc);
      curl_free(esc);
      seg += n;
      if (*seg == '/')
        seg++;
    }
  }
  if (query)
    snprintf(url + len, cap - len, "?%s", query);
  return url;
}

ll_status ll_blob_build(const ll_target *t, ll_op op, const ll_op_params *p,
                        ll_http_request *req, char **out_url, ll_error *err) {
  if (out_url)
    *out_url = NULL;
  if (!op_ok(op))
    return ll_fail(err, LL_E_USAGE, "unknown operation %d", (int)op);
  if (!p)
    return ll_fail(err, LL_E_USAGE, "%s: no parameters given", ll_op_name(op));
  /* Invariant 7 comes first: an oversized payload is refused before any
   * other check could mask it. */
  size_t max = p->max_single_put ? p->max_single_put : LL_MAX_SINGLE_PUT;
  if (op == LL_OP_PUT_BLOB && p->body_len > max)
    return ll_fail(err, LL_E_TOO_LARGE,
                   "payload of %zu bytes exceeds max_single_put_size %zu: "
                   "this lab only sends a single Put Blob",
                   p->body_len, max);
  if (!t || !req || !out_url)
    return ll_fail(err, LL_E_USAGE, "%s: target, request and url are required",
                   ll_op_name(op));
  if (!t->account_url[0] || !t->container[0] || !t->blob[0])
    return ll_fail(err, LL_E_USAGE,
                   "%s: target is not initialised (ll_target_init)",
                   ll_op_name(op));
  ll_status rc = check_params(op, p, err);
  if (rc != LL_OK)
    return rc;

  char guid[LL_GUID_LEN], date[40], num[24];
  const char *crid = p->client_request_id;
  if (!crid) {
    if (ll_guid_v4(guid) != LL_OK)
      return ll_fail(err, LL_E_INTERNAL, "no random client request ID");
    crid = guid;
  }
  ll_blob_format_date(time(NULL), date, sizeof date);

  char *url = build_url(t, op);
  if (!url)
    return ll_fail(err, LL_E_NOMEM, "out of memory building the URL");

  /* Added headers are rolled back on failure; the caller's stay. */
  ll_headers *h = &req->headers;
  size_t base = h->n;
  rc = LL_OK;
#define ADD(n, v)                                                              \
  do {                                                                         \
    if (rc == LL_OK)                                                           \
      rc = ll_headers_add(h, (n), (v));                                        \
  } while (0)
  ADD("x-ms-version", p->api_version ? p->api_version : LL_API_VERSION);
  ADD("x-ms-client-request-id", crid);
  ADD("x-ms-date", date);
  if (ops[op].action)
    ADD("x-ms-lease-action", ops[op].action);
  if (op == LL_OP_PUT_BLOB) {
    ADD("x-ms-blob-type", "BlockBlob");
    ADD("Content-Type", "application/json");
  } else if (op == LL_OP_LEASE_ACQUIRE) {
    snprintf(num, sizeof num, "%ld", p->lease_duration);
    ADD("x-ms-lease-duration", num);
  } else if (op == LL_OP_LEASE_BREAK &&
             p->break_period != LL_BREAK_PERIOD_OMIT) {
    snprintf(num, sizeof num, "%ld", p->break_period);
    ADD("x-ms-lease-break-period", num);
  }
  if (p->lease_id)
    ADD("x-ms-lease-id", p->lease_id);
  if (p->proposed_id)
    ADD("x-ms-proposed-lease-id", p->proposed_id);
  if (p->if_none_match)
    ADD("If-None-Match", p->if_none_match);
  if (p->if_match)
    ADD("If-Match", p->if_match);
#undef ADD
  if (rc != LL_OK) {
    while (h->n > base) {
      h->n--;
      free(h->v[h->n].name);
      free(h->v[h->n].value);
    }
    free(url);
    return ll_fail(err, LL_E_NOMEM, "out of memory building headers");
  }
  req->method = ll_op_method(op);
  req->mutation = ll_op_is_mutation(op);
  req->body = op == LL_OP_PUT_BLOB ? p->body : NULL;
  req->body_len = op == LL_OP_PUT_BLOB ? p->body_len : 0;
  req->url = url;
  *out_url = url;
  return LL_OK;
}

/* ---- response -------------------------------------------------------- */

/* Appends one problem to out->header_problems; a list too long for the
 * field ends in "..." (the row is an evidence error either way). */
static void header_problem(ll_blob_result *out, const char *name,
                           const char *what) {
  char *p = out->header_problems;
  size_t cap = sizeof out->header_problems, n = strlen(p);
  int w = snprintf(p + n, cap - n, "%s%s: %s", n ? "; " : "", name, what);
  if (w < 0 || (size_t)w >= cap - n)
    memcpy(p + cap - 4, "...", 4);
}

/* name's value into dst, whole or not at all: two differing values of
 * name, or one longer than dst holds, leave dst empty, say why, and
 * return 0. */
static int copy_header(ll_blob_result *out, const ll_headers *h,
                       const char *name, char *dst, size_t cap) {
  int differ = 0;
  const char *v = ll_headers_get_agreed(h, name, &differ);
  dst[0] = '\0';
  if (differ) {
    size_t count = 0;
    for (size_t i = 0; i < h->n; i++)
      count += strcasecmp(h->v[i].name, name) == 0;
    char what[64];
    snprintf(what, sizeof what, "different values in %zu headers", count);
    header_problem(out, name, what);
    return 0;
  }
  if (v && !ll_strlcpy(dst, v, cap)) {
    dst[0] = '\0';
    char what[64];
    snprintf(what, sizeof what, "longer than %zu bytes", cap - 1);
    header_problem(out, name, what);
    return 0;
  }
  return 1;
}

ll_status ll_blob_parse(const ll_http_response *resp, ll_blob_result *out) {
  if (!out)
    return LL_E_USAGE;
  memset(out, 0, sizeof *out);
  if (!resp)
    return LL_E_USAGE;
  const ll_headers *h = &resp->headers;
  out->status = resp->status;
#define COPY(name, field)                                                      \
  copy_header(out, h, name, out->field, sizeof out->field)
  COPY("x-ms-request-id", request_id);
  COPY("x-ms-version", returned_version);
  COPY("x-ms-lease-state", lease_state);
  COPY("x-ms-lease-status", lease_status);
  COPY("x-ms-lease-duration", lease_duration);
  COPY("x-ms-lease-id", lease_id);
  COPY("x-ms-lease-time", lease_time);
  COPY("ETag", etag);
  COPY("Last-Modified", last_modified);
  COPY("Content-Length", content_length);
  out->server_kept = COPY("Server", server);
  int code_kept = COPY("x-ms-error-code", error_code);
#undef COPY

  /* A success body is blob content, never an error document. */
  if (resp->status >= 400 && resp->body && resp->body_len > 0) {
    ll_xml_error x;
    if (ll_xmlerr_parse((const char *)resp->body, resp->body_len, &x) ==
        LL_OK) {
      /* the XML's code stands in for an absent header, never for one
       * that was not kept */
      if (!out->error_code[0] && code_kept)
        ll_strlcpy(out->error_code, x.code, sizeof out->error_code);
      ll_strlcpy(out->error_message, x.message, sizeof out->error_message);
    } else {
      out->error_body_malformed = 1;
    }
  }
  return LL_OK;
}
