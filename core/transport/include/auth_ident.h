/* What a credential says about its principal, without its secret: the
 * JWT claims that name it (jwt.h) or a SAS's public fields, and the
 * principal fingerprint. Below auth.h, which includes this header for its
 * callers. */
#ifndef LL_AUTH_IDENT_H
#define LL_AUTH_IDENT_H

#include "jwt.h"

#define LL_SAS_FIELD_MAX 80

/* A SAS's fields that are not its signature (sig= is never copied here):
 * version, resource, permissions, start and expiry, and for a user
 * delegation SAS the signer's object and tenant IDs. "" when absent. */
typedef struct {
  char sv[LL_SAS_FIELD_MAX], sr[LL_SAS_FIELD_MAX], sp[LL_SAS_FIELD_MAX];
  char st[LL_SAS_FIELD_MAX], se[LL_SAS_FIELD_MAX];
  char skoid[LL_SAS_FIELD_MAX], sktid[LL_SAS_FIELD_MAX];
} ll_sas_fields;

typedef struct {
  /* "jwt" (a bearer token whose claims were read), "managed_identity"
   * (the same, obtained from an identity endpoint), "sas", or "opaque" */
  const char *kind;
  ll_jwt_ids ids; /* bearer kinds */
  int is_sas;     /* sas holds the SAS's fields */
  ll_sas_fields sas;
  /* jwt.h's fingerprint of tid and oid (a user delegation SAS: of sktid
   * and skoid); "" when they are not both known */
  char fingerprint[LL_FINGERPRINT_LEN];
  /* A user-assigned managed identity's client ID, by fingerprint only
   * (the first 16 hex of SHA-256 over "leaselua-client-id-v1:" and the
   * lowercased ID): configuration the operator chose, recorded without
   * the ID, which the token's appid repeats; "" otherwise */
  char client_id_fingerprint[LL_FINGERPRINT_LEN];
} ll_auth_ident;

/* The public fields of a SAS query (percent-decoded; a value that does
 * not fit, or holds anything but printable ASCII, is left ""). */
void ll_sas_fields_read(const char *sas, ll_sas_fields *out);

#endif
