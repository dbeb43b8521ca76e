/* `leaselua qualify DIR...`: every bundle verified first (l_bundle.c),
 * then the qualification table rendered by scripts/lib/qualify.lua in the
 * sandbox; C prints it and writes the operator's --html and --junit files.
 * A DIR holding index.json stands for its runs. */
#include "l_qualify.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <lauxlib.h>

#include "l_bundle.h"

static const char usage[] =
    "usage: leaselua qualify [--json | --md] [--html FILE] [--junit FILE]\n"
    "                        [--require-signature --allowed-signers FILE]\n"
    "                        [--export-only] [--jobs N] DIR...\n"
    "  The qualification table: one row per endpoint kind, account host, API\n"
    "  version, leaselua version, libcurl version and flow. Each DIR is a\n"
    "  bundle, or a directory whose index.json lists bundles. Every bundle is\n"
    "  verified first; one verify does not find consistent is in no row.\n"
    "  Emulator and replay rows sit in their own section: they never qualify.\n"
    "  A row is QUALIFIED when its latest run is: endpoint kind azure,\n"
    "  decision ACCEPT, window REPRODUCED, verify consistent (and signed, "
    "with\n"
    "  --require-signature).\n"
    "  --json | --md        the table as JSON or Markdown on stdout (default "
    "text)\n"
    "  --html FILE          also write the table as an HTML page\n"
    "  --junit FILE         also write JUnit XML (schemas/junit.xsd)\n"
    "  --require-signature  a row qualifies only when signed by a key of\n"
    "                       --allowed-signers FILE (ssh-keygen's format)\n"
    "  --allowed-signers FILE  name each bundle's signer from FILE\n"
    "  --export-only        verify the exports alone (no protected ledger)\n"
    "  --jobs N             bundles verified by N worker processes (1-16)\n"
    "exit: 0 every Azure row QUALIFIED, 1 no Azure evidence (nothing can\n"
    "      qualify), 2 an Azure row NOT QUALIFIED or a bundle inconsistent,\n"
    "      64 usage or not an evidence directory, 70 internal error\n";

static int take(char ***list, int *n, int *cap, const char *dir) {
  if (*n == *cap) {
    int ncap = *cap ? *cap * 2 : 16;
    char **grown = realloc(*list, (size_t)ncap * sizeof *grown);
    if (!grown)
      return 70;
    *list = grown;
    *cap = ncap;
  }
  char *copy = strdup(dir);
  if (!copy)
    return 70;
  (*list)[(*n)++] = copy;
  return 0;
}

/* Each argument: an index's runs, or a bundle; every one checked before
 * any is verified. 0, 64 or 70. */
int ll_qualify_dirs(const char *cmd, char *const *args, int nargs, char ***list,
                    int *n, FILE *errs) {
  int cap = 0, rc = 0;
  *list = NULL;
  *n = 0;
  for (int i = 0; rc == 0 && i < nargs; i++) {
    int before = *n;
    int x = ll_bundle_expand_index(cmd, args[i], list, n, &cap, errs);
    if (x == 1) {
      for (int k = before; rc == 0 && k < *n; k++)
        rc = ll_bundle_arg_check(cmd, (*list)[k], errs);
    } else if (x == 0) {
      rc = ll_bundle_arg_check(cmd, args[i], errs);
      if (rc == 0)
        rc = take(list, n, &cap, args[i]);
    } else {
      rc = x;
    }
  }
  return rc;
}

void ll_qualify_free(char **list, int n) {
  for (int i = 0; i < n; i++)
    free(list[i]);
  free(list);
}

/* The value of an option taking one: argv[*i + 1], or NULL (usage). */
static const char *value(int argc, char **argv, int *i) {
  if (*i + 1 >= argc || !argv[*i + 1][0])
    return NULL;
  return argv[++*i];
}

/* qualify's own options. */
typedef struct {
  const char *junit, *allowed, *fmt;
  int require_sig;
} qualify_opts;

