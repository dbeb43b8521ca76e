/* `leaselua verify DIR`: a reviewer's check of an evidence directory from
 * the files alone. */
#ifndef LL_VERIFY_H
#define LL_VERIFY_H

#include <stdio.h>

#include "ll.h"

typedef struct {
  int protected_read; /* protected ledger present and readable */
  long rows;          /* export rows */
  long bad_row;       /* first bad row (1-based), 0 when none */
  char problem[1100]; /* first problem, empty when consistent */
  char decision[16];  /* recomputed decision of the last decision row */
  char window[32];
  char blob_path[512];   /* from the manifest row */
  int cleanup_confirmed; /* last lifecycle released and deleted the blob */
  int destructive;       /* last lifecycle was declared destructive */
} ll_verify_report;

/* LL_OK when consistent, LL_E_TAMPER (or LL_E_IO) otherwise, with the
 * report naming the first problem. Checks: both chains; the export is
 * exactly the sanitized protected ledger; no secret in the export; every
 * classification, reconcile, finding and decision re-derived from the
 * export alone equals what the run recorded. */
ll_status ll_verify_dir(const char *dir, ll_verify_report *rep,
                        ll_error *err) LL_WARN_UNUSED;

/* Runs ll_verify_dir and prints a summary; returns 0 or 2 (64 for a
 * missing directory). */
int ll_verify_main(const char *dir, FILE *out, FILE *errs);

#endif
