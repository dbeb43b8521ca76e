/* The run's state, derived only from ledger rows. The same fold serves the
 * guard (what may be sent next), classification (what a response means
 * against the documented baseline), recovery (state after a crash) and
 * `leaselua verify` (recompute everything from the export alone). */
#ifndef LL_MODEL_H
#define LL_MODEL_H

#include <cjson/cJSON.h>

#include "blob.h"
#include "decide.h" /* ll_decision, and the ll_model typedef */
#include "ll.h"

typedef enum {
  LL_PH_NONE = 0,   /* no lease taken in this lifecycle */
  LL_PH_LEASED,     /* an acquire (or renew) by holder was accepted */
  LL_PH_BREAK_SENT, /* break accepted (202), state not yet observed */
  LL_PH_BREAKING,   /* a fresh read observed breaking */
  LL_PH_BROKEN,     /* a fresh read observed broken */
  LL_PH_RELEASED,   /* holder released, or blob deleted */
  LL_PH_UNKNOWN     /* a lease action's outcome is unknown */
} ll_phase;

const char *ll_phase_name(ll_phase p);

/* Sentinels of the fold's revisions (a declared payload's revision is >= 0)
 * and of its break period. */
enum {
  LL_REV_NONE = -1,    /* none: no accepted write, no read-back owed, or
                          bytes that no declared payload explains */
  LL_REV_UNKNOWN = -2, /* not known: no content read yet, or a read with no
                          content_sha256 */
  LL_BREAK_NONE = -1   /* no break accepted in this lifecycle */
};

ll_model *ll_model_new(void);
void ll_model_free(ll_model *m);

/* Applies one row. For outcome, reconcile and window-finding rows, the
 * derived fields (result_classification, expectation, discrepancy,
 * deviation, content_revision, lease_state_before...) are computed from the
 * model: when fill is nonzero they are written into row; otherwise they are
 * compared with what row holds and a difference is LL_E_TAMPER naming the
 * field (this is how verify re-derives the run from the export). */
ll_status ll_model_apply(ll_model *m, cJSON *row, int fill,
                         ll_error *err) LL_WARN_UNUSED;

/* --- queries for the guard and the run --- */
int ll_model_has_manifest(const ll_model *m);
const char *ll_model_endpoint_kind(const ll_model *m);
const char *ll_model_api_version(const ll_model *m);
long ll_model_epoch(const ll_model *m);
int ll_model_destructive(const ll_model *m);
ll_phase ll_model_phase(const ll_model *m);
const char *ll_model_holder(const ll_model *m);
/* Number of mutations whose outcome is in doubt and not yet reconciled. */
int ll_model_doubts(const ll_model *m);
/* Event id of the i-th of those doubts (0 <= i < ll_model_doubts), or
 * NULL. Owned by the model. */
const char *ll_model_doubt_event(const ll_model *m, int i);
/* Whether a reconcile row's result settles the doubts it was made for: the
 * content is explained by the ledger (MATCH, DOUBTFUL_WRITE_COMMITTED,
 * DOUBTFUL_WRITE_NOT_PRESENT). INCOMPLETE settles nothing yet; MISMATCH
 * and REJECTED_REVISION_FOUND stand as RECONCILE reasons. The one copy of
 * this rule: the fold, the cleanup ETag and the scripts all ask it. */
int ll_model_reconcile_settles(const char *result);
/* The last reconcile of this lifecycle settled its doubts (as above); 0 if
 * it did not, or if there was none. */
int ll_model_reconciled(const ll_model *m);
/* Revision of an accepted Put not yet read back, or LL_REV_NONE. */
long ll_model_unreconciled(const ll_model *m);
/* Declared payload sha for (revision, writer), or NULL. */
const char *ll_model_declared(const ll_model *m, long revision,
                              const char *writer);
/* The i-th declaration folded (0-based, in row order): its revision, with
 * *writer and *sha (borrowed); LL_REV_NONE past the last. */
long ll_model_declaration(const ll_model *m, int i, const char **writer,
                          const char **sha);
int ll_model_probe_done(const ll_model *m);
/* The accepted break period, or LL_BREAK_NONE. */
long ll_model_break_sent(const ll_model *m);
/* The last break of this lifecycle answered BREAK_ACCEPTED_NOT_COMPLETE:
 * *end_ns, its answer's end (monotonic), and *hint_s, its x-ms-lease-time
 * (-1: none); both untouched when there is none. Nonzero when the answer
 * gave an x-ms-lease-time. */
