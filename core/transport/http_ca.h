/* Private to the transport: the CA file's certificates, parsed once and
 * added to each new connection's store (http_ca.c). */
#ifndef LL_HTTP_CA_H
#define LL_HTTP_CA_H

#include <curl/curl.h>

#include "ll.h"

/* The certificates of the CA file's bytes, as libcurl would parse them for
 * every new connection (PEM_X509_INFO_read_bio); NULL when libcurl's TLS
 * backend is not OpenSSL, or the bytes are not plainly certificates (a
 * CRL, a key, none at all): then the bytes go to libcurl as they are. */
void *ll_http_ca_parse(const ll_buf *ca);
void ll_http_ca_free(void *certs);
/* CURLOPT_SSL_CTX_FUNCTION, with the parsed certificates as
 * CURLOPT_SSL_CTX_DATA: adds them to the new connection's store. */
CURLcode ll_http_ca_ssl_ctx(CURL *c, void *ssl_ctx, void *certs);

#endif
