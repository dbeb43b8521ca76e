/* Whether a log record is the run's own request on the run's blob
 * (corroborate_match.h). */
#include "corroborate_match.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "endpoint.h"
#include "jsonx.h"
#include "text.h"

void ll_corr_target_init(const cJSON *m, ll_corr_target *g) {
  const char *h = ll_json_str(m, "declared_azure_host");
  g->host = h ? h : ll_json_str(m, "account_host");
  if (!g->host)
    g->host = "";
  const char *b = ll_json_str(m, "blob_path"), *c = ll_json_str(m, "container");
  if (ll_pct_decode(b, strlen(b), g->blob, sizeof g->blob, NULL) != 0)
    ll_strlcpy(g->blob, b, sizeof g->blob);
  g->container[0] = '\0';
  char needle[300];
  snprintf(needle, sizeof needle, "/%s/", c ? c : "");
  const char *at = c ? strstr(g->blob, needle) : NULL;
  if (at)
    snprintf(g->container, sizeof g->container, "%.*s",
             (int)(at - g->blob + (ptrdiff_t)strlen(needle) - 1), g->blob);
}

/* Whether r is for the run's account and for the blob (container: the
 * container's own path). */
ll_corr_tgt ll_corr_target_of(const ll_corr_target *g, const ll_log_rec *r,
                              int container) {
  char dec[1024];
  if (!r->has_uri || !r->path[0])
    return LL_TGT_NOURI;
  if (!r->host[0])
    return LL_TGT_NOHOST;
  if (ll_pct_decode(r->path, strlen(r->path), dec, sizeof dec, NULL) != 0)
    return LL_TGT_BAD;
  if (!ll_endpoint_same_host(r->host, g->host))
    return LL_TGT_OTHER;
  return strcmp(dec, container ? g->container : g->blob) == 0 ? LL_TGT_OK
                                                              : LL_TGT_OTHER;
}

const char *ll_corr_tgt_problem(ll_corr_tgt k) {
  return k == LL_TGT_NOURI    ? "has no uri"
         : k == LL_TGT_NOHOST ? "has a uri without a host"
                              : "has a malformed percent-escape in its uri";
}

/* Client request IDs: equal after trimming blanks, case-insensitively
 * (GUIDs: a re-send in other case is the same request). */
static void trimmed(const char *s, const char **b, size_t *n) {
  while (*s == ' ' || *s == '\t')
    s++;
  size_t k = strlen(s);
  while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == '\t'))
    k--;
  *b = s;
  *n = k;
}

int ll_corr_crid_eq(const char *a, const char *b) {
  const char *pa, *pb;
  size_t na, nb;
  trimmed(a, &pa, &na);
  trimmed(b, &pb, &nb);
  return na > 0 && na == nb && strncasecmp(pa, pb, na) == 0;
}

int ll_corr_guid_shape(const char *s) {
  const char *p;
  size_t n;
  trimmed(s, &p, &n);
  if (n != 36)
    return 0;
  for (size_t i = 0; i < n; i++)
    if ((i == 8 || i == 13 || i == 18 || i == 23)
            ? p[i] != '-'
            : !isxdigit((unsigned char)p[i]))
      return 0;
  return 1;
}
