/* What a fixture records of the run beside its exchanges (fixture.h): the
 * target's container and blob and the flow's own arguments, so a replay
 * needs nothing re-typed. Read leniently (an old fixture has neither),
 * strictly typed when present. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "input.h"
#include "jsonx.h"

static ll_status bad(const char *file, const char *what, ll_error *err) {
  return ll_fail(err, LL_E_PARSE, "fixture %.200s: %s", file, what);
}

static ll_status read_target(const cJSON *t, const char *file,
                             ll_fixture_context *out, ll_error *err) {
  const char *c = ll_json_str(t, "container"), *b = ll_json_str(t, "blob");
  if (!cJSON_IsObject(t) || !c || !b || !*c || !*b ||
      !ll_strlcpy(out->container, c, sizeof out->container) ||
      !ll_strlcpy(out->blob, b, sizeof out->blob))
    return bad(file,
               "'target' must be {\"container\": NAME, \"blob\": NAME}, "
               "each a non-empty string of at most 1024 bytes",
               err);
  out->has_target = 1;
  return LL_OK;
}

static ll_status read_flow(const cJSON *f, const char *file,
                           ll_fixture_context *out, ll_error *err) {
  const char *s = ll_json_str(f, "script");
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(f, "args");
  /* An empty object is the empty list: lua-cjson, which specs and users'
   * tools edit fixtures with, writes an empty Lua table as {}. */
  int none = cJSON_IsObject(a) && !a->child;
  if (!cJSON_IsObject(f) || !s || !*s || strchr(s, '/') ||
      !ll_strlcpy(out->script, s, sizeof out->script) ||
      (!cJSON_IsArray(a) && !none) ||
      cJSON_GetArraySize(a) > LL_FIXTURE_MAX_ARGS)
    return bad(file,
               "'flow' must be {\"script\": FILE NAME, \"args\": [at most 32 "
               "strings]}",
               err);
  const cJSON *v;
  cJSON_ArrayForEach(v, a) {
    if (!cJSON_IsString(v) ||
        !ll_strlcpy(out->args[out->nargs], v->valuestring, sizeof out->args[0]))
      return bad(file, "'flow.args' must hold strings of at most 255 bytes",
                 err);
    out->nargs++;
  }
  out->has_flow = 1;
  return LL_OK;
}

ll_status ll_fixture_context_parse(const char *text, size_t len,
                                   const char *file, ll_fixture_context *out,
                                   ll_error *err) {
  memset(out, 0, sizeof *out);
  cJSON *j = cJSON_ParseWithLength(text, len);
  ll_status st = LL_OK;
  if (!j) /* the strict loader names what is wrong with it */
    return LL_OK;
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "target");
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "flow");
  if (t)
    st = read_target(t, file, out, err);
  if (st == LL_OK && f)
    st = read_flow(f, file, out, err);
  cJSON_Delete(j);
  if (st != LL_OK)
    memset(out, 0, sizeof *out);
  return st;
}

ll_status ll_fixture_context_read(const char *path, ll_fixture_context *out,
                                  ll_error *err) {
  ll_buf b = {0};
  memset(out, 0, sizeof *out);
  ll_status st =
      ll_input_read(path, "fixture", "--replay", LL_FIXTURE_FILE_MAX, &b, err);
  if (st == LL_OK)
    st = ll_fixture_context_parse(b.p, b.n, path, out, err);
  free(b.p);
  return st;
}

cJSON *ll_fixture_context_json(const ll_fixture_context *c, const char *key) {
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return NULL;
  if (strcmp(key, "target") == 0) {
    cJSON_AddStringToObject(o, "container", c->container);
    cJSON_AddStringToObject(o, "blob", c->blob);
  } else {
    cJSON_AddStringToObject(o, "script", c->script);
    cJSON *a = cJSON_AddArrayToObject(o, "args");
    for (int i = 0; a && i < c->nargs; i++)
      cJSON_AddItemToArray(a, cJSON_CreateString(c->args[i]));
  }
  return o;
}
