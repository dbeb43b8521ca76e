/* The sandbox side of compare, qualify and the JUnit reports: lib.*
 * functions called under lua_pcall with cJSON arguments (a bundle's export
 * rows converted as little as lib.bundle reads), the JSON and text that
 * come back, and the operator's output files, each past the secret scan. */
#include "l_bundle_lua.h"

#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jsonx.h"
#include "l_common.h"
#include "l_json.h"
#include "l_sandbox.h"
#include "output.h"
#include "sanitize.h"

typedef struct {
  const char *module, *fn;
  const cJSON *const *args;
  int nargs, nres;
  int rows_arg; /* 1-based index of an export-rows argument, or 0 */
} lib_call;

lua_State *ll_bundle_state(FILE *errs) {
  lua_State *L = luaL_newstate();
  if (!L) {
    fprintf(errs, "leaselua: out of memory\n");
    return NULL;
  }
  ll_sandbox_open(L);
  return L;
}

/* What lib.bundle reads of an outcome row; the other records it reads
 * (manifest, flow, refusal, cell, decision: one or a few per run) go in
 * whole, and the rest (declarations, intents, lease bindings, notes) not
 * at all. An outcome holds some fifty fields: converting only these is
 * what keeps the Lua side of 1,000 bundles small (docs/PERFORMANCE.md). */
static const char *const outcome_keys[] = {"record",
                                           "fixture_epoch",
                                           "step",
                                           "operation",
                                           "event_id",
                                           "actor_alias",
                                           "http_status",
                                           "outcome",
                                           "azure_error_code",
                                           "lease_state_before",
                                           "lease_state_after",
                                           "observed_lease_state",
                                           "result_classification",
                                           "requested_api_version",
                                           "returned_api_version",
                                           "content_revision",
                                           "payload_revision",
                                           "discrepancy",
                                           "mono_start_ns",
                                           "mono_end_ns",
                                           "error_message",
                                           "transport_error",
                                           "request_started_utc",
                                           "response_received_utc"};

/* The export rows as lib.bundle reads them (above), as a Lua list. */
static void push_rows(lua_State *L, const cJSON *rows) {
  lua_newtable(L);
  lua_Integer i = 0;
  const cJSON *r;
  cJSON_ArrayForEach(r, rows) {
    const char *rec = ll_json_str(r, "record");
    if (!rec)
      continue;
    if (strcmp(rec, "outcome") == 0) {
      lua_createtable(L, 0, (int)(sizeof outcome_keys / sizeof *outcome_keys));
      for (size_t k = 0; k < sizeof outcome_keys / sizeof *outcome_keys; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, outcome_keys[k]);
        if (v && !cJSON_IsNull(v)) {
          ll_lua_push_json(L, v);
          lua_setfield(L, -2, outcome_keys[k]);
        }
      }
    } else if (strcmp(rec, "manifest") == 0 || strcmp(rec, "flow") == 0 ||
               strcmp(rec, "refusal") == 0 || strcmp(rec, "cell") == 0 ||
               strcmp(rec, "decision") == 0) {
      ll_lua_push_json(L, r);
    } else {
      continue;
    }
    lua_rawseti(L, -2, ++i);
  }
}

/* Under lua_pcall: nothing raised here skips a caller's cleanup. */
static int do_call(lua_State *L) {
  const lib_call *c = lua_touserdata(L, 1);
  lua_getglobal(L, "require");
  lua_pushstring(L, c->module);
  lua_call(L, 1, 1);
  lua_getfield(L, -1, c->fn);
  for (int i = 0; i < c->nargs; i++) {
    if (c->args[i] && i + 1 == c->rows_arg)
      push_rows(L, c->args[i]);
    else if (c->args[i])
      ll_lua_push_json(L, c->args[i]);
    else
      lua_pushnil(L);
  }
  lua_call(L, c->nargs, c->nres);
  return c->nres;
}

int ll_bundle_call_rows(lua_State *L, const char *cmd, const char *module,
                        const char *fn, const cJSON *const *args, int nargs,
                        int nres, int rows_arg, FILE *errs) {
  lib_call c = {.module = module,
                .fn = fn,
                .args = args,
                .nargs = nargs,
                .nres = nres,
                .rows_arg = rows_arg};
  lua_pushcfunction(L, ll_lua_traceback);
  int h = lua_gettop(L);
  lua_pushcfunction(L, do_call);
  lua_pushlightuserdata(L, &c);
  if (lua_pcall(L, 1, c.nres, h) != LUA_OK) {
    fprintf(errs, "leaselua: %s: %s\n", cmd,
            lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                           : "(error object)");
    lua_settop(L, h - 1);
    return 70;
  }
  lua_remove(L, h);
  return 0;
}

