/* The leaselua host: runs one script in the sandbox, or a subcommand
 * (verify, report, dev-token). Exit codes: 0 ACCEPT, 1 WAIT, 2 HOLD,
 * 3 RECONCILE (returned by the script), 64 usage or configuration, 70
 * internal. */
#include <lauxlib.h>
#include <limits.h>
#include <lua.h>
#include <lualib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "http.h"
#include "l_common.h"
#include "l_compare.h"
#include "l_corroborate.h"
#include "l_host.h"
#include "l_qualify.h"
#include "l_replay_args.h"
#include "l_report.h"
#include "l_run.h"
#include "l_sandbox.h"
#include "l_spec.h"
#include "l_verify.h"
#include "l_versions.h"
#include "ledger.h"
#include "operator.h"
#include "sign.h"

static const char usage[] =
    "usage: leaselua FLOW [operator options] [flow options]\n"
    "                                   run a shipped flow: handoff, "
    "gap-control,\n"
    "                                   recover, lease-table (leaselua FLOW "
    "--help)\n"
    "       leaselua SCRIPT.lua [operator options] [script options]\n"
    "                                   run your own script in the sandbox\n"
    "       leaselua verify [--export-only] [--json] [--allowed-signers "
    "FILE]\n"
    "                       [--junit FILE] DIR\n"
    "                                   check an evidence directory (--json: "
    "one\n"
    "                                   JSON object on stdout; a signed "
    "bundle's\n"
    "                                   SHA256SUMS and signature too)\n"
    "                                   (exit 0 consistent, 2 inconsistent; "
    "not\n"
    "                                   the decision)\n"
    "       leaselua report DIR [--out OUTDIR] [--compare OTHER]\n"
    "                                   write report.html and summary.md "
    "into DIR\n"
    "                                   (or OUTDIR, made 0700; DIR is then "
    "only read);\n"
    "                                   --compare OTHER: a section comparing "
    "it\n"
    "                                   with OTHER (leaselua compare)\n"
    "       leaselua compare [--json] [--html FILE] DIR_A DIR_B [DIR...]\n"
    "                                   a behavioural diff of bundles, step "
    "by step\n"
    "                                   (exit 0 same, 1 differs, 2 "
    "inconsistent)\n"
    "       leaselua qualify [--json|--md] [--html FILE] [--junit FILE] "
    "DIR...\n"
    "                                   the qualification table (exit 0 all "
    "Azure\n"
    "                                   rows QUALIFIED, 1 no Azure evidence, "
    "2 not\n"
    "                                   qualified or inconsistent)\n"
    "       leaselua spec [busted options] SPEC...\n"
    "                                   run your busted specs with lua5.4 "
    "and\n"
    "                                   leaselua's paths (installed or build "
    "tree)\n"
    "       leaselua corroborate DIR --logs FILE... | --print-query\n"
    "                                   join the run with Azure Storage's own "
    "logs\n"
    "                                   (exit 0 CORROBORATED, 1 INCOMPLETE,\n"
    "                                   2 CONTRADICTED; not the decision)\n"
    "       leaselua dev-token [SECS] [--actor NAME]\n"
    "                                   an unsigned JWT for Azurite's --oauth "
    "basic;\n"
    "                                   --actor: one actor's own (its oid "
    "derived\n"
    "                                   from NAME, the same every time)\n"
    "       leaselua --version | --help\n"
    "exit: the recorded decision: 0 ACCEPT, 1 WAIT, 2 HOLD, 3 RECONCILE; 64 "
    "usage or\n"
    "configuration (nothing sent), 70 internal error. A script never chooses "
    "it.\n\n";

static void print_usage(FILE *f) {
  ll_buf b = {0};
  fputs(usage, f);
  ll_operator_usage(&b);
  if (b.p)
    fputs(b.p, f);
  free(b.p);
}

/* Longest part of a script's own error string that is printed. */
#define HOST_MSG_MAX 2048

/* The message handler: a string (or number) gets its traceback, cut to
 * HOST_MSG_MAX bytes first; any other value travels as it is, for
 * describe. Nothing of the value runs: no __tostring, no __index. */
static int traceback(lua_State *L) {
  /* here, before the unwinding closes a script's `local run <close>`,
   * whose close would record a HOLD of its own */
  ll_host *h = ll_lua_host(L);
  if (h)
    h->decided_at_error = ll_lua_host_decided(h);
  if (lua_type(L, 1) != LUA_TSTRING && lua_type(L, 1) != LUA_TNUMBER)
    return 1; /* leaselua error objects travel as they are */
  size_t len = 0;
  const char *msg = lua_tolstring(L, 1, &len);
  if (len > HOST_MSG_MAX)
    msg = lua_pushfstring(L, "%s... (%I bytes in all)",
                          lua_pushlstring(L, msg, HOST_MSG_MAX),
                          (lua_Integer)len);
  luaL_traceback(L, L, msg, 1);
  return 1;
}

