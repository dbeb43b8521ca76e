/* --api-version a,b,c in the host: the same script once per version
 * (run_index.h for the index it writes). */
#ifndef LL_L_VERSIONS_H
#define LL_L_VERSIONS_H

#include <stddef.h>

#include "operator.h"

/* Runs the script once under op, in a fresh sandbox: its exit code, the
 * decision it recorded (-1 none), whether it made a bundle, and its plan's
 * name into flow (left as it is when it opened no run). */
typedef int (*ll_run_one_fn)(const ll_operator *op, void *ctx, int *decision,
                             int *bundle, char *flow, size_t flow_cap);

/* base->n_api_versions > 1: one run per version, each with its own fresh
 * lifecycle and bundle <evidence>/<version>/ (evidence: --evidence, else
 * the default <root>/<cli_flow>-<UTC>), and <evidence>/index.json after
 * each. A run that does not ACCEPT ends the series (the versions left are
 * listed as not run). Returns the worst exit code of the runs. */
int ll_host_run_versions(const ll_operator *base, const char *cli_flow,
                         ll_run_one_fn run_one, void *ctx);

#endif
