/* SHA-256 through OpenSSL EVP, as lowercase hex. */
#ifndef LL_HASH_H
#define LL_HASH_H

#include <stddef.h>

#include "ll.h"

#define LL_SHA256_HEX 65 /* 64 hex digits and NUL */

ll_status ll_sha256_hex(const void *data, size_t len,
                        char out[LL_SHA256_HEX]) LL_WARN_UNUSED;

/* Incremental form, for the hash chain (prev_hash || row bytes). */
typedef struct ll_sha256 ll_sha256;
ll_sha256 *ll_sha256_new(void);
ll_status ll_sha256_update(ll_sha256 *h, const void *data,
                           size_t len) LL_WARN_UNUSED;
ll_status ll_sha256_final(ll_sha256 *h, char out[LL_SHA256_HEX]) LL_WARN_UNUSED;
/* Starts h over for a new digest (after final or not): one context reused
 * for every row of a ledger instead of one made and freed per row. */
ll_status ll_sha256_reset(ll_sha256 *h) LL_WARN_UNUSED;
void ll_sha256_free(ll_sha256 *h);

/* Random version-4 GUID from OpenSSL's CSPRNG, lowercase with hyphens. */
#define LL_GUID_LEN 37
ll_status ll_guid_v4(char out[LL_GUID_LEN]) LL_WARN_UNUSED;
/* 32 hex digits as a GUID's 8-4-4-4-12, their case kept. */
void ll_guid_format(const char hex[32], char out[LL_GUID_LEN]);

#endif
