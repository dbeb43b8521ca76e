/* The forms a server may echo a secret in (ll_sanitize_secret_forms): a
 * SAS signature decoded, re-encoded, as base64url, with '+' read as a
 * space, and its long alphanumeric runs, which every encoding keeps. */
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "secret.h"
#include "text.h"

/* core with each '+' written as plus and each '/' as slash. */
static char *spelled(const char *core, const char *plus, const char *slash) {
  ll_buf b = {0};
  for (const char *p = core; *p; p++) {
    const char *w = *p == '+' ? plus : *p == '/' ? slash : NULL;
    ll_buf_put(&b, w ? w : p, w ? strlen(w) : 1);
  }
  ll_buf_put(&b, "", 0);
  if (b.oom) {
    ll_secret_free(b.p);
    return NULL;
  }
  return b.p;
}

/* Adds f (malloc'd, or NULL when out of memory) to forms unless it is
 * there; 0 when out of memory. */
static int add_form(char **forms, size_t *n, char *f) {
  if (!f)
    return 0;
  for (size_t j = 0; j < *n; j++)
    if (strcmp(forms[j], f) == 0) {
      ll_secret_free(f);
      return 1;
    }
  if (*n == LL_SANITIZE_FORMS_MAX) {
    ll_secret_free(f);
    return 1;
  }
  forms[(*n)++] = f;
  return 1;
}

static int is_alnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
         (c >= 'A' && c <= 'Z');
}

/* The runs of d's letters and digits of LL_SANITIZE_RUN_MIN bytes or more,
 * each as a form: whatever a server does to '+', '/' and '=' (encodes
 * them, mixes encodings, escapes '/' as JSON's "\/", or cuts the value),
 * such a run comes back as it is. */
static int add_runs(const char *d, char **forms, size_t *n) {
  for (size_t i = 0, e; d[i]; i = e) {
    for (e = i; is_alnum(d[e]); e++)
      ;
    if (e - i >= LL_SANITIZE_RUN_MIN && (i > 0 || d[e])) {
      char *f = malloc(e - i + 1);
      if (f) {
        memcpy(f, d + i, e - i);
        f[e - i] = '\0';
      }
      if (!add_form(forms, n, f))
        return 0;
    }
    if (e == i)
      e++;
  }
  return 1;
}

size_t ll_sanitize_secret_forms(const char *secret, const char *name,
                                char *forms[LL_SANITIZE_FORMS_MAX]) {
  size_t n = 1, len = secret ? strlen(secret) : 0, dl = 0;
  if (!secret || !(forms[0] = strdup(secret)))
    return 0;
  if (!name || strcmp(name, "sas") != 0)
    return n;
  char *d = malloc(len + 1);
  if (!d) {
    ll_secret_free(forms[0]);
    return 0;
  }
  if (ll_pct_decode(secret, len, d, len + 1, &dl) != 0)
    dl = 0;                          /* not a query's value: as given only */
  while (dl > 0 && d[dl - 1] == '=') /* a prefix of each padded form */
    dl--;
  d[dl] = '\0';
  /* decoded; percent-encoded (either case of hex matches), twice;
   * base64url; '+' read as a space by a form decoder */
  static const char *const spell[][2] = {
      {"+", "/"}, {"%2B", "%2F"}, {"%252B", "%252F"}, {"-", "_"}, {" ", "/"}};
  int ok = 1;
  for (size_t k = 0; ok && dl >= 8 && k < sizeof spell / sizeof spell[0]; k++)
    ok = add_form(forms, &n, spelled(d, spell[k][0], spell[k][1]));
  if (ok && dl >= 8)
    ok = add_runs(d, forms, &n);
  if (!ok)
    while (n > 0)
      ll_secret_free(forms[--n]);
  ll_secret_free(d);
  return n;
}
