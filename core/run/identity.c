/* The identity record of each actor, the sentence a reviewer reads about
 * it, and the check that each request row names a principal recorded for
 * its actor (identity.h). */
#include "identity.h"

#include <stdio.h>
#include <string.h>

#include "jsonx.h"
#include "sanitize.h"

static void add_nonempty(cJSON *o, const char *k, const char *v) {
  if (v && *v)
    cJSON_AddStringToObject(o, k, v);
}

cJSON *ll_identity_entry(const ll_auth *a, const char *source) {
  const ll_auth_ident *id = ll_auth_identity(a);
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return NULL;
  cJSON_AddStringToObject(o, "credential", source ? source : "none");
  cJSON_AddStringToObject(o, "kind", id ? id->kind : "opaque");
  if (id && id->fingerprint[0])
    cJSON_AddStringToObject(o, "fingerprint", id->fingerprint);
  else
    cJSON_AddNullToObject(o, "fingerprint");
  if (id)
    add_nonempty(o, "client_id_fingerprint", id->client_id_fingerprint);
  if (id && !id->is_sas) {
    add_nonempty(o, "idtyp", id->ids.idtyp);
    add_nonempty(o, "tid", id->ids.tid);
    add_nonempty(o, "oid", id->ids.oid);
    add_nonempty(o, "appid", id->ids.appid);
    add_nonempty(o, "azp", id->ids.azp);
  }
  if (id && id->is_sas) {
    cJSON *s = cJSON_AddObjectToObject(o, "sas");
    const ll_sas_fields *f = &id->sas;
    const char *k[] = {"sv", "sr", "sp", "st", "se", "skoid", "sktid"};
    const char *v[] = {f->sv, f->sr, f->sp, f->st, f->se, f->skoid, f->sktid};
    for (size_t i = 0; s && i < sizeof k / sizeof k[0]; i++)
      add_nonempty(s, k[i], v[i]);
  }
  return o;
}

static const char *entry_str(const cJSON *e, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

size_t ll_identity_ids(const cJSON *ids, const char **out, size_t cap) {
  static const char *const keys[] = {LL_IDENTITY_PRIVATE_KEYS};
  char norm[LL_SANITIZE_ID_MAX];
  size_t n = 0;
  for (const cJSON *e = cJSON_IsObject(ids) ? ids->child : NULL; e;
       e = e->next) {
    const cJSON *sas = cJSON_GetObjectItemCaseSensitive(e, "sas");
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
      const char *v = entry_str(e, keys[k]);
      if (!v && sas)
        v = entry_str(sas, keys[k]);
      if (v && ll_sanitize_norm_id(v, norm) && n++ < cap)
        out[n - 1] = v;
    }
  }
  return n;
}

static int is_observer(const cJSON *e) {
  return e->string && strcmp(e->string, "observer") == 0;
}

/* Two entries name one source: the same credential string, and for a
 * managed identity the same client ID (by fingerprint; none for a
 * system-assigned one). */
static int same_source(const cJSON *a, const cJSON *b) {
  const char *sa = entry_str(a, "credential"), *sb = entry_str(b, "credential");
  const char *ca = entry_str(a, "client_id_fingerprint");
  const char *cb = entry_str(b, "client_id_fingerprint");
  return sa && sb && strcmp(sa, sb) == 0 &&
         ((!ca && !cb) || (ca && cb && strcmp(ca, cb) == 0));
}

int ll_identity_shared(const cJSON *ids) {
  int n = 0;
  for (const cJSON *a = ids ? ids->child : NULL; a; a = a->next) {
    if (is_observer(a))
      continue;
    n++;
    const char *fa = entry_str(a, "fingerprint");
    if (!fa)
      return 1;
    for (const cJSON *b = a->next; b; b = b->next) {
      if (is_observer(b))
        continue;
      const char *fb = entry_str(b, "fingerprint");
      if ((fb && strcmp(fa, fb) == 0) || same_source(a, b))
        return 1;
    }
  }
  return n < 2;
}

/* The actor other than the observer whose fingerprint is fp, or NULL: the
 * observer may share one by design, and the statement says whose. */
