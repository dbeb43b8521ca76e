/* A run of a SAS signature matched inside text widens over the rest of
 * the signature around it, whatever encoding each of its '+', '/' and '='
 * came back in (sanitize_forms.c registers the runs). */
#include <string.h>
#include <strings.h>

#include "sanitize_impl.h"

static int is_alnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
         (c >= 'A' && c <= 'Z');
}

/* Whether sec is a run form: letters and digits only, and a strict part of
 * another form with the same placeholder. Asked only where a secret
 * matched, which is rare. */
static int is_run_form(const char *const *secrets,
                       const char *const *placeholders, size_t n, size_t k) {
  const char *sec = secrets[k];
  size_t sl = strlen(sec);
  for (size_t j = 0; j < sl; j++)
    if (!is_alnum(sec[j]))
      return 0;
  for (size_t j = 0; j < n; j++)
    if (j != k && secrets[j] && strlen(secrets[j]) > sl &&
        strcmp(placeholders[j], placeholders[k]) == 0 &&
        strstr(secrets[j], sec))
      return 1;
  return 0;
}

/* The ways a signature's '+' and '/' (and '=' with pad) come back; hex in
 * either case. */
static const char *const separators[] = {"%252B", "%252F", "%2B", "%2F", "\\/",
                                         "+",     "/",     "-",   "_"};
static const char *const pads[] = {"%253D", "%3D", "="};

static size_t sep_len(const char *s, size_t len, size_t i, int pad) {
  const char *const *set = pad ? pads : separators;
  size_t m = pad ? sizeof pads / sizeof pads[0]
                 : sizeof separators / sizeof separators[0];
  for (size_t j = 0; j < m; j++) {
    size_t l = strlen(set[j]);
    if (l <= len - i && strncasecmp(s + i, set[j], l) == 0)
      return l;
  }
  return 0;
}

/* The length of a separator that ends at s[e] (exclusive), after from. */
static size_t sep_before(const char *s, size_t from, size_t e) {
  for (size_t j = 0; j < sizeof separators / sizeof separators[0]; j++) {
    size_t l = strlen(separators[j]);
    if (e - from >= l && strncasecmp(s + e - l, separators[j], l) == 0)
      return l;
  }
  return 0;
}

void ll_san_widen_run(const char *s, size_t len, size_t from, size_t *at,
                      size_t *end, const char *const *secrets,
                      const char *const *placeholders, size_t n, size_t k) {
  if (!is_run_form(secrets, placeholders, n, k))
    return;
  /* a signature is 44 bytes: a bounded walk, whatever the text holds */
  size_t a = *at, e = *end, l;
  for (int steps = 0; steps < 200 && a > from; steps++)
    if ((l = sep_before(s, from, a)) != 0)
      a -= l;
    else if (is_alnum(s[a - 1]))
      a--;
    else
      break;
  for (int steps = 0; steps < 64 && e < len && (l = sep_len(s, len, e, 0));
       steps++)
    for (e += l; e < len && is_alnum(s[e]); e++)
      ;
  e = ll_san_after_pad(s, len, e);
  *at = a;
  *end = e;
}

size_t ll_san_after_pad(const char *s, size_t len, size_t e) {
  size_t l;
  for (int pad = 0; pad < 2 && e < len && (l = sep_len(s, len, e, 1)); pad++)
    e += l;
  return e;
}
