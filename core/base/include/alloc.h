/* Counted allocation: the allocator behind cJSON (cJSON_InitHooks) and
 * expat, with a process-wide count of the allocations that failed. A
 * cJSON_Add* whose result is not checked cannot hide a failure: a caller
 * takes a mark before building something and checks it once at the end,
 * the sticky flag of ll_buf for the whole process. */
#ifndef LL_ALLOC_H
#define LL_ALLOC_H

#include <stddef.h>

/* Routes cJSON's allocations through the counter; idempotent. Called by
 * every entry point that builds rows (model, ledger, verify). */
void ll_alloc_init(void);

void *ll_malloc(size_t n);
void *ll_realloc(void *p, size_t n);
void ll_free(void *p);
char *ll_strdup(const char *s);

/* How many counted allocations have failed in this process so far. */
unsigned long ll_alloc_failures(void);
/* Counts a failure the counter did not see (an allocation inside another
 * library, OpenSSL's digest context): every mark taken before it then
 * sees a failed allocation, and nothing built across it is trusted. */
void ll_alloc_note_failure(void);

/* Nonzero when a counted allocation failed after mark was taken. */
static inline int ll_alloc_failed_since(unsigned long mark) {
  return ll_alloc_failures() != mark;
}

#ifdef LEASELUA_FAILALLOC
/* Test builds only (-DLEASELUA_FAILALLOC=ON, every link wrapped with
 * --wrap=malloc,calloc,realloc,strdup,strndup): the nth allocation from now
 * (1-based) fails, once; 0 disarms. The count covers the core's own calls
 * and cJSON's and expat's, not those made inside other libraries. */
void ll_failalloc_arm(unsigned long n);
/* Allocations seen since the last arm. */
unsigned long ll_failalloc_count(void);
/* The armed allocation was reached and failed. */
int ll_failalloc_fired(void);
#endif

#endif
