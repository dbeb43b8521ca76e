/* The fold of the lease table's cell rows: the verdict of each attempted
 * cell is re-derived from its observation and the documented contract
 * (ll_lease_contract_judge), with a deviation's one-line reason and the
 * reviewed known-deviations entry that names it; a NOT_REACHED row keeps
 * its reason. Counts feed the decision row's lease_table field. */
#include <stdio.h>
#include <string.h>

#include "deviations.h"
#include "jsonx.h"
#include "lease_contract.h"
#include "model_impl.h"

static const ll_lease_cell *cell_of(const cJSON *row) {
  const char *sn = ll_json_str(row, "state"), *on = ll_json_str(row, "op");
  for (int s = 0; sn && on && s < LL_LS_COUNT; s++)
    for (int o = 0; o < LL_LO_COUNT; o++)
      if (strcmp(sn, ll_lease_state_name((ll_lease_state)s)) == 0 &&
          strcmp(on, ll_lease_op_name((ll_lease_op)o)) == 0)
        return ll_lease_contract_cell((ll_lease_state)s, (ll_lease_op)o);
  return NULL;
}

static void outcome_text(char *buf, size_t cap, const ll_lease_outcome *o) {
  snprintf(buf, cap, "%ld%s%s %s%s%s (%s)", o->status, o->family ? " " : "",
           o->family ? o->family : "", o->state_after ? o->state_after : "?",
           o->holder ? " " : "", o->holder ? o->holder : "", o->source);
}

static cJSON *deviation_reason(const ll_lease_cell *c,
                               const ll_lease_observation *obs) {
  char a[200], b[200] = "", text[600];
  outcome_text(a, sizeof a, &c->outcome[0]);
  if (c->n_outcomes > 1)
    outcome_text(b, sizeof b, &c->outcome[1]);
  snprintf(text, sizeof text,
           "documented %s%s%s, observed %ld %s, state after %s", a,
           b[0] ? " or " : "", b, obs->status,
           obs->code ? obs->code : "(no error code)",
           obs->state_after ? obs->state_after : "(not read)");
  return cJSON_CreateString(text);
}

/* a was appended before b, or either is absent; a row being folded before
 * the ledger numbers it (seq 0, the live run's own fold) is not ordered:
 * verify, folding the file, sees every seq. */
static int before(const cJSON *a, const cJSON *b) {
  long sa = a ? ll_json_long(a, "seq", 0) : 0;
  long sb = b ? ll_json_long(b, "seq", 0) : 0;
  return sa <= 0 || sb <= 0 || sa < sb;
}

/* The observation is a copy of the outcome rows the cell row names, all of
 * its own lifecycle and in the order they were sent: the
 * attempt (an outcome row of this very cell): its status and code (none: status
 * 0, the duration expiring), the first read's lease state, the content read's
 * revision (null unless it answered 200 with one). A row that differs from them
 * was edited. */
static ll_status copied_from_events(const ll_model *m, const cJSON *row,
                                    const cJSON *o, long seq, ll_error *err) {
  const char *att_id = ll_json_str(row, "attempt_event");
  const cJSON *att = ll_model_event(m, att_id);
  const cJSON *evs = ll_json_get(row, "observe_events");
  const cJSON *e0 = cJSON_GetArrayItem(evs, 0),
              *e1 = cJSON_GetArrayItem(evs, 1);
  const cJSON *p =
      cJSON_IsString(e0) ? ll_model_event(m, e0->valuestring) : NULL;
  const cJSON *g =
      cJSON_IsString(e1) ? ll_model_event(m, e1->valuestring) : NULL;
  const char *ps = p ? ll_json_str(p, "state") : NULL;
  const cJSON *rev = ll_json_get(o, "content_revision");
  const cJSON *grev = g && ll_json_long(g, "http_status", 0) == 200
                          ? ll_json_get(g, "content_revision")
                          : NULL;
  char label[80];
  snprintf(label, sizeof label, "%s/%s", ll_json_pstr(row, "state"),
           ll_json_pstr(row, "op"));
  /* the rows it names are of its own lifecycle, in the order the engine
   * sends them: the attempt, the properties read, the content read */
  long ep = ll_json_long(row, "fixture_epoch", -1);
  int in_order = (!att || ll_json_long(att, "fixture_epoch", -2) == ep) &&
                 (!p || ll_json_long(p, "fixture_epoch", -2) == ep) &&
                 (!g || ll_json_long(g, "fixture_epoch", -2) == ep) &&
                 before(att, p) && before(p, g);
  int ok =
      in_order &&
      (att_id == NULL ||
       (att != NULL && ll_strsame(ll_json_str(att, "cell"), label))) &&
      p != NULL && ll_json_is(p, "operation", "Get Blob Properties") &&
      (!g || ll_json_is(g, "operation", "Get Blob")) &&
      (!cJSON_IsString(e1) || g != NULL) &&
      ll_json_long(o, "status", -1) ==
          (att ? ll_json_long(att, "http_status", 0) : 0) &&
      ll_strsame(ll_json_str(o, "code"),
                 att ? ll_json_str(att, "code") : NULL) &&
      ll_strsame(ll_json_str(o, "lease_state_after"), ps && *ps ? ps : NULL) &&
      (grev ? cJSON_IsNumber(rev) && rev->valuedouble == grev->valuedouble
            : cJSON_IsNull(rev));
  if (!ok)
    return ll_fail(err, LL_E_TAMPER,
                   "row %ld: the cell row's observation differs from the "
                   "outcome rows it names (attempt_event, observe_events)",
                   seq);
  return LL_OK;
}

