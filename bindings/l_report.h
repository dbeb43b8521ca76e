/* `leaselua report DIR`: report.html and summary.md built from the export
 * ledger alone, by scripts/lib/report.lua run in the sandbox. */
#ifndef LL_L_REPORT_H
#define LL_L_REPORT_H

#include <stdio.h>

/* Reads DIR/export/ledger.jsonl (chain checked; a torn last line is
 * reported; any other break refuses and removes an earlier report),
 * renders, and writes exactly DIR/report.html and DIR/summary.md, each
 * atomically. Prints the two paths on out. Returns 0, 2 (chain
 * broken), 64 (not an evidence directory) or 70 (internal). */
int ll_report_main(const char *dir, FILE *out, FILE *errs);

#endif
