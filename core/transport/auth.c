/* Credentials without request signing: a bearer token from the environment,
 * a file, a command (auth_command.c) or managed identity (auth_identity.c),
 * or a SAS query (auth_sas.c); exactly one of them per run. Secrets are
 * wiped on free and never copied into an error message. */
#include "auth.h"
#include "auth_impl.h"
#include "hash.h"
#include "input.h"
#include "jwt.h"
#include "secret.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ll_auth {
  ll_auth_kind kind;
  char *token; /* bearer kinds */
  char *sas;   /* SAS query without the leading '?' */
  char *sig;   /* the raw sig= value, a copy for scanners */
  int64_t exp_s;
  ll_auth_ident ident;
};

/* A token goes into a header: refuse anything that could split it. */
static ll_status check_token_chars(const char *tok, const char *source,
                                   ll_error *err) {
  for (const unsigned char *p = (const unsigned char *)tok; *p; p++)
    if (*p <= 0x20 || *p >= 0x7f)
      return ll_fail(err, LL_E_AUTH,
                     "token from %s contains whitespace or control "
                     "characters",
                     source);
  return LL_OK;
}

static ll_status token_from_env(const char *name, char **out, ll_error *err) {
  const char *v = getenv(name ? name : "AZURE_STORAGE_TOKEN");
  if ((!v || !*v) && name)
    return ll_fail(err, LL_E_AUTH, "%s is not set or empty: set it", name);
  if (!v || !*v)
    return ll_fail(err, LL_E_AUTH,
                   "AZURE_STORAGE_TOKEN is not set or empty: set it, or use "
                   "--token-file, --token-command, --managed-identity or "
                   "AZURE_STORAGE_SAS");
  *out = ll_secret_dup_trimmed(v, strlen(v));
  if (!*out)
    return ll_fail(err, LL_E_NOMEM, "out of memory copying the token");
  if (!**out)
    return ll_fail(err, LL_E_AUTH, "%s is blank",
                   name ? name : "AZURE_STORAGE_TOKEN");
  return LL_OK;
}

/* A token file, read as every input file is (input.h: no FIFO waited on,
 * no link followed, regular and under the limit) into one buffer that is
 * wiped. Group or world readability is accepted: the library has nowhere
 * to warn. */
static ll_status token_from_file(const char *path, const char *what, char **out,
                                 ll_error *err) {
  if (!path || !*path)
    return ll_fail(err, LL_E_USAGE, "no %s given", what);
  char *buf = malloc(SECRET_CAP + 1);
  if (!buf)
    return ll_fail(err, LL_E_NOMEM, "out of memory reading the token file");
  size_t len = 0;
  ll_status st = ll_input_read_into(path, what,
                                    strcmp(what, "token file") == 0
                                        ? "--token-file"
                                        : "the actor's credential",
                                    buf, SECRET_CAP, &len, err);
  if (st != LL_OK) {
    if (err)
      err->code = LL_E_AUTH; /* a credential that cannot be read */
    st = LL_E_AUTH;
  } else if (!(*out = ll_secret_dup_trimmed(buf, len))) {
    st = ll_fail(err, LL_E_NOMEM, "out of memory reading the token file");
  } else if (!**out) {
    st = ll_fail(err, LL_E_AUTH, "%s %s is empty", what, path);
  }
  OPENSSL_cleanse(buf, SECRET_CAP + 1);
  free(buf);
  return st;
}

/* Refuses a token that is not a JWT, has expired, or expires before the
 * run's deadline. extra_exp_s (0: none) is the endpoint's own expires_on. */
