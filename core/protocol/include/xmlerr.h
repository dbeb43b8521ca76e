/* Azure's XML error body (<Error><Code/><Message/></Error>), parsed with
 * expat. Tolerates a UTF-8 BOM. Never trusted for more than two strings. */
#ifndef LL_XMLERR_H
#define LL_XMLERR_H

#include <stddef.h>

#include "ll.h"

typedef struct {
  char code[128];
  char message[512];
} ll_xml_error;

/* LL_E_PARSE for a body that is not well-formed XML or that carries a
 * DOCTYPE (refused, so no entity is ever expanded); LL_E_TOO_LARGE over
 * 1 MiB; both fields empty when the body is empty or only whitespace. Only
 * text directly inside Error/Code and Error/Message is taken, verbatim and
 * truncated to the field (never mid UTF-8 sequence, nor inside a token of
 * letters, digits and -+/_%=, which is dropped whole: a lease ID or a
 * signature is never kept as its first bytes). LL_E_NOMEM when
 * expat ran out of memory (counted, see alloc.h). On error, out is all empty.
 */
ll_status ll_xmlerr_parse(const char *body, size_t len,
                          ll_xml_error *out) LL_WARN_UNUSED;

#endif
