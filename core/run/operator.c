/* The operator's configuration, parsed from the command line and the
 * environment by one option table, so the parser, the usage text and the
 * hints given to script authors cannot drift apart. */
#include "operator.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "manifest.h"

typedef enum { OPT_STR, OPT_FLAG, OPT_NUM } opt_kind;

typedef struct {
  const char *name;    /* without the leading -- */
  const char *lua_key; /* the leaselua.open key of the embedding API */
  opt_kind kind;
  size_t off;      /* offsetof in ll_operator */
  size_t cap;      /* OPT_STR: buffer size */
  long lo, hi;     /* OPT_NUM: range */
  ll_auth_kind as; /* a credential source, or LL_AUTH_NONE */
  const char *help;
} opt;

#define STR(n, k, f, as, h)                                                    \
  {                                                                            \
    n, k, OPT_STR, offsetof(ll_operator, f), sizeof(((ll_operator *)0)->f), 0, \
        0, as, h                                                               \
  }
#define NUM(n, k, f, lo, hi, h)                                                \
  { n, k, OPT_NUM, offsetof(ll_operator, f), 0, lo, hi, LL_AUTH_NONE, h }
#define FLAG(n, k, f, as, h)                                                   \
  { n, k, OPT_FLAG, offsetof(ll_operator, f), 0, 0, 0, as, h }

static const opt opts[] = {
    STR("manifest", "manifest", manifest, LL_AUTH_NONE,
        "FILE  the run manifest: who may do what, and why"),
    STR("evidence", "evidence", evidence, LL_AUTH_NONE,
        "DIR   evidence directory (default: see below)"),
    STR("ca-file", "ca_file", ca_file, LL_AUTH_NONE,
        "FILE  CA bundle for the endpoint (LEASELUA_CA_FILE)"),
    STR("token-file", "token_file", token_file, LL_AUTH_TOKEN_FILE,
        "FILE  read the bearer token from FILE"),
    STR("token-command", "token_command", token_command, LL_AUTH_TOKEN_COMMAND,
        "CMD   token from CMD's output (no shell)"),
    FLAG("managed-identity", "managed_identity", auth_kind,
         LL_AUTH_MANAGED_IDENTITY,
         "      token from managed identity (IMDS, App Service)"),
    STR("client-id", "client_id", client_id, LL_AUTH_NONE,
        "ID    managed identity: a user-assigned client ID"),
    STR("imds-endpoint", "imds_endpoint", imds_endpoint, LL_AUTH_NONE,
        "URL   managed identity: another IMDS endpoint"),
    STR("credential-a", "credential_a", cred_a, LL_AUTH_NONE,
        "SPEC  writer A's own credential (see below)"),
    STR("credential-b", "credential_b", cred_b, LL_AUTH_NONE,
        "SPEC  writer B's own credential"),
    STR("credential-operator", "credential_operator", cred_operator,
        LL_AUTH_NONE, "SPEC  the operator's own credential (the break)"),
    STR("credential-observer", "credential_observer", cred_observer,
        LL_AUTH_NONE, "SPEC  the reads' credential (default the operator's)"),
    STR("record", "record", record, LL_AUTH_NONE,
        "FILE  record the exchanges, sanitized, into a new FILE"),
    STR("record-description", "record_description", record_description,
        LL_AUTH_NONE, "TEXT  the recorded fixture's description"),
    STR("replay", "replay", replay, LL_AUTH_NONE,
        "FILE  replay FILE strictly, offline, on a virtual clock"),
    FLAG("recover", "recover", recover, LL_AUTH_NONE,
         "      reopen --evidence DIR to recover it"),
    FLAG("destructive", "destructive", destructive, LL_AUTH_NONE,
         "      allow a destructive lifecycle (the gap control)"),
    STR("after", "after", after, LL_AUTH_NONE,
        "DIR   the accepted, cleaned-up run that authorises it"),
    STR("sign-key", "sign_key", sign_key, LL_AUTH_NONE,
        "FILE  sign the bundle with this SSH key (ssh-keygen -Y)"),
    STR("proxy", "proxy", proxy_opt, LL_AUTH_NONE,
        "URL   proxy for the requests (else https_proxy...)"),
    STR("no-proxy", "no_proxy", no_proxy_opt, LL_AUTH_NONE,
        "TEXT  hosts not proxied (else no_proxy, NO_PROXY)"),
    STR("api-version", "api_version", api_version_list, LL_AUTH_NONE,
        "DATE  the x-ms-version to send (else the manifest's);\n"
        "                        DATE,DATE,...: one run and bundle each"),
    FLAG("allow-api-version", "allow_api_version", allow_api_version,
         LL_AUTH_NONE, "      allow a version leaselua does not list"),
    NUM("timeout-ms", "total_timeout_ms", total_timeout_ms, 1, 600000,
        "N     one request's whole time budget (default 60000)"),
    NUM("connect-timeout-ms", "connect_timeout_ms", connect_timeout_ms, 1,
        600000, "N     connection time budget (default 10000)"),
    NUM("deadline-s", "deadline_s", deadline_s, 1, 86400,
        "N     run deadline (900): no request after it;\n"
        "                        a credential must outlive it"),
};
#define NOPTS (sizeof opts / sizeof opts[0])

