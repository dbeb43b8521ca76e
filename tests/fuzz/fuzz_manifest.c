/* libFuzzer target: the run manifest (core/manifest): parse and check a
 * user manifest, then build the manifest row for a fixed target. */
#include <stdint.h>

#include "manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ll_error err = {0};
  cJSON *m = NULL;
  if (ll_manifest_parse((const char *)data, size, &m, &err) == LL_OK) {
    ll_target t;
    if (ll_target_init(&t, "https://127.0.0.1:10000/devstoreaccount1",
                       "lease-handoff-lab", "writer-handoff.json",
                       &err) == LL_OK) {
      cJSON *row = NULL;
      if (ll_manifest_build(m, &t, "Lua 5.4", NULL, &row, &err) == LL_OK)
        cJSON_Delete(row);
      row = NULL;
      if (ll_manifest_build(m, &t, "Lua 5.4", "emulator", &row, &err) == LL_OK)
        cJSON_Delete(row);
    }
  }
  cJSON_Delete(m);
  return 0;
}
