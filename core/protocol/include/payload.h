/* Canonical, inert payload bytes, declared before execution (invariant 6):
 * {"purpose":"lease-handoff-lab","revision":N,"writer":"X"} */
#ifndef LL_PAYLOAD_H
#define LL_PAYLOAD_H

#include "hash.h"
#include "ll.h"

#define LL_PAYLOAD_MAX 128

typedef struct {
  long revision;
  char writer[LL_ALIAS_MAX]; /* an alias: [A-Za-z0-9_-]{1,15} */
  char bytes[LL_PAYLOAD_MAX];
  size_t len;
  char sha256[LL_SHA256_HEX];
} ll_payload;

/* Refuses negative revisions and writers outside [A-Za-z0-9_-]{1,15}. */
ll_status ll_payload_build(long revision, const char *writer, ll_payload *out,
                           ll_error *err) LL_WARN_UNUSED;

#endif
