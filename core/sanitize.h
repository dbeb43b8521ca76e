/* The export sanitizer and the secret scan behind ll_ledger_sanitize and
 * ll_secret_scan (ledger.h), kept apart from the ledger's file handling. */
#ifndef LL_SANITIZE_H
#define LL_SANITIZE_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "ll.h"

#define LL_SANITIZE_ID_MAX 33 /* 32 hex digits and NUL */

/* The comparable form of a lease ID: hyphens dropped, lowercase. Returns 1
 * if id is a GUID (32 hex digits once hyphens are dropped), else 0. */
int ll_sanitize_norm_id(const char *id, char out[LL_SANITIZE_ID_MAX]);

/* A new deep copy of row in its export form (see ll_ledger_sanitize);
 * ids[i] (any case, any hyphens) becomes aliases[i]. Caller deletes. NULL
 * when out of memory or row is NULL. */
cJSON *ll_sanitize_row(const cJSON *row, const char *const *ids,
                       const char *const *aliases, size_t n);

typedef enum {
  LL_SCAN_NONE = 0,
  LL_SCAN_ID,     /* index: which of ids */
  LL_SCAN_SECRET, /* index: which of secrets */
  LL_SCAN_SIG     /* a "sig=" value that is not REDACTED */
} ll_scan_kind;

typedef struct {
  size_t hits;       /* every match of every pattern */
  ll_scan_kind kind; /* the match with the lowest offset */
  size_t index;
  size_t offset;
} ll_scan_result;

/* The search behind ll_secret_scan, reporting the first hit as data. */
void ll_sanitize_scan(const char *text, size_t len, const char *const *ids,
                      size_t n_ids, const char *const *secrets,
                      size_t n_secrets, ll_scan_result *out);

#endif
