/* The transport rule for managed identity endpoints. Below auth.h, which
 * includes this header for its callers. */
#ifndef LL_AUTH_IDENTITY_H
#define LL_AUTH_IDENTITY_H

#include "ll.h"

/* Invariant 10 for identity endpoints (url.h, LL_URL_HTTP_LOOPBACK_OR_IMDS):
 * https, or http to loopback or to the IMDS link-local address
 * 169.254.169.254 (plain http by Azure's design). LL_E_INSECURE for other
 * http hosts, LL_E_BAD_URL otherwise (userinfo included). No I/O. */
ll_status ll_auth_check_identity_url(const char *url,
                                     ll_error *err) LL_WARN_UNUSED;

#endif
