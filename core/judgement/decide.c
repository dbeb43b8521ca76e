/* The decision over the fold's state (DESIGN.md section 5): HOLD >
 * RECONCILE > WAIT > ACCEPT, whether ACCEPT is still reachable, and the
 * narrow ACCEPT statement. It reads the model and calls only harm.c and
 * model_query.c, never the fold (model.c) that calls it. */
#include "decide.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "blob.h"
#include "jsonx.h"
#include "lease_contract.h"
#include "model_impl.h"

const char *ll_decision_name(ll_decision d) {
  static const char *const n[] = {"ACCEPT", "WAIT", "HOLD", "RECONCILE"};
  return (unsigned)d < 4 ? n[d] : "HOLD";
}

static void reason(cJSON *list, const char *fmt, ...) LL_PRINTF(2, 3);
static void reason(cJSON *list, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  ll_json_push(list, cJSON_CreateString(buf));
}

static void missing(cJSON *reasons, int ok, const char *what) {
  if (!ok)
    reason(reasons, "ownership not proven: no %s", what);
}

static int final_content_ok(const ll_epoch_state *ep) {
  return ep->content_read_after_last_write && ep->last_accepted >= 0 &&
         ep->content_revision == ep->last_accepted && ep->unreconciled < 0;
}

/* Whether the intent row of an open request asked for a mutation (an
 * operation not named, or not known, counts as one). */
static int open_mutation(const cJSON *in) {
  int op = ll_op_from_name(ll_json_str(in, "operation"));
  return op < 0 || ll_op_is_mutation((ll_op)op);
}

/* Intents of mutations with no outcome: the process never saw the answer,
 * so the blob may have changed in a way no row records. Only recovery
 * settles one (its UNKNOWN_OUTCOME row, then a reconcile). */
static int open_mutations(const ll_model *m) {
  int n = 0;
  const cJSON *in;
  cJSON_ArrayForEach(in, m->open_intents) {
    n += open_mutation(in);
  }
  return n;
}

int ll_decide_open_doubts(const ll_model *m) {
  return ll_model_doubts(m) + open_mutations(m);
}

/* Nothing stands against ACCEPT, from the fold's counts alone (never from
 * the length of a list of reasons): no allocation failed, no doubt, no
 * mutation intent left without its outcome, no EVIDENCE_ERROR, no
 * unexplained discrepancy, no HOLD or RECONCILE reason, no poll HOLD, no
 * doubtful write or acquire left unsettled. */
static int nothing_against(const ll_model *m) {
  const ll_epoch_state *ep = &m->ep;
  return !m->oom && m->have_manifest && m->doubts && m->open_intents &&
         open_mutations(m) == 0 && cJSON_GetArraySize(m->doubts) == 0 &&
         m->evidence_errors == 0 && m->unexplained == 0 && m->n_hold == 0 &&
         m->n_reconcile == 0 && !ep->poll_hold[0] && !m->abandoned[0] &&
         !ep->content_uncertain &&
         !(ep->new_acquire_doubtful && !ep->new_acquired);
}

/* The positive chain of DESIGN.md section 5, element by element: ACCEPT is
 * computed from this, and only this, being complete. */
static int chain_complete(const ll_model *m) {
  const ll_epoch_state *ep = &m->ep;
  if (!nothing_against(m) || ep->epoch < 1)
    return 0;
  if (ep->destructive) /* the unlocked-gap control's own narrow chain */
    return ep->saw_broken && ep->gap_write_rev >= 0 && ep->gap_readback;
  return ep->saw_breaking && ep->saw_broken_after_breaking &&
         ep->stale_rejected_after_broken && ep->new_acquired &&
         ep->new_holder[0] && ep->old_holder[0] &&
         strcmp(ep->new_holder, ep->old_holder) != 0 &&
         ep->new_write_readback && ep->new_write_rev >= 0 &&
         ep->old_rejected_under_new && !ep->old_regained[0] &&
         ep->last_accepted == ep->new_write_rev && final_content_ok(ep);
}

/* The lease table's own decision (docs/API.md): ACCEPT when every cell of
 * the contract has its row and none is NOT_REACHED (a DEVIATES cell is a
 * finding, not a doubt), with nothing against; HOLD otherwise. */
static ll_decision table_fold(const ll_model *m, cJSON *reasons) {
  size_t total = ll_lease_contract_count();
  if ((size_t)m->table.cells < total)
    reason(reasons,
           "the lease table is incomplete: %d of %zu cells have a cell row",
           m->table.cells, total);
  if (m->table.not_reached > 0)
    reason(reasons,
           "%d cell(s) NOT_REACHED: the table did not run fully (each cell "
           "row says why)",
           m->table.not_reached);
  if (cJSON_GetArraySize(reasons) == 0 && nothing_against(m))
    return LL_DEC_ACCEPT;
  if (cJSON_GetArraySize(reasons) == 0)
    reason(reasons, "the lease table's evidence is not complete");
  return LL_DEC_HOLD;
}

/* The reasons' text: what the decision is, and why. ACCEPT comes only from
 * chain_complete(); an empty list is never taken to mean it. */
