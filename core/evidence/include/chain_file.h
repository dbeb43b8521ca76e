/* A standalone append-only, hash-chained JSONL file in the ledger's own
 * line format (ledger.h: seq first, prev_hash and row_hash last, the same
 * hash rule), for records a later command adds beside a bundle's ledgers
 * (corroboration.jsonl) without ever rewriting them. */
#ifndef LL_CHAIN_FILE_H
#define LL_CHAIN_FILE_H

#include <cjson/cJSON.h>

#include "ll.h"

/* Appends row to the chain in the file name inside the directory dirfd
 * (opened O_NOFOLLOW, created 0644 when absent). The existing lines are
 * read and their chain checked first (LL_E_TAMPER naming the bad line:
 * nothing is appended to a broken chain); row is then sealed in place
 * with the next seq and the last row_hash (or the genesis hash), written
 * in one write and fsync'd with the directory. *out_seq gets the seq. */
ll_status ll_chain_append(int dirfd, const char *name, cJSON *row,
                          long *out_seq, ll_error *err) LL_WARN_UNUSED;

#endif
