/* The documented lease contract: lookup and iteration over the reviewed
 * table (lease_contract_table.c), the judge of one observation against one
 * cell, and the Markdown rendering that docs/LEASE_CONTRACT.md must equal. */
#include "lease_contract.h"

#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "lease_contract_impl.h"
#include "model_impl.h"

static const char *const state_names[LL_LS_COUNT] = {
    "Available", "Leased (A)", "Breaking (A)", "Broken (A)", "Expired (A)"};

static const char *const op_names[LL_LO_COUNT] = {
    "write with A",  "write with B",    "write, no lease",   "read with A",
    "read with B",   "read, no lease",  "acquire, no ID",    "acquire A",
    "acquire B",     "break, period 0", "break, period > 0", "change A to B",
    "change B to A", "change B to C",   "renew A",           "renew B",
    "release A",     "release B",       "duration expires"};

const char *ll_lease_state_name(ll_lease_state s) {
  return (unsigned)s < LL_LS_COUNT ? state_names[s] : "?";
}

const char *ll_lease_op_name(ll_lease_op op) {
  return (unsigned)op < LL_LO_COUNT ? op_names[op] : "?";
}

const char *ll_lease_verdict_name(ll_lease_verdict v) {
  switch (v) {
  case LL_VERDICT_CONFORMS:
    return "CONFORMS";
  case LL_VERDICT_CONFORMS_ONE_SOURCE:
    return "CONFORMS_ONE_SOURCE";
  case LL_VERDICT_DEVIATES:
    break;
  }
  return "DEVIATES";
}

size_t ll_lease_contract_count(void) {
  return ll_lease_cells_count;
}

const ll_lease_cell *ll_lease_contract_at(size_t i) {
  return i < ll_lease_cells_count ? &ll_lease_cells[i] : NULL;
}

const ll_lease_cell *ll_lease_contract_cell(ll_lease_state s, ll_lease_op op) {
  for (size_t i = 0; i < ll_lease_cells_count; i++)
    if (ll_lease_cells[i].state == s && ll_lease_cells[i].op == op)
      return &ll_lease_cells[i];
  return NULL;
}

const ll_lease_source *ll_lease_contract_source(const char *id) {
  if (!id)
    return NULL;
  for (const ll_lease_source *s = ll_lease_sources; s->id; s++)
    if (strcmp(s->id, id) == 0)
      return s;
  return NULL;
}

/* What a rejection's code says of the blob in its own words (Microsoft's
 * error catalogue, Azure Blob Storage error codes): the lease states it can
 * be answered in, and whether the request must have sent a lease ID (1),
 * must not have (0), or either (-1). The tables name statuses, never
 * codes, so no code is required of a cell; one whose words contradict the
 * cell is refused (helper-32: LeaseIsBrokenAndCannotBeRenewed answering
 * Leased (A), acquire B conformed). Every code Azurite 3.37.0 answered in
 * fixtures/emulator/lease-table.json agrees with these, renew A while
 * Breaking (A) answered LeaseIsBrokenAndCannotBeRenewed included. */
#define IN(s) (1u << (s))
#define ALL_STATES (IN(LL_LS_COUNT) - 1u)
static const struct {
  const char *code;
  unsigned states;
  int id;
} code_says[] = {
    /* "There is currently no lease on the blob." */
    {"LeaseNotPresentWithLeaseOperation",
     IN(LL_LS_AVAILABLE) | IN(LL_LS_BROKEN) | IN(LL_LS_EXPIRED), -1},
    {"LeaseNotPresentWithBlobOperation",
     IN(LL_LS_AVAILABLE) | IN(LL_LS_BROKEN) | IN(LL_LS_EXPIRED), -1},
    /* "There is already a lease present." */
    {"LeaseAlreadyPresent", IN(LL_LS_LEASED) | IN(LL_LS_BREAKING), -1},
    /* "... the lease is currently in breaking state and cannot be ..." */
    {"LeaseIsBreakingAndCannotBeAcquired", IN(LL_LS_BREAKING), -1},
    {"LeaseIsBreakingAndCannotBeChanged", IN(LL_LS_BREAKING), -1},
    /* "... the lease has been broken explicitly and cannot be renewed." */
    {"LeaseIsBrokenAndCannotBeRenewed", IN(LL_LS_BREAKING) | IN(LL_LS_BROKEN),
     -1},
    /* "There is currently a lease on the blob and no lease ID was
     * specified in the request." */
    {"LeaseIdMissing", IN(LL_LS_LEASED) | IN(LL_LS_BREAKING), 0},
    /* "The lease ID specified did not match the lease ID for the blob." */
    {"LeaseIdMismatchWithBlobOperation", ALL_STATES, 1},
    {"LeaseIdMismatchWithLeaseOperation", ALL_STATES, 1},
};

