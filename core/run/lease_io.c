/* The lease table's requests and waits, shared by lease_table.c (the
 * lifecycles) and lease_cell.c (the cells): one request under its step
 * label, a failure that stops the table, a properties read, and the waits
 * (a lease running out, polled on the run's clock; a break running out, by
 * the run's poller). */
#include <stdio.h>
#include <string.h>

#include "jsonx.h"
#include "lease_io.h"
#include "run_impl.h"

int ll_lt_fatal(ll_status st) {
  return st == LL_E_DURABILITY || st == LL_E_NOMEM || st == LL_E_REPLAY ||
         st == LL_E_TAMPER || st == LL_E_INTERNAL || st == LL_E_IO;
}

/* Stops the table: a stop row, so the guard refuses every later request;
 * the cells without a row are NOT_REACHED with this reason. */
ll_status ll_lt_stop(ll_run *r, ll_lease_table *t, const char *kind,
                     const char *why, ll_error *err) {
  if (t->stopped)
    return LL_OK;
  t->stopped = 1;
  snprintf(t->stop_reason, sizeof t->stop_reason, "%s", why);
  return ll_run_stop(r, kind, why, err);
}

/* One request of the table under its step label. LL_OK with *row for a
 * response; a transport failure or a refusal stops the table (LL_OK, *row
 * as recorded or NULL, *failed set); a fatal status is returned. */
static ll_status send(ll_run *r, ll_lease_table *t, const char *label,
                      const ll_req_spec *s, cJSON **row, int *failed,
                      ll_error *err) {
  char saved[sizeof r->step];
  ll_error e = {0};
  *row = NULL;
  *failed = 0;
  ll_strlcpy(saved, r->step, sizeof saved);
  ll_strlcpy(r->step, label, sizeof r->step);
  ll_status st = ll_run_request(r, s, row, &e);
  ll_strlcpy(r->step, saved, sizeof r->step);
  if (st == LL_OK)
    return LL_OK;
  if (ll_lt_fatal(st)) {
    if (err)
      *err = e;
    return st;
  }
  *failed = 1;
  char why[400];
  if (st == LL_E_TRANSPORT && *row && ll_json_is(*row, "outcome", "UNKNOWN"))
    snprintf(why, sizeof why,
             "%s: the response was lost (UNKNOWN_OUTCOME, event %s): the "
             "flow stops mutating until the run is reconciled (leaselua "
             "recover)",
             label, ll_json_pstr(*row, "event_id"));
  else if (st == LL_E_TRANSPORT)
    snprintf(why, sizeof why, "%.90s: %.250s: the flow stops", label,
             e.message);
  else
    snprintf(why, sizeof why, "%.90s refused: %.290s", label, e.message);
  snprintf(t->fail_reason, sizeof t->fail_reason, "%s", why);
  return ll_lt_stop(
      r, t, st == LL_E_TRANSPORT ? "unknown-outcome" : "left-for-operator", why,
      err);
}

/* A properties read by the observer; t->obs_state keeps what it showed. */
static ll_status props(ll_run *r, ll_lease_table *t, const char *label,
                       cJSON **row, int *failed, ll_error *err) {
  ll_req_spec s = ll_req_spec_for(LL_OP_GET_PROPERTIES, NULL, "observer");
  s.step = label;
  ll_status st = send(r, t, label, &s, row, failed, err);
  t->obs_state[0] = '\0';
  if (*row && ll_json_str(*row, "observed_lease_state"))
    ll_strlcpy(t->obs_state, ll_json_str(*row, "observed_lease_state"),
               sizeof t->obs_state);
  return st;
}

long ll_lt_status(const cJSON *row) {
  return row ? ll_json_long(row, "http_status", 0) : 0;
}

/* ---- waits --------------------------------------------------------- */

/* Polls properties (label) until the state is want, sleeping on the run's
 * clock (virtual in a replay) towards expected_ns, the documented end;
 * *last is the last read (the caller deletes it). 0 when want was seen,
 * else -1 with why filled. */
