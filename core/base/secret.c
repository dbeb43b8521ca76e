/* Wiping secrets before they are freed (secret.h). */
#include "secret.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

void ll_secret_free(char *s) {
  if (s) {
    OPENSSL_cleanse(s, strlen(s));
    free(s);
  }
}

static void json_wipe(cJSON *node) {
  if (node->valuestring)
    OPENSSL_cleanse(node->valuestring, strlen(node->valuestring));
  for (cJSON *c = node->child; c; c = c->next)
    json_wipe(c);
}

void ll_secret_json_free(cJSON *root) {
  if (root) {
    json_wipe(root);
    cJSON_Delete(root);
  }
}

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' ||
         c == '\v';
}

char *ll_secret_dup_trimmed(const char *s, size_t len) {
  while (len > 0 && is_space(s[len - 1]))
    len--;
  while (len > 0 && is_space(*s)) {
    s++;
    len--;
  }
  char *out = malloc(len + 1);
  if (out) {
    memcpy(out, s, len);
    out[len] = '\0';
  }
  return out;
}
