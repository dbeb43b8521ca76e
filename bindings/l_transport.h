/* Builds the clock, transport and credential of a run from the operator's
 * configuration (core/operator.h). Replay and recording plug in here. */
#ifndef LL_L_TRANSPORT_H
#define LL_L_TRANSPORT_H

#include <lua.h>

#include "fixture.h"
#include "operator.h"
#include "run.h"

/* The embedding API: fills op from the leaselua.open table at idx (the
 * stock-Lua module's caller owns the process and is the operator). Only
 * the operator keys are read, with raw access; a value of the wrong type
 * or size raises LL_E_USAGE naming the key. */
void ll_operator_from_lua(lua_State *L, int idx, ll_operator *op);

/* Fills cfg->clock, cfg->transport, cfg->auth and cfg->fixture_label. The
 * token preflight refuses one expiring within op->deadline_s. With replay,
 * the fixture serves the run on a virtual clock, with no credential and no
 * network (cfg->fixture_label points into label, which must outlive
 * ll_run_open); with record, the wire is wrapped by a recorder. */
ll_status ll_transport_make(const ll_operator *op, ll_run_config *cfg,
                            const ll_fixture_context *flow, char *label,
                            size_t label_cap, ll_error *err) LL_WARN_UNUSED;

/* The actors' own credentials (credentials.h) of a live run, after
 * ll_transport_make: read from op and the manifest into creds (which must
 * outlive ll_run_open), checked against the plan's actors, and obtained
 * into cfg->actor_auth; the source names set. Nothing for a replay. On
 * failure cfg's credentials are freed. */
ll_status ll_transport_actors(const ll_operator *op, const cJSON *manifest,
                              const ll_flow_plan *plan, ll_cred_config *creds,
                              ll_run_config *cfg, ll_error *err) LL_WARN_UNUSED;

#endif
