/* What the operator configures, and only the operator: the target, the
 * credential, the files, the time limits and the lifecycle boundaries
 * (DESIGN.md invariant 14). The host fills it from its command line and the
 * environment, in C, before the script starts; a script can neither set nor
 * widen any of it. The stock-Lua module fills the same struct from the table
 * given to leaselua.open: whoever embeds the module is the operator. */
#ifndef LL_OPERATOR_H
#define LL_OPERATOR_H

#include <stddef.h>

#include "auth.h"
#include "ll.h"
#include "proxy.h"

/* A replay needs no endpoint: fixture paths are relative to the account,
 * and the .invalid name (RFC 2606) can never resolve, so nothing leaves. */
#define LL_REPLAY_ACCOUNT_URL "https://replay.invalid"
#define LL_DEFAULT_CONTAINER "lease-handoff-lab"
#define LL_DEFAULT_BLOB "writer-handoff.json"
#define LL_DEFAULT_EVIDENCE_ROOT "evidence"
/* --api-version a,b,c: at most this many versions in one invocation */
#define LL_API_VERSIONS_MAX 16

typedef struct {
  /* target: AZURE_STORAGE_ACCOUNT_URL, _CONTAINER, _BLOB */
  char account_url[512];
  char container[256];
  char blob[1024];
  /* files */
  char manifest[512];      /* --manifest */
  char evidence[512];      /* --evidence; empty: evidence_root/<flow>-<UTC> */
  char evidence_root[512]; /* LEASELUA_EVIDENCE_ROOT */
  char ca_file[512];       /* --ca-file, LEASELUA_CA_FILE */
  char record[512];        /* --record */
  char record_description[512];
  char replay[512]; /* --replay */
  /* credential: at most one of --token-file, --token-command,
   * --managed-identity; else AZURE_STORAGE_SAS or AZURE_STORAGE_TOKEN */
  ll_auth_kind auth_kind;
  int token_env, sas_env; /* AZURE_STORAGE_TOKEN / _SAS are set (host) */
  int env_read;           /* ll_operator_from_env ran: choose the credential */
  char token_file[512];
  char token_command[1024];
  char imds_endpoint[512]; /* --imds-endpoint (tests: a loopback IMDS) */
  char client_id[128];     /* --client-id, a user-assigned identity */
  /* one actor's own credential, a SPEC of credentials.h: --credential-a,
   * --credential-b, --credential-operator, --credential-observer */
  char cred_a[1100], cred_b[1100], cred_operator[1100], cred_observer[1100];
  /* no default credential is configured, which actors' own credentials
   * may make up for (checked by ll_transport_make); the error to give
   * when they do not */
  int no_default;
  ll_error no_default_err;
  /* the service version: --api-version (else the manifest's, else
   * LL_API_VERSION); an unlisted one needs --allow-api-version.
   * api_version_list is the option as given: one DATE, or several
   * separated by commas; ll_operator_finish checks each (before any
   * request) into api_versions. One: it is api_version. Several: the host
   * runs the flow once per version, each with its own fresh lifecycle and
   * bundle <evidence>/<version>/, and api_version stays empty until the
   * host sets it for each run. */
  char api_version[16];
  char api_version_list[512];
  char api_versions[LL_API_VERSIONS_MAX][11];
  int n_api_versions;
  int allow_api_version;
  /* lifecycle boundaries */
  int recover;     /* --recover: reopen --evidence, append only */
  int destructive; /* --destructive: a destructive lifecycle may start */
  char after[512]; /* --after: the accepted run that authorises it */
  /* --sign-key: the SSH private key that signs the bundle when the run
   * ends (core/run/include/sign.h); empty: the bundle is not signed */
  char sign_key[512];
  /* time */
  long connect_timeout_ms; /* --connect-timeout-ms, default 10000 */
  long total_timeout_ms;   /* --timeout-ms: one request's whole budget */
  long deadline_s;         /* --deadline-s: the credential must outlive it */
  size_t max_single_put;   /* embedding API only; 0: LL_MAX_SINGLE_PUT */
  /* proxy: --proxy, --no-proxy, else the variables libcurl would read
   * (read through env_get, kept by ll_operator_from_env); resolved by
   * ll_operator_finish into proxy, the only value the transport uses */
  char proxy_opt[1024];
  char no_proxy_opt[1024];
  const char *(*env_get)(const char *);
  ll_proxy proxy;
} ll_operator;

/* Defaults: the lab's container and blob, timeouts, deadline 900 s. */
void ll_operator_defaults(ll_operator *o);

/* Reads the target and presentation variables through get (getenv in the
 * host; a table in tests). LL_E_USAGE names a value that does not fit. */
ll_status ll_operator_from_env(ll_operator *o, const char *(*get)(const char *),
                               ll_error *err) LL_WARN_UNUSED;

/* Takes the operator's options out of argv[0..argc), as --name VALUE or
 * --name=VALUE, and copies every other argument, in order, into rest
 * (*nrest of them; rest has room for argc). An option given twice, a
 * missing or out-of-range value, or two credential sources is LL_E_USAGE
 * naming the option and what to do. */
ll_status ll_operator_from_args(ll_operator *o, int argc, char **argv,
                                char **rest, int *nrest,
                                ll_error *err) LL_WARN_UNUSED;

/* Whole-configuration rules, checked before anything is opened or sent:
 * each --api-version is a date leaselua lists (or --allow-api-version),
 * given once; several versions exclude --replay, --record and --recover;
 * --replay and --record exclude each other, --recover needs --evidence,
 * --destructive needs --after, a live run needs an account URL, and
 * (after ll_operator_from_env) exactly one credential source: a SAS and a
 * token, or a flag and AZURE_STORAGE_TOKEN, is refused, never a silent
 * choice. A replay without an account URL gets LL_REPLAY_ACCOUNT_URL. */
ll_status ll_operator_finish(ll_operator *o, ll_error *err) LL_WARN_UNUSED;

/* The default evidence directory, unique: evidence_root/<flow>-<UTC
 * stamp>, with -2, -3 ... when that name is taken. */
ll_status ll_operator_default_evidence(const ll_operator *o, const char *flow,
                                       char *buf, size_t cap,
                                       ll_error *err) LL_WARN_UNUSED;

/* When lua_key (a key of the embedding API's leaselua.open table) is a
 * setting the operator owns, writes how to set it into buf ("pass
 * --ca-file on the command line") and returns 1; else 0. For the message a
 * script author gets when a sandboxed script tries to set it. */
int ll_operator_hint(const char *lua_key, char *buf, size_t cap);

/* Appends the operator options, one line each, and the variables, for
 * --help; from the same table the parser reads. */
void ll_operator_usage(ll_buf *b);

#endif