static ll_decision fold(const ll_model *m, cJSON *hold, cJSON *rec,
                        cJSON **out_reasons) {
  const ll_epoch_state *ep = &m->ep;
  const cJSON *d;
  if (m->oom)
    reason(hold, "an allocation failed while folding the "
                 "evidence: the run's state is not trustworthy");
  cJSON_ArrayForEach(d, m->doubts) {
    reason(hold, "event %s (%s by %s): %s, not reconciled",
           ll_json_pstr(d, "event_id"), ll_json_pstr(d, "operation"),
           ll_json_pstr(d, "actor"),
           ll_json_pstr(d, "class") ? ll_json_pstr(d, "class")
                                    : "UNKNOWN_OUTCOME");
  }
  cJSON_ArrayForEach(d, m->open_intents) {
    if (open_mutation(d))
      reason(hold,
             "event %s (%s by %s): intent without an outcome: the answer "
             "was never seen, the blob may have changed (recover the run)",
             ll_json_pstr(d, "event_id"), ll_json_pstr(d, "operation"),
             ll_json_pstr(d, "actor_alias"));
  }
  if (ep->content_uncertain && cJSON_GetArraySize(m->doubts) == 0)
    reason(rec, "owner confirmed but a doubtful Put Blob was not "
                "settled by a later accepted write");
  if (ep->new_acquire_doubtful && !ep->new_acquired &&
      cJSON_GetArraySize(m->doubts) == 0)
    reason(hold,
           "ownership not proven: %s's acquire outcome is "
           "unknown and no conditioned renew proved it",
           ep->new_holder);
  if (ep->poll_hold[0])
    reason(hold, "%s", ep->poll_hold);
  if (m->abandoned[0])
    reason(hold, "%s", m->abandoned);
  ll_harm_decide_reasons(m, hold); /* invariant 15's stop comes first */
  if (cJSON_GetArraySize(hold) > 0 || m->n_hold > 0) {
    /* HOLD wins, but what RECONCILE would have said is still shown */
    const cJSON *it;
    cJSON_ArrayForEach(it, rec) {
      reason(hold, "also to reconcile: %s", it->valuestring);
    }
    cJSON_Delete(rec);
    if (cJSON_GetArraySize(hold) == 0)
      reason(hold, "%s", LL_REASON_LOST);
    *out_reasons = hold;
    return LL_DEC_HOLD;
  }
  if (cJSON_GetArraySize(rec) > 0 || m->n_reconcile > 0) {
    cJSON_Delete(hold);
    if (cJSON_GetArraySize(rec) == 0)
      reason(rec, "%s", LL_REASON_LOST);
    *out_reasons = rec;
    return LL_DEC_RECONCILE;
  }
  cJSON_Delete(rec);
  cJSON *reasons = hold; /* empty */
  *out_reasons = reasons;
  if (m->table.on)
    return table_fold(m, reasons);
  /* a break is in effect if it was acknowledged, or if breaking was
   * observed (its acknowledgement may have been lost) */
  int needs_broken = (ep->break_period >= 0 || ep->saw_breaking) &&
                     !ep->saw_broken_after_breaking;
  if (needs_broken && strcmp(ep->obs_state, "breaking") == 0 &&
      strcmp(ep->obs_status, "locked") == 0) {
    reason(reasons,
           "latest fresh observation (event %s) is "
           "breaking/locked; the flow needs broken",
           ep->obs_event);
    return LL_DEC_WAIT;
  }
  if (ep->destructive) {
    missing(reasons, ep->saw_broken, "fresh broken/unlocked observation");
    missing(reasons, ep->gap_write_rev >= 0,
            "unconditioned write accepted in the gap");
    missing(reasons, ep->gap_readback, "read-back of the gap write");
  } else {
    missing(reasons, ep->saw_breaking, "fresh breaking observation");
    missing(reasons, ep->saw_broken_after_breaking,
            "fresh broken/unlocked observation after breaking");
    missing(reasons, ep->stale_rejected_after_broken,
            "stale-lease write rejected after broken");
    missing(reasons, ep->new_acquired, "captured acquire by the new holder");
    missing(reasons, ep->new_write_readback,
            "new-holder write accepted and read back");
    missing(reasons, ep->old_rejected_under_new,
            "old-holder write rejected under the new lease");
    if (!final_content_ok(ep))
      reason(reasons, "final content not read back equal to "
                      "the last accepted revision");
    if (ep->old_regained[0])
      reason(reasons,
             "the old holder %s was granted the lease or a write again "
             "after broken (event %s): the handoff does not stand",
             ep->old_holder, ep->old_regained);
    if (ep->new_write_rev >= 0 && ep->last_accepted != ep->new_write_rev)
      reason(reasons,
             "the last accepted write (revision %ld) is not the new "
             "holder's (revision %ld)",
             ep->last_accepted, ep->new_write_rev);
  }
  if (chain_complete(m))
    return LL_DEC_ACCEPT;
  /* the chain is incomplete: HOLD, with a reason even where the list above
   * names none (a lifecycle never started, a holder never named) */
  if (cJSON_GetArraySize(reasons) == 0)
    reason(reasons, "ownership not proven: the evidence chain "
                    "of DESIGN.md section 5 is incomplete");
  return LL_DEC_HOLD;
}

