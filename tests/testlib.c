/* Shared by every C test binary; see testlib.h. */
#include "testlib.h"

#include <stdlib.h>

int ll_test_pass, ll_test_fail;

int ll_test_report(const char *name) {
  printf("%s: %d passed, %d failed\n", name, ll_test_pass, ll_test_fail);
  return ll_test_fail == 0 && ll_test_pass > 0 ? 0 : 1;
}

char *ll_test_tmpdir(void) {
  const char *base = getenv("TMPDIR");
  char tmpl[512];
  snprintf(tmpl, sizeof tmpl, "%s/leaselua-test-XXXXXX", base ? base : "/tmp");
  char *d = mkdtemp(tmpl);
  return d ? strdup(d) : NULL;
}

const char *ll_test_path(const char *root, const char *leaf) {
  static char buf[8][512];
  static int k;
  char *p = buf[k++ % 8];
  snprintf(p, 512, "%s/%s", root, leaf);
  return p;
}

int ll_test_rmtree(const char *root) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  if (system(cmd) == 0)
    return 0;
  fprintf(stderr, "could not remove %s\n", root);
  return -1;
}
