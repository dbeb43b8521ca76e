/* The reads invariant 15 adds to a run, whatever its script: the preflight
 * before the first mutation, and the properties read that records a blob
 * found in the way of a create. ll_run_request calls them. */
#include <stdio.h>

#include "run_impl.h"

/* Invariant 15: one unconditioned Get Blob Properties before the run's
 * first mutation, whatever the script. Its row says what was found; the
 * model turns anything but a 404 into a stop the guard then enforces. Only
 * a failure to record it is returned. */
ll_status ll_run_preflight(ll_run *r, const ll_req_spec *next, ll_error *err) {
  char saved[sizeof r->step], label[sizeof r->step];
  ll_strlcpy(saved, r->step, sizeof saved);
  snprintf(label, sizeof label, "preflight: properties before %.60s",
           saved[0] ? saved : ll_op_name(next->op));
  ll_strlcpy(r->step, label, sizeof r->step);
  ll_req_spec s = {.op = LL_OP_GET_PROPERTIES,
                   .step = label,
                   .actor = "observer",
                   .revision = -1,
                   .lease_duration = -1,
                   .break_period = -1,
                   .preflight = 1};
  cJSON *row = NULL;
  ll_status st = ll_run_request(r, &s, &row, err);
  ll_strlcpy(r->step, saved, sizeof r->step);
  cJSON_Delete(row);
  return st == LL_E_TRANSPORT ? LL_OK : st;
}

/* After a create refused because the blob is there: one properties read
 * records what the run found (invariant 15); nothing else is sent. */
ll_status ll_run_record_existing(ll_run *r, ll_error *err) {
  char saved[sizeof r->step];
  ll_strlcpy(saved, r->step, sizeof saved);
  ll_strlcpy(r->step, "target exists: properties", sizeof r->step);
  ll_req_spec s = {.op = LL_OP_GET_PROPERTIES,
                   .actor = "observer",
                   .revision = -1,
                   .lease_duration = -1,
                   .break_period = -1};
  cJSON *row = NULL;
  ll_error e = {0};
  ll_status st = ll_run_request(r, &s, &row, &e);
  ll_strlcpy(r->step, saved, sizeof r->step);
  cJSON_Delete(row);
  if (st == LL_OK || st == LL_E_TRANSPORT)
    return LL_OK;
  if (err)
    *err = e;
  return st;
}
