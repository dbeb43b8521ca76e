/* Built only by the `layers_upward_include` test, which expects this file
 * NOT to compile: base is the bottom group, and run.h belongs to the top
 * one (docs/DESIGN.md, "The groups"). */
#include "ll.h"
#include "run.h"

int ll_layers_upward(void);
int ll_layers_upward(void) {
  return 0;
}