ll_decision ll_decide(const ll_model *m, cJSON **out_reasons,
                      const char **window) {
  unsigned long mark = ll_alloc_failures();
  cJSON *hold = cJSON_Duplicate(m->hold_reasons, 1);
  cJSON *rec = cJSON_Duplicate(m->reconcile_reasons, 1);
  cJSON *reasons = NULL;
  *window = m->window_reproduced_any     ? "REPRODUCED"
            : m->window_inconclusive_any ? "INCONCLUSIVE_WINDOW"
                                         : "NOT_ATTEMPTED";
  ll_decision dec = LL_DEC_HOLD;
  if (hold && rec) {
    dec = fold(m, hold, rec, &reasons);
  } else {
    cJSON_Delete(hold);
    cJSON_Delete(rec);
  }
  /* A decision whose reasons could not all be written is not a decision:
   * HOLD, and no list (the caller reports LL_E_NOMEM). */
  if (!reasons || ll_alloc_failed_since(mark)) {
    cJSON_Delete(reasons);
    *out_reasons = NULL;
    return LL_DEC_HOLD;
  }
  *out_reasons = reasons;
  return dec;
}

int ll_decide_accept_reachable(const ll_model *m, const char **why) {
  const ll_epoch_state *ep = &m->ep;
  const char *held = ll_model_stop(m, NULL);
  if (!held)
    held = ll_model_hold_reason(m);
  const cJSON *rec = cJSON_GetArrayItem(m->reconcile_reasons, 0);
  if (held || m->n_reconcile > 0) {
    *why = held                  ? held
           : cJSON_IsString(rec) ? rec->valuestring
                                 : "a RECONCILE reason stands";
    return 0;
  }
  if (!ep->destructive && ep->saw_broken && !ep->saw_breaking) {
    *why = "the lease left breaking without a fresh breaking observation in "
           "this lifecycle";
    return 0;
  }
  *why = NULL;
  return 1;
}

char *ll_decide_statement(const ll_model *m, ll_decision d) {
  const char *kind = m->endpoint_kind[0] ? m->endpoint_kind : "unknown";
  const char *label = m->judged_as[0] ? m->judged_as : kind;
  char tail[256];
  if (strcmp(kind, "azure") == 0)
    snprintf(tail, sizeof tail, "Endpoint kind: azure.");
  else if (strcmp(kind, "replay") == 0)
    snprintf(tail, sizeof tail,
             "Endpoint kind: replay of a%s %s fixture: not a cloud "
             "qualification.",
             strchr("aeiou", label[0]) && label[0] ? "n" : "", label);
  else
    snprintf(tail, sizeof tail,
             "Endpoint kind: %s: %s evidence, not a cloud qualification.", kind,
             kind);
  const char *body;
  char buf[1024];
  if (d == LL_DEC_ACCEPT && m->table.on) {
    snprintf(buf, sizeof buf,
             "Lease table complete for this identified blob and API version "
             "%s: %d cells, %d CONFORMS, %d CONFORMS_ONE_SOURCE, %d DEVIATES "
             "(each deviation is a finding, recorded in its cell row). %s",
             m->api_version, m->table.cells, m->table.conforms,
             m->table.conforms_one_source, m->table.deviates, tail);
    return ll_strdup(buf);
  }
  if (d == LL_DEC_ACCEPT && m->ep.destructive) {
    snprintf(buf, sizeof buf,
             "Unlocked-gap control accepted: after the lease on this blob was "
             "observed broken/unlocked, an UNCONDITIONED writer (no lease ID) "
             "entered the gap and its Put Blob of revision %ld was accepted "
             "and read back. A lease break alone does not fence writers. %s",
             m->ep.gap_write_rev, tail);
    return ll_strdup(buf);
  }
  if (d == LL_DEC_ACCEPT) {
    const ll_epoch_state *ep = &m->ep;
    snprintf(buf, sizeof buf,
             "For this identified Azure block blob, API version %s, request "
             "sequence, and evidence run, the observed handoff is accepted: "
             "stale lease %s no longer authorized the tested overwrite, lease "
             "%s was positively acquired, a %s-conditioned Put Blob was "
             "accepted, an %s-conditioned Put Blob was rejected, and final "
             "content matched the accepted-write ledger. %s",
             m->api_version, ep->old_holder, ep->new_holder, ep->new_holder,
             ep->old_holder, tail);
    return ll_strdup(buf);
  }
  body = d == LL_DEC_WAIT   ? "WAIT: the lease is still observed breaking; "
                              "ownership has not moved."
         : d == LL_DEC_HOLD ? "HOLD: the evidence is missing or "
                              "contradictory; no ownership claim is made."
                            : "RECONCILE: content or ownership cannot be "
                              "safely inferred; resolve before any mutation.";
  snprintf(buf, sizeof buf, "%s %s", body, tail);
  return ll_strdup(buf);
}
