/* ll.c's shared pieces: the caller-owned error (a message that fits is kept
 * whole, one that does not ends in "..." on a UTF-8 boundary, and every
 * class has its documented exit code), and reading a whole file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ll.h"
#include "testlib.h"

static void test_whole(void) {
  ll_error e;
  /* A replay failure naming a deep fixture path stayed under 256 bytes on
   * a short checkout and was cut on a long one; it must now be whole. */
  char path[300];
  memset(path, 'd', sizeof path - 1);
  path[sizeof path - 1] = '\0';
  CHECK_INT(
      ll_fail(&e, LL_E_REPLAY,
              "request #33 comes after %s (a hidden retry, or an added step?)",
              path),
      LL_E_REPLAY);
  CHECK_INT(e.code, LL_E_REPLAY);
  size_t n = strlen(e.message);
  CHECK(n > 300);
  CHECK(n >= 2 && strcmp(e.message + n - 2, "?)") == 0);
  CHECK(ll_fail(NULL, LL_E_IO, "no error to fill") == LL_E_IO);
}

static void test_cut_is_marked(void) {
  ll_error e;
  size_t cap = sizeof e.message;
  char *big = malloc(cap * 2);
  CHECK(big != NULL);
  if (!big)
    return;
  memset(big, 'x', cap * 2 - 1);
  big[cap * 2 - 1] = '\0';
  ll_fail(&e, LL_E_USAGE, "%s", big);
  size_t n = strlen(e.message);
  CHECK_INT(n, cap - 1);
  CHECK(strcmp(e.message + n - 3, "...") == 0);

  /* Three-byte characters across the cut: no half character is left. */
  for (size_t i = 0; i + 3 <= cap * 2 - 1; i += 3)
    memcpy(big + i, "\xe2\x80\x94", 3); /* EM DASH */
  big[(cap * 2 - 1) / 3 * 3] = '\0';
  ll_fail(&e, LL_E_USAGE, "%s", big);
  n = strlen(e.message);
  CHECK(strcmp(e.message + n - 3, "...") == 0);
  CHECK((n - 3) % 3 == 0); /* only whole EM DASHes before the marker */
  for (size_t i = 0; i + 3 <= n - 3; i += 3)
    CHECK(memcmp(e.message + i, "\xe2\x80\x94", 3) == 0);
  free(big);
}

static void test_exit_codes(void) {
  CHECK_INT(ll_code_exit(LL_OK), 0);
  CHECK_INT(ll_code_exit(LL_E_USAGE), 64);
  CHECK_INT(ll_code_exit(LL_E_REPLAY), 64);
  CHECK_INT(ll_code_exit(LL_E_HOLD), 2);
  CHECK_INT(ll_code_exit(LL_E_TRANSPORT), 2);
  CHECK_INT(ll_code_exit(LL_E_TAMPER), 2);
  CHECK_INT(ll_code_exit(LL_E_NOMEM), 70);
  CHECK_STR(ll_code_name(LL_E_REPLAY), "LL_E_REPLAY");
  CHECK_STR(ll_code_name((ll_code)-1), "LL_E_INTERNAL");
}

static void test_read_file(void) {
  char *dir = ll_test_tmpdir();
  CHECK(dir != NULL);
  if (!dir)
    return;
  char path[1100];
  snprintf(path, sizeof path, "%s/f", dir);
  ll_buf b = {0};
  CHECK_INT(ll_buf_read_file(&b, path, 100), LL_E_IO); /* not there yet */
  CHECK_INT(ll_buf_read_file(&b, NULL, 100), LL_E_IO);
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (f)
    fclose(f);
  CHECK_INT(ll_buf_read_file(&b, path, 100), LL_OK); /* empty: still a text */
  CHECK(b.p != NULL && b.n == 0 && b.p[0] == '\0');
  free(b.p);
  /* more than one read's worth, with a NUL inside */
  enum { BIG = 200000 };
  char *big = malloc(BIG);
  CHECK(big != NULL);
  if (big) {
    for (size_t i = 0; i < BIG; i++)
      big[i] = (char)('a' + i % 26);
    big[7] = '\0';
    f = fopen(path, "wb");
    CHECK(f && fwrite(big, 1, BIG, f) == BIG);
    if (f)
      fclose(f);
    b = (ll_buf){0};
    CHECK_INT(ll_buf_read_file(&b, path, BIG), LL_OK);
    CHECK(b.n == BIG && memcmp(b.p, big, BIG) == 0 && b.p[BIG] == '\0');
    free(b.p);
    b = (ll_buf){0};
    CHECK_INT(ll_buf_read_file(&b, path, BIG - 1), LL_E_TOO_LARGE);
    free(b.p);
    free(big);
  }
  remove(path);
  rmdir(dir);
  free(dir);
}

int main(void) {
  test_whole();
  test_cut_is_marked();
  test_exit_codes();
  test_read_file();
  return ll_test_report("test_error");
}