static int qualify_opt(void *ctx, int argc, char **argv, int *i, int *bad) {
  qualify_opts *q = ctx;
  const char *a = argv[*i];
  if (strcmp(a, "--json") == 0 || strcmp(a, "--md") == 0) {
    *bad = *bad || strcmp(q->fmt, "text") != 0;
    q->fmt = a + 2;
  } else if (strcmp(a, "--junit") == 0 && !q->junit) {
    *bad = *bad || !(q->junit = value(argc, argv, i));
  } else if (strcmp(a, "--allowed-signers") == 0 && !q->allowed) {
    *bad = *bad || !(q->allowed = value(argc, argv, i));
  } else if (strcmp(a, "--require-signature") == 0 && !q->require_sig) {
    q->require_sig = 1;
  } else {
    return 0;
  }
  return 1;
}

int ll_qualify_main(int argc, char **argv, FILE *out, FILE *errs) {
  ll_bundle_cli cli = {.mode = LL_VERIFY_FULL};
  qualify_opts q = {.fmt = "text"};
  int parsed =
      ll_bundle_cli_parse(&cli, argc, argv, usage, out, errs, qualify_opt, &q);
  if (parsed >= 0) {
    ll_bundle_cli_free(&cli);
    return parsed;
  }
  const char *junit = q.junit, *allowed = q.allowed, *fmt = q.fmt;
  int require_sig = q.require_sig;
  const char *html = cli.html;
  int jobs = cli.jobs;
  ll_verify_mode mode = cli.mode;
  if (require_sig && !allowed) {
    fputs("leaselua: qualify: --require-signature needs --allowed-signers "
          "FILE: a signature counts only for a signer you allow\n",
          errs);
    ll_bundle_cli_free(&cli);
    return 64;
  }
  if (allowed && access(allowed, R_OK) != 0) {
    fprintf(errs, "leaselua: qualify: --allowed-signers %s is not readable\n",
            allowed);
    ll_bundle_cli_free(&cli);
    return 64;
  }
  char **dirs = NULL;
  int n = 0;
  int rc = ll_qualify_dirs("qualify", cli.args, cli.nargs, &dirs, &n, errs);
  ll_bundle_cli_free(&cli);
  cJSON *sums = NULL, *opts = NULL;
  lua_State *L = NULL;
  if (rc)
    goto cleanup;
  ll_bundle_opts bo = {.mode = mode,
                       .allowed = allowed,
                       .unsigned_ok = 1,
                       .steps = junit != NULL,
                       .jobs = jobs ? jobs : ll_bundle_default_jobs(n),
                       .map = junit ? "junit" : NULL};
  rc = ll_bundle_summaries("qualify", dirs, n, &bo, &sums, errs);
  if (rc)
    goto cleanup;
  rc = 70;
  opts = cJSON_CreateObject();
  if (!opts || !cJSON_AddBoolToObject(opts, "require_signature", require_sig) ||
      !cJSON_AddBoolToObject(opts, "html", html != NULL) ||
      !cJSON_AddBoolToObject(opts, "junit", junit != NULL))
    goto cleanup;
  if (ll_bundle_render("qualify", "lib.qualify", sums, opts, html, &L, out,
                       errs))
    goto cleanup;
  int res = lua_gettop(L);
  if (junit &&
      ll_bundle_emit_field(L, res, "junit", "qualify", junit, out, errs))
    goto cleanup;
  if (strcmp(fmt, "json") == 0) {
    lua_getfield(L, res, "json");
    if (ll_bundle_emit_json(L, -1, "qualify", "the JSON table", out, errs))
      goto cleanup;
  } else if (ll_bundle_emit_field(L, res, fmt, "qualify", NULL, out, errs)) {
    goto cleanup;
  }
  rc = ll_bundle_exit(L, res);
cleanup:
  if (L)
    lua_close(L);
  cJSON_Delete(opts);
  cJSON_Delete(sums);
  ll_qualify_free(dirs, n);
  return rc;
}
