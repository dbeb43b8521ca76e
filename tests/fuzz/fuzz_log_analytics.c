/* libFuzzer target: the analytics reader of the service's logs
 * (core/corroboration/logs*.c). Any bytes in, never a crash; on success
 * every record holds a time, an operation and a status, and every field
 * is NUL-terminated within its size. */
#include <stdint.h>
#include <string.h>

#include "logs_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TERMINATED(f) (strnlen((f), sizeof(f)) < sizeof(f))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ll_log_set s = {0};
  ll_error err = {0};
  s.files[0] = "fuzz";
  s.nfiles = 1;
  ll_status st = ll_log_parse_analytics(&s, 0, (const char *)data, size, &err);
  for (size_t i = 0; st == LL_OK && i < s.n; i++) {
    const ll_log_rec *r = &s.recs[i];
    if (!r->time[0] || !r->operation[0] || !r->status[0] ||
        !TERMINATED(r->time) || !TERMINATED(r->operation) ||
        !TERMINATED(r->status) || !TERMINATED(r->client_request_id) ||
        !TERMINATED(r->path) || !TERMINATED(r->oid) || !TERMINATED(r->tid))
      __builtin_trap();
  }
  if (st != LL_OK && !err.message[0])
    __builtin_trap();
  s.files[0] = NULL; /* not allocated */
  s.nfiles = 0;
  ll_log_set_free(&s);
  return 0;
}
