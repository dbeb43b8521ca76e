/* The ledger's line format, printed once: cJSON's compact printing
 * (cJSON_PrintUnformatted) written straight into a reused buffer, so that
 * a row is serialized once and the chain hash, the secret scan and the
 * file all read that one line. */
#ifndef LL_LEDGER_LINE_H
#define LL_LEDGER_LINE_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "ll.h"

/* The deepest nesting cJSON reads back (its CJSON_NESTING_LIMIT): a row
 * nested deeper could be printed but never verified, so it is refused. */
#define LL_LINE_MAX_DEPTH 1000

/* Appends item printed exactly as cJSON_PrintUnformatted prints it (the
 * same bytes for every value: escapes, control characters, raw UTF-8,
 * numbers through the same %1.15g / %1.17g rule) to out, without its
 * NUL. Returns 0, appending nothing usable, when item cannot be printed
 * as plain JSON (a raw or invalid item, nesting deeper than
 * LL_LINE_MAX_DEPTH); out->oom says an allocation failed. */
int ll_line_print_json(ll_buf *out, const cJSON *item);

/* 1 when item and everything in it is plain JSON (no raw or invalid
 * item), the test the printer makes as it goes. */
int ll_line_plain(const cJSON *item);

#endif