void ll_operator_defaults(ll_operator *o) {
  memset(o, 0, sizeof *o);
  ll_strlcpy(o->container, LL_DEFAULT_CONTAINER, sizeof o->container);
  ll_strlcpy(o->blob, LL_DEFAULT_BLOB, sizeof o->blob);
  ll_strlcpy(o->evidence_root, LL_DEFAULT_EVIDENCE_ROOT,
             sizeof o->evidence_root);
  o->auth_kind = LL_AUTH_TOKEN_ENV;
  o->connect_timeout_ms = 10000;
  o->total_timeout_ms = 60000;
  o->deadline_s = 900;
}

static ll_status set_env(char *dst, size_t cap, const char *name,
                         const char *(*get)(const char *), ll_error *err) {
  const char *v = get(name);
  if (!v || !*v)
    return LL_OK;
  if (!ll_strlcpy(dst, v, cap))
    return ll_fail(err, LL_E_USAGE, "%s is longer than %zu bytes", name,
                   cap - 1);
  return LL_OK;
}

ll_status ll_operator_from_env(ll_operator *o, const char *(*get)(const char *),
                               ll_error *err) {
  ll_status st = set_env(o->account_url, sizeof o->account_url,
                         "AZURE_STORAGE_ACCOUNT_URL", get, err);
  if (st == LL_OK)
    st = set_env(o->container, sizeof o->container, "AZURE_STORAGE_CONTAINER",
                 get, err);
  if (st == LL_OK)
    st = set_env(o->blob, sizeof o->blob, "AZURE_STORAGE_BLOB", get, err);
  if (st == LL_OK)
    st = set_env(o->ca_file, sizeof o->ca_file, "LEASELUA_CA_FILE", get, err);
  if (st == LL_OK)
    st = set_env(o->evidence_root, sizeof o->evidence_root,
                 "LEASELUA_EVIDENCE_ROOT", get, err);
  const char *sas = get("AZURE_STORAGE_SAS");
  const char *token = get("AZURE_STORAGE_TOKEN");
  o->sas_env = sas && *sas;
  o->token_env = token && *token;
  o->env_read = 1;
  o->env_get = get;
  if (st == LL_OK && o->sas_env)
    o->auth_kind = LL_AUTH_SAS;
  return st;
}

static const opt *find(const char *name, size_t n) {
  for (size_t i = 0; i < NOPTS; i++)
    if (strlen(opts[i].name) == n && strncmp(opts[i].name, name, n) == 0)
      return &opts[i];
  return NULL;
}

