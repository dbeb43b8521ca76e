/* `leaselua qualify DIR...`: the qualification table (docs/EVIDENCE.md,
 * "Qualification"), from bundles verify proves consistent. */
#ifndef LL_L_QUALIFY_H
#define LL_L_QUALIFY_H

#include <stdio.h>

/* argv: the arguments after `qualify`. Returns the exit code: 0 every
 * Azure row QUALIFIED, 1 no Azure evidence, 2 an Azure row not qualified
 * or a bundle inconsistent, 64 usage, 70 internal. */
int ll_qualify_main(int argc, char **argv, FILE *out, FILE *errs);

/* The bundle directories the arguments name (an index's runs, or a
 * bundle), each checked to be an evidence directory: 0, 64 or 70; *list
 * is freed with ll_qualify_free. */
int ll_qualify_dirs(const char *cmd, char *const *args, int nargs, char ***list,
                    int *n, FILE *errs);
void ll_qualify_free(char **list, int n);

#endif
