/* One lease-table cell: its attempt (the request lease_plan.c assigns it,
 * sent through the run's pipeline), the observation after it (properties,
 * and the content where a write was attempted), and its "cell" row. The
 * verdict, a deviation's reason and its known-deviation entry are derived
 * by the fold (core/judgement/model_cell.c) from the observation, so
 * leaselua verify re-derives them; a NOT_REACHED row carries its reason. */
#include <stdio.h>
#include <string.h>

#include "jsonx.h"
#include "lease_cell.h"
#include "lease_io.h"
#include "run_impl.h"

static void add_str_or_null(cJSON *o, const char *k, const char *v) {
  if (v)
    cJSON_AddStringToObject(o, k, v);
  else
    cJSON_AddNullToObject(o, k);
}

static cJSON *expected_of(const ll_lt_cell *c) {
  const ll_lease_cell *d = ll_lease_contract_cell(c->state, c->op);
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; d && i < d->n_outcomes; i++) {
    const ll_lease_outcome *o = &d->outcome[i];
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "status", (double)o->status);
    add_str_or_null(e, "family", o->family);
    add_str_or_null(e, "state_after", o->state_after);
    add_str_or_null(e, "holder", o->holder);
    add_str_or_null(e, "source", o->source);
    add_str_or_null(e, "section", o->section);
    ll_json_push(a, e);
  }
  return a;
}

/* Whether status answered a cell whose every documented outcome is a
 * rejection with a success: the lease (or the content) may have changed
 * hands, whatever the state's name still reads. */
static int unexpected_success(const ll_lt_cell *c, long status) {
  const ll_lease_cell *d = ll_lease_contract_cell(c->state, c->op);
  if (status < 200 || status > 299 || !d)
    return 0;
  for (int i = 0; i < d->n_outcomes; i++)
    if (d->outcome[i].status >= 200 && d->outcome[i].status <= 299)
      return 0;
  return 1;
}

static cJSON *begin_row(ll_run *r, const ll_lt_cell *c) {
  cJSON *row = cJSON_CreateObject();
  cJSON_AddStringToObject(row, "record", "cell");
  cJSON_AddStringToObject(row, "state", ll_lease_state_name(c->state));
  cJSON_AddStringToObject(row, "op", ll_lease_op_name(c->op));
  cJSON_AddNumberToObject(row, "lifecycle", (double)ll_model_epoch(r->model));
  cJSON_AddNumberToObject(row, "fixture_epoch",
                          (double)ll_model_epoch(r->model));
  return row;
}

static ll_status append(ll_run *r, cJSON *row, cJSON **out, ll_error *err) {
  ll_status st = ll_run_append_take(r, row, err);
  if (st == LL_OK && out)
    *out = ll_run_last_export(r);
  return st;
}

static cJSON *events_of(cJSON *const *rows, int n) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++)
    if (rows[i] && ll_json_str(rows[i], "event_id"))
      ll_json_push(a, cJSON_CreateString(ll_json_str(rows[i], "event_id")));
  return a;
}

static ll_status not_reached_row(ll_run *r, const ll_lt_cell *c,
                                 const char *reason, const cJSON *attempt,
                                 cJSON *const *obs, int nobs, cJSON **out,
                                 ll_error *err) {
  cJSON *row = begin_row(r, c);
  add_str_or_null(row, "attempt_event",
                  attempt ? ll_json_str(attempt, "event_id") : NULL);
  ll_json_set(row, "observe_events", events_of(obs, nobs));
  ll_json_set(row, "expected", expected_of(c));
  cJSON_AddNullToObject(row, "observed");
  cJSON_AddStringToObject(row, "verdict", "NOT_REACHED");
  cJSON_AddStringToObject(row, "reason", reason && *reason ? reason : "?");
  cJSON_AddNullToObject(row, "known_deviation");
  return append(r, row, out, err);
}

ll_status ll_lt_cell_not_reached(ll_run *r, ll_lease_table *t,
                                 const ll_lt_cell *c, const char *reason,
                                 cJSON **out, ll_error *err) {
  (void)t;
  return not_reached_row(r, c, reason, NULL, NULL, 0, out, err);
}

/* The request spec of the cell's attempt. */
static ll_req_spec spec_of(const ll_lt_req *q, const ll_lt_cell *c,
                           const char *step, const char *label) {
  const ll_lease_cell *d = ll_lease_contract_cell(c->state, c->op);
  ll_req_spec s = {.op = q->op,
                   .step = step,
                   .actor = q->actor,
                   .lease = q->lease,
                   .bound = q->bound,
                   .proposed = q->proposed,
                   .revision = q->revision,
                   .lease_duration = q->duration,
                   .break_period = q->break_period,
                   .cell = label,
                   .change_to = q->change_to};
  /* a write without a lease documented to be rejected is the guard's
   * negative control; one documented to succeed needs a destructive
   * lifecycle (the plan gives it one) */
  s.control = c->op == LL_LO_WRITE_NONE && d && d->outcome[0].family != NULL;
  return s;
}

static const char *str_or(const cJSON *row, const char *k) {
  return row ? ll_json_str(row, k) : NULL;
}