static ll_status set_value(ll_operator *o, const opt *p, const char *v,
                           ll_error *err) {
  char *base = (char *)o;
  if (p->kind == OPT_STR) {
    if (!*v)
      return ll_fail(err, LL_E_USAGE, "--%s needs a non-empty value", p->name);
    if (!ll_strlcpy(base + p->off, v, p->cap))
      return ll_fail(err, LL_E_USAGE, "--%s is longer than %zu bytes", p->name,
                     p->cap - 1);
    return LL_OK;
  }
  char *end = NULL;
  long n = strtol(v, &end, 10);
  if (!*v || *end || n < p->lo || n > p->hi)
    return ll_fail(err, LL_E_USAGE, "--%s must be an integer from %ld to %ld",
                   p->name, p->lo, p->hi);
  *(long *)(void *)(base + p->off) = n;
  return LL_OK;
}

ll_status ll_operator_from_args(ll_operator *o, int argc, char **argv,
                                char **rest, int *nrest, ll_error *err) {
  unsigned char seen[NOPTS] = {0};
  const opt *credential = NULL;
  *nrest = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    const opt *p = NULL;
    const char *inline_v = NULL;
    if (strncmp(a, "--", 2) == 0) {
      const char *eq = strchr(a + 2, '=');
      p = find(a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
      inline_v = eq ? eq + 1 : NULL;
    }
    if (!p) {
      rest[(*nrest)++] = argv[i]; /* the script's own argument */
      continue;
    }
    size_t k = (size_t)(p - opts);
    if (seen[k]++)
      return ll_fail(err, LL_E_USAGE, "--%s is given twice: give it once",
                     p->name);
    if (p->as != LL_AUTH_NONE) {
      if (credential)
        return ll_fail(err, LL_E_USAGE,
                       "--%s and --%s both name a credential: choose one",
                       credential->name, p->name);
      credential = p;
      o->auth_kind = p->as;
    }
    if (p->kind == OPT_FLAG) {
      if (inline_v)
        return ll_fail(err, LL_E_USAGE, "--%s takes no value", p->name);
      if (p->as == LL_AUTH_NONE)
        *(int *)(void *)((char *)o + p->off) = 1;
      continue;
    }
    const char *v = inline_v;
    if (!v) {
      if (i + 1 >= argc)
        return ll_fail(err, LL_E_USAGE, "--%s needs a value", p->name);
      v = argv[++i];
    }
    ll_status st = set_value(o, p, v, err);
    if (st != LL_OK)
      return st;
  }
  return LL_OK;
}

/* One --api-version value: a date, listed unless --allow-api-version. */
static ll_status check_version(const char *v, int allow, ll_error *err) {
  ll_error e = {0};
  if (ll_manifest_api_version_check(v, 1, NULL, &e) != LL_OK)
    return ll_fail(err, LL_E_USAGE,
                   "--api-version: \"%.12s%s\" is not a service version date "
                   "YYYY-MM-DD such as %s",
                   v, strlen(v) > 12 ? "..." : "", LL_API_VERSION);
  if (ll_manifest_api_version_check(v, allow, NULL, &e) == LL_OK)
    return LL_OK;
  const char *const *k = ll_manifest_api_versions();
  size_t n = 0;
  while (k[n])
    n++;
  return ll_fail(err, LL_E_USAGE,
                 "--api-version %s is not an Azure Storage service version "
                 "leaselua knows (%s to %s, see docs/API.md): use a listed "
                 "one, or pass --allow-api-version to send it anyway "
                 "(recorded in the manifest)",
                 v, k[0], k[n - 1]);
}

/* --api-version DATE[,DATE...] into api_versions: each checked, none
 * twice; one is the run's api_version, several the host's loop. */
