/* The ledger's bindings (alias to lease ID) and secrets, and the export
 * form they give a row (ledger_secrets.c). Included by ledger.h. */
#ifndef LL_LEDGER_SECRETS_H
#define LL_LEDGER_SECRETS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "ll.h"

typedef struct ll_ledger ll_ledger;

/* Registers a real lease ID and its alias for the export sanitizer. Called
 * for bindings seen in rows ("record":"lease_bind") automatically too. */
ll_status ll_ledger_bind_alias(ll_ledger *l, const char *alias,
                               const char *lease_id,
                               ll_error *err) LL_WARN_UNUSED;
/* The alias bound to lease_id (compared as lease IDs are: case and
 * hyphens aside), or NULL: every binding of the run so far, a writer's
 * earlier IDs and the lease table's X included. */
const char *ll_ledger_alias_of(const ll_ledger *l, const char *lease_id);
/* Registers an extra secret (token, SAS sig) that neither ledger may
 * hold; a row containing one is refused (LL_E_INTERNAL) rather than
 * written. name gives its placeholder for ll_ledger_redact,
 * "{{secret:NAME}}" (ll_ledger_add_secret: "{{secret:secret}}"). */
ll_status ll_ledger_add_secret(ll_ledger *l, const char *secret,
                               ll_error *err) LL_WARN_UNUSED;
ll_status ll_ledger_add_named_secret(ll_ledger *l, const char *secret,
                                     const char *name,
                                     ll_error *err) LL_WARN_UNUSED;

/* For a row whose values came from the service (an outcome row): every
 * registered secret in its string values becomes its placeholder, and
 * every "sig=" value that is not REDACTED becomes sig=REDACTED, in place;
 * then "notes" says so ("the service echoed a secret in error_message,
 * server; replaced by {{secret:token}}", after any note already there).
 * A service that echoes a credential must not cost the outcome of a
 * request that was sent: without this the append would refuse the row.
 * LL_E_NOMEM leaves the row partly replaced, and the append refuses it. */
ll_status ll_ledger_redact(const ll_ledger *l, cJSON *row, ll_error *err);
/* The registered secrets and their placeholders, borrowed; the count. */
size_t ll_ledger_secrets(const ll_ledger *l, const char *const **secrets,
                         const char *const **placeholders);

/* The export form of a protected row: keys "lease_real_id",
 * "authorization", "cookie", "set-cookie" dropped at any depth; every
 * string value containing a bound lease ID (case- and hyphen-insensitive)
 * has it replaced by the alias; "sig=" query values replaced by
 * "sig=REDACTED"; "Bearer <x>" replaced by "Bearer REDACTED". seq kept,
 * prev_hash/row_hash removed (the export chain adds its own). */
cJSON *ll_ledger_sanitize(const ll_ledger *l, const cJSON *row);

#endif
