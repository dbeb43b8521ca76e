/* `leaselua corroborate DIR --logs FILE... | --print-query`: the host's
 * command around the core's join (core/corroboration/include/
 * corroborate.h). */
#ifndef LL_L_CORROBORATE_H
#define LL_L_CORROBORATE_H

#include <stdio.h>

/* With the arguments after "corroborate". Returns 0 CORROBORATED, 1
 * INCOMPLETE, 2 CONTRADICTED, 64 usage (a bad or unreadable log, a
 * directory that holds no run), 70 internal; never the run's decision. */
int ll_corroborate_main(int argc, char **argv, FILE *out, FILE *errs);

#endif
