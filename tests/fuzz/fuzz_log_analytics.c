/* libFuzzer target: the analytics reader of the service's logs
 * (core/corroboration/logs_*.c), by the shared check of fuzz_log.h. */
#include "fuzz_log.h"
#include "logs_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return ll_fuzz_log(ll_log_parse_analytics, data, size);
}
