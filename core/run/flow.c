/* The composite steps whose safety rests on timing or ordering, kept in C:
 * reconcile, the bracketed breaking probe, the bounded poller, and the
 * decision record. */
#include "jsonx.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_impl.h"
/* A read by the observer; *row is NULL only when it was not recorded. */
static ll_status observe(ll_run *r, ll_op op, const char *step, cJSON **row,
                         ll_error *err) {
  ll_req_spec s = ll_req_spec_for(op, step, "observer");
  return ll_run_request(r, &s, row, err);
}

static ll_status reconcile(ll_run *r, const char *step, cJSON **out_row,
                           ll_error *err) {
  cJSON *p = NULL, *g = NULL;
  char label[96];
  *out_row = NULL;
  snprintf(label, sizeof label, "%s: properties", step ? step : "reconcile");
  ll_status st = observe(r, LL_OP_GET_PROPERTIES, label, &p, err);
  if (st != LL_OK && st != LL_E_TRANSPORT)
    return st;
  snprintf(label, sizeof label, "%s: content", step ? step : "reconcile");
  st = observe(r, LL_OP_GET_BLOB, label, &g, err);
  cJSON_Delete(p);
  cJSON_Delete(g);
  if (st != LL_OK && st != LL_E_TRANSPORT)
    return st;
  cJSON *row = ll_model_reconcile_row(r->model, err);
  if (!row)
    return LL_E_NOMEM;
  cJSON_AddStringToObject(row, "step", step ? step : "reconcile");
  st = ll_run_append(r, row, err);
  cJSON_Delete(row);
  if (st == LL_OK)
    *out_row = ll_run_last_export(r);
  return st;
}

static ll_status probe(ll_run *r, const char *writer, long revision,
                       cJSON **out_finding, ll_error *err) {
  cJSON *before = NULL, *put = NULL, *after = NULL;
  const char *reason = NULL;
  char step[64];
  *out_finding = NULL;
  if (!ll_run_is_bound(r, writer))
    return ll_fail(err, LL_E_USAGE, "probe writer %s is not bound to a lease",
                   writer);
  if (ll_model_break_sent(r->model) < 0)
    return ll_fail(err, LL_E_ORDER,
                   "the breaking probe needs an accepted break first");
  ll_status st = observe(r, LL_OP_GET_PROPERTIES, "probe: properties before",
                         &before, err);
  if (st != LL_OK && st != LL_E_TRANSPORT)
    goto cleanup;
  if (ll_json_is(before, "observed_lease_state", "breaking") &&
      ll_json_is(before, "observed_lease_status", "locked")) {
    ll_req_spec s = ll_req_spec_for(LL_OP_PUT_BLOB, step, writer);
    s.lease = writer;
    s.bound = 1;
    s.revision = revision;
    snprintf(step, sizeof step, "rev %ld (probe, lease %s)", revision, writer);
    st = ll_run_request(r, &s, &put, err);
    if (st != LL_OK && st != LL_E_TRANSPORT)
      goto cleanup;
    st = observe(r, LL_OP_GET_PROPERTIES, "probe: properties after", &after,
                 err);
    if (st != LL_OK && st != LL_E_TRANSPORT)
      goto cleanup;
    if (!(ll_json_is(after, "observed_lease_state", "breaking") &&
          ll_json_is(after, "observed_lease_status", "locked")))
      reason = "the read after the write no longer shows breaking/locked: "
               "the write may have crossed the transition";
  } else {
    reason = "the first read does not show breaking/locked: a late probe "
             "proves nothing about the breaking state, so no write was sent";
  }
  cJSON *f = cJSON_CreateObject();
  cJSON_AddStringToObject(f, "record", "finding");
  cJSON_AddStringToObject(f, "kind", "window");
  cJSON_AddNumberToObject(f, "fixture_epoch", ll_model_epoch(r->model));
  cJSON_AddStringToObject(f, "writer", writer);
  cJSON_AddNumberToObject(f, "revision", revision);
  cJSON_AddStringToObject(f, "before_event",
                          before ? ll_json_str(before, "event_id") : "");
  cJSON_AddStringToObject(f, "put_event",
                          put ? ll_json_str(put, "event_id") : "");
  cJSON_AddStringToObject(f, "after_event",
                          after ? ll_json_str(after, "event_id") : "");
  if (before && after)
    cJSON_AddNumberToObject(f, "bracket_ms",
                            (ll_json_double(after, "mono_end_ns", 0) -
                             ll_json_double(before, "mono_start_ns", 0)) /
                                1e6);
  cJSON_AddStringToObject(f, "reason", reason ? reason : "");
  cJSON_AddNullToObject(f, "result");
  st = ll_run_append(r, f, err);
  cJSON_Delete(f);
  if (st == LL_OK)
    *out_finding = ll_run_last_export(r);
cleanup:
  cJSON_Delete(before);
  cJSON_Delete(put);
  cJSON_Delete(after);
  return st;
}

