/* `leaselua verify [--export-only] DIR`: the host's command around the
 * core's check (core/run/include/verify.h). */
#ifndef LL_L_VERIFY_H
#define LL_L_VERIFY_H

#include <stdio.h>

/* `leaselua verify` with the arguments after "verify": prints a summary.
 * Returns 0 consistent, 2 inconsistent, 64 usage or a missing file, 70 out
 * of memory; never the run's decision. */
int ll_verify_main(int argc, char **argv, FILE *out, FILE *errs);

#endif
