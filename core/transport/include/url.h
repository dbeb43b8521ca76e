/* One reading of a URL and one transport rule (invariant 10) for every URL
 * this tool sends to or names: the account URL (blob.c), each request
 * (http.c) and the managed identity endpoint (auth_identity.c). The URL is
 * read by libcurl's own parser, so the host judged is the host libcurl
 * will connect to (it normalises 0x7f.1 to 127.0.0.1 and [0::1] to
 * [::1]). Messages name the scheme or the host only: a query may hold a
 * SAS signature. endpoint.c classifies hosts with ll_url_host_loopback. */
#ifndef LL_URL_H
#define LL_URL_H

#include "ll.h"

struct Curl_URL; /* libcurl's CURLU */

/* A parsed URL; the strings belong to it (ll_url_free). */
typedef struct {
  struct Curl_URL *cu;
  char *scheme; /* "http" or "https", lower case */
  char *host;   /* as libcurl reads it: an IPv6 literal in brackets */
  char *path;   /* as written (CURLU_PATH_AS_IS), "/" when empty */
  int has_query;
} ll_url;

/* Which hosts plain http may reach; https reaches any host. */
typedef enum {
  LL_URL_HTTP_LOOPBACK = 0,     /* 127.0.0.0/8, [::1], localhost */
  LL_URL_HTTP_LOOPBACK_OR_IMDS, /* and 169.254.169.254 (Azure IMDS) */
} ll_url_http;

/* Reads text as an absolute http or https URL: printable ASCII only, no
 * fragment, "scheme://" followed by a host, no userinfo (user@, :pw@ or
 * ;options@). LL_E_BAD_URL naming what is wrong (never the query),
 * LL_E_NOMEM. On failure *u holds nothing to free. */
ll_status ll_url_parse(const char *text, ll_url *u,
                       ll_error *err) LL_WARN_UNUSED;

/* LL_OK for https, and for http to a host allow permits; LL_E_INSECURE
 * naming the host otherwise. */
ll_status ll_url_check_secure(const ll_url *u, ll_url_http allow,
                              ll_error *err) LL_WARN_UNUSED;

/* ll_url_parse then ll_url_check_secure. */
ll_status ll_url_check(const char *text, ll_url_http allow,
                       ll_error *err) LL_WARN_UNUSED;

/* The URL as libcurl writes it back (normalised host) in *out, which the
 * caller frees with free(); LL_E_NOMEM or LL_E_BAD_URL. */
ll_status ll_url_text(const ll_url *u, char **out,
                      ll_error *err) LL_WARN_UNUSED;

void ll_url_free(ll_url *u);

/* Loopback: localhost in any case (exactly: not localhost. nor
 * localhost.example), an IPv4 dotted quad in 127.0.0.0/8, or the IPv6
 * loopback ::1 with or without brackets. Not ::ffff:127.0.0.1 (an
 * IPv4-mapped address), not 0.0.0.0, not a numeric form other than the
 * dotted quad (libcurl has already normalised those in a parsed URL). A
 * port is not part of host. */
int ll_url_host_loopback(const char *host);

/* The Azure Instance Metadata Service address, 169.254.169.254. */
int ll_url_host_imds(const char *host);

#endif
