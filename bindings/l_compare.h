/* `leaselua compare DIR_A DIR_B...`: a behavioural diff of bundles verify
 * proves consistent (docs/EVIDENCE.md, "Comparing two runs"). */
#ifndef LL_L_COMPARE_H
#define LL_L_COMPARE_H

#include <stdio.h>

/* argv: the arguments after `compare`. Returns 0 no behavioural
 * difference, 1 a difference, 2 a bundle inconsistent (not compared), 64
 * usage, 70 internal. */
int ll_compare_main(int argc, char **argv, FILE *out, FILE *errs);

#endif