/* Whether the attempt sends a lease ID (a proposed one counts). */
static int sends_id(ll_lease_op op) {
  return op != LL_LO_WRITE_NONE && op != LL_LO_READ_NONE &&
         op != LL_LO_ACQUIRE_NONE && op != LL_LO_BREAK_0 &&
         op != LL_LO_BREAK_N && op != LL_LO_EXPIRE;
}

/* 0 when code's own words contradict the cell; 1 otherwise (a code the
 * list does not hold is judged by its family alone). */
static int code_fits(const ll_lease_cell *cell, const char *code) {
  for (size_t i = 0; code && i < sizeof code_says / sizeof *code_says; i++) {
    if (strcmp(code_says[i].code, code) != 0)
      continue;
    int id = code_says[i].id;
    return (code_says[i].states & IN(cell->state)) &&
           (id < 0 || id == sends_id(cell->op));
  }
  return 1;
}

/* One documented outcome against the observation. The state after must be
 * observed: an unread state is no evidence of conformance. */
static int outcome_matches(const ll_lease_cell *cell, const ll_lease_outcome *o,
                           const ll_lease_observation *obs) {
  if (obs->status != o->status)
    return 0;
  if (o->family) {
    if (!ll_baseline_in_family(o->family, obs->code) ||
        !code_fits(cell, obs->code))
      return 0;
  } else if (obs->code) {
    return 0; /* a success carries no error code */
  }
  return o->state_after && obs->state_after &&
         strcmp(o->state_after, obs->state_after) == 0;
}

ll_lease_verdict ll_lease_contract_judge(const ll_lease_cell *cell,
                                         const ll_lease_observation *obs) {
  if (!cell || !obs || cell->n_outcomes < 1 || cell->n_outcomes > 2)
    return LL_VERDICT_DEVIATES;
  int matched = 0;
  for (int i = 0; i < cell->n_outcomes; i++)
    matched += outcome_matches(cell, &cell->outcome[i], obs);
  if (matched == 0)
    return LL_VERDICT_DEVIATES;
  return matched == cell->n_outcomes ? LL_VERDICT_CONFORMS
                                     : LL_VERDICT_CONFORMS_ONE_SOURCE;
}

/* ---- Markdown ------------------------------------------------------- */

static const char *check_name(ll_lease_check c) {
  switch (c) {
  case LL_CHECK_PAGE:
    return "page text";
  case LL_CHECK_NONE:
    break;
  }
  return "not confirmed";
}

static void put_outcome(ll_buf *b, const ll_lease_outcome *o) {
  if (o->status)
    ll_buf_printf(b, "%ld ", o->status);
  if (o->family)
    ll_buf_printf(b, "(%s) ", o->family);
  ll_buf_printf(b, "%s", o->state_after ? o->state_after : "?");
  if (o->holder)
    ll_buf_printf(b, " (%s)", o->holder);
}

