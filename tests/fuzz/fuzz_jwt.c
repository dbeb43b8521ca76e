/* libFuzzer target: a JWT's exp claim (core/auth ll_jwt_exp) and the
 * base64url decoder under it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "jwt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s)
    return 0;
  memcpy(s, data, size);
  s[size] = '\0';
  ll_error err = {0};
  int64_t exp = 0;
  if (ll_jwt_exp(s, &exp, &err) == LL_OK && (exp <= 0 || exp >= 253402300800))
    __builtin_trap(); /* the documented range */
  unsigned char *out = NULL;
  size_t n = 0;
  if (ll_b64url_decode(s, size, &out, &n) == LL_OK) {
    if (out[n] != '\0')
      __builtin_trap();
    free(out);
  }
  free(s);
  return 0;
}
