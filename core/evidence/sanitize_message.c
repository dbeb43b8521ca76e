/* A message that quotes values read from a ledger (verify's problems,
 * which go to stderr, --json and JUnit files), made safe to print. */
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "sanitize_ids.h"
#include "sanitize_impl.h"
#include "text.h"

static const char withheld[] = "<withheld>";

/* Whether the 16 hex digits at p are a stretch of one of the ids: one of
 * its 16-digit windows, as the ledger's export scan matches a stretch
 * (ll_san_guid_windows; every lease ID verify binds is a GUID). */
static int in_bound(const char *p, const char *const *ids, size_t n) {
  uint64_t v = 0, w[LL_SAN_WINDOWS];
  for (size_t j = 0; j < LL_SAN_CUT_MIN; j++)
    v = v << 4 | (unsigned)ll_hexval(p[j]);
  for (size_t i = 0; i < n; i++)
    if (ids[i] && ll_san_guid_windows(ids[i], w))
      for (size_t o = 0; o < LL_SAN_WINDOWS; o++)
        if (w[o] == v)
          return 1;
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
        digits < LL_SAN_CUT_MIN ||
        (digits == LL_SAN_CUT_MIN && len == digits && !in_bound(p, ids, n));
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