static const char *holder_of(const cJSON *ids, const char *fp) {
  for (const cJSON *a = fp ? ids->child : NULL; a; a = a->next) {
    const char *f = entry_str(a, "fingerprint");
    if (!is_observer(a) && f && strcmp(f, fp) == 0)
      return a->string;
  }
  return NULL;
}

/* Appends s to buf (cap), cut when full. */
static void put(char *buf, size_t cap, const char *s) {
  size_t n = strlen(buf);
  if (n + 1 < cap)
    snprintf(buf + n, cap - n, "%s", s);
}

void ll_identity_statement(const cJSON *m, char *buf, size_t cap) {
  const cJSON *ids = cJSON_GetObjectItemCaseSensitive(m, "identities");
  buf[0] = '\0';
  if (!cJSON_IsObject(ids) || !ids->child) {
    put(buf, cap,
        "identities not recorded (a replay, or a bundle older than "
        "them): the evidence does not distinguish principals");
    return;
  }
  /* One source for every actor but the observer: one identity. */
  const char *first = NULL;
  int same = 1;
  for (const cJSON *a = ids->child; a; a = a->next) {
    if (is_observer(a))
      continue;
    const char *s = entry_str(a, "credential");
    const char *f = entry_str(a, "fingerprint");
    const char *key = f ? f : s;
    if (!first)
      first = key;
    else if (!key || strcmp(first, key) != 0)
      same = 0;
  }
  if (same) {
    put(buf, cap, LL_IDENTITY_ONE);
    return;
  }
  for (const cJSON *a = ids->child; a; a = a->next)
    if (!is_observer(a) && !entry_str(a, "fingerprint")) {
      char line[160];
      snprintf(line, sizeof line,
               "actor %.16s's principal is unknown (%.20s credential): the "
               "evidence does not distinguish principals",
               a->string, entry_str(a, "kind") ? entry_str(a, "kind") : "?");
      put(buf, cap, line);
      return;
    }
  if (ll_identity_shared(ids)) {
    put(buf, cap,
        "some actors shared one identity: the evidence does not "
        "distinguish them (");
  } else {
    put(buf, cap, "each actor used its own identity (");
  }
  int k = 0;
  for (const cJSON *a = ids->child; a; a = a->next) {
    char part[128];
    const char *fp = entry_str(a, "fingerprint");
    const char *twin = is_observer(a) ? holder_of(ids, fp) : NULL;
    snprintf(part, sizeof part, "%s%.16s %.16s", k++ ? ", " : "", a->string,
             fp ? fp : "unknown");
    put(buf, cap, part);
    if (twin) {
      snprintf(part, sizeof part, " (%.16s's: the observer only reads)", twin);
      put(buf, cap, part);
    }
  }
  put(buf, cap, ")");
}

/* Whether fp (NULL: null) is one recorded for actor in any of the
 * identities objects seen so far. */
static int recorded(const cJSON *const *seen, int nseen, const char *actor,
                    const char *fp) {
  for (int i = 0; i < nseen; i++) {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(seen[i], actor);
    if (!e)
      continue;
    const char *f = entry_str(e, "fingerprint");
    if ((!f && !fp) || (f && fp && strcmp(f, fp) == 0))
      return 1;
  }
  return 0;
}

ll_status ll_identity_check_rows(const cJSON *rows, long *bad_row,
                                 char *problem, size_t cap) {
  const cJSON *seen[64];
  int nseen = 0;
  long seq = 0;
  *bad_row = 0;
  for (const cJSON *r = rows ? rows->child : NULL; r; r = r->next) {
    seq++;
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(r, "identities");
    if (cJSON_IsObject(ids) && nseen < 64)
      seen[nseen++] = ids;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(r, "principal");
    if (!p)
      continue;
    const char *actor = ll_json_str(r, "actor_alias");
    const char *fp = cJSON_IsString(p) ? p->valuestring : NULL;
    if (!actor || (!cJSON_IsNull(p) && !fp) ||
        (nseen > 0 ? !recorded(seen, nseen, actor, fp) : fp != NULL)) {
      *bad_row = seq;
      snprintf(problem, cap,
               "principal %.16s of actor %.16s is not a fingerprint the "
               "manifest or a recovery row recorded for that actor",
               fp ? fp : "null", actor ? actor : "?");
      return LL_E_TAMPER;
    }
  }
  return LL_OK;
}
