/* The forms a server may echo a secret in (ll_sanitize_secret_forms): a
 * SAS signature as the query holds it, and as its decoded characters,
 * which sanitize_sig.c matches in any spelling. */
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "secret.h"
#include "text.h"

size_t ll_sanitize_secret_forms(const char *secret, const char *name,
                                char *forms[LL_SANITIZE_FORMS_MAX]) {
  size_t len = secret ? strlen(secret) : 0, dl = 0;
  if (!secret || !(forms[0] = strdup(secret)))
    return 0;
  if (!name || strcmp(name, "sas") != 0)
    return 1;
  char *d = malloc(len + 2);
  if (!d) {
    ll_secret_free(forms[0]);
    return 0;
  }
  d[0] = LL_SANITIZE_SIG_MARK;
  if (ll_pct_decode(secret, len, d + 1, len + 1, &dl) != 0 || dl == 0) {
    ll_secret_free(d); /* not a query's value: as given only */
    return 1;
  }
  d[dl + 1] = '\0';
  forms[1] = d;
  return 2;
}
