/* The proxy a run's requests go through, resolved once, in C, before the
 * first request: the operator's --proxy / --no-proxy, else the variables
 * libcurl itself would read for the account URL. The resolved value is
 * set explicitly on the transport (CURLOPT_PROXY, "" for none, so libcurl
 * never reads the environment behind our back) and recorded without its
 * userinfo: a proxy password is a secret and never leaves this struct. */
#ifndef LL_PROXY_H
#define LL_PROXY_H

#include "ll.h"

typedef struct {
  char url[1024];     /* for CURLOPT_PROXY, with userinfo; "" for none */
  char shown[300];    /* scheme://host:port, no userinfo; "" for none */
  char source[32];    /* "--proxy", "https_proxy", ... ; "none" */
  char noproxy[1024]; /* for CURLOPT_NOPROXY; "" for none */
  char noproxy_source[32];
} ll_proxy;

/* Precedence (libcurl's, for the scheme of account_url): option, else
 * <scheme>_proxy, else <SCHEME>_PROXY (not HTTP_PROXY: libcurl ignores the
 * upper-case one for http), else all_proxy, else ALL_PROXY; no_proxy then
 * NO_PROXY unless --no-proxy is given. get may be NULL (no environment).
 * A proxy that does not parse as scheme://host[:port] with a scheme
 * libcurl proxies through (http, https, socks4, socks4a, socks5,
 * socks5h) is LL_E_USAGE naming its source, never its text: libcurl
 * would take a proxy without a scheme as http://, but the record names
 * the proxy's type, so the operator states it. shown gives the port
 * libcurl connects to: the given one, else 443 for https and 1080 for
 * every other scheme (CURLOPT_PROXYPORT's default; http too, not 80). */
ll_status ll_proxy_resolve(const char *opt_proxy, const char *opt_noproxy,
                           const char *account_url,
                           const char *(*get)(const char *), ll_proxy *out,
                           ll_error *err) LL_WARN_UNUSED;

/* Wipes the userinfo-bearing copy. */
void ll_proxy_clear(ll_proxy *p);

#endif
