/* URLs as libcurl reads them, and which of them plain http may reach
 * (url.h, invariant 10). */
#include "url.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define IMDS_HOST "169.254.169.254"

int ll_url_host_loopback(const char *host) {
  if (!host)
    return 0;
  if (strcasecmp(host, "localhost") == 0)
    return 1;
  struct in_addr a4;
  if (inet_pton(AF_INET, host, &a4) == 1)
    return (ntohl(a4.s_addr) >> 24) == 127;
  char buf[INET6_ADDRSTRLEN + 1];
  size_t n = strlen(host);
  if (n > 2 && host[0] == '[' && host[n - 1] == ']') {
    host++;
    n -= 2;
  }
  if (n >= sizeof buf)
    return 0;
  memcpy(buf, host, n);
  buf[n] = '\0';
  struct in6_addr a6;
  return inet_pton(AF_INET6, buf, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

int ll_url_host_imds(const char *host) {
  return host && strcmp(host, IMDS_HOST) == 0;
}

void ll_url_free(ll_url *u) {
  if (!u)
    return;
  curl_free(u->scheme);
  curl_free(u->host);
  curl_free(u->path);
  curl_url_cleanup(u->cu);
  *u = (ll_url){0};
}

static int has_part(CURLU *cu, CURLUPart part) {
  char *v = NULL;
  int present = curl_url_get(cu, part, &v, 0) == CURLUE_OK && v != NULL;
  curl_free(v);
  return present;
}

static ll_status parse(const char *text, ll_url *u, ll_error *err) {
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    if (*p <= 0x20 || *p >= 0x7f)
      return ll_fail(err, LL_E_BAD_URL,
                     "URL contains a space, control or non-ASCII byte at "
                     "offset %zu",
                     (size_t)(p - (const unsigned char *)text));
    if (*p == '#')
      return ll_fail(err, LL_E_BAD_URL, "URL must not carry a fragment");
  }
  if (!(u->cu = curl_url()))
    return ll_fail(err, LL_E_NOMEM, "out of memory parsing a URL");
  CURLUcode uc = curl_url_set(u->cu, CURLUPART_URL, text, CURLU_PATH_AS_IS);
  if (uc == CURLUE_OUT_OF_MEMORY)
    return ll_fail(err, LL_E_NOMEM, "out of memory parsing a URL");
  if (uc != CURLUE_OK)
    return ll_fail(err, LL_E_BAD_URL, "malformed URL: %s",
                   curl_url_strerror(uc));
  if (curl_url_get(u->cu, CURLUPART_SCHEME, &u->scheme, 0) != CURLUE_OK ||
      !u->scheme)
    return ll_fail(err, LL_E_BAD_URL, "malformed URL: no scheme");
  /* curl reads "https:///x" and "https:/x" as host x; require the
   * authority to follow "scheme://" as written. */
  size_t sn = strlen(u->scheme);
  if (strncmp(text + sn, "://", 3) != 0 || text[sn + 3] == '/' ||
      text[sn + 3] == '\\')
    return ll_fail(err, LL_E_BAD_URL, "malformed URL: no host after '%.32s://'",
                   u->scheme);
  if (has_part(u->cu, CURLUPART_USER) || has_part(u->cu, CURLUPART_PASSWORD) ||
      has_part(u->cu, CURLUPART_OPTIONS))
    return ll_fail(err, LL_E_BAD_URL,
                   "URL must not carry userinfo (user@host): send credentials "
                   "in headers");
  if (has_part(u->cu, CURLUPART_FRAGMENT))
    return ll_fail(err, LL_E_BAD_URL, "URL must not carry a fragment");
  if (curl_url_get(u->cu, CURLUPART_HOST, &u->host, 0) != CURLUE_OK ||
      !u->host || !*u->host)
    return ll_fail(err, LL_E_BAD_URL, "malformed URL: no host");
  if (strcmp(u->scheme, "https") != 0 && strcmp(u->scheme, "http") != 0)
    return ll_fail(err, LL_E_BAD_URL,
                   "unsupported URL scheme '%.32s': use https", u->scheme);
  if (curl_url_get(u->cu, CURLUPART_PATH, &u->path, 0) != CURLUE_OK || !u->path)
    return ll_fail(err, LL_E_BAD_URL, "malformed URL: no path");
  u->has_query = has_part(u->cu, CURLUPART_QUERY);
  return LL_OK;
}

ll_status ll_url_parse(const char *text, ll_url *u, ll_error *err) {
  *u = (ll_url){0};
  if (!text || !*text)
    return ll_fail(err, LL_E_BAD_URL, "empty URL");
  ll_status st = parse(text, u, err);
  if (st != LL_OK)
    ll_url_free(u);
  return st;
}

ll_status ll_url_check_secure(const ll_url *u, ll_url_http allow,
                              ll_error *err) {
  if (strcmp(u->scheme, "https") == 0 || ll_url_host_loopback(u->host))
    return LL_OK;
  if (allow == LL_URL_HTTP_LOOPBACK_OR_IMDS) {
    if (ll_url_host_imds(u->host))
      return LL_OK;
    return ll_fail(err, LL_E_INSECURE,
                   "refusing http:// to host '%.160s', neither loopback nor "
                   "IMDS: use https",
                   u->host);
  }
  return ll_fail(err, LL_E_INSECURE,
                 "refusing http:// to non-loopback host '%.160s': use https",
                 u->host);
}

ll_status ll_url_check(const char *text, ll_url_http allow, ll_error *err) {
  ll_url u;
  ll_status st = ll_url_parse(text, &u, err);
  if (st == LL_OK)
    st = ll_url_check_secure(&u, allow, err);
  ll_url_free(&u);
  return st;
}

ll_status ll_url_text(const ll_url *u, char **out, ll_error *err) {
  *out = NULL;
  char *t = NULL;
  CURLUcode uc = curl_url_get(u->cu, CURLUPART_URL, &t, 0);
  if (uc == CURLUE_OK && t && !(*out = strdup(t)))
    uc = CURLUE_OUT_OF_MEMORY;
  curl_free(t);
  if (uc == CURLUE_OUT_OF_MEMORY)
    return ll_fail(err, LL_E_NOMEM, "out of memory rebuilding a URL");
  if (uc != CURLUE_OK || !*out)
    return ll_fail(err, LL_E_BAD_URL, "URL cannot be rebuilt");
  return LL_OK;
}
