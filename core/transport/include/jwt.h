/* JWT plumbing for auth: base64url, and reading a token's claims without
 * verifying it (the service verifies; we only check expiry up front).
 * Below auth.h, which includes this header for its callers. */
#ifndef LL_JWT_H
#define LL_JWT_H

#include <stddef.h>
#include <stdint.h>

#include "ll.h"

/* Base64url without padding. Caller frees; NULL on out of memory. */
char *ll_b64url_encode(const unsigned char *data, size_t len);
/* Strict base64url decode of s[0..len); trailing '=' padding is tolerated.
 * On LL_OK *out is a NUL-terminated malloc'd buffer of *out_len bytes.
 * LL_E_PARSE when s is not base64url. */
ll_status ll_b64url_decode(const char *s, size_t len, unsigned char **out,
                           size_t *out_len) LL_WARN_UNUSED;

/* Decode a JWT's exp claim (seconds since epoch) without verifying it. */
ll_status ll_jwt_exp(const char *jwt, int64_t *out_exp,
                     ll_error *err) LL_WARN_UNUSED;

/* The claims of a token that name its principal (tid, oid, appid or azp,
 * idtyp), read without verifying the signature: that is the service's job.
 * A claim that is absent, not a string, longer than LL_JWT_CLAIM_MAX - 1
 * bytes or holding anything but printable ASCII is left "". */
#define LL_JWT_CLAIM_MAX 80
typedef struct {
  char tid[LL_JWT_CLAIM_MAX];
  char oid[LL_JWT_CLAIM_MAX];
  char appid[LL_JWT_CLAIM_MAX];
  char azp[LL_JWT_CLAIM_MAX];
  char idtyp[LL_JWT_CLAIM_MAX];
} ll_jwt_ids;
ll_status ll_jwt_ids_read(const char *jwt, ll_jwt_ids *out,
                          ll_error *err) LL_WARN_UNUSED;

/* The principal fingerprint (the contract of docs/EVIDENCE.md, "Identity"):
 * the first 16 lowercase hex digits of SHA-256 over
 * "leaselua-principal-v1:" + lowercase(tid) + ":" + lowercase(oid). A
 * reviewer computes it with
 *   printf 'leaselua-principal-v1:%s:%s' "$tid" "$oid" | sha256sum |
 *   cut -c1-16
 * out is "" (and the result LL_E_USAGE) when tid or oid is empty. */
#define LL_FINGERPRINT_LEN 17 /* 16 hex digits and NUL */
ll_status ll_principal_fingerprint(const char *tid, const char *oid,
                                   char out[LL_FINGERPRINT_LEN]) LL_WARN_UNUSED;
/* The one fingerprint rule both identities' fingerprints follow (the
 * principal's above, auth_ident.h's client ID): text[0..n) lowercased in
 * place (ASCII), then the first 16 hex digits of its SHA-256. */
ll_status ll_fingerprint_text(char *text, size_t n,
                              char out[LL_FINGERPRINT_LEN]) LL_WARN_UNUSED;

/* Mint the unsigned JWT Azurite's --oauth basic accepts: aud
 * https://storage.azure.com, iss https://sts.windows.net/<tenant>/, nbf and
 * exp around now. Caller frees. */
char *ll_auth_dev_token(int64_t now_s, int64_t lifetime_s);
/* The same for one actor (1 to 15 of [A-Za-z0-9_-]; NULL: the shared
 * token of ll_auth_dev_token): its oid is deterministic, the GUID formed
 * from the first 16 bytes of SHA-256("leaselua-dev-oid:" + actor) (version
 * 4 and variant bits set), so each actor has its own stable principal and
 * the same actor always the same one. NULL for a bad actor name. */
char *ll_auth_dev_token_for(int64_t now_s, int64_t lifetime_s,
                            const char *actor);
/* The oid ll_auth_dev_token_for gives actor, into out (37 bytes). */
int ll_auth_dev_oid(const char *actor, char out[37]);

#endif
