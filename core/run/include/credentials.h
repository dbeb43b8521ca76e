/* One credential per actor (DESIGN.md, "Actors and identities"): which
 * source the operator named for writer A, writer B, the operator and the
 * observer, read in C from the command line (--credential-a SPEC ...) and
 * the manifest ("credentials": {"A": SPEC, ...}), never from the script;
 * checked against the flow's declared actors and built, every one through
 * the same lifetime preflight, before the first request. */
#ifndef LL_CREDENTIALS_H
#define LL_CREDENTIALS_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "auth.h"
#include "clock.h"
#include "ll.h"

typedef enum {
  LL_ACTOR_A = 0,
  LL_ACTOR_B,
  LL_ACTOR_OPERATOR,
  LL_ACTOR_OBSERVER,
  LL_ACTOR__COUNT
} ll_actor_slot;

#define LL_CRED_SOURCE_MAX 600

/* One actor's source. SPEC is KIND:VALUE, one of
 *   token-env:VAR        a bearer token in the environment variable VAR
 *   token-file:PATH      a bearer token in the file PATH
 *   token-command:CMD    a token printed by CMD (split without a shell)
 *   managed-identity[:CLIENT_ID]   managed identity (IMDS or App Service)
 *   sas-env:VAR          a SAS query in the environment variable VAR
 *   sas-file:PATH        a SAS query in the file PATH */
typedef struct {
  int given;
  ll_auth_kind kind;
  int sas_file;                    /* SAS: value is a file */
  char value[1024];                /* VAR, PATH, CMD or CLIENT_ID */
  char source[LL_CRED_SOURCE_MAX]; /* as recorded: "token-file:PATH" ... */
  char from[32];                   /* "--credential-b", "the manifest" */
} ll_cred_spec;

typedef struct {
  ll_cred_spec actor[LL_ACTOR__COUNT];
  int any;                                 /* some actor has its own */
  char default_source[LL_CRED_SOURCE_MAX]; /* ll_cred_default_source */
  const char *imds_endpoint; /* --imds-endpoint, for managed identity */
} ll_cred_config;

/* The command line's specs (o's cred_a ... cred_observer, each "" when not
 * given) into c, then the manifest's (ll_cred_config_manifest). */
ll_status ll_cred_config_read(ll_cred_config *c, const char *const spec[],
                              const cJSON *manifest,
                              ll_error *err) LL_WARN_UNUSED;

/* "A", "B", "operator", "observer". */
const char *ll_actor_slot_name(ll_actor_slot s);
/* The slot of an actor name, or -1 (another writer alias). */
int ll_actor_slot_of(const char *actor);

/* Parses SPEC (see above) for the actor, given by from (named in
 * messages). LL_E_USAGE names the actor, from and what to write. */
ll_status ll_cred_spec_parse(const char *spec, const char *from,
                             ll_cred_spec *out, ll_error *err) LL_WARN_UNUSED;

/* Adds the manifest's "credentials" object (may be NULL) to c, whose
 * command-line specs are already in place: an actor named by both is
 * LL_E_USAGE, as is an unknown actor or a value that is not a SPEC. */
ll_status ll_cred_config_manifest(ll_cred_config *c, const cJSON *manifest,
                                  ll_error *err) LL_WARN_UNUSED;

/* Against the flow's declared actors, before anything is built: an
 * actor's own credential for an actor the flow does not declare is
 * LL_E_USAGE (one line naming it); with no default credential
 * (has_default 0), an actor the flow uses without one is LL_E_AUTH. */
ll_status ll_cred_config_check(const ll_cred_config *c,
                               const char (*actors)[16], int nactors,
                               int has_default, ll_error *err) LL_WARN_UNUSED;

/* Obtains every given actor's credential (ll_auth_new, the same lifetime
 * preflight as the default's) into out[slot]; the others stay NULL. On
 * failure nothing is kept and err names the actor. */
ll_status ll_cred_config_build(const ll_cred_config *c, ll_clock *clock,
                               int64_t not_after_utc_ms,
                               ll_auth *out[LL_ACTOR__COUNT],
                               ll_error *err) LL_WARN_UNUSED;

/* The credential a request of actor sends with: the actor's own (the
 * observer's, else the operator's, for "observer"), else dflt. *slot gets
 * the slot used, or -1 for the default. NULL when there is none. */
ll_auth *ll_cred_pick(ll_auth *dflt, ll_auth *const per[LL_ACTOR__COUNT],
                      const char *actor, int *slot);

/* The source name of the default credential, as recorded: kind is the
 * chosen one, file, client_id may be "" ("token-env:AZURE_STORAGE_TOKEN",
 * "token-file:PATH", "token-command", "managed-identity[:ID]",
 * "sas-env:AZURE_STORAGE_SAS"). */
void ll_cred_default_source(ll_auth_kind kind, const char *file,
                            const char *client_id, char *buf, size_t cap);

#endif
