/* The guard: refusals that keep a script from weakening a safety rule.
 * It runs before the intent row, so a refused request never leaves. */
#include "guard.h"

#include <string.h>

/* Only the codes ll_guard_check and ll_guard_lifecycle return; the number
 * itself is the code's (ll_code_invariant). */
int ll_guard_invariant(ll_code code) {
  switch (code) {
  case LL_E_MANIFEST:
  case LL_E_HOLD:
  case LL_E_UNRECONCILED:
  case LL_E_LEASE_PRECONDITION:
  case LL_E_UNDECLARED:
  case LL_E_SCOPE:
  case LL_E_TARGET_EXISTS:
  case LL_E_PREFLIGHT:
  case LL_E_DELETE_UNCONFIRMED:
  case LL_E_NOT_CREATED:
    return ll_code_invariant(code);
  default:
    return 0; /* LL_E_ORDER names no invariant; other codes are not refusals
                 of the guard */
  }
}

static int is_lease_op(ll_op op) {
  return op == LL_OP_LEASE_ACQUIRE || op == LL_OP_LEASE_BREAK ||
         op == LL_OP_LEASE_CHANGE || op == LL_OP_LEASE_RELEASE ||
         op == LL_OP_LEASE_RENEW;
}

ll_status ll_guard_check(const ll_model *m, const ll_guard_req *r,
                         ll_error *err) {
  const char *actor = r->actor ? r->actor : "?";
  int mutation = ll_op_is_mutation(r->op);
  ll_phase ph = ll_model_phase(m);

  if (!ll_model_has_manifest(m))
    return ll_fail(err, LL_E_MANIFEST,
                   "no request before the run manifest is recorded "
                   "(invariant 11): record the manifest first");
  const char *stopped = ll_model_stopped(m);
  if (stopped)
    return ll_fail(err, LL_E_ORDER,
                   "%s refused: the flow stopped (%.300s); no request follows "
                   "a stop: recover the run to go on",
                   ll_op_name(r->op), stopped);
  if (!ll_model_actor_permitted(m, actor) ||
      (r->lease && !ll_model_actor_permitted(m, r->lease)))
    return ll_fail(err, LL_E_MANIFEST,
                   "actor %s is not among the manifest's permitted_actors "
                   "(invariant 11): add it to the manifest or use another",
                   r->lease && ll_model_actor_permitted(m, actor) ? r->lease
                                                                  : actor);
  if (!mutation)
    return LL_OK; /* reads never change state and are always allowed */
  ll_code stop_code = LL_OK;
  const char *stop = ll_model_stop(m, &stop_code);
  if (stop)
    return ll_fail(err, stop_code, "%s refused (invariant 15): %s",
                   ll_op_name(r->op), stop);
  /* The seed: an unexplained discrepancy is HOLD, and a writer that loses
   * confidence stops mutating. A doubt about the evidence itself, or a
   * reconcile that found another writer's object, is settled by a person,
   * not by a reconcile, so it blocks for the rest of the run; it is said
   * first, even with a doubt open, since no reconcile lifts it. */
  const char *held = ll_model_hold_reason(m);
  if (held)
    return ll_fail(err, LL_E_HOLD,
                   "%s refused: the run can only end HOLD (%.400s) and no "
                   "reconcile lifts that (invariant 3); no mutation follows a "
                   "doubt about the evidence: leave the blob for the operator",
                   ll_op_name(r->op), held);
  if (ll_model_doubts(m) > 0)
    return ll_fail(err, LL_E_HOLD,
                   "%s refused: a request's outcome is unknown (invariant "
                   "3); run reconcile (properties, content read, comparison) "
                   "before any further mutation",
                   ll_op_name(r->op));
  if (ll_model_unreconciled(m) >= 0)
    return ll_fail(err, LL_E_UNRECONCILED,
                   "%s refused: accepted revision %ld has not been read back "
                   "(invariant 4); read the blob first",
                   ll_op_name(r->op), ll_model_unreconciled(m));
  /* Invariant 15: the blob is the run's own only once the lifecycle's
   * create (If-None-Match: *) was accepted and read back; before it, or
   * after the run deleted it, whatever blob is there may be another
   * writer's, and a lease operation on it (a break above all) harms it. */
  if (is_lease_op(r->op) && !ll_model_created(m))
    return ll_fail(err, LL_E_NOT_CREATED,
                   "%s refused (invariant 15): the lifecycle's own create "
                   "(If-None-Match: *) has not been accepted and read back%s, "
                   "so a blob there may be another writer's: create the blob "
                   "and read it back first, or leave it for the operator",
                   ll_op_name(r->op),
                   ll_model_blob_deleted(m) ? " since the run deleted it" : "");
  /* ...and its acquire and break go only on the generation the run's own
   * writes left (If-Match, run_request.c): with no answer naming that
   * ETag, a replaced blob could be leased or its lease broken. A lease
   * table's cells measure the unconditioned outcomes. */
  if (ll_op_lease_conditioned(r->op) && !r->cell && !ll_model_lease_etag(m)[0])
    return ll_fail(err, LL_E_NOT_CREATED,
                   "%s refused (invariant 15): no answer of this run names "
                   "the ETag its last write left (the Put and its read-back "
                   "came without one), so the request cannot be conditioned "
                   "on it (If-Match) and could reach another writer's "
                   "object: the blob is left for the operator",
                   ll_op_name(r->op));
  if (r->bound && !r->lease)
    return ll_fail(err, LL_E_LEASE_PRECONDITION,
                   "writer %s is bound to a lease and never writes without "
                   "x-ms-lease-id (invariant 5)",
                   actor);
  if (r->op == LL_OP_PUT_BLOB) {
    if (r->revision < 0 || !ll_model_declared(m, r->revision, actor))
      return ll_fail(err, LL_E_UNDECLARED,
                     "revision %ld by %s was not declared before execution "
                     "(invariant 6): declare(revision, writer) first",
                     r->revision, actor);
    /* "The run has leased this blob" is run-wide: a new lifecycle does
     * not make an unleased write safe again. Its one exception is the
     * lifecycle's create, once a read confirmed the blob absent. */
    if (!r->lease && !ll_model_destructive(m) &&
        (ph != LL_PH_NONE || ll_model_run_leased(m))) {
      int locked = ph == LL_PH_LEASED || ph == LL_PH_BREAKING ||
                   (ph == LL_PH_BREAK_SENT && ll_model_break_sent(m) > 0);
      int create = ph == LL_PH_NONE && ll_model_blob_known_absent(m);
      if (!(r->control && locked) && !create)
        return ll_fail(err, LL_E_LEASE_PRECONDITION,
                       "unconditioned write of revision %ld refused: the run "
                       "has leased this blob, and an unleased write is "
                       "allowed only as a negative control while the lease "
                       "is held, as a new lifecycle's create once a read "
                       "confirmed the blob absent, or in a lifecycle "
                       "declared destructive (invariant 5)",
                       r->revision);
    }
  }
  if (r->op == LL_OP_DELETE_BLOB && !r->lease &&
      (ph == LL_PH_LEASED || ph == LL_PH_BREAKING || ph == LL_PH_BREAK_SENT ||
       ph == LL_PH_UNKNOWN))
    return ll_fail(err, LL_E_LEASE_PRECONDITION,
                   "unconditioned delete refused while the lease is %s: "
                   "release it or leave the blob for the operator",
                   ll_phase_name(ph));
  if (r->op == LL_OP_DELETE_BLOB && !ll_model_cleanup_etag(m)[0])
    return ll_fail(err, LL_E_DELETE_UNCONFIRMED,
                   "delete refused (invariant 15): no write of this run in "
                   "this lifecycle was accepted and read back, so there is "
                   "no ETag to condition the delete on (If-Match): the blob "
                   "is left for the operator");
  if (r->op == LL_OP_DELETE_BLOB && !ll_model_created(m))
    return ll_fail(err, LL_E_DELETE_UNCONFIRMED,
                   "delete refused (invariant 15): the run already deleted "
                   "its blob in this lifecycle, and a blob there now is not "
                   "its own: the blob is left for the operator");
  /* Invariant 15: a lease the run only saw (its own acquire's answer was
   * lost, then a read found the blob leased) may be another party's, and
   * a break would break it. The lease table's cells break leases their own
   * set-up took. */
  if (r->op == LL_OP_LEASE_BREAK && !r->cell && ph == LL_PH_LEASED &&
      !ll_model_holder(m)[0])
    return ll_fail(err, LL_E_HOLD,
                   "break refused: the blob is leased, but no "
                   "acquire or renew of the run was answered for that lease, "
                   "so it may be another party's: the blob is left for the "
                   "operator");
  /* "early" ends once broken is observed: after a crash inside the probe,
   * recovery may complete the handoff without a window finding. */
  if (r->op == LL_OP_LEASE_ACQUIRE && !r->cell && ll_model_break_sent(m) >= 0 &&
      ph != LL_PH_BROKEN && ph != LL_PH_RELEASED && !ll_model_probe_done(m) &&
      r->lease && strcmp(r->lease, ll_model_holder(m)) != 0)
    return ll_fail(err, LL_E_ORDER,
                   "acquire by %s refused: after a break, the new writer may "
                   "try to acquire only after the breaking-window probe",
                   r->lease);
  return LL_OK;
}

