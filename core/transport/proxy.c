/* Which proxy carries the requests (proxy.h): resolved once, recorded
 * without its credentials. */
#include "proxy.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "url.h"

static const char *const schemes[] = {"http",    "https",  "socks4",
                                      "socks4a", "socks5", "socks5h"};

static const char *env(const char *(*get)(const char *), const char *name) {
  const char *v = get ? get(name) : NULL;
  return v && *v ? v : NULL;
}

/* scheme://host:port of text into shown, and whether its host is
 * loopback; LL_E_USAGE naming source. */
static ll_status show(const char *text, const char *source, char *shown,
                      size_t cap, int *loopback, ll_error *err) {
  CURLU *u = curl_url();
  char *scheme = NULL, *host = NULL, *port = NULL;
  ll_status st = LL_OK;
  if (!u) {
    st = ll_fail(err, LL_E_NOMEM, "out of memory");
    goto cleanup;
  }
  int known = 0;
  if (!strstr(text, "://") ||
      curl_url_set(u, CURLUPART_URL, text, CURLU_NON_SUPPORT_SCHEME) !=
          CURLUE_OK ||
      curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
      curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host) {
    st = ll_fail(err, LL_E_USAGE,
                 "the proxy from %s is not a URL: give scheme://host:port",
                 source);
    goto cleanup;
  }
  for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++)
    known |= strcasecmp(scheme, schemes[i]) == 0;
  if (!known) {
    st = ll_fail(err, LL_E_USAGE,
                 "the proxy from %s has scheme '%.16s': give http, https, "
                 "socks4, socks4a, socks5 or socks5h",
                 source, scheme);
    goto cleanup;
  }
  /* No port: libcurl's proxy default (CURLOPT_PROXYPORT), 443 for an
   * https proxy and 1080 for every other, http included: not the scheme's
   * own 80, which is what CURLU_DEFAULT_PORT would say. */
  if (curl_url_get(u, CURLUPART_PORT, &port, 0) != CURLUE_OK)
    port = NULL;
  *loopback = ll_url_host_loopback(host);
  const char *dflt = strcasecmp(scheme, "https") == 0 ? "443" : "1080";
  int n = snprintf(shown, cap, "%s://%s:%s", scheme, host, port ? port : dflt);
  if (n < 0 || (size_t)n >= cap)
    st = ll_fail(err, LL_E_USAGE, "the proxy from %s is too long", source);
cleanup:
  curl_free(scheme);
  curl_free(host);
  curl_free(port);
  curl_url_cleanup(u);
  return st;
}

/* Whether url's host is loopback (0 when url does not parse: the run
 * refuses such a URL itself), with the host, brackets dropped, in bare. */
static int target_loopback(const char *url, char *bare, size_t cap) {
  ll_url u;
  ll_error e = {0};
  bare[0] = '\0';
  if (!url || ll_url_parse(url, &u, &e) != LL_OK)
    return 0;
  const char *h = u.host;
  size_t n = strlen(h);
  if (n >= 2 && h[0] == '[' && h[n - 1] == ']')
    h++, n -= 2;
  snprintf(bare, cap, "%.*s", (int)n, h);
  int lo = ll_url_host_loopback(u.host);
  ll_url_free(&u);
  return lo;
}

/* Whether libcurl's no-proxy list np certainly sends host direct: "*", or
 * an entry naming host itself (case aside, a leading dot and brackets
 * dropped), or an IPv4 CIDR entry holding it. Anything else (a domain
 * suffix, an IPv6 range) is not counted: the proxy is then refused, never
 * trusted to be bypassed. */
