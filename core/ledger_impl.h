/* Internal to the ledger: the line format shared by the writer (ledger.c)
 * and the reader (ledger_read.c). */
#ifndef LL_LEDGER_IMPL_H
#define LL_LEDGER_IMPL_H

#include <stddef.h>

#include "hash.h"
#include "ll.h"

/* The reader refuses longer lines, so the writer refuses to produce them. */
#define LL_LEDGER_MAX_LINE (1024u * 1024u)

#define ROW_HASH_KEY ",\"row_hash\":\""
#define ROW_HASH_KEY_LEN 13
#define HASH_HEX_LEN 64

/* SHA-256 of prev_hash_hex || a || b, as lowercase hex. */
ll_status ll_ledger_chain_hash(const char *prev, const char *a, size_t alen,
                               const char *b, size_t blen,
                               char out[LL_SHA256_HEX]) LL_WARN_UNUSED;

#endif