/* What the contract's columns (status, code, state after) do not hold
 * but the cell's own rows show (helper-32): a write rejected whose
 * revision was read back, a write accepted whose revision was not, an
 * acquire or change granted under another ID than the one proposed.
 * 1 with the reason in buf when the rows contradict the outcome. */
static int contradicted(const cJSON *att, const cJSON *o, char *buf,
                        size_t cap) {
  long status = att ? ll_json_long(att, "http_status", 0) : 0;
  int ok = status >= 200 && status <= 299;
  const cJSON *want = att ? ll_json_get(att, "payload_revision") : NULL;
  const cJSON *got = ll_json_get(o, "content_revision");
  if (cJSON_IsNumber(want) && cJSON_IsNumber(got)) {
    int same = want->valuedouble == got->valuedouble;
    if (ok && !same) {
      snprintf(buf, cap,
               "the write of revision %.0f was answered %ld, but the content "
               "read after it is revision %.0f",
               want->valuedouble, status, got->valuedouble);
      return 1;
    }
    if (!ok && same) {
      snprintf(buf, cap,
               "the write of revision %.0f was answered %ld, but the content "
               "read after it is that revision",
               want->valuedouble, status);
      return 1;
    }
  }
  const cJSON *match =
      att ? ll_json_get(att, "returned_lease_matches_proposed") : NULL;
  if (ok && cJSON_IsFalse(match)) {
    snprintf(buf, cap,
             "answered %ld, but the lease ID returned is not the one "
             "proposed",
             status);
    return 1;
  }
  return 0;
}

ll_status ll_model_apply_cell(ll_model *m, cJSON *row, int fill,
                              ll_error *err) {
  const ll_lease_cell *c = cell_of(row);
  long seq = ll_json_long(row, "seq", 0);
  if (!c)
    return ll_fail(err, LL_E_TAMPER,
                   "row %ld: a cell row names no cell of "
                   "the lease contract",
                   seq);
  if (m->table.seen[c->state][c->op])
    return ll_fail(err, LL_E_TAMPER,
                   "row %ld: a second cell row of %s/%s (each cell has one)",
                   seq, ll_lease_state_name(c->state), ll_lease_op_name(c->op));
  m->table.seen[c->state][c->op] = 1;
  m->table.on = 1;
  m->table.cells++;
  const char *verdict = ll_json_str(row, "verdict");
  if (verdict && strcmp(verdict, "NOT_REACHED") == 0) {
    const char *why = ll_json_str(row, "reason");
    if (!why || !*why)
      return ll_fail(err, LL_E_TAMPER,
                     "row %ld: a NOT_REACHED cell carries no reason", seq);
    m->table.not_reached++;
    return LL_OK;
  }
  const cJSON *o = ll_json_get(row, "observed");
  if (!cJSON_IsObject(o))
    return ll_fail(err, LL_E_TAMPER,
                   "row %ld: an attempted cell carries no observation", seq);
  ll_lease_observation obs = {
      .status = ll_json_long(o, "status", -1),
      .code = ll_json_str(o, "code"),
      .state_after = ll_json_str(o, "lease_state_after"),
  };
  ll_status cst = copied_from_events(m, row, o, seq, err);
  if (cst != LL_OK)
    return cst;
  ll_lease_verdict v = ll_lease_contract_judge(c, &obs);
  char why[300];
  int against =
      v != LL_VERDICT_DEVIATES &&
      contradicted(ll_model_event(m, ll_json_str(row, "attempt_event")), o, why,
                   sizeof why);
  cJSON *d = cJSON_CreateObject();
  if (!d)
    return ll_fail(err, LL_E_NOMEM, "out of memory");
  if (against) {
    /* the status conforms, the rows beside it do not: no known
     * deviation names this */
    cJSON_AddStringToObject(d, "verdict",
                            ll_lease_verdict_name(LL_VERDICT_DEVIATES));
    cJSON_AddStringToObject(d, "reason", why);
    cJSON_AddNullToObject(d, "known_deviation");
    m->table.deviates++;
  } else if (v == LL_VERDICT_DEVIATES) {
    cJSON_AddStringToObject(d, "verdict", ll_lease_verdict_name(v));
    char label[80];
    snprintf(label, sizeof label, "%s/%s", ll_lease_state_name(c->state),
             ll_lease_op_name(c->op));
    const char *dev = ll_deviations_lookup_cell(
        m->judged_as, ll_json_str(row, "server"), label, obs.status, obs.code);
    ll_json_add(d, "reason", deviation_reason(c, &obs));
    if (dev)
      cJSON_AddStringToObject(d, "known_deviation", dev);
    else
      cJSON_AddNullToObject(d, "known_deviation");
    m->table.deviates++;
  } else {
    cJSON_AddStringToObject(d, "verdict", ll_lease_verdict_name(v));
    cJSON_AddNullToObject(d, "reason");
    cJSON_AddNullToObject(d, "known_deviation");
    if (v == LL_VERDICT_CONFORMS)
      m->table.conforms++;
    else
      m->table.conforms_one_source++;
  }
  ll_status st = ll_model_settle(row, d, fill, err);
  cJSON_Delete(d);
  return st;
}

cJSON *ll_model_table_counts(const ll_model *m) {
  cJSON *t = cJSON_CreateObject();
  cJSON_AddNumberToObject(t, "conforms", m->table.conforms);
  cJSON_AddNumberToObject(t, "conforms_one_source",
                          m->table.conforms_one_source);
  cJSON_AddNumberToObject(t, "deviates", m->table.deviates);
  cJSON_AddNumberToObject(t, "not_reached", m->table.not_reached);
  cJSON_AddNumberToObject(t, "cells", m->table.cells);
  return t;
}
