/* Minimal test harness: CHECK records a failure and carries on; every test
 * binary ends with ll_test_report(), which prints "N passed, N failed". */
#ifndef LL_TESTLIB_H
#define LL_TESTLIB_H

#include <stdio.h>
#include <string.h>

extern int ll_test_pass, ll_test_fail;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (cond) {                                                                \
      ll_test_pass++;                                                          \
    } else {                                                                   \
      ll_test_fail++;                                                          \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

#define CHECK_STR(a, b)                                                        \
  do {                                                                         \
    const char *ll_a_ = (a), *ll_b_ = (b);                                     \
    if (ll_a_ && ll_b_ && strcmp(ll_a_, ll_b_) == 0) {                         \
      ll_test_pass++;                                                          \
    } else {                                                                   \
      ll_test_fail++;                                                          \
      fprintf(stderr, "%s:%d: CHECK_STR failed: %s = \"%s\", want \"%s\"\n",   \
              __FILE__, __LINE__, #a, ll_a_ ? ll_a_ : "(null)",                \
              ll_b_ ? ll_b_ : "(null)");                                       \
    }                                                                          \
  } while (0)

#define CHECK_INT(a, b)                                                        \
  do {                                                                         \
    long long ll_a_ = (long long)(a), ll_b_ = (long long)(b);                  \
    if (ll_a_ == ll_b_) {                                                      \
      ll_test_pass++;                                                          \
    } else {                                                                   \
      ll_test_fail++;                                                          \
      fprintf(stderr, "%s:%d: CHECK_INT failed: %s = %lld, want %lld\n",       \
              __FILE__, __LINE__, #a, ll_a_, ll_b_);                           \
    }                                                                          \
  } while (0)

/* Prints the closing line and returns the process exit code. */
int ll_test_report(const char *name);
/* A fresh private temporary directory (mkdtemp); caller frees. */
char *ll_test_tmpdir(void);
/* root/leaf in one of eight rotating buffers: up to eight paths may be
 * in use at once (arguments of one call). */
const char *ll_test_path(const char *root, const char *leaf);
/* Removes the directory tree root (rm -rf): 0, or -1 and a line on
 * stderr when it cannot. */
int ll_test_rmtree(const char *root);

#endif
