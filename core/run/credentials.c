/* Each actor's credential source, from the operator's command line and
 * manifest, checked against the flow and obtained before anything is
 * sent (credentials.h). */
#include "credentials.h"

#include <stdio.h>
#include <string.h>

static const char *const slot_names[LL_ACTOR__COUNT] = {"A", "B", "operator",
                                                        "observer"};

const char *ll_actor_slot_name(ll_actor_slot s) {
  return (unsigned)s < LL_ACTOR__COUNT ? slot_names[s] : "?";
}

int ll_actor_slot_of(const char *actor) {
  for (int i = 0; actor && i < LL_ACTOR__COUNT; i++)
    if (strcmp(actor, slot_names[i]) == 0)
      return i;
  return -1;
}

static const struct {
  const char *kind;
  ll_auth_kind as;
  int sas_file;
  int value; /* 1 needed, 0 optional (managed identity's client ID) */
} kinds[] = {
    {"token-env", LL_AUTH_TOKEN_ENV, 0, 1},
    {"token-file", LL_AUTH_TOKEN_FILE, 0, 1},
    {"token-command", LL_AUTH_TOKEN_COMMAND, 0, 1},
    {"managed-identity", LL_AUTH_MANAGED_IDENTITY, 0, 0},
    {"sas-env", LL_AUTH_SAS, 0, 1},
    {"sas-file", LL_AUTH_SAS, 1, 1},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

/* The longest environment variable name accepted after token-env: and
 * sas-env: (a name, not a value: a token pasted there is refused). */
#define ENV_NAME_MAX 64

/* A POSIX variable name, [A-Za-z_][A-Za-z0-9_]*, of at most ENV_NAME_MAX
 * bytes. */
static int is_env_name(const char *v) {
  size_t n = 0;
  for (const char *p = v; *p; p++, n++) {
    unsigned char c = (unsigned char)*p;
    int alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    if (n >= ENV_NAME_MAX || !(alpha || (n > 0 && c >= '0' && c <= '9')))
      return 0;
  }
  return n > 0;
}

ll_status ll_cred_spec_parse(const char *spec, const char *from,
                             ll_cred_spec *out, ll_error *err) {
  memset(out, 0, sizeof *out);
  ll_strlcpy(out->from, from, sizeof out->from);
  const char *colon = spec ? strchr(spec, ':') : NULL;
  size_t klen = colon ? (size_t)(colon - spec) : (spec ? strlen(spec) : 0);
  const char *v = colon ? colon + 1 : "";
  for (size_t i = 0; spec && i < NKINDS; i++) {
    if (strlen(kinds[i].kind) != klen || strncmp(kinds[i].kind, spec, klen))
      continue;
    if (kinds[i].value && !*v)
      return ll_fail(err, LL_E_USAGE, "%s: %s needs a value after ':'", from,
                     kinds[i].kind);
    /* never echo v here: it may be the token itself */
    if ((kinds[i].as == LL_AUTH_TOKEN_ENV ||
         (kinds[i].as == LL_AUTH_SAS && !kinds[i].sas_file)) &&
        !is_env_name(v))
      return ll_fail(err, LL_E_USAGE,
                     "%s: %s takes the name of an environment variable "
                     "([A-Za-z_][A-Za-z0-9_]*, at most %d characters), not "
                     "its value: export the value and name the variable",
                     from, kinds[i].kind, ENV_NAME_MAX);
    for (const char *p = v; *p; p++)
      if ((unsigned char)*p < 0x20 || *p == 0x7f)
        return ll_fail(err, LL_E_USAGE,
                       "%s: the value holds a control character", from);
    if (!ll_strlcpy(out->value, v, sizeof out->value))
      return ll_fail(err, LL_E_USAGE, "%s: the value is longer than %zu bytes",
                     from, sizeof out->value - 1);
    out->given = 1;
    out->kind = kinds[i].as;
    out->sas_file = kinds[i].sas_file;
    /* a token command's text is not recorded: it may carry an argument
     * the operator would not publish; a managed identity's client ID is
     * recorded by fingerprint (identity.h), as the token's appid repeats
     * it */
    if (out->kind == LL_AUTH_TOKEN_COMMAND ||
        out->kind == LL_AUTH_MANAGED_IDENTITY || !*v)
      snprintf(out->source, sizeof out->source, "%s", kinds[i].kind);
    else
      snprintf(out->source, sizeof out->source, "%s:%.500s", kinds[i].kind, v);
    return LL_OK;
  }
  return ll_fail(err, LL_E_USAGE,
                 "%s: a credential is token-env:VAR, token-file:PATH, "
                 "token-command:CMD, managed-identity[:CLIENT_ID], "
                 "sas-env:VAR or sas-file:PATH",
                 from);
}

ll_status ll_cred_config_manifest(ll_cred_config *c, const cJSON *manifest,
                                  ll_error *err) {
  const cJSON *creds =
      manifest ? cJSON_GetObjectItemCaseSensitive(manifest, "credentials")
               : NULL;
  for (int i = 0; i < LL_ACTOR__COUNT; i++)
    c->any |= c->actor[i].given;
  if (!creds)
    return LL_OK;
  if (!cJSON_IsObject(creds))
    return ll_fail(err, LL_E_MANIFEST,
                   "manifest field 'credentials' must be an object of actor "
                   "names (A, B, operator, observer) to credential SPECs");
  const cJSON *e;
  cJSON_ArrayForEach(e, creds) {
    int slot = ll_actor_slot_of(e->string);
    if (slot < 0)
      return ll_fail(err, LL_E_MANIFEST,
                     "manifest 'credentials' names actor %.16s: only A, B, "
                     "operator and observer have their own credential",
                     e->string ? e->string : "?");
    if (!cJSON_IsString(e))
      return ll_fail(err, LL_E_MANIFEST,
                     "manifest 'credentials.%s' must be a string such as "
                     "\"token-file:/path\"",
                     slot_names[slot]);
    if (c->actor[slot].given)
      return ll_fail(err, LL_E_USAGE,
                     "actor %s's credential is given by %s and by the "
                     "manifest: give it once",
                     slot_names[slot], c->actor[slot].from);
    char from[40];
    snprintf(from, sizeof from, "manifest credentials.%s", slot_names[slot]);
    ll_status st =
        ll_cred_spec_parse(e->valuestring, from, &c->actor[slot], err);
    if (st != LL_OK)
      return st;
    ll_strlcpy(c->actor[slot].from, "the manifest", sizeof c->actor[slot].from);
    c->any = 1;
  }
  return LL_OK;
}

ll_status ll_cred_config_read(ll_cred_config *c, const char *const spec[],
                              const cJSON *manifest, ll_error *err) {
  static const char *const flags[LL_ACTOR__COUNT] = {
      "--credential-a", "--credential-b", "--credential-operator",
      "--credential-observer"};
  memset(c, 0, sizeof *c);
  for (int s = 0; s < LL_ACTOR__COUNT; s++) {
    if (!spec[s] || !*spec[s])
      continue;
    ll_status st = ll_cred_spec_parse(spec[s], flags[s], &c->actor[s], err);
    if (st != LL_OK)
      return st;
  }
  return ll_cred_config_manifest(c, manifest, err);
}

static int declared(const char (*actors)[16], int n, const char *a) {
  for (int i = 0; i < n; i++)
    if (strcmp(actors[i], a) == 0)
      return 1;
  return 0;
}

ll_status ll_cred_config_check(const ll_cred_config *c,
                               const char (*actors)[16], int nactors,
                               int has_default, ll_error *err) {
  char list[200] = "";
  for (int i = 0; i < nactors; i++)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
             i ? ", " : "", actors[i]);
  /* The observer is never refused: every flow reads (the preflight at
   * least), and every read goes out as the observer, listed or not. */
  for (int s = 0; s < LL_ACTOR__COUNT; s++)
    if (c->actor[s].given && s != LL_ACTOR_OBSERVER &&
        !declared(actors, nactors, slot_names[s]))
      return ll_fail(err, LL_E_USAGE,
                     "%s gives a credential for actor %s, which this flow "
                     "never uses (it declares %s): drop it",
                     c->actor[s].from, slot_names[s],
                     nactors ? list : "no actors");
  if (has_default)
    return LL_OK;
  /* Without a default, every actor the flow uses needs its own; the
   * observer (the preflight's reader, always used) may use the
   * operator's. */
  for (int i = 0; i <= nactors; i++) {
    const char *a = i < nactors ? actors[i] : "observer";
    int s = ll_actor_slot_of(a);
    int ok = s >= 0 &&
             (c->actor[s].given ||
              (s == LL_ACTOR_OBSERVER && c->actor[LL_ACTOR_OPERATOR].given));
    if (!ok)
      return ll_fail(err, LL_E_AUTH,
                     "actor %s has no credential: pass --credential-%s SPEC "
                     "(or give one credential for every actor)",
                     a,
                     s == LL_ACTOR_A   ? "a"
                     : s == LL_ACTOR_B ? "b"
                                       : a);
  }
  return LL_OK;
}

