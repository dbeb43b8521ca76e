/* The ledger's bindings (alias to lease ID) and secrets: what the
 * sanitizer replaces in each row, and what the scan refuses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonx.h"
#include "ledger_impl.h"
#include "ledger_secrets.h"
#include "sanitize.h"
#include "secret.h"

/* Grows a string vector to hold at least n + 1 entries. */
static int grow(char ***v, size_t n, size_t *cap) {
  if (n < *cap)
    return 1;
  size_t c = *cap ? *cap * 2 : 4;
  char **p = realloc(*v, c * sizeof *p);
  if (!p)
    return 0;
  *v = p;
  *cap = c;
  return 1;
}

/* The binding of the lease ID whose comparable form is norm, or -1. */
static long binding_of(const ll_ledger *l, const char *norm) {
  char other[LL_SANITIZE_ID_MAX];
  for (size_t i = 0; i < l->n_binds; i++)
    if (ll_sanitize_norm_id(l->ids[i], other) && strcmp(norm, other) == 0)
      return (long)i;
  return -1;
}

const char *ll_ledger_alias_of(const ll_ledger *l, const char *lease_id) {
  char norm[LL_SANITIZE_ID_MAX];
  if (!l || !lease_id || !ll_sanitize_norm_id(lease_id, norm))
    return NULL;
  long i = binding_of(l, norm);
  return i < 0 ? NULL : l->aliases[i];
}

ll_status ll_ledger_bind_alias(ll_ledger *l, const char *alias,
                               const char *lease_id, ll_error *err) {
  char norm[LL_SANITIZE_ID_MAX];
  if (!l || !alias || !*alias || strlen(alias) >= LL_ALIAS_MAX || !lease_id)
    return ll_fail(err, LL_E_USAGE,
                   "bind_alias needs an alias (1 to %d bytes) and a lease ID",
                   LL_ALIAS_MAX - 1);
  if (!ll_sanitize_norm_id(lease_id, norm))
    return ll_fail(err, LL_E_BAD_LEASE_ID,
                   "lease ID for alias %s is not a GUID", alias);
  long i = binding_of(l, norm);
  if (i >= 0 && strcmp(alias, l->aliases[i]) == 0)
    return LL_OK;
  if (i >= 0)
    return ll_fail(err, LL_E_USAGE,
                   "lease ID already bound to alias %s, not %s", l->aliases[i],
                   alias);
  /* Two vectors with one count; each keeps its own capacity. */
  if (!grow(&l->ids, l->n_binds, &l->cap_ids) ||
      !grow(&l->aliases, l->n_binds, &l->cap_aliases))
    return ll_fail(err, LL_E_NOMEM, "out of memory binding an alias");
  char *a = strdup(alias), *id = strdup(lease_id);
  if (!a || !id) {
    free(a);
    free(id);
    return ll_fail(err, LL_E_NOMEM, "out of memory binding an alias");
  }
  l->aliases[l->n_binds] = a;
  l->ids[l->n_binds++] = id;
  ll_san_ids_make_lease(&l->idtab, (const char *const *)l->ids, l->n_binds,
                        (const char *const *)l->aliases);
  return LL_OK;
}

const ll_san_ids *ll_ledger_bound_ids(const ll_ledger *l, ll_san_ids *own) {
  if (l->idtab.made && l->idtab.n == l->n_binds)
    return &l->idtab;
  ll_san_ids_make_lease(own, (const char *const *)l->ids, l->n_binds,
                        (const char *const *)l->aliases);
  return own;
}

ll_status ll_ledger_add_secret(ll_ledger *l, const char *secret,
                               ll_error *err) {
  return ll_ledger_add_named_secret(l, secret, "secret", err);
}

/* Registers one form (taken: freed here if not kept) under ph. */
static int add_form(ll_ledger *l, char *form, const char *ph) {
  for (size_t i = 0; i < l->n_secrets; i++)
    if (strcmp(l->secrets[i], form) == 0) {
      ll_secret_free(form);
      return 1;
    }
  /* Two vectors with one count, like the bindings. */
  char *p = NULL;
  if (!grow(&l->secrets, l->n_secrets, &l->cap_secrets) ||
      !grow(&l->secret_ph, l->n_secrets, &l->cap_secret_ph) ||
      !(p = strdup(ph))) {
    ll_secret_free(form);
    return 0;
  }
  l->secrets[l->n_secrets] = form;
  l->secret_ph[l->n_secrets++] = p;
  return 1;
}

