/* Shared by the credential tests: the secrets handed to the module, the
 * scan that no error message holds one, and small token builders. */
#include "auth_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jwt.h"
#include "testlib.h"

/* Every secret the tests hand to the module; no error message may hold
 * any of them. */
static const char *secrets[64];
static int n_secrets;

void add_secret(const char *s) {
  if (s && *s && n_secrets < 64)
    secrets[n_secrets++] = s;
}

static char *owned[64];
static int n_owned;

/* A malloc'd secret: scanned for until the end, then freed. */
char *keep(char *s) {
  add_secret(s);
  if (s && n_owned < 64)
    owned[n_owned++] = s;
  return s;
}

void check_clean(const ll_error *err) {
  for (int i = 0; i < n_secrets; i++) {
    if (strstr(err->message, secrets[i])) {
      ll_test_fail++;
      fprintf(stderr, "secret %d leaked into message: %s\n", i, err->message);
    } else {
      ll_test_pass++;
    }
  }
}

int64_t now_s(void) {
  return (int64_t)time(NULL);
}

/* ll_auth_new expected to fail with code; returns the error for more
 * checks on the message. */
ll_error expect_fail(const ll_auth_options *o, ll_clock *c, int64_t not_after,
                     ll_code code) {
  ll_error err = {0};
  ll_auth *a = ll_auth_new(o, c, not_after, &err);
  CHECK(a == NULL);
  CHECK_STR(ll_code_name(err.code), ll_code_name(code));
  check_clean(&err);
  ll_auth_free(a);
  return err;
}

char *jwt_of(const char *header, const char *payload) {
  char *h = ll_b64url_encode((const unsigned char *)header, strlen(header));
  char *p = ll_b64url_encode((const unsigned char *)payload, strlen(payload));
  size_t len = strlen(h) + strlen(p) + 8;
  char *out = malloc(len);
  snprintf(out, len, "%s.%s.c2ln", h, p);
  free(h);
  free(p);
  return out;
}

int secret_count(void) {
  return n_secrets;
}

void free_kept(void) {
  while (n_owned > 0)
    free(owned[--n_owned]);
}

void clear_credential_env(void) {
  static const char *const names[] = {"AZURE_STORAGE_TOKEN",
                                      "AZURE_STORAGE_SAS", "IDENTITY_ENDPOINT",
                                      "IDENTITY_HEADER"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    unsetenv(names[i]);
}
