/* Bundles as compare, qualify and the JUnit reports read them: verify's
 * check first, then only the rows it proved, summarised in the sandbox by
 * scripts/lib/bundle.lua; many bundles by forked workers. */
#ifndef LL_L_BUNDLE_H
#define LL_L_BUNDLE_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "l_bundle_lua.h"
#include "verify.h"

typedef struct {
  ll_verify_mode mode; /* verify's mode (--export-only) */
  const char *allowed; /* --allowed-signers FILE, or NULL */
  int unsigned_ok;     /* with allowed: an unsigned bundle is not bad */
  int steps;           /* keep each bundle's steps (compare, JUnit) */
  int jobs;            /* worker processes, 1 .. LL_BUNDLE_JOBS_MAX */
  /* what each worker makes of a summary (lib.bundle.process): NULL the
   * summary itself; "compare" its diff against map_ctx (the first
   * bundle's summary); "junit" the summary and its JUnit suite */
  const char *map;
  const cJSON *map_ctx;
} ll_bundle_opts;

#define LL_BUNDLE_JOBS_MAX 16

/* 0 when dir is an evidence directory (a readable export/ledger.jsonl);
 * else one line on errs naming cmd and dir, and 64. */
int ll_bundle_arg_check(const char *cmd, const char *dir, FILE *errs);

/* The workers for n bundles when the operator names none: 1 below 32
 * bundles, else the online CPUs, at most 4. */
int ll_bundle_default_jobs(int n);

/* The options compare and qualify share: --export-only, --jobs N (1 ..
 * LL_BUNDLE_JOBS_MAX) and --html FILE. */
typedef struct {
  ll_verify_mode mode;
  int jobs; /* 0: ll_bundle_default_jobs */
  const char *html;
  char **args; /* the bundle arguments, in order (ll_bundle_cli_parse) */
  int nargs;
} ll_bundle_cli;

/* A command's own options for ll_bundle_cli_parse: 1 when argv[*i] is one
 * (consumed with its value, *bad set when it is wrong or given twice), 0
 * when it is not. */
typedef int (*ll_bundle_cli_extra)(void *ctx, int argc, char **argv, int *i,
                                   int *bad);

/* The argument loop compare and qualify share: --help (usage on out), the
 * shared options below, the command's own (extra, may be NULL) and the
 * bundle arguments, collected in c->args. Returns -1 to go on, else the
 * exit: 0 after --help, 64 on a bad option or no bundle (usage on errs),
 * 70 out of memory. ll_bundle_cli_free frees c->args in every case. */
int ll_bundle_cli_parse(ll_bundle_cli *c, int argc, char **argv,
                        const char *usage, FILE *out, FILE *errs,
                        ll_bundle_cli_extra extra, void *ctx);
void ll_bundle_cli_free(ll_bundle_cli *c);

/* 1 when argv[*i] is one of those options: consumed with its value (*i
 * moves past it), *bad set when the value is missing or wrong or the
 * option was given twice. 0 when it is not one of them. */
int ll_bundle_cli_opt(ll_bundle_cli *c, int argc, char **argv, int *i,
                      int *bad);

/* The summaries of dirs[0..n), in order, as a cJSON array in *out (the
 * caller's): each is what lib.bundle.process made of verify's report,
 * the signature, corroboration.json and, only when verify found the
 * bundle consistent, its export rows. A bundle verify could not check (a
 * file gone meanwhile) is a summary with `error`. Returns 0, or 70 (out
 * of memory, a worker lost: a line on errs). */
int ll_bundle_summaries(const char *cmd, char *const *dirs, int n,
                        const ll_bundle_opts *o, cJSON **out, FILE *errs);

/* Expands a directory holding index.json (leaselua-index-v1) into its
 * runs' bundle directories, appended to *list (malloc'd strings; *n and
 * *cap grow). Returns 0 when dir has no index.json (nothing appended), 1
 * when it was expanded, 64 on a bad index (one line on errs), 70 OOM. */
int ll_bundle_expand_index(const char *cmd, const char *dir, char ***list,
                           int *n, int *cap, FILE *errs);

#endif
