/* Bundles as compare, qualify and the JUnit reports read them: verify's
 * check first, then only the rows it proved, summarised in the sandbox by
 * scripts/lib/bundle.lua; many bundles by forked workers. */
#ifndef LL_L_BUNDLE_H
#define LL_L_BUNDLE_H

#include <stdio.h>

#include <cjson/cJSON.h>
#include <lua.h>

#include "verify.h"

typedef struct {
  ll_verify_mode mode; /* verify's mode (--export-only) */
  const char *allowed; /* --allowed-signers FILE, or NULL */
  int steps;           /* keep each bundle's steps (compare, JUnit) */
  int jobs;            /* worker processes, 1 .. LL_BUNDLE_JOBS_MAX */
} ll_bundle_opts;

#define LL_BUNDLE_JOBS_MAX 16

/* 0 when dir is an evidence directory (a readable export/ledger.jsonl);
 * else one line on errs naming cmd and dir, and 64. */
int ll_bundle_arg_check(const char *cmd, const char *dir, FILE *errs);

/* The summaries of dirs[0..n), in order, as a cJSON array in *out (the
 * caller's): each is what lib.bundle.summarize made of verify's report,
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

/* A fresh sandbox for the renderers, or NULL (a line on errs). */
lua_State *ll_bundle_state(FILE *errs);

/* Calls lib.<module>.<fn>(args[0], ..., args[nargs-1]) under lua_pcall,
 * each argument pushed from cJSON (NULL: nil), leaving nres results on
 * the stack. Returns 0, or 70 with the error on errs. */
int ll_bundle_call(lua_State *L, const char *cmd, const char *module,
                   const char *fn, const cJSON *const *args, int nargs,
                   int nres, FILE *errs);

/* Writes len bytes of text to path (an operator's file): a temporary file
 * beside it, fsync'd, renamed over it. 0, or 64 (a line on errs). */
int ll_bundle_write_file(const char *cmd, const char *path, const char *text,
                         size_t len, FILE *errs);

/* Turns, throughout j, an empty object under a name that always holds a
 * list (changed, only_a, runs, why, ...) into an empty array: Lua has
 * one empty table for both. */
void ll_bundle_fix_lists(cJSON *j);

/* The string field key of the table at idx, or NULL (no metamethod). */
const char *ll_bundle_field(lua_State *L, int idx, const char *key,
                            size_t *len);

#endif