int ll_bundle_call(lua_State *L, const char *cmd, const char *module,
                   const char *fn, const cJSON *const *args, int nargs,
                   int nres, FILE *errs) {
  return ll_bundle_call_rows(L, cmd, module, fn, args, nargs, nres, 0, errs);
}

/* Names whose value is always a list in compare's and qualify's JSON. */
static const char *const lists[] = {
    "bundle",     "changed",        "only_a",
    "only_b",     "fields",         "reasons",
    "why",        "runs",           "returned_versions",
    "qualifying", "non_qualifying", "unverified",
    "steps",      "cells",          "discrepancy",
    "explained"};

void ll_bundle_fix_lists(cJSON *j) {
  for (cJSON *c = j ? j->child : NULL; c; c = c->next) {
    int named = 0;
    for (size_t i = 0; c->string && i < sizeof lists / sizeof *lists; i++)
      named = named || strcmp(c->string, lists[i]) == 0;
    if (named && cJSON_IsObject(c) && !c->child) {
      c->type = cJSON_Array; /* an empty Lua table became an object */
      continue;
    }
    if (cJSON_IsObject(c) || cJSON_IsArray(c))
      ll_bundle_fix_lists(c);
  }
}

const char *ll_bundle_field(lua_State *L, int idx, const char *key,
                            size_t *len) {
  if (lua_type(L, idx) != LUA_TTABLE)
    return NULL;
  lua_pushstring(L, key);
  lua_rawget(L, idx < 0 ? idx - 1 : idx);
  const char *s =
      lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, len) : NULL;
  lua_pop(L, 1); /* the string stays alive in the table */
  return s;
}

int ll_bundle_emit(const char *cmd, const char *path, const char *text,
                   size_t len, FILE *out, FILE *errs) {
  char what[128];
  /* The rows were sanitized and verify scanned the export; this is the
   * last line of defence, as for the report, before text leaves. */
  if (ll_secret_scan(text, len, NULL, 0, NULL, 0, what, sizeof what) > 0) {
    fprintf(errs, "leaselua: %s: %s would contain a secret (%s): not %s\n", cmd,
            path ? path : "the output", what, path ? "written" : "printed");
    return 70;
  }
  if (path)
    return ll_bundle_write_file(cmd, path, text, len, errs);
  return fwrite(text, 1, len, out) == len ? 0 : 70;
}

int ll_bundle_emit_field(lua_State *L, int idx, const char *key,
                         const char *cmd, const char *path, FILE *out,
                         FILE *errs) {
  size_t len = 0;
  const char *s = ll_bundle_field(L, idx, key, &len);
  return s && ll_bundle_emit(cmd, path, s, len, out, errs) == 0 ? 0 : 70;
}

int ll_bundle_render(const char *cmd, const char *module, const cJSON *sums,
                     const cJSON *opts, const char *html, lua_State **L,
                     FILE *out, FILE *errs) {
  if (!(*L = ll_bundle_state(errs)))
    return 70;
  const cJSON *args[2] = {sums, opts};
  if (ll_bundle_call(*L, cmd, module, "render", args, 2, 1, errs))
    return 70;
  if (html &&
      ll_bundle_emit_field(*L, lua_gettop(*L), "html", cmd, html, out, errs))
    return 70;
  return 0;
}

int ll_bundle_emit_json(lua_State *L, int idx, const char *cmd,
                        const char *what, FILE *out, FILE *errs) {
  char why[256];
  cJSON *j = ll_lua_to_json(L, idx, why, sizeof why);
  ll_bundle_fix_lists(j);
  ll_json_sort_members(j);
  char *text = j ? cJSON_PrintUnformatted(j) : NULL;
  cJSON_Delete(j);
  if (!text) {
    fprintf(errs, "leaselua: %s: %s: %s\n", cmd, what,
            j ? "out of memory" : why);
    return 70;
  }
  size_t tl = strlen(text);
  text[tl] = '\n'; /* over the NUL: printed with its length */
  int e = ll_bundle_emit(cmd, NULL, text, tl + 1, out, errs);
  free(text);
  return e;
}

int ll_bundle_write_file(const char *cmd, const char *path, const char *text,
                         size_t len, FILE *errs) {
  if (ll_write_replace(path, NULL, text, len) != 0) {
    fprintf(errs, "leaselua: %s: cannot write %.200s: %s\n", cmd, path,
            strerror(errno));
    return 64;
  }
  return 0;
}

int ll_bundle_exit(lua_State *L, int res) {
  lua_pushliteral(L, "exit");
  lua_rawget(L, res);
  int ok = lua_isinteger(L, -1); /* a number, not a string that reads as one */
  lua_Integer e = ok ? lua_tointeger(L, -1) : -1;
  lua_pop(L, 1);
  return e >= 0 && e <= 2 ? (int)e : 70;
}
