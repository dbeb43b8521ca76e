/* Built by the `layers_downward_include` test, which expects this file to
 * compile: the control for the two tests that expect a failure, so that
 * they fail for the include they name and not for a broken build. run sees
 * the public headers of every group below it. */
#include "ledger.h"
#include "ll.h"
#include "model.h"
#include "run.h"

int ll_layers_downward(void);
int ll_layers_downward(void) {
  return 0;
}