static void put_grid(ll_buf *b, const char *title, ll_lease_op first,
                     ll_lease_op last) {
  ll_buf_printf(b, "\n## %s\n\n| attempt |", title);
  for (int s = 0; s < LL_LS_COUNT; s++)
    ll_buf_printf(b, " %s |", state_names[s]);
  ll_buf_printf(b, "\n|---|");
  for (int s = 0; s < LL_LS_COUNT; s++)
    ll_buf_printf(b, "---|");
  ll_buf_printf(b, "\n");
  for (int op = first; op <= (int)last; op++) {
    ll_buf_printf(b, "| %s |", op_names[op]);
    for (int s = 0; s < LL_LS_COUNT; s++) {
      const ll_lease_cell *c =
          ll_lease_contract_cell((ll_lease_state)s, (ll_lease_op)op);
      ll_buf_printf(b, " ");
      for (int i = 0; c && i < c->n_outcomes; i++) {
        if (i)
          ll_buf_printf(b, " **or** ");
        put_outcome(b, &c->outcome[i]);
      }
      ll_buf_printf(b, "%s |", c && c->condition[0] ? " *" : "");
    }
    ll_buf_printf(b, "\n");
  }
}

char *ll_lease_contract_markdown(void) {
  ll_buf b = {0};
  ll_buf_printf(
      &b, "# The documented lease contract\n\n"
          "Generated from core/judgement/lease_contract_table.c by "
          "`build/test_lease_contract --write` (run in the source tree); "
          "the ctest test_lease_contract fails when this file differs from "
          "the table. Do not edit by hand.\n\n"
          "Each cell is the documented status, then the lease state after "
          "(holder in parentheses; X is a new lease ID). A rejection names "
          "its error family (docs/DESIGN.md section 4), never a guessed "
          "code, and leaves the state unchanged. Status 0: no request (the "
          "duration expiring). `*`: the cell carries a condition. **or**: "
          "two Microsoft pages disagree and both are kept.\n\n"
          "The judge (`ll_lease_contract_judge`) compares an observation "
          "(status, error code, lease state read after) with each outcome "
          "of a cell: the status must be equal, a rejection's code must be "
          "in its family and must not contradict the cell in its own words "
          "(a code saying there is no lease, answering Leased (A), say: the "
          "catalogue's wording, listed in lease_contract.c), a success must "
          "carry no code, and the state after must have been read and be "
          "equal. Matching every outcome "
          "is CONFORMS; matching one of two disagreeing sources is "
          "CONFORMS_ONE_SOURCE; anything else DEVIATES. Conditions are "
          "recorded, not judged: the flow that attempts a cell must "
          "establish them (NOT_REACHED when it cannot).\n");
  put_grid(&b, USE_TITLE, LL_LO_WRITE_A, LL_LO_READ_NONE);
  put_grid(&b, OPS_TITLE, LL_LO_ACQUIRE_NONE, LL_LO_EXPIRE);
  ll_buf_printf(&b, "\n## Sources\n\n");
  for (const ll_lease_source *s = ll_lease_sources; s->id; s++)
    ll_buf_printf(&b, "- `%s`: %s, <%s>\n", s->id, s->title, s->url);
  ll_buf_printf(
      &b, "\n## Cells\n\nChecked: `page text` (the cell's wording was read "
          "in the cited page's text during review), `not confirmed` (the "
          "reviewer's reading, not seen in page text). The Lease Blob "
          "cells were read in the page's Markdown source, "
          "docs-ref-conceptual/storageservices/Lease-Blob.md (ms.date "
          "2016-06-29, as mirrored on GitHub), and in a verbatim copy of "
          "the current page's use table; both give the same cells. Put "
          "Blob's sentence was read in a verbatim quotation of its "
          "Remarks.\n\n"
          "| state | attempt | outcome | source | section | source text | "
          "condition | checked |\n|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < ll_lease_cells_count; i++) {
    const ll_lease_cell *c = &ll_lease_cells[i];
    for (int k = 0; k < c->n_outcomes; k++) {
      const ll_lease_outcome *o = &c->outcome[k];
      ll_buf_printf(&b, "| %s | %s | ", state_names[c->state], op_names[c->op]);
      put_outcome(&b, o);
      ll_buf_printf(&b, " | %s | %s | %s | ", o->source, o->section,
                    o->source_text);
      for (int j = 0; j < 2 && c->condition[j]; j++)
        ll_buf_printf(&b, "%s%s", j ? "; " : "", c->condition[j]);
      ll_buf_printf(&b, " | %s |\n", check_name(o->check));
    }
  }
  if (b.oom) {
    ll_free(b.p);
    return NULL;
  }
  return b.p;
}