ll_status ll_guard_lifecycle(const ll_model *m, ll_error *err) {
  long epoch = ll_model_epoch(m);
  if (!ll_model_has_manifest(m))
    return ll_fail(err, LL_E_MANIFEST,
                   "no lifecycle before the run manifest is recorded "
                   "(invariant 11)");
  const char *stopped = ll_model_stopped(m);
  if (stopped)
    return ll_fail(err, LL_E_ORDER,
                   "new lifecycle refused: the flow stopped (%.300s); no "
                   "lifecycle follows a stop: recover the run to go on",
                   stopped);
  if (ll_model_doubts(m) > 0)
    return ll_fail(err, LL_E_HOLD,
                   "new lifecycle refused: %d mutation(s) of lifecycle %ld "
                   "have an unknown outcome (invariant 3), and a new "
                   "lifecycle does not lift the latch: run reconcile first",
                   ll_model_doubts(m), epoch);
  if (ll_model_unreconciled(m) >= 0)
    return ll_fail(err, LL_E_UNRECONCILED,
                   "new lifecycle refused: accepted revision %ld has not been "
                   "read back (invariant 4), and a new lifecycle does not "
                   "waive that: read the blob first",
                   ll_model_unreconciled(m));
  if (ll_model_lifecycle_mutations(m) > 0 && !ll_model_blob_known_absent(m) &&
      !ll_model_release_confirmed(m))
    return ll_fail(
        err, LL_E_SCOPE,
        "new lifecycle refused: lifecycle %ld did not end in a known state "
        "(lease %s%s): a new lifecycle starts only after the blob was "
        "deleted and a read answered 404 BlobNotFound, or its lease was "
        "released and a properties read showed available/unlocked "
        "(invariant 14)",
        epoch, ll_phase_name(ll_model_phase(m)),
        ll_model_blob_deleted(m) ? ", deleted but not yet confirmed absent"
                                 : "");
  return LL_OK;
}
