/* The index of a multi-version run (--api-version a,b,c): one parent
 * directory holds one bundle per version, <parent>/<version>/, and
 * index.json naming them (docs/EVIDENCE.md "Multi-version runs"):
 *   {"format": "leaselua-index-v1", "flow", "created_utc",
 *    "runs": [{"api_version", "dir", "bundle", "decision", "exit"}],
 *    "not_run": [{"api_version", "reason"}]}
 * runs: each version started, in the order given; dir (= the version) is
 * relative to the parent; bundle false when the run was refused before
 * it made one (exit 64); decision is the recorded decision's name, or
 * null when the run recorded none; exit is the run's exit code, or null
 * while it runs (the index is written before each run and after it, so a
 * series killed mid-run still names its bundle). not_run:
 * the versions left after a run that did not ACCEPT (the blob is not known
 * to be clean, so no further lifecycle starts on it). The
 * host writes it, in C, after each run (the script never sees it). */
#ifndef LL_RUN_INDEX_H
#define LL_RUN_INDEX_H

#include <stddef.h>

#include "ll.h"

#define LL_INDEX_FORMAT "leaselua-index-v1"
#define LL_INDEX_FILE "index.json"

typedef struct {
  char api_version[16];
  int ran;          /* 0: not run (reason says why) */
  int bundle;       /* its bundle was made (a run refused before it opened
                       one has none) */
  int decision;     /* an ll_decision, or -1: none recorded */
  int exit_code;    /* -1: started and not ended: "exit": null */
  char reason[160]; /* not run: why */
} ll_index_run;

/* Makes the parent directory (missing parents 0755, itself 0700) for a
 * new multi-version run. An existing parent that holds anything, or is
 * not a directory of ours, is refused (LL_E_EVIDENCE_EXISTS, one line):
 * every bundle of an index is made by the invocation that writes it. */
ll_status ll_index_prepare(const char *parent, ll_error *err) LL_WARN_UNUSED;

/* Writes <parent>/index.json through a temporary file, fsync'd and
 * renamed into place, so a reader sees the previous index or this one. */
ll_status ll_index_write(const char *parent, const char *flow,
                         const char *created_utc, const ll_index_run *runs,
                         size_t n, ll_error *err) LL_WARN_UNUSED;

/* The exit code of the whole: the worst of the runs' (70 internal, then 64
 * usage, then the decisions' order HOLD 2, RECONCILE 3, WAIT 1, ACCEPT 0;
 * DESIGN.md section 5's strength order). */
int ll_index_worst_exit(const ll_index_run *runs, size_t n);

#endif
