/* Helpers shared by the credential tests (tests/auth_fixture.c). */
#ifndef LL_AUTH_FIXTURE_H
#define LL_AUTH_FIXTURE_H

#include <stdint.h>

#include "auth.h"

/* Registers a secret: no error message may hold it (up to 64). */
void add_secret(const char *s);
/* A malloc'd secret: registered, and freed by free_kept(). */
char *keep(char *s);
/* One check per registered secret: err's message holds none of them. */
void check_clean(const ll_error *err);
int secret_count(void);
void free_kept(void);
int64_t now_s(void);
/* Unsets every credential variable the module reads, so that what the
 * caller's shell holds never takes part in a test. */
void clear_credential_env(void);
/* ll_auth_new expected to fail with code; returns the error for more
 * checks on the message. */
ll_error expect_fail(const ll_auth_options *o, ll_clock *c, int64_t not_after,
                     ll_code code);
/* An unsigned JWT from a header and payload (malloc'd). */
char *jwt_of(const char *header, const char *payload);

#endif
