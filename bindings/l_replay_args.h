/* The host's side of a fixture's recorded target and flow arguments
 * (fixture.h, ll_fixture_context): what a recording is given, and what a
 * replay takes from the fixture when the operator did not give it. */
#ifndef LL_L_REPLAY_ARGS_H
#define LL_L_REPLAY_ARGS_H

#include "fixture.h"
#include "operator.h"

/* The flow a recording names: script's file name and its own arguments;
 * has_flow 0 when they do not fit a fixture's limits. */
void ll_host_flow_context(const char *script, int nargs, char **args,
                          ll_fixture_context *out);

/* For op->replay: reads the fixture's context into out; a recorded
 * container or blob replaces the default unless the operator set
 * AZURE_STORAGE_CONTAINER / AZURE_STORAGE_BLOB (through get), and one set
 * to another value is LL_E_USAGE naming both. out->has_flow stays only
 * when the fixture recorded this script's arguments. */
ll_status ll_host_replay_context(ll_operator *op, const char *script,
                                 const char *(*get)(const char *),
                                 ll_fixture_context *out,
                                 ll_error *err) LL_WARN_UNUSED;

#endif