static ll_status preflight(const char *tok, const char *source,
                           int64_t extra_exp_s, ll_clock *clock,
                           int64_t not_after_ms, int64_t *out_exp,
                           ll_error *err) {
  ll_error je = {0};
  int64_t exp_s;
  if (ll_jwt_exp(tok, &exp_s, &je) != LL_OK)
    return ll_fail(err, LL_E_AUTH,
                   "token from %s is not a JWT; cannot check its expiry (%s)",
                   source, je.message);
  if (extra_exp_s > 0 && extra_exp_s < exp_s)
    exp_s = extra_exp_s;
  *out_exp = exp_s;
  int64_t now_ms = ll_clock_utc_ms(clock);
  char at[40], other[40];
  ll_clock_format_utc(exp_s * 1000, at, sizeof at);
  if (exp_s * 1000 <= now_ms) {
    ll_clock_format_utc(now_ms, other, sizeof other);
    return ll_fail(err, LL_E_AUTH,
                   "token from %s expired at %s (now %s): get a fresh token",
                   source, at, other);
  }
  if (not_after_ms > 0 && exp_s * 1000 < not_after_ms) {
    ll_clock_format_utc(not_after_ms, other, sizeof other);
    return ll_fail(err, LL_E_AUTH,
                   "token from %s expires at %s, before the run's deadline "
                   "%s: get a fresh token",
                   source, at, other);
  }
  return LL_OK;
}

/* How the operator names each source, in messages. */
static const char *source_flag(ll_auth_kind k) {
  switch (k) {
  case LL_AUTH_TOKEN_ENV:
    return "AZURE_STORAGE_TOKEN";
  case LL_AUTH_TOKEN_FILE:
    return "--token-file";
  case LL_AUTH_TOKEN_COMMAND:
    return "--token-command";
  case LL_AUTH_MANAGED_IDENTITY:
    return "--managed-identity";
  case LL_AUTH_SAS:
    return "AZURE_STORAGE_SAS";
  default:
    return "?";
  }
}

static int env_set(const char *name) {
  const char *v = getenv(name);
  return v && *v;
}

void ll_auth_sources_from_env(ll_auth_sources *s) {
  if (!s)
    return;
  s->token_env = env_set("AZURE_STORAGE_TOKEN");
  s->sas_env = env_set("AZURE_STORAGE_SAS");
}

ll_status ll_auth_choose(const ll_auth_sources *s, ll_auth_kind *out,
                         ll_error *err) {
  if (out)
    *out = LL_AUTH_NONE;
  if (!s || !out)
    return ll_fail(err, LL_E_USAGE, "ll_auth_choose: NULL argument");
  const struct {
    int given;
    ll_auth_kind kind;
  } rows[] = {{s->token_env, LL_AUTH_TOKEN_ENV},
              {s->token_file, LL_AUTH_TOKEN_FILE},
              {s->token_command, LL_AUTH_TOKEN_COMMAND},
              {s->managed_identity, LL_AUTH_MANAGED_IDENTITY},
              {s->sas_env, LL_AUTH_SAS}};
  char names[160] = "";
  int n = 0;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    if (!rows[i].given)
      continue;
    if (n++)
      strcat(names, " and ");
    strcat(names, source_flag(rows[i].kind));
    *out = rows[i].kind;
  }
  if (n == 0)
    return ll_fail(err, LL_E_AUTH,
                   "no credential: set AZURE_STORAGE_TOKEN, --token-file, "
                   "--token-command, --managed-identity or "
                   "AZURE_STORAGE_SAS");
  if (n > 1) {
    *out = LL_AUTH_NONE;
    return ll_fail(err, LL_E_USAGE,
                   "%d credentials are configured (%s): keep exactly one, "
                   "unset the other variables or drop the other flags",
                   n, names);
  }
  return LL_OK;
}

/* A SAS and a token are never both in play: the environment holds the
 * other kind, so the choice would be silent. Checked before any token is
 * fetched or any command run. */
static ll_status single_credential(ll_auth_kind k, ll_error *err) {
  if (k == LL_AUTH_SAS && env_set("AZURE_STORAGE_TOKEN"))
    return ll_fail(err, LL_E_USAGE,
                   "both AZURE_STORAGE_SAS and AZURE_STORAGE_TOKEN are set: "
                   "choose one credential and unset the other");
  if (k != LL_AUTH_SAS && env_set("AZURE_STORAGE_SAS"))
    return ll_fail(err, LL_E_USAGE,
                   "both AZURE_STORAGE_SAS and %s are configured: choose one "
                   "credential (unset AZURE_STORAGE_SAS, or drop %s)",
                   source_flag(k), source_flag(k));
  return LL_OK;
}

/* A SAS from the environment (AZURE_STORAGE_SAS or the actor's variable)
 * or from a file, checked as ll_auth_new documents. */