/* Every form a server may echo the secret in (ll_sanitize_secret_forms:
 * a SAS signature decoded, re-encoded, as base64url). */
ll_status ll_ledger_add_named_secret(ll_ledger *l, const char *secret,
                                     const char *name, ll_error *err) {
  if (!l || !secret || !*secret || !name || !*name || strlen(name) > 32)
    return ll_fail(err, LL_E_USAGE,
                   "add_secret needs a non-empty secret and a name");
  char ph[48], *forms[LL_SANITIZE_FORMS_MAX];
  snprintf(ph, sizeof ph, "{{secret:%s}}", name);
  size_t n = ll_sanitize_secret_forms(secret, name, forms);
  int ok = n > 0;
  for (size_t i = 0; i < n; i++)
    ok = add_form(l, forms[i], ph) && ok;
  return ok ? LL_OK
            : ll_fail(err, LL_E_NOMEM, "out of memory registering a secret");
}

size_t ll_ledger_secrets(const ll_ledger *l, const char *const **secrets,
                         const char *const **placeholders) {
  *secrets = l ? (const char *const *)l->secrets : NULL;
  *placeholders = l ? (const char *const *)l->secret_ph : NULL;
  return l ? l->n_secrets : 0;
}

ll_status ll_ledger_redact(const ll_ledger *l, cJSON *row, ll_error *err) {
  if (!l || !cJSON_IsObject(row))
    return ll_fail(err, LL_E_USAGE, "ledger_redact needs a JSON object");
  unsigned found = 0;
  ll_buf where = {0}, note = {0};
  ll_status st = ll_sanitize_redact(row, (const char *const *)l->secrets,
                                    (const char *const *)l->secret_ph,
                                    l->n_secrets, &found, &where);
  if (st == LL_OK && found) {
    const cJSON *old = cJSON_GetObjectItemCaseSensitive(row, "notes");
    if (cJSON_IsString(old) && old->valuestring[0]) {
      ll_buf_put(&note, old->valuestring, strlen(old->valuestring));
      ll_buf_put(&note, "; ", 2);
    }
    ll_sanitize_note(&note, where.p, found, (const char *const *)l->secret_ph,
                     l->n_secrets);
    cJSON *text = note.oom ? NULL : cJSON_CreateString(note.p);
    int kept = 0;
    if (text && old)
      kept = cJSON_ReplaceItemInObjectCaseSensitive(row, "notes", text);
    else if (text)
      kept = cJSON_AddItemToObject(row, "notes", text);
    if (!kept) {
      cJSON_Delete(text);
      st = LL_E_NOMEM;
    }
  }
  if (st == LL_E_NOMEM || where.oom)
    st = ll_fail(err, LL_E_NOMEM, "out of memory redacting an evidence row");
  free(where.p);
  free(note.p);
  return st;
}

int ll_ledger_is_lease_bind(const cJSON *row) {
  const cJSON *rec = cJSON_GetObjectItemCaseSensitive(row, "record");
  return cJSON_IsString(rec) && strcmp(rec->valuestring, "lease_bind") == 0;
}

ll_status ll_ledger_bind_from_row(ll_ledger *l, const cJSON *row,
                                  ll_error *err) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(row, "alias");
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(row, "lease_real_id");
  if (!cJSON_IsString(a) || !cJSON_IsString(id))
    return ll_fail(err, LL_E_USAGE,
                   "a lease_bind row needs string fields alias and "
                   "lease_real_id");
  return ll_ledger_bind_alias(l, a->valuestring, id->valuestring, err);
}

cJSON *ll_ledger_sanitize(const ll_ledger *l, const cJSON *row) {
  return ll_sanitize_row(row, l ? (const char *const *)l->ids : NULL,
                         l ? (const char *const *)l->aliases : NULL,
                         l ? l->n_binds : 0);
}