static int bypassed(const char *np, const char *host) {
  struct in_addr h4;
  int v4 = inet_pton(AF_INET, host, &h4) == 1;
  for (const char *p = np; p && *p;) {
    while (*p == ' ' || *p == '\t' || *p == ',')
      p++;
    const char *e = p;
    while (*e && *e != ',')
      e++;
    size_t n = (size_t)(e - p);
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
      n--;
    char ent[256];
    snprintf(ent, sizeof ent, "%.*s", (int)n, p);
    char *q = ent[0] == '.' ? ent + 1 : ent;
    size_t qn = strlen(q);
    if (qn >= 2 && q[0] == '[' && q[qn - 1] == ']')
      q[qn - 1] = '\0', q++;
    char *slash = strchr(q, '/');
    struct in_addr net;
    if (strcmp(q, "*") == 0 || (n > 0 && strcasecmp(q, host) == 0))
      return 1;
    if (slash && v4) {
      *slash = '\0';
      char *end = NULL;
      long bits = strtol(slash + 1, &end, 10);
      if (end && !*end && bits >= 0 && bits <= 32 &&
          inet_pton(AF_INET, q, &net) == 1) {
        uint32_t mask = bits ? 0xffffffffu << (32 - bits) : 0;
        if ((ntohl(h4.s_addr) & mask) == (ntohl(net.s_addr) & mask))
          return 1;
      }
    }
    p = e;
  }
  return 0;
}

ll_status ll_proxy_resolve(const char *opt_proxy, const char *opt_noproxy,
                           const char *account_url,
                           const char *(*get)(const char *), ll_proxy *out,
                           ll_error *err) {
  memset(out, 0, sizeof *out);
  int http = account_url && strncasecmp(account_url, "http://", 7) == 0;
  const char *names[] = {http ? "http_proxy" : "https_proxy",
                         http ? NULL : "HTTPS_PROXY", "all_proxy", "ALL_PROXY"};
  const char *v = NULL, *src = "none";
  int proxy_lo = 0;
  if (opt_proxy && *opt_proxy) {
    v = opt_proxy;
    src = "--proxy";
  } else {
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !v; i++)
      if (names[i] && (v = env(get, names[i])) != NULL)
        src = names[i];
  }
  ll_strlcpy(out->source, src, sizeof out->source);
  if (v) {
    if (!ll_strlcpy(out->url, v, sizeof out->url))
      return ll_fail(err, LL_E_USAGE, "the proxy from %s is too long", src);
    ll_status st = show(v, src, out->shown, sizeof out->shown, &proxy_lo, err);
    if (st != LL_OK) {
      ll_proxy_clear(out);
      return st;
    }
  }
  const char *np = NULL, *nsrc = "none";
  if (opt_noproxy && *opt_noproxy)
    np = opt_noproxy, nsrc = "--no-proxy";
  else if ((np = env(get, "no_proxy")) != NULL)
    nsrc = "no_proxy";
  else if ((np = env(get, "NO_PROXY")) != NULL)
    nsrc = "NO_PROXY";
  ll_strlcpy(out->noproxy_source, nsrc, sizeof out->noproxy_source);
  if (np && !ll_strlcpy(out->noproxy, np, sizeof out->noproxy)) {
    ll_proxy_clear(out);
    return ll_fail(err, LL_E_USAGE, "the no-proxy list from %s is too long",
                   nsrc);
  }
  /* Invariant 10: a loopback target is this machine's emulator; through a
   * proxy on another host it is that host's loopback, and over http the
   * bearer token would cross the network in clear. */
  char host[256];
  if (v && !proxy_lo && target_loopback(account_url, host, sizeof host) &&
      !bypassed(np, host)) {
    ll_proxy_clear(out);
    return ll_fail(err, LL_E_INSECURE,
                   "the proxy from %s (%s) is not on loopback, and the "
                   "account URL names loopback: requests%s would leave this "
                   "machine; %s %s for this run, add %s to no_proxy, or give "
                   "a loopback proxy",
                   src, out->shown, http ? " and the token, in clear," : "",
                   strcmp(src, "--proxy") == 0 ? "drop" : "unset", src, host);
  }
  return LL_OK;
}

void ll_proxy_clear(ll_proxy *p) {
  volatile char *s = p->url;
  for (size_t i = 0; i < sizeof p->url; i++)
    s[i] = 0;
}