static ll_status sas_source(const ll_auth_options *opts, ll_clock *clock,
                            int64_t not_after_ms, ll_auth *a, ll_error *err) {
  if (!opts->sas_file) {
    const char *name = opts->env_name ? opts->env_name : "AZURE_STORAGE_SAS";
    return ll_auth_sas_parse(getenv(name), opts->label ? opts->label : name,
                             clock, not_after_ms, &a->sas, &a->sig, err);
  }
  char *text = NULL;
  ll_status st = token_from_file(opts->sas_file, "SAS file", &text, err);
  if (st == LL_OK)
    st = ll_auth_sas_parse(text, opts->label ? opts->label : "the SAS file",
                           clock, not_after_ms, &a->sas, &a->sig, err);
  ll_secret_free(text);
  return st;
}

/* auth_ident.h's fingerprint of a user-assigned identity's client ID. */
static ll_status client_id_fingerprint(const char *id,
                                       char out[LL_FINGERPRINT_LEN]) {
  char text[300];
  int n = snprintf(text, sizeof text, "leaselua-client-id-v1:%s", id);
  if (n < 0 || (size_t)n >= sizeof text)
    return LL_E_USAGE;
  return ll_fingerprint_text(text, (size_t)n, out);
}

/* The principal, from the token's claims or the SAS's fields. A bearer
 * token has already passed the preflight, so it is a JWT. */
static ll_status read_identity(ll_auth *a, ll_error *err) {
  ll_auth_ident *id = &a->ident;
  const char *tid = NULL, *oid = NULL;
  if (a->kind == LL_AUTH_SAS) {
    id->kind = "sas";
    id->is_sas = 1;
    ll_sas_fields_read(a->sas, &id->sas);
    tid = id->sas.sktid;
    oid = id->sas.skoid;
  } else {
    id->kind = a->kind == LL_AUTH_MANAGED_IDENTITY ? "managed_identity" : "jwt";
    ll_error je = {0};
    if (ll_jwt_ids_read(a->token, &id->ids, &je) != LL_OK) {
      if (je.code == LL_E_NOMEM)
        return ll_fail(err, LL_E_NOMEM, "out of memory reading the token");
      id->kind = "opaque";
    }
    tid = id->ids.tid;
    oid = id->ids.oid;
  }
  if (*tid && *oid &&
      ll_principal_fingerprint(tid, oid, id->fingerprint) == LL_E_NOMEM)
    return ll_fail(err, LL_E_NOMEM, "out of memory hashing the principal");
  return LL_OK;
}

ll_auth *ll_auth_new(const ll_auth_options *opts, ll_clock *clock,
                     int64_t not_after_utc_ms, ll_error *err) {
  if (!opts || !clock) {
    ll_fail(err, LL_E_USAGE, "ll_auth_new: NULL options or clock");
    return NULL;
  }
  if (opts->kind == LL_AUTH_NONE) {
    ll_fail(err, LL_E_AUTH,
            "no credential: set AZURE_STORAGE_TOKEN, --token-file, "
            "--token-command, --managed-identity or AZURE_STORAGE_SAS");
    return NULL;
  }
  if (!opts->explicit_source && single_credential(opts->kind, err) != LL_OK)
    return NULL;
  ll_auth *a = calloc(1, sizeof *a);
  if (!a) {
    ll_fail(err, LL_E_NOMEM, "out of memory");
    return NULL;
  }
  a->kind = opts->kind;
  ll_status st;
  const char *source = NULL;
  int64_t extra_exp = 0;
  switch (opts->kind) {
  case LL_AUTH_TOKEN_ENV:
    source = opts->env_name ? opts->env_name : "AZURE_STORAGE_TOKEN";
    st = token_from_env(opts->env_name, &a->token, err);
    break;
  case LL_AUTH_TOKEN_FILE:
    source = "the token file";
    st = token_from_file(opts->token_file, "token file", &a->token, err);
    break;
  case LL_AUTH_TOKEN_COMMAND:
    source = "the token command";
    st = ll_auth_token_from_command(opts->token_argv, opts->token_command,
                                    opts->token_command_timeout_ms, &a->token,
                                    err);
    break;
  case LL_AUTH_MANAGED_IDENTITY:
    source = "managed identity";
    st =
        ll_auth_token_from_identity(opts->imds_endpoint, opts->client_id,
                                    opts->resource, &a->token, &extra_exp, err);
    break;
  case LL_AUTH_SAS:
    st = sas_source(opts, clock, not_after_utc_ms, a, err);
    break;
  default:
    st =
        ll_fail(err, LL_E_USAGE, "unknown credential kind %d", (int)opts->kind);
  }
  if (st == LL_OK && source && opts->label)
    source = opts->label;
  if (st == LL_OK && source)
    st = check_token_chars(a->token, source, err);
  if (st == LL_OK && source)
    st = preflight(a->token, source, extra_exp, clock, not_after_utc_ms,
                   &a->exp_s, err);
  if (st == LL_OK)
    st = read_identity(a, err);
  if (st == LL_OK && opts->kind == LL_AUTH_MANAGED_IDENTITY &&
      opts->client_id && *opts->client_id &&
      client_id_fingerprint(opts->client_id, a->ident.client_id_fingerprint) !=
          LL_OK)
    st = ll_fail(err, LL_E_AUTH,
                 "the managed identity's client ID could not be "
                 "fingerprinted (longer than 250 bytes?)");
  if (st != LL_OK) {
    ll_auth_free(a);
    return NULL;
  }
  return a;
}

