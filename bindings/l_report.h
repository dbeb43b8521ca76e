/* `leaselua report DIR`: report.html and summary.md built from the export
 * ledger alone, by scripts/lib/report.lua run in the sandbox. */
#ifndef LL_L_REPORT_H
#define LL_L_REPORT_H

#include <stdio.h>

/* Reads DIR/export/ledger.jsonl (chain checked; a torn last line is
 * reported; any other break refuses and removes an earlier report),
 * renders, and writes exactly report.html and summary.md, each
 * atomically, into DIR, or into outdir when it is not NULL (made 0700
 * when missing; DIR is then never written). Prints the two paths on out.
 * Returns 0, 2 (chain broken), 64 (not an evidence directory; outdir not
 * a directory, or DIR itself) or 70 (internal). */
int ll_report_main(const char *dir, const char *outdir, FILE *out, FILE *errs);
/* The same, with compare (not NULL) naming another bundle: both are
 * verified and report.html gains the comparison's section (lib.compare);
 * an inconsistent one gets a section saying it was not compared. */
int ll_report_main_with(const char *dir, const char *outdir,
                        const char *compare, FILE *out, FILE *errs);

#endif
