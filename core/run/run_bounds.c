/* The run's bounds: what the flow declared at open (its plan), its
 * deliberate stops, and the decision recorded for a script that ended
 * without one. Each is a ledger row, so a reviewer sees why a run ended. */
#include "jsonx.h"
#include <stdio.h>
#include <string.h>

#include "run_impl.h"

static int name_ok(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 32)
    return 0;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
          s[i] == '-'))
      return 0;
  return 1;
}

static int listed(const cJSON *arr, const char *s) {
  const cJSON *a;
  cJSON_ArrayForEach(a, arr) {
    if (cJSON_IsString(a) && strcmp(a->valuestring, s) == 0)
      return 1;
  }
  return 0;
}

ll_status ll_flow_plan_check(const ll_flow_plan *p, const cJSON *permitted,
                             ll_error *err) {
  if (!name_ok(p->name))
    return ll_fail(err, LL_E_USAGE,
                   "flow name '%s' must be 1-32 lowercase letters, digits or "
                   "'-'",
                   p->name);
  for (int i = 0; i < p->nbreaks; i++)
    if (p->break_periods[i] < 0 || p->break_periods[i] > LL_BREAK_PERIOD_MAX)
      return ll_fail(err, LL_E_USAGE,
                     "break period %ld s is outside 0..%d: Lease Blob accepts "
                     "0 to %d seconds; pass --break-period 0..%d",
                     p->break_periods[i], LL_BREAK_PERIOD_MAX,
                     LL_BREAK_PERIOD_MAX, LL_BREAK_PERIOD_MAX);
  if (p->window_attempts < 0 || p->window_attempts > LL_PLAN_MAX_ATTEMPTS ||
      (p->window_attempts == 0 && p->nbreaks > 0 && !p->destructive &&
       !p->recover && !p->lease_table))
    return ll_fail(err, LL_E_USAGE,
                   "window attempts %ld is outside 1..%d: pass "
                   "--window-attempts 1..%d",
                   p->window_attempts, LL_PLAN_MAX_ATTEMPTS,
                   LL_PLAN_MAX_ATTEMPTS);
  for (int i = 0; permitted && i < p->nactors; i++)
    if (!listed(permitted, p->actors[i]))
      return ll_fail(err, LL_E_MANIFEST,
                     "the flow uses actor %s, which is not among the "
                     "manifest's permitted_actors (invariant 11): add it to "
                     "the manifest before the run",
                     p->actors[i]);
  return LL_OK;
}

static ll_status plan(ll_run *r, const ll_flow_plan *p, const char *after_dir,
                      ll_error *err) {
  if (r->planned)
    return ll_fail(err, LL_E_USAGE, "the flow's plan is recorded once");
  /* the manifest row's permitted_actors, as the fold read them */
  const cJSON *permitted = ll_model_actors(r->model);
  if (!permitted)
    return ll_fail(err, LL_E_MANIFEST, "no manifest row to check the plan");
  ll_status st = ll_flow_plan_check(p, permitted, err);
  /* --after is the operator's input: checked before the first request
   * whenever it is given, not first at a destructive lifecycle */
  if (st == LL_OK && (p->destructive || (after_dir && *after_dir)))
    st = ll_run_check_after(r, after_dir, err);
  if (st != LL_OK)
    return st;
  cJSON *row = cJSON_CreateObject();
  cJSON *actors = cJSON_AddArrayToObject(row, "actors");
  cJSON *breaks = cJSON_AddArrayToObject(row, "break_periods");
  if (!row || !actors || !breaks) {
    cJSON_Delete(row);
    return ll_fail(err, LL_E_NOMEM, "out of memory");
  }
  cJSON_AddStringToObject(row, "record", "flow");
  cJSON_AddStringToObject(row, "name", p->name);
  for (int i = 0; i < p->nactors; i++)
    cJSON_AddItemToArray(actors, cJSON_CreateString(p->actors[i]));
  for (int i = 0; i < p->nbreaks; i++)
    cJSON_AddItemToArray(breaks, cJSON_CreateNumber(p->break_periods[i]));
  cJSON_AddNumberToObject(row, "window_attempts", p->window_attempts);
  cJSON_AddBoolToObject(row, "destructive", p->destructive);
  cJSON_AddBoolToObject(row, "recover", p->recover);
  if (p->lease_table)
    cJSON_AddBoolToObject(row, "lease_table", 1);
  st = ll_run_append(r, row, err);
  cJSON_Delete(row);
  if (st == LL_OK) {
    r->plan = *p;
    r->planned = 1;
  }
  return st;
}

ll_status ll_run_plan(ll_run *r, const ll_flow_plan *p, const char *after_dir,
                      ll_error *err) {
  return ll_run_settle(r, plan(r, p, after_dir, err), NULL, err);
}

static ll_status stop(ll_run *r, const char *kind, const char *reason,
                      ll_error *err) {
  cJSON *row = cJSON_CreateObject();
  if (!row)
    return ll_fail(err, LL_E_NOMEM, "out of memory");
  cJSON_AddStringToObject(row, "record", "stop");
  cJSON_AddNumberToObject(row, "fixture_epoch", ll_model_epoch(r->model));
  cJSON_AddStringToObject(row, "step", r->step);
  cJSON_AddStringToObject(row, "kind", kind && *kind ? kind : "stop");
  cJSON_AddStringToObject(row, "reason", reason ? reason : "");
  ll_status st = ll_run_append(r, row, err);
  cJSON_Delete(row);
  return st;
}

ll_status ll_run_stop(ll_run *r, const char *kind, const char *reason,
                      ll_error *err) {
  return ll_run_settle(r, stop(r, kind, reason, err), NULL, err);
}

int ll_run_decision(const ll_run *r) {
  return r->decision;
}

int ll_run_past_deadline(ll_run *r, int64_t grace_ms) {
  return r->deadline_ns &&
         ll_clock_mono_ns(r->clock) > r->deadline_ns + grace_ms * 1000000;
}

int64_t ll_run_deadline_left_ms(ll_run *r, int64_t grace_ms) {
  if (!r->deadline_ns)
    return -1;
  int64_t left =
      r->deadline_ns + grace_ms * 1000000 - ll_clock_mono_ns(r->clock);
  return left > 0 ? left / 1000000 : 0;
}

ll_status ll_run_abandon(ll_run *r, const char *why, ll_error *err) {
  if (r->decision >= 0 || r->dead || r->replay_failure.code)
    return LL_OK;
  char reason[512];
  snprintf(reason, sizeof reason,
           "the script ended without recording a decision (%s): the host "
           "records HOLD",
           why && *why ? why : "it returned");
  r->closing = 1; /* the host's stop closes the run: never bounded as a start */
  ll_status st = ll_run_stop(r, "no-decision", reason, err);
  r->closing = 0;
  cJSON *row = NULL;
  if (st == LL_OK)
    st = ll_run_record_decision(r, &row, err);
  cJSON_Delete(row);
  if (st == LL_OK)
    st = ll_run_end_transport(r, err);
  return st;
}
