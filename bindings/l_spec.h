/* `leaselua spec`: a user's busted specs with the right interpreter and
 * paths. No Lua state: it replaces the process with lua5.4 running busted
 * (argument vector, no shell). */
#ifndef LL_L_SPEC_H
#define LL_L_SPEC_H

#include <stdio.h>

/* argv: everything after `spec` (busted's options and the spec files).
 * Returns only on failure: 64 bad usage or a missing piece (named in one
 * line on err), 70 internal; 0 after printing --help. */
int ll_spec_main(int argc, char **argv, FILE *err);

#endif
