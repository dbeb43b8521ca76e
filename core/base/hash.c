/* SHA-256 (one-shot and incremental) from OpenSSL, and random version-4
 * GUIDs from the kernel's CSPRNG (getrandom(2)). */
#include "hash.h"

#include <errno.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/random.h>

struct ll_sha256 {
  EVP_MD_CTX *ctx;
  int finished; /* EVP refuses updates after final; so do we */
};

/* EVP_sha256() makes every EVP_DigestInit_ex look the implementation up
 * again; fetched once, the same implementation is looked up once. */
static pthread_once_t md_once = PTHREAD_ONCE_INIT;
static EVP_MD *md_fetched;

/* Our reference is dropped at exit, before OpenSSL's own clean-up (which
 * registered its handler earlier, so runs later). */
static void md_free(void) {
  EVP_MD_free(md_fetched);
  md_fetched = NULL;
}

static void md_fetch(void) {
  md_fetched = EVP_MD_fetch(NULL, "SHA256", NULL);
  if (md_fetched && atexit(md_free) != 0) {
    EVP_MD_free(md_fetched); /* no way to drop it later: do without */
    md_fetched = NULL;
  }
}

static const EVP_MD *sha256_md(void) {
  pthread_once(&md_once, md_fetch);
  return md_fetched ? md_fetched : EVP_sha256();
}

static void to_hex(const unsigned char *in, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[in[i] >> 4];
    out[2 * i + 1] = digits[in[i] & 0x0f];
  }
  out[2 * n] = '\0';
}

ll_status ll_sha256_hex(const void *data, size_t len, char out[LL_SHA256_HEX]) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int mdlen = 0;
  out[0] = '\0';
  if (!data && len > 0)
    return LL_E_USAGE;
  if (!EVP_Digest(data ? data : "", len, md, &mdlen, sha256_md(), NULL) ||
      mdlen != 32)
    return LL_E_INTERNAL;
  to_hex(md, mdlen, out);
  return LL_OK;
}

/* Owned by the caller; release with ll_sha256_free. NULL on failure. */
ll_sha256 *ll_sha256_new(void) {
  ll_sha256 *h = calloc(1, sizeof *h);
  if (!h)
    return NULL;
  h->ctx = EVP_MD_CTX_new();
  if (!h->ctx || !EVP_DigestInit_ex(h->ctx, sha256_md(), NULL)) {
    ll_sha256_free(h);
    return NULL;
  }
  return h;
}

ll_status ll_sha256_update(ll_sha256 *h, const void *data, size_t len) {
  if (!h || (!data && len > 0) || h->finished)
    return LL_E_USAGE;
  if (len == 0)
    return LL_OK;
  return EVP_DigestUpdate(h->ctx, data, len) ? LL_OK : LL_E_INTERNAL;
}

ll_status ll_sha256_final(ll_sha256 *h, char out[LL_SHA256_HEX]) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int mdlen = 0;
  out[0] = '\0';
  if (!h || h->finished)
    return LL_E_USAGE;
  h->finished = 1;
  if (!EVP_DigestFinal_ex(h->ctx, md, &mdlen) || mdlen != 32)
    return LL_E_INTERNAL;
  to_hex(md, mdlen, out);
  return LL_OK;
}

ll_status ll_sha256_reset(ll_sha256 *h) {
  if (!h)
    return LL_E_USAGE;
  h->finished = 1; /* until the init below succeeds */
  if (!EVP_DigestInit_ex(h->ctx, sha256_md(), NULL))
    return LL_E_INTERNAL;
  h->finished = 0;
  return LL_OK;
}

void ll_sha256_free(ll_sha256 *h) {
  if (!h)
    return;
  EVP_MD_CTX_free(h->ctx);
  free(h);
}

ll_status ll_guid_v4(char out[LL_GUID_LEN]) {
  unsigned char b[16];
  char hex[33];
  out[0] = '\0';
  /* 16 bytes from the kernel CSPRNG: a request of at most 256 bytes is
   * never short once the pool is initialised (it blocks until then). */
  ssize_t got;
  do
    got = getrandom(b, sizeof b, 0);
  while (got < 0 && errno == EINTR);
  if (got != (ssize_t)sizeof b)
    return LL_E_INTERNAL;
  b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
  b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
  to_hex(b, sizeof b, hex);
  ll_guid_format(hex, out);
  return LL_OK;
}

void ll_guid_format(const char hex[32], char out[LL_GUID_LEN]) {
  size_t o = 0;
  for (size_t i = 0; i < 32; i++) {
    if (i == 8 || i == 12 || i == 16 || i == 20)
      out[o++] = '-';
    out[o++] = hex[i];
  }
  out[o] = '\0';
}
