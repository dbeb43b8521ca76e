/* The CA file's certificates, parsed once at the transport's creation and
 * added to each new connection's store, instead of libcurl parsing the
 * same bytes again for every connection (CURLOPT_CAINFO_BLOB). */
#include "http_ca.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdint.h>
#include <string.h>

static int ssl_is_openssl(void) {
  const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
  return v && v->ssl_version && strncmp(v->ssl_version, "OpenSSL/", 8) == 0;
}

/* NULL unless every entry of the bytes is a certificate (no CRL, no key)
 * and there is at least one: anything else keeps libcurl's own path. */
void *ll_http_ca_parse(const ll_buf *ca) {
  if (!ca->p || ca->n == 0 || ca->n > INT32_MAX || !ssl_is_openssl())
    return NULL;
  BIO *bio = BIO_new_mem_buf(ca->p, (int)ca->n);
  if (!bio)
    return NULL;
  STACK_OF(X509_INFO) *inf = PEM_X509_INFO_read_bio(bio, NULL, NULL, NULL);
  BIO_free(bio);
  ERR_clear_error();
  STACK_OF(X509) *certs = inf ? sk_X509_new_null() : NULL;
  int n = inf ? sk_X509_INFO_num(inf) : 0, ok = certs && n > 0;
  for (int i = 0; ok && i < n; i++) {
    X509_INFO *it = sk_X509_INFO_value(inf, i);
    if (!it->x509 || it->crl || it->x_pkey || !sk_X509_push(certs, it->x509))
      ok = 0;
    else
      it->x509 = NULL; /* owned by certs now */
  }
  sk_X509_INFO_pop_free(inf, X509_INFO_free);
  if (!ok) {
    sk_X509_pop_free(certs, X509_free);
    return NULL;
  }
  return certs;
}

void ll_http_ca_free(void *certs) {
  sk_X509_pop_free((STACK_OF(X509) *)certs, X509_free);
}

/* Runs after libcurl set up the new connection's store (flags, the CA
 * path) and before the handshake: adds the CA file's certificates, as
 * CURLOPT_CAINFO_BLOB would have. */
CURLcode ll_http_ca_ssl_ctx(CURL *c, void *ssl_ctx, void *certs) {
  STACK_OF(X509) *ca = certs;
  (void)c;
  X509_STORE *store = SSL_CTX_get_cert_store(ssl_ctx);
  /* libcurl installs a message callback (CURLOPT_VERBOSE with a debug
   * function) that formats a line of text per TLS record for
   * CURLINFO_SSL_DATA_*; on_debug records none of it, only request heads
   * (CURLINFO_HEADER_OUT, which does not go through this callback). */
  SSL_CTX_set_msg_callback(ssl_ctx, NULL);
  if (!store)
    return CURLE_SSL_CACERT_BADFILE;
  for (int i = 0; i < sk_X509_num(ca); i++)
    if (!X509_STORE_add_cert(store, sk_X509_value(ca, i)))
      return CURLE_SSL_CACERT_BADFILE;
  return CURLE_OK;
}
