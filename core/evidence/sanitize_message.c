/* A message that quotes values read from a ledger (verify's problems,
 * which go to stderr, --json and JUnit files), made safe to print. */
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "sanitize_impl.h"
#include "text.h"

static const char withheld[] = "<withheld>";

/* In place: each run of hex digits and hyphens that holds 16 or more
 * digits becomes withheld[] (never longer than the run). */
static void withhold_hex(char *msg) {
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
    if (digits >= LL_SAN_CUT_MIN) {
      memcpy(out, withheld, sizeof withheld - 1);
      out += sizeof withheld - 1;
    } else {
      memmove(out, p, (size_t)(q - p));
      out += q - p;
    }
    p = q;
  }
  *out = '\0';
}

void ll_sanitize_message(char *msg, size_t cap) {
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
  withhold_hex(msg);
}
