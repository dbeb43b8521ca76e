/* Credentials that need no request signing: bearer tokens and SAS. There is
 * no Shared Key path. A token or SAS signature never leaves this struct
 * except as the Authorization header or URL query of a request. */
#ifndef LL_AUTH_H
#define LL_AUTH_H

#include <stdint.h>

#include "auth_command.h"
#include "auth_ident.h"
#include "auth_identity.h"
#include "clock.h"
#include "http.h"
#include "jwt.h"
#include "ll.h"

typedef enum {
  LL_AUTH_NONE = 0,
  LL_AUTH_TOKEN_ENV,        /* AZURE_STORAGE_TOKEN */
  LL_AUTH_TOKEN_FILE,       /* a file holding the token */
  LL_AUTH_TOKEN_COMMAND,    /* stdout of a command, e.g. az account
                               get-access-token */
  LL_AUTH_MANAGED_IDENTITY, /* IMDS or App Service IDENTITY_ENDPOINT */
  LL_AUTH_SAS               /* AZURE_STORAGE_SAS */
} ll_auth_kind;

typedef struct {
  ll_auth_kind kind;
  const char *token_file; /* TOKEN_FILE */
  /* TOKEN_COMMAND: the program and its arguments, NULL-terminated, started
   * with posix_spawnp: never a shell. argv[0] is looked up in PATH. */
  const char *const *token_argv;
  /* TOKEN_COMMAND, the one-string form, used when token_argv is NULL: split
   * by ll_auth_split_command (on blanks only, no shell). Setting both is
   * LL_E_USAGE. */
  const char *token_command;
  long token_command_timeout_ms; /* 0: LL_AUTH_COMMAND_TIMEOUT_MS */
  const char *
      imds_endpoint;     /* override of
                            http://169.254.169.254/metadata/identity/oauth2/token */
  const char *client_id; /* optional user-assigned identity */
  const char *resource;  /* default https://storage.azure.com/ */
  /* One actor's own credential (DESIGN.md, "Actors and identities"): the
   * source is named explicitly, so the one-credential rule of the
   * environment (a SAS and a token both set) does not apply to it. */
  int explicit_source;
  const char *env_name; /* TOKEN_ENV or SAS: the variable; NULL: the
                           default AZURE_STORAGE_TOKEN / AZURE_STORAGE_SAS */
  const char *sas_file; /* SAS: read the query from this file instead */
  const char *label;    /* how messages name the source; NULL: the default */
} ll_auth_options;

typedef struct ll_auth ll_auth;

/* What the operator configured, for ll_auth_choose. The host fills the
 * flag fields; ll_auth_sources_from_env fills the two variables. */
typedef struct {
  int token_env;        /* AZURE_STORAGE_TOKEN set and non-empty */
  int sas_env;          /* AZURE_STORAGE_SAS set and non-empty */
  int token_file;       /* --token-file given */
  int token_command;    /* --token-command given */
  int managed_identity; /* --managed-identity given */
} ll_auth_sources;

/* Sets s->token_env and s->sas_env from the environment (getenv); leaves
 * the other fields alone. */
void ll_auth_sources_from_env(ll_auth_sources *s);

/* Exactly one credential, never a silent choice: the one configured
 * source's kind in *out. None configured: LL_E_AUTH naming every way to
 * give one. Two or more (a SAS and a token, or two tokens): LL_E_USAGE
 * naming each of them and asking to keep one. */
ll_status ll_auth_choose(const ll_auth_sources *s, ll_auth_kind *out,
                         ll_error *err) LL_WARN_UNUSED;

/* Obtains the credential now (runs the command, asks IMDS). For a token it
 * decodes the JWT exp (no signature check) and refuses one that expires
 * before not_after_utc_ms (the run's deadline), with a message saying so.
 * For a SAS it checks, before anything is sent: a sig= value; se=
 * present, well formed and not before the deadline; st= (if any) not more
 * than five minutes (clock skew) in the future; the same for a user
 * delegation SAS's skt=/ske=. A token kind while AZURE_STORAGE_SAS is set,
 * or a SAS while AZURE_STORAGE_TOKEN is set, is LL_E_USAGE (choose one).
 * Environment variables are read through getenv. */
ll_auth *ll_auth_new(const ll_auth_options *opts, ll_clock *clock,
                     int64_t not_after_utc_ms, ll_error *err);
void ll_auth_free(ll_auth *a);
ll_auth_kind ll_auth_get_kind(const ll_auth *a);
const char *ll_auth_kind_name(ll_auth_kind k);

/* Adds Authorization: Bearer ... to headers, or appends the SAS query to
 * url (out_url is malloc'd, caller frees). */
ll_status ll_auth_apply(const ll_auth *a, const char *url, char **out_url,
                        ll_headers *headers, ll_error *err) LL_WARN_UNUSED;

/* Secrets that must never reach any output, for scanners: the token and the
 * SAS sig value, or NULL. */
const char *ll_auth_secret(const ll_auth *a, int which);

/* What the credential says about its principal (auth_ident.h): never a
 * secret. NULL for NULL. */
const ll_auth_ident *ll_auth_identity(const ll_auth *a);

/* The token's expiry (UTC ms, the earlier of the JWT exp and the identity
 * endpoint's expires_on), or 0 for a SAS. For the manifest. */
int64_t ll_auth_expires_utc_ms(const ll_auth *a);

#endif
