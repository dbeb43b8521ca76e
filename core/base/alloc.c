/* The counted allocator and, in test builds, the allocation-failure
 * injector that SQLite's out-of-memory sweep is modelled on. */
#include "alloc.h"

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_ulong failures;
static atomic_int hooked;

unsigned long ll_alloc_failures(void) {
  return atomic_load(&failures);
}

void ll_alloc_note_failure(void) {
  atomic_fetch_add(&failures, 1);
}

void *ll_malloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p)
    atomic_fetch_add(&failures, 1);
  return p;
}

void *ll_realloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q)
    atomic_fetch_add(&failures, 1);
  return q;
}

void ll_free(void *p) {
  free(p);
}

char *ll_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = ll_malloc(n);
  if (p)
    memcpy(p, s, n);
  return p;
}

void ll_alloc_init(void) {
  if (atomic_exchange(&hooked, 1))
    return;
  /* free is free: memory cJSON allocated before the hooks (or that another
   * user of libcjson allocated) is released the same way. */
  cJSON_Hooks h = {ll_malloc, free};
  cJSON_InitHooks(&h);
}

#ifdef LEASELUA_FAILALLOC
#include <execinfo.h>

/* Every link of this build passes --wrap for these symbols (CMakeLists),
 * so the core's calls land here and reach libc through __real_*. */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static atomic_ulong fa_target, fa_count;
static atomic_int fa_fired;

void ll_failalloc_arm(unsigned long n) {
  atomic_store(&fa_target, n);
  atomic_store(&fa_count, 0);
  atomic_store(&fa_fired, 0);
}

unsigned long ll_failalloc_count(void) {
  return atomic_load(&fa_count);
}

int ll_failalloc_fired(void) {
  return atomic_load(&fa_fired);
}

/* Counts one allocation; nonzero when this one is to fail. With
 * LL_FAILALLOC_TRACE set, the failing call's stack goes to stderr: which
 * call it was, when a sweep finds an N that went unnoticed. */
static int fail_now(void) {
  unsigned long target = atomic_load(&fa_target);
  unsigned long n = atomic_fetch_add(&fa_count, 1) + 1;
  if (target == 0 || n != target)
    return 0;
  atomic_store(&fa_fired, 1);
  if (getenv("LL_FAILALLOC_TRACE")) {
    void *frames[32];
    int k = backtrace(frames, 32);
    backtrace_symbols_fd(frames, k, 2);
  }
  return 1;
}

void *__wrap_malloc(size_t n) {
  return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size) {
  return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n) {
  if (!p)
    return __wrap_malloc(n);
  return fail_now() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s) {
  return fail_now() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n) {
  return fail_now() ? NULL : __real_strndup(s, n);
}
#endif
