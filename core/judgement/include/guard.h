/* The safety rules of DESIGN.md section 2 that decide whether a request may
 * be sent at all. Pure: it reads the model and the proposed request. Every
 * refusal names its invariant through the error code. */
#ifndef LL_GUARD_H
#define LL_GUARD_H

#include "blob.h"
#include "ll.h"
#include "model.h"

typedef struct {
  ll_op op;
  const char *actor; /* alias of the writer, "operator" or "observer" */
  const char *lease; /* lease alias the request carries, NULL: omitted */
  int bound;         /* the writer is bound to a lease */
  long revision;     /* Put Blob: declared revision, else LL_NO_REVISION */
  int control;       /* an unconditioned write expecting rejection */
  int cell;          /* a lease-table cell attempt: the handoff's order
                        rule (acquire only after the probe) is not its */
} ll_guard_req;

/* LL_OK, or the refusal: LL_E_MANIFEST, LL_E_HOLD, LL_E_UNRECONCILED,
 * LL_E_UNDECLARED, LL_E_LEASE_PRECONDITION, LL_E_ORDER, and for invariant
 * 15 LL_E_TARGET_EXISTS, LL_E_PREFLIGHT (every mutation after the stop),
 * LL_E_DELETE_UNCONFIRMED and LL_E_NOT_CREATED (a lease operation before
 * the lifecycle's own create was accepted and read back, or after the run
 * deleted it). The message says what was refused and what to do. */
ll_status ll_guard_check(const ll_model *m, const ll_guard_req *r,
                         ll_error *err) LL_WARN_UNUSED;

/* Whether a new lifecycle may start (invariant 14: the guard's scope is
 * the blob). Only after the previous one ended in a known state: no blob
 * mutation in it, or deleted and confirmed absent by a read, or released
 * and confirmed by a properties read; never with an open doubt
 * (LL_E_HOLD) or an accepted write not read back (LL_E_UNRECONCILED).
 * Otherwise LL_E_SCOPE; and LL_E_ORDER once the flow stopped or decided. */
ll_status ll_guard_lifecycle(const ll_model *m, ll_error *err) LL_WARN_UNUSED;

/* Invariant number (DESIGN.md section 2) behind one of the guard's refusal
 * codes above, or 0 (LL_E_ORDER, or a code the guard never returns: use
 * ll_code_invariant for any error). */
int ll_guard_invariant(ll_code code);

#endif