int ll_model_break_hint(const ll_model *m, double *end_ns, long *hint_s);
/* Event ids of intents that have no outcome yet (for recovery). */
const cJSON *ll_model_open_intents(const ll_model *m);
/* Last fresh observation of this lifecycle: state and status ("" if none). */
const char *ll_model_observed_state(const ll_model *m);
const char *ll_model_observed_status(const ll_model *m);
long ll_model_last_accepted(const ll_model *m);
/* actor is listed in the manifest's permitted_actors. */
int ll_model_actor_permitted(const ll_model *m, const char *actor);
/* The manifest row's permitted_actors as folded (borrowed), or NULL
 * before the manifest row. */
const cJSON *ll_model_actors(const ll_model *m);
/* "kind: reason" of this session's stop row, or NULL: no request follows a
 * deliberate stop. */
const char *ll_model_stopped(const ll_model *m);
/* The lifecycle's blob was deleted after its lease was given up. */
int ll_model_cleanup_confirmed(const ll_model *m);

/* --- run-wide: the guard's scope is the blob (invariant 14) --- */
/* Some lifecycle of this run took (or observed) a lease on the blob. */
int ll_model_run_leased(const ll_model *m);
/* The last blob mutation was an accepted delete (a read then expects 404
 * BlobNotFound), and a read since answered 404 BlobNotFound. */
int ll_model_blob_deleted(const ll_model *m);
int ll_model_blob_known_absent(const ll_model *m);
/* The last blob mutation was an accepted release, and a properties read
 * since observed available/unlocked. */
int ll_model_release_confirmed(const ll_model *m);
/* Blob mutations (Create Container aside) answered in this lifecycle. */
int ll_model_lifecycle_mutations(const ll_model *m);
/* No Put Blob was answered yet in this lifecycle: the next Put is the
 * lifecycle's first write (the create). */
int ll_model_first_write_pending(const ll_model *m);
/* Invariant 15 (core/harm.c). The preflight read has been recorded, or a
 * mutation has already been sent (the run is past its first). */
int ll_model_preflight_done(const ll_model *m);
/* Why the run stopped before harming the target (the blob existed, or the
 * preflight got no usable answer), with its refusal code; NULL if not. */
const char *ll_model_stop(const ll_model *m, ll_code *code);
/* The next Put Blob creates this lifecycle's blob: no accepted or doubtful
 * Put yet in the lifecycle. It is sent with If-None-Match: *. */
int ll_model_creates(const ll_model *m);
/* ETag of the last accepted write of this lifecycle that was read back
 * ("" if none): the cleanup Delete's If-Match. */
const char *ll_model_cleanup_etag(const ll_model *m);
/* The If-Match of the run's Lease Blob acquire and break: the blob's ETag
 * as the run's own writes left it, "" when none is known (harm.c). */
const char *ll_model_lease_etag(const ll_model *m);
/* The lifecycle's own create was accepted and read back under the ETag it
 * was answered with (or a reconcile found its declared bytes after a
 * doubtful create), and the run has not deleted the blob since: only then
 * is the blob the run's to lease or delete (invariant 15). */
int ll_model_created(const ll_model *m);
/* Adds the decision row's "target_stop" ({kind, code, invariant, exit, message,
 * mutations_sent}) when the run stopped for invariant 15; else nothing.
 * exit is 64 (the blob exists, or cannot be reached or read: a
 * configuration to fix) or 2 (HOLD: the service gave no usable answer). */
void ll_model_stop_fields(const ll_model *m, cJSON *d);
/* That exit code (64 or 2) when invariant 15 stopped the run, else 0. */
int ll_model_stop_exit(const ll_model *m);

/* The first reason that makes the run HOLD whatever follows (an
 * EVIDENCE_ERROR, an unexplained discrepancy), or NULL. No reconcile lifts
 * it, so the guard refuses every further mutation while it stands. */
const char *ll_model_hold_reason(const ll_model *m);
/* Builds the reconcile row from the two most recent reads of this lifecycle
 * (properties, then content). Caller appends it. */
cJSON *ll_model_reconcile_row(const ll_model *m, ll_error *err);

#endif
