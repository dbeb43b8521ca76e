/* The token command's one-string form, split without a shell. Below
 * auth.h, which includes this header for its callers. */
#ifndef LL_AUTH_COMMAND_H
#define LL_AUTH_COMMAND_H

#include "ll.h"

/* How long the token command may run before it is killed. */
#define LL_AUTH_COMMAND_TIMEOUT_MS 30000L
/* The most words and bytes of a one-string token command. */
#define LL_AUTH_COMMAND_MAX_WORDS 64
#define LL_AUTH_COMMAND_MAX_LEN 4096

/* Splits an operator's one-string token command (for example
 * "az account get-access-token --resource https://storage.azure.com/
 * --query accessToken -o tsv") into a NULL-terminated argv, on spaces and
 * tabs only. There is NO shell interpretation: no quoting, escaping,
 * globbing, variables, command substitution, pipes or ';' -- each word
 * reaches the program as typed. Because quotes would therefore reach the
 * program, a quote or backslash is refused (LL_E_USAGE), as are control
 * characters, an empty line, more than LL_AUTH_COMMAND_MAX_WORDS words or
 * LL_AUTH_COMMAND_MAX_LEN bytes: put such a command in a script and name
 * the script. *out_argv is one malloc'd block (pointers and text): free it
 * with free(). */
ll_status ll_auth_split_command(const char *line, char ***out_argv,
                                ll_error *err) LL_WARN_UNUSED;

#endif
