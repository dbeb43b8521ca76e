/* Memory that held a secret (a token, a SAS, a response carrying one) is
 * wiped before it is freed: the credential sources share these. */
#ifndef LL_SECRET_H
#define LL_SECRET_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* Wipes then frees a NUL-terminated secret string; NULL is fine. */
void ll_secret_free(char *s);

/* Wipes every string in a parsed tree before freeing it: the tree holds a
 * copy of the token. NULL is fine. */
void ll_secret_json_free(cJSON *root);

/* A malloc'd copy of s[0..len) without surrounding whitespace; NULL on
 * out of memory. The caller frees it with ll_secret_free. */
char *ll_secret_dup_trimmed(const char *s, size_t len);

#endif
