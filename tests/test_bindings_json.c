/* The bindings' JSON helpers (from the review of the --json key order):
 * ll_json_sort_members orders every object's members by key, stable and
 * bytewise, and leaves cJSON's links whole; ll_bundle_exit takes only the
 * exit codes compare and qualify document from a render result. */
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l_bundle_lua.h"
#include "l_json.h"
#include "testlib.h"

/* cJSON's invariants: child->prev is the tail, tail->next NULL, each
 * prev the one before; recursively. */
static void links(const cJSON *v) {
  if (!v || !v->child)
    return;
  const cJSON *prev = NULL, *c;
  int n = 0;
  for (c = v->child; c; c = c->next, n++) {
    if (c != v->child)
      CHECK(c->prev == prev);
    prev = c;
    links(c);
  }
  CHECK(v->child->prev == prev);
  CHECK(prev->next == NULL);
}

static void expect(cJSON *v, const char *want) {
  ll_json_sort_members(v);
  links(v);
  char *s = cJSON_PrintUnformatted(v);
  CHECK_STR(s, want);
  free(s);
  /* still a usable tree: add at the tail, detach the head */
  if (cJSON_IsObject(v)) {
    cJSON_AddNumberToObject(v, "~tail", 1);
    links(v);
    cJSON_Delete(cJSON_DetachItemViaPointer(v, v->child));
    links(v);
  }
  cJSON_Delete(v);
}

static void test_sort(void) {
  ll_json_sort_members(NULL);
  expect(cJSON_CreateObject(), "{}");
  expect(cJSON_Parse("{\"a\":1}"), "{\"a\":1}");
  expect(cJSON_Parse("{\"b\":1,\"a\":2}"), "{\"a\":2,\"b\":1}");
  expect(cJSON_Parse("{\"a\":1,\"b\":2}"), "{\"a\":1,\"b\":2}");
  expect(cJSON_Parse("[{\"b\":1,\"a\":2},[{\"d\":[],\"c\":{}}],3]"),
         "[{\"a\":2,\"b\":1},[{\"c\":{},\"d\":[]}],3]");
  /* stable on equal keys (a parsed object may hold duplicates) */
  expect(cJSON_Parse("{\"k\":1,\"a\":0,\"k\":2,\"k\":3}"),
         "{\"a\":0,\"k\":1,\"k\":2,\"k\":3}");
  /* bytewise: upper before lower, a prefix first, UTF-8 after ASCII */
  expect(cJSON_Parse("{\"b\":1,\"\\u00e9\":2,\"B\":3,\"ab\":4,\"a\":5,\"\":6}"),
         "{\"\":6,\"B\":3,\"a\":5,\"ab\":4,\"b\":1,\"\xc3\xa9\":2}");
  /* many: 1000 keys in reverse, with odd and even sizes along the way */
  for (int n = 3; n <= 1000; n += (n < 40 ? 1 : 97)) {
    cJSON *o = cJSON_CreateObject();
    char k[16];
    for (int i = n - 1; i >= 0; i--) {
      snprintf(k, sizeof k, "%06d", (i * 7919) % n);
      cJSON_AddNumberToObject(o, k, i);
    }
    ll_json_sort_members(o);
    links(o);
    const cJSON *p = NULL;
    int count = 0;
    for (const cJSON *c = o->child; c; c = c->next, count++) {
      if (p)
        CHECK(strcmp(p->string, c->string) <= 0);
      p = c;
    }
    CHECK(count == n);
    cJSON_Delete(o);
  }
}

/* The render result {exit = v}: 0, 1 and 2 as they are; anything else,
 * a string that reads as a number included, is 70. */
static int exit_of(lua_State *L, const char *chunk) {
  if (luaL_dostring(L, chunk) != LUA_OK)
    return -1;
  int e = ll_bundle_exit(L, lua_gettop(L));
  lua_settop(L, 0);
  return e;
}

static void test_exit(void) {
  lua_State *L = luaL_newstate();
  CHECK(L != NULL);
  if (!L)
    return;
  luaL_openlibs(L);
  CHECK_INT(exit_of(L, "return { exit = 0 }"), 0);
  CHECK_INT(exit_of(L, "return { exit = 1 }"), 1);
  CHECK_INT(exit_of(L, "return { exit = 2 }"), 2);
  CHECK_INT(exit_of(L, "return { exit = 3 }"), 70);
  CHECK_INT(exit_of(L, "return { exit = -1 }"), 70);
  CHECK_INT(exit_of(L, "return { exit = 64 }"), 70);
  CHECK_INT(exit_of(L, "return { exit = 1.5 }"), 70);
  CHECK_INT(exit_of(L, "return { exit = '1' }"), 70);
  CHECK_INT(exit_of(L, "return { exit = true }"), 70);
  CHECK_INT(exit_of(L, "return {}"), 70);
  /* raw access: an __index cannot supply it */
  CHECK_INT(exit_of(L, "return setmetatable({}, { __index = { exit = 0 } })"),
            70);
  lua_close(L);
}

int main(void) {
  test_sort();
  test_exit();
  return ll_test_report("test_bindings_json");
}