static ll_status poll_finding(ll_run *r, const char *result, const char *reason,
                              long polls, const char *last_event, long hint_s,
                              double lag_ms, const ll_poll_options *o,
                              cJSON **out, ll_error *err) {
  char cadence[48];
  if (o->fixed_ms > 0)
    snprintf(cadence, sizeof cadence, "fixed %ld ms", o->fixed_ms);
  else
    snprintf(cadence, sizeof cadence, "adaptive, floor %ld ms", o->floor_ms);
  cJSON *f = cJSON_CreateObject();
  cJSON_AddStringToObject(f, "record", "finding");
  cJSON_AddStringToObject(f, "kind", "poll");
  cJSON_AddNumberToObject(f, "fixture_epoch", ll_model_epoch(r->model));
  cJSON_AddStringToObject(f, "result", result);
  cJSON_AddStringToObject(f, "reason", reason);
  cJSON_AddNumberToObject(f, "polls", polls);
  cJSON_AddStringToObject(f, "last_event", last_event ? last_event : "");
  cJSON_AddNumberToObject(f, "hint_s", hint_s);
  if (hint_s >= 0 && strcmp(result, "BROKEN") == 0)
    cJSON_AddNumberToObject(f, "lag_after_hint_ms", lag_ms);
  cJSON_AddStringToObject(f, "cadence", cadence);
  ll_status st = ll_run_append(r, f, err);
  cJSON_Delete(f);
  if (st == LL_OK)
    *out = ll_run_last_export(r);
  return st;
}

/* Sleeps between two polls. With a progress callback, in pieces of at most
 * PROGRESS_STEP_MS, telling it the time after each, so that a long sleep
 * early in a 60 s break still shows progress (and a log without a terminal
 * its heartbeat); nothing is sent in between, so the polls are the same. */
#define PROGRESS_STEP_MS 1000.0
static void sleep_between(ll_run *r, const ll_poll_options *o, double start,
                          long hint_s, long polls, double sleep_ms) {
  if (!o->progress) {
    ll_clock_sleep_ms(r->clock, (int64_t)sleep_ms);
    return;
  }
  while (sleep_ms > 0) {
    double piece = sleep_ms > PROGRESS_STEP_MS ? PROGRESS_STEP_MS : sleep_ms;
    ll_clock_sleep_ms(r->clock, (int64_t)piece);
    sleep_ms -= piece;
    if (sleep_ms > 0) {
      double now = (double)ll_clock_mono_ns(r->clock);
      o->progress(o->progress_ctx, "breaking", (long)((now - start) / 1e6),
                  hint_s, polls);
    }
  }
}

