/* Builds the clock, transport and credential of a run from the options a
 * script passed to leaselua.open. Replay and recording plug in here. */
#ifndef LL_TRANSPORT_FACTORY_H
#define LL_TRANSPORT_FACTORY_H

#include <lua.h>

#include "auth.h"
#include "run.h"

typedef struct {
  char ca_file[512];
  long connect_timeout_ms;
  long total_timeout_ms;
  ll_auth_kind auth_kind;
  char token_file[512];
  char token_command[1024];
  char imds_endpoint[512];
  char client_id[128];
  char replay[512];
  char record[512];
  char record_description[512];
  char fixture_label[16]; /* replay: the fixture's endpoint_kind */
} ll_transport_config;

/* Reads ca_file, connect_timeout_ms, total_timeout_ms, auth={kind=...},
 * replay, record and record_description from the options table at idx
 * (raises on bad types). */
void ll_transport_config_from_lua(lua_State *L, int idx,
                                  ll_transport_config *tc);
void ll_transport_config_cleanup(ll_transport_config *tc);

/* Fills cfg->clock, cfg->transport, cfg->auth and cfg->fixture_label. The
 * token preflight refuses one expiring within deadline_s. With replay, the
 * fixture serves the run on a virtual clock, with no credential and no
 * network (cfg->fixture_label points into tc, which must outlive
 * ll_run_open); with record, the wire is wrapped by a recorder. */
ll_status ll_transport_make(ll_transport_config *tc, const char *url,
                            long long deadline_s, ll_run_config *cfg,
                            ll_error *err) LL_WARN_UNUSED;

#endif