/* Formats the error at index 1 as one line with raw access only, so no
 * value a script made can run code here; called in protected mode. */
static int describe(lua_State *L) {
  if (lua_type(L, 1) == LUA_TTABLE) {
    /* the code C raised, not what a script wrote */
    ll_lua_push_error_line(L, 1, "error",
                           "(an error object without a message)");
    return 1;
  }
  if (lua_type(L, 1) == LUA_TSTRING || lua_type(L, 1) == LUA_TNUMBER) {
    lua_pushvalue(L, 1);
    lua_tostring(L, -1);
    return 1;
  }
  lua_pushfstring(L, "the script raised %s, not an error message",
                  lua_isnil(L, 1) ? "nil" : luaL_typename(L, 1));
  return 1;
}

/* Prints the error on top of the stack as one line and returns the exit
 * code C gave it (64 usage, 70 internal), or 70 for any other value. */
static int report(lua_State *L) {
  int exit_code = ll_lua_error_exit(L, -1);
  lua_pushcfunction(L, describe);
  lua_pushvalue(L, -2);
  const char *line = "(the error could not be described)";
  if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING)
    line = lua_tostring(L, -1);
  fprintf(stderr, "leaselua: %s\n", line);
  lua_pop(L, 1);
  return exit_code >= 0 ? exit_code : 70;
}

static const char *getenv_ro(const char *name) {
  return getenv(name);
}

/* The script's own arguments ask for its usage (or, lease-table --plan,
 * its plan): it may print it even when the operator's configuration is
 * incomplete (leaselua.open then refuses). */
static int asks_help(int n, char **args) {
  for (int i = 0; i < n; i++)
    if (strcmp(args[i], "--help") == 0 || strcmp(args[i], "-h") == 0 ||
        strcmp(args[i], "--plan") == 0)
      return 1;
  return 0;
}

/* The export's rows hold the host's signing declaration (sign.h; parsed,
 * never a byte search a script's text could match), or a signing note the
 * host did not write: then too the key is asked for (fail closed). The
 * rows before a torn or broken line count: a killed run's ledger. */
static int declares_signing(const char *dir) {
  char path[PATH_MAX], key[LL_SIGN_FP_MAX];
  cJSON *rows = NULL;
  long bad = 0;
  int ended = 0;
  int n = snprintf(path, sizeof path, "%s/export/ledger.jsonl", dir);
  if (n <= 0 || (size_t)n >= sizeof path)
    return 0;
  ll_error err = {0};
  /* a broken chain still yields the rows before it: they are what counts */
  if (ll_ledger_read_file(path, &rows, &bad, &err) == LL_E_NOMEM) {
    cJSON_Delete(rows);
    return 1;
  }
  int found = rows && (ll_sign_declared(rows, key, &ended, &bad) < 0 || key[0]);
  cJSON_Delete(rows);
  return found;
}

/* --sign-key, before the first request: the key is one ssh-keygen reads
 * without a passphrase; a recovery of a signed bundle must re-sign it,
 * or its signature would no longer match what the recovery appended. */
static ll_status signing_preflight(const ll_operator *op, char *fp, size_t cap,
                                   ll_error *err) {
  if (op->recover && op->evidence[0] && !op->sign_key[0] &&
      ll_bundle_is_signed(op->evidence))
    return ll_fail(err, LL_E_USAGE,
                   "%s is a signed bundle: pass --sign-key FILE so that the "
                   "recovery re-signs it (its earlier signature is kept "
                   "under " LL_SIGN_HISTORY "/)",
                   op->evidence);
  if (op->recover && op->evidence[0] && !op->sign_key[0] &&
      declares_signing(op->evidence))
    return ll_fail(err, LL_E_USAGE,
                   "%s was to be signed (its ledger's signing note) and the "
                   "run did not end: pass --sign-key FILE so that the "
                   "recovery signs it",
                   op->evidence);
  if (!op->sign_key[0])
    return LL_OK;
  ll_sign_key key;
  ll_status st = ll_sign_key_check(op->sign_key, &key, err);
  if (st == LL_OK)
    snprintf(fp, cap, "%s key %s", key.type[0] ? key.type : "an SSH",
             key.fingerprint);
  return st;
}

