/* What a recording replaces, however many: the lease IDs it learnt and
 * their placeholders, the run's secrets in every form, and their
 * replacement in bytes that may be kept as base64. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_impl.h"
#include "lease_id.h"
#include "sanitize.h"
#include "secret.h"

void fx_known_free(fx_known *k) {
  for (size_t i = 0; i < k->n; i++) {
    ll_secret_free(k->v[i]);
    free(k->ph[i]);
  }
  free(k->v);
  free(k->ph);
  memset(k, 0, sizeof *k);
}

/* Adds v (taken: wiped and freed when not kept) with a copy of ph. */
static int add(fx_known *k, char *v, const char *ph) {
  char *p = NULL;
  if (k->n == k->cap) {
    size_t cap = k->cap ? 2 * k->cap : 16;
    char **nv = realloc(k->v, cap * sizeof *nv);
    if (nv)
      k->v = nv;
    char **np = nv ? realloc(k->ph, cap * sizeof *np) : NULL;
    if (np)
      k->ph = np;
    if (nv && np)
      k->cap = cap;
  }
  if (k->n == k->cap || !(p = strdup(ph))) {
    ll_secret_free(v);
    return 0;
  }
  k->v[k->n] = v;
  k->ph[k->n++] = p;
  return 1;
}

const char *fx_known_placeholder(const fx_known *k, const char *id) {
  for (size_t i = 0; i < k->n; i++)
    if (ll_lease_id_equal(k->v[i], id))
      return k->ph[i];
  return NULL;
}

ll_status fx_known_learn(fx_known *k, const char *id, const char *alias,
                         ll_error *broken) {
  char name[FX_NAME_MAX], want[FX_NAME_MAX + 12];
  int from = strcmp(k->last_alias, alias) == 0 ? k->last_n : 1;
  for (int n = from; n < 100000; n++) {
    /* A2 .. A99 as ever; a longer number takes from the alias */
    int digits = n < 100 ? 2 : n < 1000 ? 3 : n < 10000 ? 4 : 5;
    if (n == 1)
      snprintf(name, sizeof name, "%.13s", alias);
    else
      snprintf(name, sizeof name, "%.*s%d", 15 - digits, alias, n);
    snprintf(want, sizeof want, "{{lease:%s}}", name);
    int used = 0;
    for (size_t i = 0; i < k->n && !used; i++)
      used = strcmp(k->ph[i], want) == 0;
    if (used)
      continue;
    char *v = strdup(id);
    if (!v || !add(k, v, want))
      return ll_fail(broken, LL_E_NOMEM, "out of memory recording a lease ID");
    ll_strlcpy(k->last_alias, alias, sizeof k->last_alias);
    k->last_n = n;
    return LL_OK;
  }
  return ll_fail(broken, LL_E_INTERNAL,
                 "recording refused: no placeholder is left for another "
                 "lease ID of alias %.13s",
                 alias);
}

int fx_known_secrets(const ll_transport *t, fx_known *s) {
  memset(s, 0, sizeof *s);
  for (int i = 0; t->secret_of; i++) {
    const char *name = "secret";
    const char *v = t->secret_of(t->run_ctx, i, &name);
    if (!v)
      break;
    if (!*v)
      continue; /* an empty slot, not the end */
    char ph[48], *forms[LL_SANITIZE_FORMS_MAX];
    snprintf(ph, sizeof ph, "{{secret:%.32s}}", name);
    size_t nf = ll_sanitize_secret_forms(v, name, forms);
    int ok = nf > 0;
    for (size_t f = 0; f < nf; f++)
      ok = ok ? add(s, forms[f], ph) : (ll_secret_free(forms[f]), 0);
    if (!ok) {
      fx_known_free(s);
      return 0;
    }
  }
  return 1;
}

unsigned fx_scrub_bytes(const fx_known *ids, const fx_known *sec, const char *s,
                        size_t n, ll_buf *out) {
  ll_buf id_free = {0};
  unsigned hit =
      ll_sanitize_replace(s, n, (const char *const *)ids->v,
                          (const char *const *)ids->ph, ids->n, &id_free) &
      LL_REDACT_SIG;
  if (id_free.oom)
    out->oom = 1;
  else
    hit |=
        ll_sanitize_replace(id_free.p, id_free.n, (const char *const *)sec->v,
                            (const char *const *)sec->ph, sec->n, out);
  free(id_free.p);
  return hit;
}