static ll_status wait_broken(ll_run *r, const ll_poll_options *opts,
                             cJSON **out, cJSON **last_read, ll_error *err) {
  ll_poll_options o = opts ? *opts : (ll_poll_options){0};
  double brk_end = 0;
  long hint_s = -1;
  *out = NULL;
  if (ll_model_break_sent(r->model) < 0)
    return ll_fail(err, LL_E_ORDER, "wait_for_broken needs an accepted break");
  /* the fold's, not the rows': a run that never asks keeps none */
  int have_hint = ll_model_break_hint(r->model, &brk_end, &hint_s);
  double expected_ns = brk_end + (double)hint_s * 1e9;
  double start = (double)ll_clock_mono_ns(r->clock);
  if (o.floor_ms <= 0)
    o.floor_ms = 50;
  if (o.budget <= 0)
    o.budget = 30;
  if (o.deadline_ms <= 0)
    o.deadline_ms =
        have_hint ? (long)((expected_ns - start) / 1e6) + 60000 : 120000;
  double deadline = start + (double)o.deadline_ms * 1e6;
  long polls = 0;
  char last[16] = "";
  for (;;) {
    double now = (double)ll_clock_mono_ns(r->clock);
    if (now > deadline)
      return poll_finding(r, "HOLD",
                          "deadline passed before broken/unlocked was observed",
                          polls, last, hint_s, 0, &o, out, err);
    if (polls >= o.budget)
      return poll_finding(r, "HOLD", "poll budget spent before broken/unlocked",
                          polls, last, hint_s, 0, &o, out, err);
    cJSON *row = NULL;
    ll_status st = observe(r, LL_OP_GET_PROPERTIES, "poll", &row, err);
    polls++;
    if (st != LL_OK && st != LL_E_TRANSPORT) {
      cJSON_Delete(row);
      return st;
    }
    if (row)
      ll_strlcpy(last, ll_json_str(row, "event_id"), sizeof last);
    int ok = st == LL_OK && row && ll_json_double(row, "http_status", 0) == 200;
    int broken = ok && ll_json_is(row, "observed_lease_state", "broken") &&
                 ll_json_is(row, "observed_lease_status", "unlocked");
    int breaking = ok && ll_json_is(row, "observed_lease_state", "breaking") &&
                   ll_json_is(row, "observed_lease_status", "locked");
    double seen = row ? ll_json_double(row, "mono_end_ns", now) : now;
    char why[160];
    snprintf(why, sizeof why, "unexpected state %s/%s while waiting for broken",
             row && ll_json_str(row, "observed_lease_state")
                 ? ll_json_str(row, "observed_lease_state")
                 : "?",
             row && ll_json_str(row, "observed_lease_status")
                 ? ll_json_str(row, "observed_lease_status")
                 : "?");
    if (last_read && row) {
      cJSON_Delete(*last_read);
      *last_read = row;
    } else {
      cJSON_Delete(row);
    }
    if (!ok)
      return poll_finding(r, "HOLD",
                          "a properties read failed when the state was needed",
                          polls, last, hint_s, 0, &o, out, err);
    if (broken)
      return poll_finding(r, "BROKEN", "broken/unlocked observed", polls, last,
                          hint_s, (seen - expected_ns) / 1e6, &o, out, err);
    if (!breaking)
      return poll_finding(r, "HOLD", why, polls, last, hint_s, 0, &o, out, err);
    now = (double)ll_clock_mono_ns(r->clock);
    if (o.progress)
      o.progress(o.progress_ctx, "breaking", (long)((now - start) / 1e6),
                 hint_s, polls);
    double sleep_ms;
    if (o.fixed_ms > 0) {
      sleep_ms = (double)o.fixed_ms;
    } else if (!have_hint) {
      sleep_ms = 1000;
    } else {
      double remaining = (expected_ns - now) / 1e6;
      if (remaining > 2000)
        sleep_ms = remaining / 2; /* sparse early: halve the distance */
      else if (remaining > -1)
        sleep_ms = remaining + 2; /* land just after the expected end */
      else
        sleep_ms = (double)o.floor_ms; /* late: dense, at the floor */
    }
    if (sleep_ms < (double)o.floor_ms)
      sleep_ms = (double)o.floor_ms;
    double until = deadline - now;
    if (sleep_ms * 1e6 > until)
      sleep_ms = until / 1e6 + 1;
    sleep_between(r, &o, start, hint_s, polls, sleep_ms);
  }
}

static cJSON *decision_row(ll_run *r) {
  cJSON *row = cJSON_CreateObject();
  cJSON_AddStringToObject(row, "record", "decision");
  cJSON_AddNumberToObject(row, "fixture_epoch", ll_model_epoch(r->model));
  cJSON_AddStringToObject(row, "endpoint_kind",
                          ll_model_endpoint_kind(r->model));
  cJSON_AddNullToObject(row, "decision");
  cJSON_AddNullToObject(row, "reasons");
  cJSON_AddNullToObject(row, "window_finding");
  cJSON_AddNullToObject(row, "statement");
  cJSON_AddNullToObject(row, "open_doubts");
  return row;
}

