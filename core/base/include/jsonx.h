/* Reading fields of a cJSON row, shared by the core modules that fold,
 * classify and verify rows. Internal to core/. */
#ifndef LL_JSONX_H
#define LL_JSONX_H

#include <cjson/cJSON.h>
#include <limits.h>
#include <string.h>

#include "ll.h"

/* cJSON_GetObjectItemCaseSensitive, inline: the same walk (it stops at
 * the first child without a key, as cJSON's does), but a key is compared
 * with strcmp only when its first byte matches. A row has about 45 keys
 * and the fold looks up dozens of them per row: cJSON's call to strcmp for
 * every key passed was a twentieth of a read's instructions. */
static inline cJSON *ll_json_get(const cJSON *o, const char *k) {
  if (!o || !k)
    return NULL;
  for (cJSON *c = o->child; c && c->string; c = c->next)
    if (c->string[0] == k[0] && strcmp(c->string, k) == 0)
      return c;
  return NULL;
}

/* The string at key k, or NULL when absent or not a string. */
static inline const char *ll_json_str(const cJSON *o, const char *k) {
  const cJSON *v = ll_json_get(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* o[k] is the string v (o or v NULL: not). */
static inline int ll_json_is(const cJSON *o, const char *k, const char *v) {
  return ll_streq(ll_json_str(o, k), v);
}

/* The same for messages: a missing string prints as "?". */
static inline const char *ll_json_pstr(const cJSON *o, const char *k) {
  const char *s = ll_json_str(o, k);
  return s ? s : "?";
}

/* A number as long; one out of long's range (or NaN) reads as absent:
 * converting it would be undefined behaviour (found by fuzz_ledger). */
static inline long ll_json_long(const cJSON *o, const char *k, long dflt) {
  const cJSON *v = ll_json_get(o, k);
  return cJSON_IsNumber(v) && v->valuedouble >= (double)LONG_MIN &&
                 v->valuedouble < -(double)LONG_MIN
             ? (long)v->valuedouble
             : dflt;
}

static inline double ll_json_double(const cJSON *o, const char *k,
                                    double dflt) {
  const cJSON *v = ll_json_get(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* Adds item to o under k, or deletes it: cJSON_AddItemToObject leaves the
 * item to the caller when it cannot copy the key (out of memory), and a
 * fresh item has no other owner. Returns 1 when added. */
static inline int ll_json_add(cJSON *o, const char *k, cJSON *item) {
  if (!item)
    return 0;
  if (cJSON_AddItemToObject(o, k, item))
    return 1;
  cJSON_Delete(item);
  return 0;
}

/* Sets o[k] to item, replacing or adding, or deletes item: a replace that
 * finds no such key (an earlier add lost to a failed allocation) leaves
 * the item to the caller too. Returns 1 when set. */
static inline int ll_json_set(cJSON *o, const char *k, cJSON *item) {
  if (!item)
    return 0;
  if (!ll_json_get(o, k))
    return ll_json_add(o, k, item);
  if (cJSON_ReplaceItemInObjectCaseSensitive(o, k, item))
    return 1;
  cJSON_Delete(item);
  return 0;
}

/* The same for an array (which fails only when a is NULL). */
static inline int ll_json_push(cJSON *a, cJSON *item) {
  if (!item)
    return 0;
  if (cJSON_AddItemToArray(a, item))
    return 1;
  cJSON_Delete(item);
  return 0;
}

/* Walking an array from its end in O(1) a step (cJSON_GetArrayItem walks
 * from the head each time): cJSON keeps the last item at child->prev. */
static inline const cJSON *ll_json_last(const cJSON *a) {
  return a && a->child ? a->child->prev : NULL;
}

/* The item before it in a, or NULL at the first. */
static inline const cJSON *ll_json_before(const cJSON *a, const cJSON *it) {
  return it && a && it != a->child ? it->prev : NULL;
}

#endif
