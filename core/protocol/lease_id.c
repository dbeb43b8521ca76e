/* Lease ID syntax and comparison (lease_id.h): a lease ID is a secret, so
 * these never print one. */
#include "lease_id.h"

#include <stddef.h>

#include "hash.h" /* LL_GUID_LEN: the 8-4-4-4-12 form and its NUL */

static int is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
         (c >= 'A' && c <= 'F');
}

int ll_lease_id_valid(const char *id) {
  if (!id)
    return 0;
  for (int i = 0; i < LL_GUID_LEN - 1; i++) {
    int dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? id[i] != '-' : !is_hex(id[i]))
      return 0;
  }
  return id[LL_GUID_LEN - 1] == '\0';
}

static int lower(char c) {
  return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

int ll_lease_id_equal(const char *a, const char *b) {
  if (!a || !b)
    return 0;
  size_t seen = 0;
  for (;;) {
    while (*a == '-')
      a++;
    while (*b == '-')
      b++;
    if (!*a || !*b)
      return !*a && !*b && seen > 0;
    if (lower(*a) != lower(*b))
      return 0;
    a++;
    b++;
    seen++;
  }
}

int ll_lease_id_returned(const char *returned, const char *proposed) {
  return ll_lease_id_valid(returned) && ll_lease_id_valid(proposed) &&
         ll_lease_id_equal(returned, proposed);
}