ll_status ll_cred_config_build(const ll_cred_config *c, ll_clock *clock,
                               int64_t not_after_utc_ms,
                               ll_auth *out[LL_ACTOR__COUNT], ll_error *err) {
  ll_status st = LL_OK;
  for (int s = 0; s < LL_ACTOR__COUNT; s++)
    out[s] = NULL;
  for (int s = 0; s < LL_ACTOR__COUNT && st == LL_OK; s++) {
    const ll_cred_spec *p = &c->actor[s];
    if (!p->given)
      continue;
    char label[80];
    snprintf(label, sizeof label, "actor %s's %s", slot_names[s],
             p->kind == LL_AUTH_SAS ? (p->sas_file ? "SAS file" : "SAS")
                                    : "credential");
    ll_auth_options ao = {.kind = p->kind, .explicit_source = 1};
    if (p->kind == LL_AUTH_TOKEN_ENV ||
        (p->kind == LL_AUTH_SAS && !p->sas_file))
      ao.env_name = p->value;
    if (p->kind == LL_AUTH_SAS && p->sas_file)
      ao.sas_file = p->value;
    if (p->kind == LL_AUTH_TOKEN_FILE)
      ao.token_file = p->value;
    if (p->kind == LL_AUTH_TOKEN_COMMAND)
      ao.token_command = p->value;
    if (p->kind == LL_AUTH_MANAGED_IDENTITY && p->value[0])
      ao.client_id = p->value;
    if (p->kind == LL_AUTH_MANAGED_IDENTITY)
      ao.imds_endpoint = c->imds_endpoint;
    if (p->kind != LL_AUTH_TOKEN_ENV)
      ao.label = label;
    ll_error e = {0};
    out[s] = ll_auth_new(&ao, clock, not_after_utc_ms, &e);
    if (!out[s])
      st = ll_fail(err, e.code ? e.code : LL_E_AUTH, "actor %s (%s): %s",
                   slot_names[s], p->from, e.message);
  }
  if (st != LL_OK)
    for (int s = 0; s < LL_ACTOR__COUNT; s++) {
      ll_auth_free(out[s]);
      out[s] = NULL;
    }
  return st;
}

