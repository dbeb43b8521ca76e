/* A message that quotes values read from a ledger (verify's problems,
 * which go to stderr, --json and JUnit files), made safe to print. */
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "sanitize_impl.h"
#include "text.h"

static const char withheld[] = "<withheld>";

/* Whether the run p[0..len) of 16 hex digits (no hyphen) is a stretch of
 * one of the ids, in either case and whatever their hyphens. */
static int in_bound(const char *p, size_t len, const char *const *ids,
                    size_t n) {
  for (size_t i = 0; i < n; i++) {
    char flat[LL_SANITIZE_ID_MAX];
    size_t k = 0;
    for (const char *c = ids[i]; c && *c && k + 1 < sizeof flat; c++)
      if (*c != '-')
        flat[k++] = (char)(*c | 0x20);
    for (size_t at = 0; at + len <= k; at++) {
      size_t j = 0;
      while (j < len && (char)(p[j] | 0x20) == flat[at + j])
        j++;
      if (j == len)
        return 1;
    }
  }
  return 0;
}

/* In place: each run of hex digits and hyphens that holds 16 or more
 * digits becomes withheld[] (never longer than the run), but for a run of
 * exactly 16 digits without a hyphen that is no stretch of a bound ID: a
 * principal's fingerprint, which the export holds. */
static void withhold_hex(char *msg, const char *const *ids, size_t n) {
  char *out = msg;
  const char *p = msg;
  while (*p) {
    const char *q = p;
    size_t digits = 0;
    while (*q == '-' || ll_hexval(*q) >= 0) {
      digits += *q != '-';
      q++;
    }
    if (q == p) {
      *out++ = *p++;
      continue;
    }
    size_t len = (size_t)(q - p);
    int keep =
        digits < LL_SAN_CUT_MIN || (digits == LL_SAN_CUT_MIN && len == digits &&
                                    !in_bound(p, len, ids, n));
    if (!keep) {
      memcpy(out, withheld, sizeof withheld - 1);
      out += sizeof withheld - 1;
    } else {
      memmove(out, p, len);
      out += len;
    }
    p = q;
  }
  *out = '\0';
}

void ll_sanitize_message(char *msg, size_t cap, const char *const *ids,
                         size_t n) {
  if (!msg || cap == 0)
    return;
  size_t len = strnlen(msg, cap - 1);
  msg[len] = '\0';
  if (ll_sanitize_needs_replace(msg, len, NULL, 0)) {
    ll_buf b = {0};
    ll_sanitize_replace(msg, len, NULL, NULL, 0, &b);
    if (b.oom || !b.p)
      ll_strlcpy(msg,
                 "(the message is withheld: out of memory making it "
                 "safe to print)",
                 cap);
    else
      ll_strlcpy(msg, b.p, cap);
    free(b.p);
  }
  withhold_hex(msg, ids, n);
}
