/* Built only by the `layers_private_header` test, which expects this file
 * NOT to compile: model_impl.h is private to the judgement group, and this
 * file is compiled with the include path of the run group, which sees the
 * public headers of every group (docs/DESIGN.md, "The groups"). */
#include "model.h"
#include "model_impl.h"

int ll_layers_private(void);
int ll_layers_private(void) {
  return 0;
}
