/* libFuzzer target: Azure's XML error body parser (core/xmlerr). Any bytes
 * in, never a crash, and the two fields always NUL-terminated. */
#include <stdint.h>
#include <string.h>

#include "xmlerr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ll_xml_error e;
  ll_status st = ll_xmlerr_parse((const char *)data, size, &e);
  /* the contract: fields are strings, and empty on error */
  if (strnlen(e.code, sizeof e.code) == sizeof e.code ||
      strnlen(e.message, sizeof e.message) == sizeof e.message)
    __builtin_trap();
  if (st != LL_OK && (e.code[0] || e.message[0]))
    __builtin_trap();
  return 0;
}
