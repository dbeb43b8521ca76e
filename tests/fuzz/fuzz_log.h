/* Shared by the log-reader fuzz targets (fuzz_log_*.c): any bytes in one
 * parser, never a crash; on success every record holds a time, an
 * operation and a status, and every field is NUL-terminated within its
 * size; a refusal always says why. */
#ifndef LL_FUZZ_LOG_H
#define LL_FUZZ_LOG_H

#include <stdint.h>
#include <string.h>

#include "log_rec.h"

#define LL_FUZZ_TERMINATED(f) (strnlen((f), sizeof(f)) < sizeof(f))

typedef ll_status (*ll_fuzz_log_parser)(ll_log_set *s, int file,
                                        const char *buf, size_t n,
                                        ll_error *err);

static inline int ll_fuzz_log(ll_fuzz_log_parser parse, const uint8_t *data,
                              size_t size) {
  static char name[] = "fuzz";
  ll_log_set s = {0};
  ll_error err = {0};
  s.files[0] = name;
  s.nfiles = 1;
  ll_status st = parse(&s, 0, (const char *)data, size, &err);
  for (size_t i = 0; st == LL_OK && i < s.n; i++) {
    const ll_log_rec *r = &s.recs[i];
    if (!r->time[0] || !r->operation[0] || !r->status[0] ||
        !LL_FUZZ_TERMINATED(r->time) || !LL_FUZZ_TERMINATED(r->operation) ||
        !LL_FUZZ_TERMINATED(r->status) ||
        !LL_FUZZ_TERMINATED(r->client_request_id) ||
        !LL_FUZZ_TERMINATED(r->path) || !LL_FUZZ_TERMINATED(r->oid) ||
        !LL_FUZZ_TERMINATED(r->tid))
      __builtin_trap();
  }
  if (st != LL_OK && !err.message[0])
    __builtin_trap();
  s.files[0] = NULL; /* not allocated */
  s.nfiles = 0;
  ll_log_set_free(&s);
  return 0;
}

#endif