static ll_status split_versions(ll_operator *o, ll_error *err) {
  o->n_api_versions = 0;
  if (!o->api_version_list[0])
    return LL_OK;
  const char *p = o->api_version_list;
  for (;;) {
    size_t n = strcspn(p, ",");
    if (n == 0)
      return ll_fail(err, LL_E_USAGE,
                     "--api-version has an empty entry: give DATE or "
                     "DATE,DATE,... without spaces or stray commas");
    if (o->n_api_versions == LL_API_VERSIONS_MAX)
      return ll_fail(err, LL_E_USAGE,
                     "--api-version names more than %d versions: split the "
                     "list over several invocations",
                     LL_API_VERSIONS_MAX);
    char v[16];
    snprintf(v, sizeof v, "%.*s", (int)(n < 15 ? n : 15), p);
    if (n > 10)
      v[10] = '\0', strcat(v, "...");
    ll_status st = check_version(v, o->allow_api_version, err);
    if (st != LL_OK)
      return st;
    for (int i = 0; i < o->n_api_versions; i++)
      if (strcmp(o->api_versions[i], v) == 0)
        return ll_fail(err, LL_E_USAGE,
                       "--api-version names %s twice: give each version "
                       "once",
                       v);
    ll_strlcpy(o->api_versions[o->n_api_versions++], v,
               sizeof o->api_versions[0]);
    if (!p[n])
      break;
    p += n + 1;
  }
  if (o->n_api_versions == 1) {
    ll_strlcpy(o->api_version, o->api_versions[0], sizeof o->api_version);
    return LL_OK;
  }
  if (o->replay[0])
    return ll_fail(err, LL_E_USAGE,
                   "--api-version with several versions runs a live "
                   "lifecycle per version; --replay replays one recorded "
                   "run at the version it recorded: give one version");
  if (o->record[0])
    return ll_fail(err, LL_E_USAGE,
                   "--record writes one fixture, of one run: record one "
                   "version per invocation");
  if (o->recover)
    return ll_fail(err, LL_E_USAGE,
                   "--recover reopens one interrupted run: recover each "
                   "version's bundle (DIR/<version>) with its own --evidence "
                   "and no list");
  return LL_OK;
}

ll_status ll_operator_finish(ll_operator *o, ll_error *err) {
  ll_status vst = split_versions(o, err);
  if (vst != LL_OK)
    return vst;
  if (o->replay[0] && o->record[0])
    return ll_fail(err, LL_E_USAGE,
                   "--replay and --record cannot be combined: record from a "
                   "live endpoint");
  if (o->recover && !o->evidence[0])
    return ll_fail(err, LL_E_USAGE,
                   "--recover needs --evidence DIR naming the interrupted run");
  if (o->destructive != (o->after[0] != '\0'))
    return ll_fail(err, LL_E_USAGE,
                   "--destructive and --after DIR go together: the after run "
                   "must be an accepted, cleaned-up main handoff on this blob");
  if (!o->account_url[0]) {
    if (!o->replay[0])
      return ll_fail(err, LL_E_USAGE,
                     "no target: set AZURE_STORAGE_ACCOUNT_URL (e.g. "
                     "https://<account>.blob.core.windows.net), or pass "
                     "--replay FILE");
    ll_strlcpy(o->account_url, LL_REPLAY_ACCOUNT_URL, sizeof o->account_url);
  }
  ll_status pst = ll_proxy_resolve(o->proxy_opt, o->no_proxy_opt,
                                   o->account_url, o->env_get, &o->proxy, err);
  if (pst != LL_OK)
    return pst;
  if (o->env_read && !o->replay[0]) {
    ll_auth_sources src = {0};
    src.token_env = o->token_env;
    src.sas_env = o->sas_env;
    src.token_file = o->auth_kind == LL_AUTH_TOKEN_FILE;
    src.token_command = o->auth_kind == LL_AUTH_TOKEN_COMMAND;
    src.managed_identity = o->auth_kind == LL_AUTH_MANAGED_IDENTITY;
    ll_auth_kind kind;
    ll_error ce = {0};
    ll_status st = ll_auth_choose(&src, &kind, &ce);
    /* None at all: the actors' own credentials (options, or the manifest's
     * "credentials") may cover every actor; ll_transport_make decides. */
    int own = o->cred_a[0] || o->cred_b[0] || o->cred_operator[0] ||
              o->cred_observer[0] || o->manifest[0];
    if (st == LL_E_AUTH && own) {
      o->no_default = 1;
      o->no_default_err = ce;
      kind = LL_AUTH_NONE;
    } else if (st != LL_OK) {
      if (err)
        *err = ce;
      return st;
    }
    o->auth_kind = kind;
  }
  if (!o->container[0] || !o->blob[0])
    return ll_fail(err, LL_E_USAGE,
                   "AZURE_STORAGE_CONTAINER and AZURE_STORAGE_BLOB must not be "
                   "empty");
  return LL_OK;
}

