/* The reviewed known-deviations table: parsed once from the embedded JSON,
 * matched field by field ("*" and a trailing "*" are wildcards). */
#include "deviations.h"

#include <stdlib.h>
#include <string.h>

#include "jsonx.h"

extern const char ll_known_deviations_json[];

static int match(const char *pattern, const char *value) {
  if (!pattern || strcmp(pattern, "*") == 0)
    return 1;
  if (!value)
    return 0;
  size_t n = strlen(pattern);
  if (n > 0 && pattern[n - 1] == '*')
    return strncmp(pattern, value, n - 1) == 0;
  return strcmp(pattern, value) == 0;
}

/* An entry's status constraint: "status" the exact one, "status_min" the
 * lowest one it covers (400: every error answer); neither: any status. */
static int status_matches(const cJSON *e, long status) {
  const cJSON *st = ll_json_get(e, "status");
  const cJSON *min = ll_json_get(e, "status_min");
  return (!cJSON_IsNumber(st) || (long)st->valuedouble == status) &&
         (!cJSON_IsNumber(min) || status >= (long)min->valuedouble);
}

/* The reviewed table, parsed once. It is freed at exit, or when the Lua
 * module that holds this code is unloaded (glibc runs a shared object's
 * atexit handlers at dlclose), so no sanitizer sees it as a leak. */
static cJSON *deviations;

static void free_deviations(void) {
  cJSON_Delete(deviations);
  deviations = NULL;
}

static const cJSON *table(void) {
  if (!deviations) {
    deviations = cJSON_Parse(ll_known_deviations_json);
    if (deviations)
      atexit(free_deviations);
  }
  return deviations;
}

const char *ll_deviations_lookup_cell(const char *judged_as, const char *server,
                                      const char *cell, long status,
                                      const char *code) {
  const cJSON *e;
  cJSON_ArrayForEach(e, table()) {
    if (match(ll_json_str(e, "kind"), "lease-cell") && ll_json_str(e, "kind") &&
        ll_json_str(e, "cell") &&
        match(ll_json_str(e, "endpoint_kind"), judged_as) &&
        match(ll_json_str(e, "server"), server) &&
        match(ll_json_str(e, "cell"), cell) && status_matches(e, status) &&
        match(ll_json_str(e, "code"), code ? code : "(none)"))
      return ll_json_str(e, "id");
  }
  return NULL;
}

const char *ll_deviations_lookup(const char *kind, const char *judged_as,
                                 const char *server, const char *operation,
                                 long status, const char *code,
                                 const char *returned_version) {
  const cJSON *e;
  cJSON_ArrayForEach(e, table()) {
    if (match(ll_json_str(e, "kind"), kind) &&
        match(ll_json_str(e, "endpoint_kind"), judged_as) &&
        match(ll_json_str(e, "server"), server) &&
        match(ll_json_str(e, "operation"), operation) &&
        status_matches(e, status) && match(ll_json_str(e, "code"), code) &&
        match(ll_json_str(e, "returned_version"),
              returned_version ? returned_version : "(none)"))
      return ll_json_str(e, "id");
  }
  return NULL;
}