ll_status ll_run_record_decision(ll_run *r, cJSON **out, ll_error *err) {
  cJSON *row = decision_row(r);
  *out = NULL;
  if (!row)
    return ll_fail(err, LL_E_NOMEM, "out of memory");
  ll_status st = ll_run_append(r, row, err);
  cJSON_Delete(row);
  if (st == LL_OK) {
    *out = ll_run_last_export(r);
    st = ll_run_write_expected(r, err);
  }
  if (st == LL_OK) {
    cJSON *d = cJSON_Duplicate(*out, 1);
    st = ll_run_check_alloc(r, err); /* no decision.json from a bad copy */
    if (st == LL_OK)
      st = ll_ledger_write_json(r->ledger, "decision.json", d, err);
    cJSON_Delete(d);
  }
  if (st == LL_OK) {
    const char *name = ll_json_str(*out, "decision");
    r->decision = !name                            ? LL_DEC_HOLD
                  : strcmp(name, "ACCEPT") == 0    ? LL_DEC_ACCEPT
                  : strcmp(name, "WAIT") == 0      ? LL_DEC_WAIT
                  : strcmp(name, "RECONCILE") == 0 ? LL_DEC_RECONCILE
                                                   : LL_DEC_HOLD;
  }
  return st;
}

static ll_status decide(ll_run *r, int record, cJSON **out, ll_error *err) {
  ll_status st;
  *out = NULL;
  if (r->dead)
    return ll_run_dead(r, err);
  if (record && r->decision >= 0)
    return ll_fail(err, LL_E_ORDER,
                   "the decision is already recorded: a run is finished once");
  if (record) {
    st = ll_run_end_transport(r, err);
    if (st == LL_OK)
      st = ll_run_record_decision(r, out, err);
    return st;
  }
  cJSON *row = decision_row(r);
  if (!row)
    return ll_fail(err, LL_E_NOMEM, "out of memory");
  /* Dry decision: fold a copy of the model's view without recording. */
  cJSON *reasons = NULL;
  const char *window = NULL;
  ll_decision d = ll_decide(r->model, &reasons, &window);
  if (!reasons) {
    cJSON_Delete(row);
    return ll_fail(err, LL_E_NOMEM, "out of memory deciding");
  }
  ll_json_set(row, "decision", cJSON_CreateString(ll_decision_name(d)));
  ll_json_set(row, "reasons", reasons);
  ll_json_set(row, "window_finding", cJSON_CreateString(window));
  char *stmt = ll_decide_statement(r->model, d);
  ll_json_set(row, "statement", cJSON_CreateString(stmt ? stmt : ""));
  free(stmt);
  ll_json_set(row, "open_doubts",
              cJSON_CreateNumber(ll_decide_open_doubts(r->model)));
  ll_model_stop_fields(r->model, row);
  /* Preview only (never recorded): can further steps still reach ACCEPT? */
  const char *why = NULL;
  int reachable = ll_decide_accept_reachable(r->model, &why);
  cJSON_AddBoolToObject(row, "accept_reachable", reachable);
  if (why)
    cJSON_AddStringToObject(row, "out_of_reach", why);
  *out = row;
  return LL_OK;
}

/* The public steps: each ends in ll_run_settle, so an allocation that
 * failed anywhere inside one is LL_E_NOMEM and ends the run. */
ll_status ll_run_reconcile(ll_run *r, const char *step, cJSON **out_row,
                           ll_error *err) {
  ll_status st = reconcile(r, step, out_row, err);
  return ll_run_settle(r, st, out_row, err);
}

ll_status ll_run_probe(ll_run *r, const char *writer, long revision,
                       cJSON **out_finding, ll_error *err) {
  ll_status st = probe(r, writer, revision, out_finding, err);
  return ll_run_settle(r, st, out_finding, err);
}

ll_status ll_run_wait_broken(ll_run *r, const ll_poll_options *opts,
                             cJSON **out, cJSON **last_read, ll_error *err) {
  if (last_read)
    *last_read = NULL;
  ll_status st = wait_broken(r, opts, out, last_read, err);
  st = ll_run_settle(r, st, out, err);
  if (st != LL_OK && last_read) {
    cJSON_Delete(*last_read);
    *last_read = NULL;
  }
  return st;
}

ll_status ll_run_decide(ll_run *r, int record, cJSON **out, ll_error *err) {
  ll_status st = decide(r, record, out, err);
  return ll_run_settle(r, st, out, err);
}