ll_auth *ll_cred_pick(ll_auth *dflt, ll_auth *const per[LL_ACTOR__COUNT],
                      const char *actor, int *slot) {
  int s = ll_actor_slot_of(actor);
  if (s == LL_ACTOR_OBSERVER && !per[s] && per[LL_ACTOR_OPERATOR])
    s = LL_ACTOR_OPERATOR;
  if (s >= 0 && per[s]) {
    *slot = s;
    return per[s];
  }
  *slot = -1;
  return dflt;
}

void ll_cred_default_source(ll_auth_kind kind, const char *file,
                            const char *client_id, char *buf, size_t cap) {
  switch (kind) {
  case LL_AUTH_TOKEN_ENV:
    snprintf(buf, cap, "token-env:AZURE_STORAGE_TOKEN");
    break;
  case LL_AUTH_TOKEN_FILE:
    snprintf(buf, cap, "token-file:%s", file ? file : "");
    break;
  case LL_AUTH_TOKEN_COMMAND:
    snprintf(buf, cap, "token-command");
    break;
  case LL_AUTH_MANAGED_IDENTITY:
    (void)client_id; /* by fingerprint, in the identity record */
    snprintf(buf, cap, "managed-identity");
    break;
  case LL_AUTH_SAS:
    snprintf(buf, cap, "sas-env:AZURE_STORAGE_SAS");
    break;
  default:
    snprintf(buf, cap, "none");
  }
}