void ll_auth_free(ll_auth *a) {
  if (!a)
    return;
  ll_secret_free(a->token);
  ll_secret_free(a->sas);
  ll_secret_free(a->sig);
  free(a);
}

ll_auth_kind ll_auth_get_kind(const ll_auth *a) {
  return a ? a->kind : LL_AUTH_NONE;
}

const char *ll_auth_kind_name(ll_auth_kind k) {
  static const char *const names[] = {
      [LL_AUTH_NONE] = "none",
      [LL_AUTH_TOKEN_ENV] = "token_env",
      [LL_AUTH_TOKEN_FILE] = "token_file",
      [LL_AUTH_TOKEN_COMMAND] = "token_command",
      [LL_AUTH_MANAGED_IDENTITY] = "managed_identity",
      [LL_AUTH_SAS] = "sas",
  };
  return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "unknown";
}

ll_status ll_auth_apply(const ll_auth *a, const char *url, char **out_url,
                        ll_headers *headers, ll_error *err) {
  if (out_url)
    *out_url = NULL;
  if (!a || !url || !out_url)
    return ll_fail(err, LL_E_USAGE, "ll_auth_apply: NULL argument");
  if (a->kind == LL_AUTH_SAS) {
    if (strchr(url, '#'))
      return ll_fail(err, LL_E_BAD_URL, "URL has a fragment: cannot add SAS");
    const char *q = strchr(url, '?');
    size_t ulen = strlen(url);
    const char *sep = !q                                               ? "?"
                      : (url[ulen - 1] == '?' || url[ulen - 1] == '&') ? ""
                                                                       : "&";
    size_t len = ulen + strlen(sep) + strlen(a->sas) + 1;
    if (!(*out_url = malloc(len)))
      return ll_fail(err, LL_E_NOMEM, "out of memory building the URL");
    snprintf(*out_url, len, "%s%s%s", url, sep, a->sas);
    return LL_OK;
  }
  if (!headers)
    return ll_fail(err, LL_E_USAGE, "ll_auth_apply: NULL headers");
  size_t len = strlen(a->token) + sizeof "Bearer ";
  char *value = malloc(len);
  if (!value)
    return ll_fail(err, LL_E_NOMEM, "out of memory building Authorization");
  snprintf(value, len, "Bearer %s", a->token);
  ll_status st = ll_headers_set(headers, "Authorization", value);
  ll_secret_free(value);
  if (st != LL_OK)
    return ll_fail(err, st, "out of memory adding Authorization");
  if (!(*out_url = strdup(url)))
    return ll_fail(err, LL_E_NOMEM, "out of memory copying the URL");
  return LL_OK;
}

const char *ll_auth_secret(const ll_auth *a, int which) {
  if (!a)
    return NULL;
  return which == 0 ? a->token : which == 1 ? a->sig : NULL;
}

int64_t ll_auth_expires_utc_ms(const ll_auth *a) {
  return a && a->token ? a->exp_s * 1000 : 0;
}

const ll_auth_ident *ll_auth_identity(const ll_auth *a) {
  return a ? &a->ident : NULL;
}
