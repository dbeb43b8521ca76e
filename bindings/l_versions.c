/* --api-version a,b,c: the host, never the script, chooses the lifecycle
 * boundaries and the files. Each version gets its own sandbox, its own
 * fresh lifecycle and its own bundle under one parent directory, and
 * index.json names them (core/run/include/run_index.h). */
#include "l_versions.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <stdlib.h>

#include "blob.h"
#include "input.h"
#include "ll.h"
#include "lock.h"
#include "manifest.h"
#include "run_index.h"

/* A manifest that names its api_version fixes one version: refused with a
 * list, before any bundle is made (each run would refuse it anyway). A
 * manifest that cannot be read is left to the first run to report. */
static ll_status manifest_names_version(const ll_operator *op, ll_error *err) {
  if (!op->manifest[0])
    return LL_OK;
  ll_buf b = {0};
  ll_error ignored = {0};
  cJSON *m = NULL;
  if (ll_input_read(op->manifest, "manifest", "--manifest",
                    LL_MANIFEST_FILE_MAX, &b, &ignored) == LL_OK &&
      ll_manifest_parse(b.p, b.n, &m, &ignored) != LL_OK)
    m = NULL;
  free(b.p);
  const cJSON *v =
      m ? cJSON_GetObjectItemCaseSensitive(m, "api_version") : NULL;
  ll_status st = LL_OK;
  if (cJSON_IsString(v))
    st = ll_fail(err, LL_E_USAGE,
                 "the manifest names api_version %.10s, and --api-version "
                 "names several: leave api_version out of the manifest to "
                 "run a list of versions",
                 v->valuestring);
  cJSON_Delete(m);
  return st;
}

/* index.json rewritten, or the reason it could not be on stderr (0). */
static int index_written(const char *parent, const char *flow,
                         const char *created, const ll_index_run *runs,
                         size_t n) {
  ll_error err = {0};
  if (ll_index_write(parent, flow, created, runs, n, &err) == LL_OK)
    return 1;
  fprintf(stderr, "leaselua: %s: %s (exit 70)\n", ll_code_name(err.code),
          err.message);
  return 0;
}

/* --api-version a,b,c: the same script once per version, each in its own
 * sandbox with its own fresh lifecycle and bundle <parent>/<version>/,
 * and <parent>/index.json (run_index.h) rewritten after each. A run that
 * does not ACCEPT ends the series: the blob is not known to be clean, so
 * no further lifecycle starts on it. Exit: the worst of the runs. */
int ll_host_run_versions(const ll_operator *base, const char *cli_flow,
                         ll_run_one_fn run_one, void *ctx) {
  ll_error err = {0};
  char parent[512], flow[64];
  ll_strlcpy(flow, cli_flow, sizeof flow);
  ll_strlcpy(parent, base->evidence, sizeof parent);
  ll_status st = manifest_names_version(base, &err);
  if (st == LL_OK && !parent[0])
    st = ll_operator_default_evidence(base, flow, parent, sizeof parent, &err);
  /* Each version's run checks its siblings, the other versions; the
   * parent's siblings, the runs beside it in the evidence root, are
   * checked here, as a single run would be checked (invariant 14). */
  ll_target t;
  if (st == LL_OK)
    st = ll_target_init(&t, base->account_url, base->container, base->blob,
                        &err);
  if (st == LL_OK) {
    char host[256], path[512];
    ll_manifest_account_host(t.account_url, host, sizeof host);
    ll_target_blob_path(&t, path, sizeof path);
    st = ll_lock_check_previous(parent, host, path, &err);
  }
  if (st == LL_OK && strlen(parent) + 12 >= sizeof base->evidence)
    st = ll_fail(&err, LL_E_USAGE, "--evidence is too long: %s", parent);
  if (st == LL_OK)
    st = ll_index_prepare(parent, &err);
  if (st != LL_OK) {
    fprintf(stderr, "leaselua: %s: %s\n", ll_code_name(st), err.message);
    return ll_code_exit(st);
  }
  char created[32];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
  ll_index_run runs[LL_API_VERSIONS_MAX] = {0};
  size_t n = (size_t)base->n_api_versions;
  static ll_operator op; /* large: not on the stack */
  const char *stopped = NULL;
  for (size_t i = 0; i < n; i++) {
    ll_index_run *r = &runs[i];
    ll_strlcpy(r->api_version, base->api_versions[i], sizeof r->api_version);
    if (stopped) {
      snprintf(r->reason, sizeof r->reason,
               "not run: the run at %s did not ACCEPT, so the blob is not "
               "known to be clean",
               stopped);
      continue;
    }
    op = *base;
    ll_strlcpy(op.api_version, r->api_version, sizeof op.api_version);
    int k = snprintf(op.evidence, sizeof op.evidence, "%s/%s", parent,
                     r->api_version);
    if (k < 0 || (size_t)k >= sizeof op.evidence)
      return 64; /* cannot be: checked above */
    fprintf(stderr, "leaselua: api-version %s (%zu of %zu): evidence %s\n",
            r->api_version, i + 1, n, op.evidence);
    /* listed before it starts, exit null: a series killed mid-run still
     * names the bundle, so the next run on this blob finds it */
    r->ran = 1;
    r->decision = -1;
    r->exit_code = -1;
    if (!index_written(parent, flow, created, runs, i + 1))
      return 70;
    r->exit_code =
        run_one(&op, ctx, &r->decision, &r->bundle, flow, sizeof flow);
    if (r->exit_code != 0)
      stopped = base->api_versions[i];
    if (!index_written(parent, flow, created, runs, i + 1))
      return 70;
  }
  if (!index_written(parent, flow, created, runs, n))
    return 70;
  int worst = ll_index_worst_exit(runs, n);
  fprintf(stderr,
          "leaselua: %zu API versions, index %s/" LL_INDEX_FILE
          " (exit %d, the worst of the runs)\n",
          n, parent, worst);
  return worst;
}
