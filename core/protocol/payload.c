/* The canonical payload bytes and their SHA-256, built from a declaration
 * (revision, writer) so that expected content never comes from the log. */
#include "payload.h"

#include <stdio.h>
#include <string.h>

ll_status ll_payload_build(long revision, const char *writer, ll_payload *out,
                           ll_error *err) {
  if (!out)
    return ll_fail(err, LL_E_USAGE, "payload: no output given");
  memset(out, 0, sizeof *out);
  if (revision < 0)
    return ll_fail(err, LL_E_USAGE,
                   "payload revision %ld is negative: declare a revision >= 0",
                   revision);
  if (!writer || !writer[0])
    return ll_fail(err, LL_E_USAGE,
                   "payload writer is empty: use 1 to %d of [A-Za-z0-9_-]",
                   LL_ALIAS_MAX - 1);
  size_t n = strlen(writer);
  if (n >= LL_ALIAS_MAX)
    return ll_fail(err, LL_E_USAGE,
                   "payload writer is %zu characters long: use 1 to %d of "
                   "[A-Za-z0-9_-]",
                   n, LL_ALIAS_MAX - 1);
  for (size_t i = 0; i < n; i++)
    if (!ll_alias_char(writer[i]))
      return ll_fail(err, LL_E_USAGE,
                     "payload writer has a character outside [A-Za-z0-9_-] "
                     "at position %zu: use only letters, digits, '_' and '-'",
                     i + 1);

  /* Keys sorted, no spaces: the bytes are the declaration, byte for byte. */
  int w = snprintf(out->bytes, sizeof out->bytes,
                   "{\"purpose\":\"lease-handoff-lab\",\"revision\":%ld,"
                   "\"writer\":\"%s\"}",
                   revision, writer);
  if (w < 0 || (size_t)w >= sizeof out->bytes)
    return ll_fail(err, LL_E_INTERNAL, "payload does not fit %d bytes",
                   LL_PAYLOAD_MAX);
  out->len = (size_t)w;
  out->revision = revision;
  memcpy(out->writer, writer, n + 1);
  ll_status st = ll_sha256_hex(out->bytes, out->len, out->sha256);
  if (st != LL_OK)
    return ll_fail(err, st, "payload: SHA-256 failed");
  return LL_OK;
}
