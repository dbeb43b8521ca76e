/* Whether a log record is the run's own request on the run's blob
 * (corroborate_match.c): the account host and the percent-decoded path,
 * and client request IDs compared trimmed and case-insensitively. */
#ifndef LL_CORROBORATE_MATCH_H
#define LL_CORROBORATE_MATCH_H

#include <cjson/cJSON.h>

#include "log_rec.h"

/* The run's target as the service logs it: the account's host (the
 * operator's declared Azure host, else the host the run talked to) and
 * the blob's and its container's paths, percent-decoded. */
typedef struct {
  const char *host;
  char blob[1024], container[1024];
} ll_corr_target;

void ll_corr_target_init(const cJSON *manifest, ll_corr_target *g);

typedef enum {
  LL_TGT_OK,     /* the run's account and blob (or container) */
  LL_TGT_OTHER,  /* another account, container or blob */
  LL_TGT_NOURI,  /* no uri at all */
  LL_TGT_NOHOST, /* a uri without a host */
  LL_TGT_BAD     /* a malformed percent-escape */
} ll_corr_tgt;

/* Whether r is for the run's account and blob (container: the
 * container's own path). */
ll_corr_tgt ll_corr_target_of(const ll_corr_target *g, const ll_log_rec *r,
                              int container);
/* "has no uri", ... for the kinds that leave the target unknown. */
const char *ll_corr_tgt_problem(ll_corr_tgt k);

/* Client request IDs equal after trimming blanks, case-insensitively
 * (GUIDs: a re-send in other case is the same request); never equal
 * when empty. */
int ll_corr_crid_eq(const char *a, const char *b);
/* 8-4-4-4-12 hex digits, after trimming blanks. */
int ll_corr_guid_shape(const char *s);

#endif
