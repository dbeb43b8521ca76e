/* Settling a row's derived fields (the fold's one write rule): a fresh row
 * is filled with what the fold derived; a recorded row, re-folded by verify,
 * must hold exactly that. Shared by model.c and model_cell.c. */
#include "jsonx.h"
#include "model_impl.h"

/* Derived fields are filled (run) or compared (verify). */
ll_status ll_model_settle(cJSON *row, cJSON *derived, int fill, ll_error *err) {
  cJSON *it;
  cJSON_ArrayForEach(it, derived) {
    cJSON *have = ll_json_get(row, it->string);
    if (fill) {
      cJSON *copy = cJSON_Duplicate(it, 1);
      if (!copy)
        return ll_fail(err, LL_E_NOMEM, "out of memory");
      /* A replace whose key copy fails keeps the item under no key: the
       * allocation count (ll_model_apply) catches that one. A key already
       * there is replaced in place: the copy carries its own copy of the
       * key (cJSON_Duplicate), so it is not looked up twice more. */
      if (have && !cJSON_ReplaceItemViaPointer(row, have, copy)) {
        cJSON_Delete(copy);
        return ll_fail(err, LL_E_NOMEM, "out of memory");
      }
      if (!have && !ll_json_set(row, it->string, copy))
        return ll_fail(err, LL_E_NOMEM, "out of memory");
    } else if (!have || !cJSON_Compare(have, it, 1)) {
      return ll_fail(err, LL_E_TAMPER,
                     "row %ld: recorded %s differs from the value re-derived "
                     "from the rows before it",
                     ll_json_long(row, "seq", 0), it->string);
    }
  }
  return LL_OK;
}