static const struct {
  const char *key, *hint;
} env_keys[] = {
    {"account_url", "set AZURE_STORAGE_ACCOUNT_URL"},
    {"container", "set AZURE_STORAGE_CONTAINER"},
    {"blob", "set AZURE_STORAGE_BLOB"},
    {"auth", "pass --token-file, --token-command or --managed-identity, or "
             "set AZURE_STORAGE_TOKEN or AZURE_STORAGE_SAS"},
    {"max_single_put", "it is fixed at 1 MiB"},
};

int ll_operator_hint(const char *lua_key, char *buf, size_t cap) {
  for (size_t i = 0; i < sizeof env_keys / sizeof env_keys[0]; i++)
    if (strcmp(env_keys[i].key, lua_key) == 0)
      return snprintf(buf, cap, "%s", env_keys[i].hint), 1;
  for (size_t i = 0; i < NOPTS; i++)
    if (strcmp(opts[i].lua_key, lua_key) == 0)
      return snprintf(buf, cap, "pass --%s on the command line", opts[i].name),
             1;
  return 0;
}

void ll_operator_usage(ll_buf *b) {
  static const char head[] =
      "operator options (read by leaselua in C, never by the script):\n";
  static const char env[] =
      "environment (read by leaselua in C):\n"
      "  AZURE_STORAGE_ACCOUNT_URL   https://<account>.blob.core.windows.net\n"
      "  AZURE_STORAGE_CONTAINER     default " LL_DEFAULT_CONTAINER "\n"
      "  AZURE_STORAGE_BLOB          default " LL_DEFAULT_BLOB "\n"
      "  AZURE_STORAGE_TOKEN or AZURE_STORAGE_SAS   the credential\n"
      "credential SPEC (--credential-a/-b/-operator/-observer, or the\n"
      "manifest's \"credentials\": {\"A\": SPEC, ...}), one per actor:\n"
      "  token-env:VAR  token-file:PATH  token-command:CMD\n"
      "  managed-identity[:CLIENT_ID]  sas-env:VAR  sas-file:PATH\n"
      "  LEASELUA_EVIDENCE_ROOT      default " LL_DEFAULT_EVIDENCE_ROOT
      " (a run: <root>/<flow>-<UTC>)\n";
  ll_buf_put(b, head, sizeof head - 1);
  for (size_t i = 0; i < NOPTS; i++) {
    char line[160];
    int n = snprintf(line, sizeof line, "  --%-19s %s\n", opts[i].name,
                     opts[i].help);
    if (n > 0)
      ll_buf_put(b, line,
                 (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
  }
  ll_buf_put(b, env, sizeof env - 1);
}

ll_status ll_operator_default_evidence(const ll_operator *o, const char *flow,
                                       char *buf, size_t cap, ll_error *err) {
  time_t now = time(NULL);
  struct tm tm;
  char stamp[32];
  gmtime_r(&now, &tm);
  strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  for (int i = 1; i < 100; i++) {
    int n = i == 1
                ? snprintf(buf, cap, "%s/%s-%s", o->evidence_root, flow, stamp)
                : snprintf(buf, cap, "%s/%s-%s-%d", o->evidence_root, flow,
                           stamp, i);
    if (n < 0 || (size_t)n >= cap)
      return ll_fail(err, LL_E_USAGE,
                     "LEASELUA_EVIDENCE_ROOT is too long: pass --evidence DIR");
    struct stat sb;
    if (lstat(buf, &sb) != 0 && errno == ENOENT)
      return LL_OK;
  }
  return ll_fail(err, LL_E_EVIDENCE_EXISTS,
                 "99 runs of %s started this second under %s: pass "
                 "--evidence DIR",
                 flow, o->evidence_root);
}