ll_status ll_lt_wait_state(ll_run *r, ll_lease_table *t, const char *label,
                           const char *want, const char *during,
                           double expected_ns, cJSON **last, char *why,
                           size_t cap, int *seen, ll_error *err) {
  double start = (double)ll_clock_mono_ns(r->clock);
  double deadline =
      (expected_ns > start ? expected_ns : start) + LL_LT_WAIT_SLACK_MS * 1e6;
  *seen = 0;
  *last = NULL;
  for (long polls = 0;; polls++) {
    if (polls >= LL_LT_WAIT_BUDGET ||
        (double)ll_clock_mono_ns(r->clock) > deadline) {
      snprintf(why, cap, "%s not observed within %ld polls and %d s", want,
               polls, LL_LT_WAIT_SLACK_MS / 1000);
      return LL_OK;
    }
    cJSON_Delete(*last);
    int failed = 0;
    ll_status st = props(r, t, label, last, &failed, err);
    if (st != LL_OK || failed) {
      snprintf(why, cap, "a properties read failed while waiting for %s", want);
      return st;
    }
    if (ll_lt_status(*last) != 200) {
      snprintf(why, cap, "a properties read answered %ld while waiting for %s",
               ll_lt_status(*last), want);
      return LL_OK;
    }
    if (strcmp(t->obs_state, want) == 0) {
      *seen = 1;
      return LL_OK;
    }
    if (strcmp(t->obs_state, during) != 0) {
      snprintf(why, cap, "state %s while waiting for %s",
               t->obs_state[0] ? t->obs_state : "?", want);
      return LL_OK;
    }
    double now = (double)ll_clock_mono_ns(r->clock);
    double remaining = (expected_ns - now) / 1e6, ms;
    if (remaining > 2000)
      ms = remaining / 2;
    else if (remaining > -1)
      ms = remaining + LL_LT_WAIT_LAND_MS;
    else
      ms = LL_LT_WAIT_FLOOR_MS;
    if (ms < LL_LT_WAIT_FLOOR_MS)
      ms = LL_LT_WAIT_FLOOR_MS;
    ll_clock_sleep_ms(r->clock, (int64_t)ms);
  }
}

ll_status ll_lt_wait(ll_run *r, ll_lease_table *t, const ll_lt_cell *c,
                     const char *label, cJSON **last, char *why, size_t cap,
                     int *seen, ll_error *err) {
  if (c->state == LL_LS_LEASED)
    return ll_lt_wait_state(r, t, label, "expired", "leased",
                            t->acquired_ns + (double)LL_LT_EXPIRY_S * 1e9, last,
                            why, cap, seen, err);
  char saved[sizeof r->step];
  cJSON *f = NULL;
  ll_error e = {0};
  *last = NULL;
  *seen = 0;
  ll_strlcpy(saved, r->step, sizeof saved);
  ll_strlcpy(r->step, label, sizeof r->step);
  ll_poll_options o = {0};
  cJSON *read = NULL;
  ll_status st = ll_run_wait_broken(r, &o, &f, &read, &e);
  ll_strlcpy(r->step, saved, sizeof r->step);
  if (ll_lt_fatal(st)) {
    if (err)
      *err = e;
    return st;
  }
  if (st != LL_OK) {
    snprintf(why, cap, "the poller failed: %s", e.message);
    return ll_lt_stop(r, t, "left-for-operator", why, err);
  }
  *seen = ll_json_is(f, "result", "BROKEN");
  if (!*seen)
    snprintf(why, cap, "the poller: %s", ll_json_pstr(f, "reason"));
  /* the poller's last read (the finding's last_event), a copy of its own:
   * once a reader has asked for the rows, it is a reference to a kept row */
  const char *ev = ll_json_str(f, "last_event");
  if (ev && ll_json_is(read, "record", "outcome") &&
      ll_json_is(read, "event_id", ev))
    *last = cJSON_Duplicate(read, 1);
  cJSON_Delete(read);
  cJSON_Delete(f);
  t->obs_state[0] = '\0';
  if (*last && ll_json_str(*last, "observed_lease_state"))
    ll_strlcpy(t->obs_state, ll_json_str(*last, "observed_lease_state"),
               sizeof t->obs_state);
  return LL_OK;
}

ll_status ll_lt_send(ll_run *r, ll_lease_table *t, const char *label,
                     const ll_req_spec *s, cJSON **row, int *failed,
                     ll_error *err) {
  return send(r, t, label, s, row, failed, err);
}

ll_status ll_lt_props(ll_run *r, ll_lease_table *t, const char *label,
                      cJSON **row, int *failed, ll_error *err) {
  return props(r, t, label, row, failed, err);
}

/* The break of a Breaking (A) lifecycle ends (documented: its period after
 * the break's answer) within LL_LT_BREAK_MARGIN_MS of now, or has ended:
 * an attempt now could not tell the cell's effect from the break's end.
 * Never for the duration expiring, which waits for exactly that. */
int ll_lt_break_running_out(ll_run *r, const ll_lease_table *t,
                            const ll_lt_cell *c) {
  if (c->state != LL_LS_BREAKING || c->op == LL_LO_EXPIRE)
    return 0;
  double end = t->break_ns + (double)t->plan.break_period * 1e9;
  return (double)ll_clock_mono_ns(r->clock) + LL_LT_BREAK_MARGIN_MS * 1e6 > end;
}

int ll_lt_break_ended_before(const ll_lease_table *t, const ll_lt_cell *c,
                             const cJSON *read) {
  if (c->state != LL_LS_BREAKING || c->op == LL_LO_EXPIRE || !read)
    return 0;
  double end = t->break_ns + (double)t->plan.break_period * 1e9;
  return ll_json_double(read, "mono_end_ns", 0) > end;
}