/* The host's last act, after the run is closed and whatever its ending:
 * SHA256SUMS and its signature. Returns 0, or 70 when the operator asked
 * for a signed bundle and did not get one. */
static int sign_bundle(const ll_operator *op, const ll_host *host) {
  if (!op->sign_key[0] || !host->evidence_dir[0])
    return 0;
  ll_error err = {0};
  if (ll_bundle_sign(host->evidence_dir, op->sign_key, &err) != LL_OK) {
    fprintf(stderr, "leaselua: the bundle %s is not signed: %s (exit 70)\n",
            host->evidence_dir, err.message);
    return 70;
  }
  fprintf(stderr, "leaselua: signed %s/" LL_SIGN_SUMS " with %s\n",
          host->evidence_dir, host->sign_key_fp);
  return 0;
}

/* What one run of the script needs besides the operator's settings. */
typedef struct {
  const char *script;
  char **rest;
  int nrest;
  const ll_fixture_context *flow, *recorded;
  ll_error finish_err;
  const char *key_fp;
} run_input;

/* One run of the script in a fresh sandbox: its exit code. *decision and
 * *bundle (may be NULL) get the decision it recorded (-1 none), whether
 * it made a bundle, and flow its plan's name. */
static int run_once(const ll_operator *op, const run_input *in, int *decision,
                    int *bundle, char *flow, size_t flow_cap) {
  lua_State *L = ll_sandbox_newstate(LL_SANDBOX_MEM_MAX);
  if (!L) {
    fprintf(stderr, "leaselua: out of memory\n");
    return 70;
  }
  /* Every request hands the script a fresh row table that is garbage by
   * the next one: Lua 5.4's generational collector frees such young
   * objects without the incremental collector's full cycles
   * (docs/PERFORMANCE.md: a read's median 48 us shorter, the median of 22
   * paired runs' differences; shorter in 18 of them). */
  lua_gc(L, LUA_GCGEN, 0, 0);
  ll_host host = {.op = op,
                  .decision = -1,
                  .config_error = in->finish_err,
                  .flow = in->flow,
                  .recorded = in->recorded};
  ll_strlcpy(host.sign_key_fp, in->key_fp, sizeof host.sign_key_fp);
  ll_sandbox_open(L);
  ll_lua_host_install(L, &host);
  lua_createtable(L, in->nrest, 1);
  lua_pushstring(L, in->script);
  lua_rawseti(L, -2, 0);
  for (int i = 0; i < in->nrest; i++) {
    lua_pushstring(L, in->rest[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setglobal(L, "arg");
  lua_pushcfunction(L, traceback);
  int rc = -1, failed = 0;
  if (luaL_loadfilex(L, in->script, "t") != LUA_OK) {
    fprintf(stderr, "leaselua: cannot load %s\n", lua_tostring(L, -1));
    rc = 64;
  } else {
    for (int i = 0; i < in->nrest; i++)
      lua_pushstring(L, in->rest[i]);
    ll_lua_host_watch_deadline(L); /* a script cannot outlive its run */
    if (lua_pcall(L, in->nrest, 0, 1) != LUA_OK) {
      failed = 1;
      rc = report(L);
      if (host.decided_at_error) /* helper-33: not the run's end */
        fprintf(stderr, "leaselua: the script raised after its run's "
                        "decision was recorded: the exit code is that "
                        "decision's, and the error changes no evidence\n");
    }
    lua_sethook(L, NULL, 0, 0);
  }
  /* The exit code is the recorded decision, whatever the script returned:
   * a run left open or without a decision is ended here, HOLD. */
  ll_lua_host_close_run(&host, failed ? "it raised an error" : "it returned");
  host.ended = 1; /* lua_close below runs no script code that may open */
  int sign_rc = sign_bundle(op, &host);
  if (host.replay_failed)
    rc = 64;
  else if (host.decision >= 0 && host.decision <= 3)
    /* invariant 15: a run stopped before touching a target that was not
     * its own exits as its decision's target_stop says (64 or 2) */
    rc = ll_lua_host_exit(host.decision, host.stop_exit);
  else if (rc < 0 && host.opened)
    rc = 70; /* a run whose decision could not be recorded */
  else if (rc < 0 && host.help && asks_help(in->nrest, in->rest))
    rc = 0; /* only its usage or plan was printed, as the arguments asked */
  else if (rc < 0) {
    /* a script that printed a usage or a plan nobody asked for claims
     * nothing either: 0 is ACCEPT's alone (helper-27) */
    fprintf(stderr,
            "leaselua: %s opened no run, so there is no decision "
            "(exit 64)\n",
            in->script);
    rc = 64;
  }
  if (sign_rc)
    rc = sign_rc;
  if (decision)
    *decision = host.decision;
  if (bundle)
    *bundle = host.evidence_dir[0] != '\0';
  if (flow && host.flow_name[0])
    ll_strlcpy(flow, host.flow_name, flow_cap);
  ll_sandbox_close(L);
  return rc;
}

static int run_one_version(const ll_operator *op, void *ctx, int *decision,
                           int *bundle, char *flow, size_t flow_cap) {
  return run_once(op, ctx, decision, bundle, flow, flow_cap);
}

/* The flow's name for an index: the shipped flow's, or the script's file
 * name without .lua; the opened run's plan name replaces it. */
static void cli_flow_name(const char *given, char *out, size_t cap) {
  const char *b = strrchr(given, '/');
  ll_strlcpy(out, b ? b + 1 : given, cap);
  size_t k = strlen(out);
  if (k > 4 && strcmp(out + k - 4, ".lua") == 0)
    out[k - 4] = '\0';
}

static int run_script(int argc, char **argv, const char *given) {
  static ll_operator op;
  ll_error err = {0};
  char **rest = calloc((size_t)argc, sizeof *rest);
  int nrest = 0;
  if (!rest) {
    fprintf(stderr, "leaselua: out of memory\n");
    return 70;
  }
  ll_operator_defaults(&op);
  ll_status st = ll_operator_from_env(&op, getenv_ro, &err);
  if (st == LL_OK)
    st = ll_operator_from_args(&op, argc - 2, argv + 2, rest, &nrest, &err);
  /* what a recording names, and what a replay takes from its fixture */
  static ll_fixture_context flow_ctx, recorded;
  ll_host_flow_context(argv[1], nrest, rest, &flow_ctx);
  if (st == LL_OK && op.replay[0])
    st = ll_host_replay_context(&op, argv[1], getenv_ro, &recorded, &err);
  ll_error finish_err = {0};
  int help = asks_help(nrest, rest);
  if (st == LL_OK && ll_operator_finish(&op, &finish_err) != LL_OK && !help)
    st = finish_err.code, err = finish_err;
  char key_fp[128] = "";
  if (st == LL_OK && !help)
    st = signing_preflight(&op, key_fp, sizeof key_fp, &err);
  if (st != LL_OK) {
    fprintf(stderr, "leaselua: %s: %s\n", ll_code_name(st), err.message);
    free(rest);
    return ll_code_exit(st);
  }
  run_input in = {.script = argv[1],
                  .rest = rest,
                  .nrest = nrest,
                  .flow = &flow_ctx,
                  .recorded = &recorded,
                  .finish_err = finish_err,
                  .key_fp = key_fp};
  int rc;
  if (op.n_api_versions > 1 && !help && !finish_err.code) {
    char name[64];
    cli_flow_name(given, name, sizeof name);
    rc = ll_host_run_versions(&op, name, run_one_version, &in);
  } else {
    rc = run_once(&op, &in, NULL, NULL, NULL, 0);
  }
  free(rest);
  return rc;
}

/* Tokens and lease IDs live in this process's memory: it never writes a
 * core file, and no other process of the user may ptrace or read it. */
static void no_core_dumps(void) {
  struct rlimit none = {0, 0};
  (void)setrlimit(RLIMIT_CORE, &none);
  (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

/* The shipped flows by name. Their scripts are found beside the binary,
 * never through a path the caller chose: <bindir>/../share/leaselua/ when
 * installed (anywhere: the package may be unpacked into any root), and
 * <builddir>/share/leaselua/ (a link to scripts/) in a build tree. */
static const struct {
  const char *name, *script;
} flows[] = {
    {"handoff", "main_handoff.lua"},
    {"gap-control", "gap_control.lua"},
    {"recover", "recovery.lua"},
    {"lease-table", "lease_table.lua"},
};

static int flow_path(const char *name, char *out, size_t cap) {
  const char *script = NULL;
  for (size_t i = 0; i < sizeof flows / sizeof flows[0]; i++)
    if (strcmp(name, flows[i].name) == 0)
      script = flows[i].script;
  if (!script)
    return 0;
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) {
    fprintf(stderr,
            "leaselua: cannot find my own executable to locate the "
            "flow '%s' (/proc/self/exe)\n",
            name);
    return -1;
  }
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash)
    *slash = '\0';
  static const char *const dirs[] = {"/../share/leaselua/", "/share/leaselua/"};
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
    int k = snprintf(out, cap, "%s%s%s", exe, dirs[i], script);
    if (k > 0 && (size_t)k < cap && access(out, R_OK) == 0)
      return 1;
  }
  fprintf(stderr,
          "leaselua: the flow '%s' is not installed beside %s (looked for "
          "%s in ../share/leaselua and share/leaselua): reinstall "
          "leaselua, or run the script by its path\n",
          name, exe, script);
  return -1;
}

int main(int argc, char **argv) {
  no_core_dumps();
  signal(SIGPIPE, SIG_IGN); /* libcurl with NOSIGNAL does not */
  signal(SIGXFSZ, SIG_IGN); /* a full ledger is an error, not a death */
  if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
      strcmp(argv[1], "-h") == 0) {
    print_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 64 : 0;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("leaselua %s\n%s\n%s\n%s\napi-version %s\n", LL_VERSION, LUA_RELEASE,
           ll_http_curl_version(), ll_http_ssl_version(), LL_API_VERSION);
    return 0;
  }
  if (strcmp(argv[1], "dev-token") == 0) {
    long secs = 7200;
    const char *actor = NULL;
    for (int i = 2; i < argc; i++) {
      if (strcmp(argv[i], "--actor") == 0 && i + 1 < argc && !actor) {
        actor = argv[++i];
        continue;
      }
      char *end = NULL;
      secs = strtol(argv[i], &end, 10);
      if (!*argv[i] || *end || secs <= 0 || secs > 86400) {
        fprintf(stderr, "leaselua: dev-token [SECS] [--actor NAME]: the "
                        "lifetime must be 1..86400 s\n");
        return 64;
      }
    }
    char *tok = ll_auth_dev_token_for((int64_t)time(NULL), secs, actor);
    if (!tok && actor) {
      fprintf(stderr, "leaselua: dev-token --actor: the name must be 1 to 15 "
                      "of [A-Za-z0-9_-]\n");
      return 64;
    }
    if (!tok)
      return 70;
    puts(tok);
    free(tok);
    return 0;
  }
  if (strcmp(argv[1], "report") == 0) { /* DIR [--out OUTDIR] [--compare
                                           OTHER], any order */
    const char *dir = NULL, *outdir = NULL, *compare = NULL;
    int ok = argc == 3 || argc == 5 || argc == 7;
    for (int i = 2; ok && i < argc; i++) {
      if (strcmp(argv[i], "--out") == 0 && !outdir && i + 1 < argc)
        outdir = argv[++i];
      else if (strcmp(argv[i], "--compare") == 0 && !compare && i + 1 < argc)
        compare = argv[++i];
      else if (argv[i][0] != '-' && !dir)
        dir = argv[i];
      else
        ok = 0;
    }
    if (!ok || !dir) {
      fputs(usage, stderr);
      return 64;
    }
    return ll_report_main_with(dir, outdir, compare, stdout, stderr);
  }
  if (strcmp(argv[1], "corroborate") == 0) /* docs/CORROBORATION.md */
    return ll_corroborate_main(argc - 2, argv + 2, stdout, stderr);
  if (strcmp(argv[1], "spec") == 0) /* a user's busted specs */
    return ll_spec_main(argc - 2, argv + 2, stderr);
  if (strcmp(argv[1], "compare") == 0) /* docs/EVIDENCE.md, Comparing */
    return ll_compare_main(argc - 2, argv + 2, stdout, stderr);
  if (strcmp(argv[1], "qualify") == 0) /* docs/EVIDENCE.md, Qualification */
    return ll_qualify_main(argc - 2, argv + 2, stdout, stderr);
  if (strcmp(argv[1], "verify") == 0) /* its own arguments and exit codes */
    return ll_verify_main(argc - 2, argv + 2, stdout, stderr);
  if (argv[1][0] == '-') {
    fprintf(stderr, "leaselua: unknown option %s: see leaselua --help\n",
            argv[1]);
    return 64;
  }
  char path[PATH_MAX];
  const char *given = argv[1];
  int flow = flow_path(argv[1], path, sizeof path);
  if (flow < 0)
    return 64;
  if (flow > 0)
    argv[1] = path;
  else if (!strchr(argv[1], '/') && !strstr(argv[1], ".lua")) {
    fprintf(stderr,
            "leaselua: '%s' is neither a flow (handoff, gap-control, "
            "recover, lease-table) nor a script path: see leaselua --help\n",
            argv[1]);
    return 64;
  }
  return run_script(argc, argv, given);
}