ll_status ll_lt_cell_attempt(ll_run *r, ll_lease_table *t, const ll_lt_cell *c,
                             cJSON **out, ll_error *err) {
  char label[80], step[LL_LT_STEP_MAX], why[300] = "";
  int li = t->life + 1, failed = 0, nobs = 0;
  cJSON *att = NULL, *obs[2] = {NULL, NULL};
  ll_lt_req q;
  ll_status st = LL_OK;
  ll_lease_cell_label(c->state, c->op, label, sizeof label);
  ll_lt_cell_request(&t->plan, c, &q);
  if (q.sends) {
    ll_lt_step(step, sizeof step, li, t->cont, "cell %s", label);
    ll_req_spec s = spec_of(&q, c, step, label);
    st = ll_lt_send(r, t, step, &s, &att, &failed, err);
    if (st == LL_OK && failed) {
      st = not_reached_row(r, c, t->fail_reason, att, NULL, 0, out, err);
      goto cleanup;
    }
    if (st != LL_OK)
      goto cleanup;
    ll_lt_step(step, sizeof step, li, t->cont, "observe %s: properties", label);
    st = ll_lt_props(r, t, step, &obs[nobs++], &failed, err);
    if (st == LL_OK && !failed && ll_lt_cell_writes(c)) {
      ll_lt_step(step, sizeof step, li, t->cont, "observe %s: content", label);
      ll_req_spec g = ll_req_spec_for(LL_OP_GET_BLOB, step, "observer");
      st = ll_lt_send(r, t, step, &g, &obs[nobs++], &failed, err);
    }
  } else if (c->state == LL_LS_LEASED || c->state == LL_LS_BREAKING) {
    int seen = 0;
    ll_lt_step(step, sizeof step, li, t->cont, "cell %s: wait", label);
    st = ll_lt_wait(r, t, c, step, &obs[nobs++], why, sizeof why, &seen, err);
    if (st == LL_OK && !t->stopped && !obs[0])
      failed = 1;
  } else {
    ll_lt_step(step, sizeof step, li, t->cont, "observe %s: properties", label);
    st = ll_lt_props(r, t, step, &obs[nobs++], &failed, err);
  }
  if (st != LL_OK)
    goto cleanup;
  const cJSON *props = obs[0];
  if (failed || t->stopped || !props ||
      ll_json_long(props, "http_status", 0) != 200) {
    st = not_reached_row(r, c,
                         t->stopped ? t->stop_reason
                         : why[0]   ? why
                                    : "the properties read after the attempt "
                                      "observed no lease state",
                         att, obs, nobs, out, err);
    goto cleanup;
  }
  if (ll_lt_break_ended_before(t, c, props)) {
    t->drifted = 1; /* the later cells go on on a fresh Breaking (A) */
    st = not_reached_row(r, c,
                         "the break period ran out before the read after the "
                         "attempt: the state it shows cannot be told from the "
                         "break's own end",
                         att, obs, nobs, out, err);
    goto cleanup;
  }
  cJSON *row = begin_row(r, c);
  add_str_or_null(row, "attempt_event", str_or(att, "event_id"));
  ll_json_set(row, "observe_events", events_of(obs, nobs));
  ll_json_set(row, "expected", expected_of(c));
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(
      o, "status", att ? (double)ll_json_long(att, "http_status", 0) : 0);
  add_str_or_null(o, "code", str_or(att, "azure_error_code"));
  add_str_or_null(o, "lease_state_after",
                  str_or(props, "observed_lease_state"));
  const cJSON *rev =
      nobs > 1 && obs[1] && ll_json_long(obs[1], "http_status", 0) == 200
          ? ll_json_get(obs[1], "content_revision")
          : NULL;
  if (cJSON_IsNumber(rev))
    cJSON_AddNumberToObject(o, "content_revision", rev->valuedouble);
  else
    cJSON_AddNullToObject(o, "content_revision");
  ll_json_set(row, "observed", o);
  add_str_or_null(row, "server", str_or(att ? att : props, "server"));
  /* derived by the fold (model_cell.c): verdict, reason, known_deviation */
  cJSON_AddNullToObject(row, "verdict");
  cJSON_AddNullToObject(row, "reason");
  cJSON_AddNullToObject(row, "known_deviation");
  st = append(r, row, out, err);
  if (st == LL_OK && !c->changes &&
      strcmp(t->obs_state, ll_lease_state_key(c->state)) != 0) {
    t->drifted = 1; /* the later cells go on on a fresh lifecycle */
    snprintf(t->reason, sizeof t->reason,
             "the state left %s after cell %s (observed %s, event %s)",
             ll_lease_state_key(c->state), label,
             t->obs_state[0] ? t->obs_state : "?",
             ll_json_pstr(props, "event_id"));
  } else if (st == LL_OK && !c->changes &&
             unexpected_success(c, ll_json_long(att, "http_status", 0))) {
    /* helper-32: acquire B answered 201 on Leased (A) still read
     * "leased", and the later cells conformed under B's lease */
    t->drifted = 1;
    snprintf(t->reason, sizeof t->reason,
             "cell %s succeeded (%ld, event %s) where a rejection is "
             "documented: the lease or the content may have changed hands",
             label, ll_json_long(att, "http_status", 0),
             ll_json_pstr(att, "event_id"));
  }
cleanup:
  cJSON_Delete(att);
  cJSON_Delete(obs[0]);
  cJSON_Delete(obs[1]);
  return st;
}
