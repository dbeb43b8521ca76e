/* `leaselua compare DIR_A DIR_B...`: both bundles verified first
 * (l_bundle.c), their steps diffed by scripts/lib/compare.lua in the
 * sandbox; C prints the text or JSON and writes the operator's --html
 * file. The first bundle is compared with each other one. */
#include "l_compare.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <lauxlib.h>

#include "l_bundle.h"
#include "l_qualify.h"

static const char usage[] =
    "usage: leaselua compare [--json] [--html FILE] [--export-only] [--jobs "
    "N]\n"
    "                        DIR_A DIR_B [DIR...]\n"
    "  A behavioural diff of bundles, step by step (steps matched by "
    "lifecycle,\n"
    "  step name, operation and occurrence): status, error code, lease "
    "state\n"
    "  before and after, classification, x-ms-version requested and "
    "returned,\n"
    "  content revision, discrepancy; then the steps only one bundle has.\n"
    "  DIR_A is compared with each other DIR; a DIR holding index.json "
    "stands\n"
    "  for its runs. Every bundle is verified first; an inconsistent one is "
    "not\n"
    "  compared. It says when the endpoint kinds differ; it never "
    "qualifies.\n"
    "  --json         one JSON object per comparison, one a line, on "
    "stdout\n"
    "  --html FILE    also write the comparison as an HTML page\n"
    "  --export-only  verify the exports alone (no protected ledger)\n"
    "  --jobs N       bundles verified by N worker processes (1-16)\n"
    "exit: 0 no behavioural difference, 1 a difference, 2 a bundle "
    "inconsistent,\n"
    "      64 usage or not an evidence directory, 70 internal error\n";

/* compare's own option: --json, once. */
static int json_opt(void *ctx, int argc, char **argv, int *i, int *bad) {
  int *json = ctx;
  (void)argc;
  if (strcmp(argv[*i], "--json") != 0)
    return 0;
  *bad = *bad || *json;
  *json = 1;
  return 1;
}

int ll_compare_main(int argc, char **argv, FILE *out, FILE *errs) {
  ll_bundle_cli cli = {.mode = LL_VERIFY_FULL};
  int json = 0;
  int parsed =
      ll_bundle_cli_parse(&cli, argc, argv, usage, out, errs, json_opt, &json);
  if (parsed >= 0) {
    ll_bundle_cli_free(&cli);
    return parsed;
  }
  const char *html = cli.html;
  int jobs = cli.jobs;
  ll_verify_mode mode = cli.mode;
  char **dirs = NULL;
  int n = 0;
  int rc = ll_qualify_dirs("compare", cli.args, cli.nargs, &dirs, &n, errs);
  ll_bundle_cli_free(&cli);
  cJSON *sums = NULL, *opts = NULL, *base = NULL;
  lua_State *L = NULL;
  if (rc == 0 && n < 2) {
    fprintf(errs,
            "leaselua: compare: needs two bundles (DIR_A DIR_B), "
            "found %d\n",
            n);
    rc = 64;
  }
  if (rc)
    goto cleanup;
  /* the first bundle once, then each other one against it in the
   * workers: only the diffs come back */
  ll_bundle_opts bo = {
      .mode = mode, .allowed = NULL, .steps = 1, .jobs = 1, .map = NULL};
  rc = ll_bundle_summaries("compare", dirs, 1, &bo, &base, errs);
  if (rc)
    goto cleanup;
  bo.jobs = jobs ? jobs : ll_bundle_default_jobs(n - 1);
  bo.map = "compare";
  bo.map_ctx = base->child;
  rc = ll_bundle_summaries("compare", dirs + 1, n - 1, &bo, &sums, errs);
  if (rc)
    goto cleanup;
  rc = 70;
  opts = cJSON_CreateObject();
  if (!opts || !cJSON_AddBoolToObject(opts, "html", html != NULL))
    goto cleanup;
  if (ll_bundle_render("compare", "lib.compare", sums, opts, html, &L, out,
                       errs))
    goto cleanup;
  int res = lua_gettop(L);
  if (json) {
    lua_getfield(L, res, "json");
    int list = lua_gettop(L);
    lua_Integer k = (lua_Integer)lua_rawlen(L, list);
    for (lua_Integer i = 1; i <= k; i++) {
      lua_rawgeti(L, list, i);
      int e = ll_bundle_emit_json(L, -1, "compare", "the JSON comparison", out,
                                  errs);
      lua_pop(L, 1);
      if (e)
        goto cleanup;
    }
  } else if (ll_bundle_emit_field(L, res, "text", "compare", NULL, out, errs)) {
    goto cleanup;
  }
  rc = ll_bundle_exit(L, res);
cleanup:
  if (L)
    lua_close(L);
  cJSON_Delete(opts);
  cJSON_Delete(sums);
  cJSON_Delete(base);
  ll_qualify_free(dirs, n);
  return rc;
}
