/* One bundle as compare, qualify and the JUnit reports see it: verify's
 * check first (ll_verify_dir_rows: the export rows leave only when they
 * were proven consistent), the signature as verify checks it, the
 * corroboration's verdict, then lib.bundle.summarize in the sandbox. Many
 * bundles are shared among forked workers, each writing its summaries as
 * JSON lines to its own temporary file, read back in order. */
#include "l_bundle.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "input.h"
#include "jsonx.h"
#include "l_common.h"
#include "l_json.h"
#include "l_sandbox.h"
#include "l_verdict.h"
#include "sign.h"

int ll_bundle_arg_check(const char *cmd, const char *dir, FILE *errs) {
  char path[PATH_MAX];
  struct stat sb;
  int n = snprintf(path, sizeof path, "%s/export/ledger.jsonl", dir);
  if (n < 0 || (size_t)n >= sizeof path) {
    fprintf(errs, "leaselua: %s: path too long: %.200s\n", cmd, dir);
    return 64;
  }
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    fprintf(errs, "leaselua: %s: %s is not a directory\n", cmd, dir);
    return 64;
  }
  if (access(path, R_OK) != 0) {
    fprintf(errs,
            "leaselua: %s: %s has no readable export/ledger.jsonl: not an "
            "evidence directory (a parent of several needs its index.json)\n",
            cmd, dir);
    return 64;
  }
  return 0;
}

/* The corroboration's summary fields, when the bundle has one: verify has
 * checked it equals the chain's last corroboration row. NULL: none. */
static cJSON *corroboration(const char *dir) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/corroboration.json", dir);
  if (access(path, F_OK) != 0)
    return NULL;
  ll_buf buf = {0};
  ll_error e = {0};
  cJSON *j = NULL;
  if (ll_input_read(path, "corroboration", "DIR", 16u * 1024u * 1024u, &buf,
                    &e) == LL_OK)
    j = cJSON_ParseWithLength(buf.p, buf.n);
  free(buf.p);
  cJSON *o = cJSON_CreateObject();
  static const char *const keep[] = {
      "verdict",         "corroborated_utc",     "requests",
      "log_records",     "contradictions_total", "missing_total",
      "unrecorded_total"};
  for (size_t i = 0; o && j && i < sizeof keep / sizeof *keep; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, keep[i]);
    if (v && (cJSON_IsString(v) || cJSON_IsNumber(v)))
      cJSON_AddItemToObject(o, keep[i], cJSON_Duplicate(v, 0));
  }
  if (o && !j)
    cJSON_AddStringToObject(o, "verdict", "UNREADABLE");
  cJSON_Delete(j);
  return o;
}

/* verify's report and the signature's, as the facts lib.bundle reads.
 * NULL when memory ran out. */
static cJSON *facts_json(const char *dir, ll_status st,
                         const ll_verify_report *rep, const ll_error *err,
                         const ll_sign_report *sr, ll_status ss,
                         const ll_error *serr) {
  cJSON *o = cJSON_CreateObject();
  const char *problem = NULL;
  if (st != LL_OK)
    problem = rep->problem[0] ? rep->problem : err->message;
  int ledger_ok = st == LL_OK;
  int ok = o && cJSON_AddStringToObject(o, "dir", dir);
  ok = ok && cJSON_AddBoolToObject(o, "ledger_consistent", ledger_ok);
  ok = ok &&
       cJSON_AddItemToObject(o, "problem", ll_verdict_str_or_null(problem));
  ok = ok && cJSON_AddNumberToObject(o, "bad_row", (double)rep->bad_row);
  /* the fields verify --json has too, written once (l_verify.c); this
   * object becomes a Lua table, so their order is not a contract here */
  ok = ok && ll_verdict_scope(o, rep);
  ok = ok && cJSON_AddItemToObject(o, "account_host",
                                   ll_verdict_str_or_null(rep->account_host));
  ok = ok && ll_verdict_outcome(o, rep);
  cJSON *sig = ok ? cJSON_AddObjectToObject(o, "signature") : NULL;
  ok = sig != NULL;
  if (ok && ss != LL_OK && ss != LL_E_TAMPER) {
    ok = cJSON_AddStringToObject(sig, "state", "unchecked") != NULL;
    ok = ok && cJSON_AddStringToObject(sig, "problem", serr->message);
  } else if (ok) {
    ok = ll_verdict_signer(sig, sr);
    ok = ok && cJSON_AddItemToObject(sig, "problem",
                                     ll_verdict_str_or_null(sr->problem));
  }
  /* consistent as `leaselua verify` says it: the ledger and, when signed,
   * the signature (a bad one is exit 2 there too) */
  ok = ok && cJSON_AddBoolToObject(o, "consistent",
                                   ledger_ok && !sr->problem[0] &&
                                       (ss == LL_OK || ss == LL_E_TAMPER));
  if (!ok) {
    cJSON_Delete(o);
    return NULL;
  }
  cJSON *corr = corroboration(dir);
  if (corr)
    cJSON_AddItemToObject(o, "corroboration", corr);
  return o;
}

/* One bundle, checked and summarised in L: its summary as cJSON, or NULL
 * (out of memory, or lib.bundle failed: a line on errs). */
static cJSON *one(lua_State *L, const char *cmd, const char *dir,
                  const ll_bundle_opts *o, FILE *errs) {
  ll_verify_report *rep = malloc(sizeof *rep);
  ll_sign_report *sr = malloc(sizeof *sr);
  cJSON *rows = NULL, *facts = NULL, *opts = NULL, *res = NULL;
  if (!rep || !sr)
    goto cleanup;
  memset(sr, 0, sizeof *sr);
  ll_error err = {0}, serr = {0};
  ll_status st = ll_verify_dir_rows(dir, o->mode, rep, &rows, &err);
  if (st == LL_E_NOMEM) {
    fprintf(errs, "leaselua: %s: %s: nothing was concluded\n", cmd,
            err.message);
    goto cleanup;
  }
  /* with unsigned_ok (qualify) an allowed-signers file names the signer
   * of a signed bundle and an unsigned one stays unsigned, where verify
   * --allowed-signers calls it bad: the QUALIFIED rule says what a missing
   * signature costs */
  const char *allowed =
      o->allowed && (!o->unsigned_ok || ll_bundle_is_signed(dir)) ? o->allowed
                                                                  : NULL;
  ll_status ss = ll_bundle_check_declared(
      dir, allowed, rep->sign_declared, rep->decision_row > 0,
      rep->export_sha256, rep->corroboration_sha256, sr, &serr);
  if (ss == LL_E_NOMEM) {
    fprintf(errs, "leaselua: %s: out of memory checking a signature\n", cmd);
    goto cleanup;
  }
  facts = facts_json(dir, st, rep, &err, sr, ss, &serr);
  opts = cJSON_CreateObject();
  if (!facts || !opts || !cJSON_AddBoolToObject(opts, "steps", o->steps))
    goto cleanup;
  if (st == LL_E_IO)
    cJSON_AddStringToObject(facts, "error", err.message);
  if (o->map && !cJSON_AddStringToObject(opts, "map", o->map))
    goto cleanup;
  const cJSON *args[3] = {facts, rows, opts}; /* the context is L's */
  int top = lua_gettop(L);
  if (ll_bundle_call_rows(L, cmd, "lib.bundle", "process", args, 3, 1, 2,
                          errs) == 0) {
    char why[256];
    res = ll_lua_to_json(L, -1, why, sizeof why);
    if (!res)
      fprintf(errs, "leaselua: %s: %s: its summary: %s\n", cmd, dir, why);
  }
  lua_settop(L, top);
cleanup:
  cJSON_Delete(rows);
  cJSON_Delete(facts);
  cJSON_Delete(opts);
  free(rep);
  free(sr);
  return res;
}

/* A sandbox for one(), holding o->map_ctx (lib.bundle.set_context):
 * converted once, not once per bundle. NULL: a line on errs. */
static lua_State *state_for(const char *cmd, const ll_bundle_opts *o,
                            FILE *errs) {
  lua_State *L = ll_bundle_state(errs);
  const cJSON *args[1] = {o->map_ctx};
  if (L && o->map_ctx &&
      ll_bundle_call(L, cmd, "lib.bundle", "set_context", args, 1, 0, errs)) {
    lua_close(L);
    L = NULL;
  }
  return L;
}

/* A worker: bundles k, k+jobs, ... into f, one JSON line each. */
static int worker(const char *cmd, char *const *dirs, int n, int k, int jobs,
                  const ll_bundle_opts *o, FILE *f, FILE *errs) {
  lua_State *L = state_for(cmd, o, errs);
  if (!L)
    return 70;
  int rc = 0;
  for (int i = k; rc == 0 && i < n; i += jobs) {
    cJSON *s = one(L, cmd, dirs[i], o, errs);
    char *text = s ? cJSON_PrintUnformatted(s) : NULL;
    cJSON_Delete(s);
    if (!text || fprintf(f, "%s\n", text) < 0)
      rc = 70;
    free(text);
  }
  lua_close(L);
  if (fflush(f) != 0)
    rc = 70;
  return rc;
}

/* Reads worker k's lines back into their places of arr. */
static int collect(FILE *f, int n, int k, int jobs, cJSON **slots) {
  rewind(f);
  char *line = NULL;
  size_t cap = 0;
  int rc = 0;
  for (int i = k; rc == 0 && i < n; i += jobs) {
    ssize_t len = getline(&line, &cap, f);
    slots[i] = len > 0 ? cJSON_ParseWithLength(line, (size_t)len) : NULL;
    if (!slots[i])
      rc = 70;
  }
  free(line);
  return rc;
}

int ll_bundle_default_jobs(int n) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 32 || cpus < 2)
    return 1;
  return cpus > 4 ? 4 : (int)cpus;
}

int ll_bundle_summaries(const char *cmd, char *const *dirs, int n,
                        const ll_bundle_opts *o, cJSON **out, FILE *errs) {
  int jobs = o->jobs < 1 ? 1 : o->jobs;
  if (jobs > n)
    jobs = n < 1 ? 1 : n;
  cJSON **slots = calloc((size_t)(n > 0 ? n : 1), sizeof *slots);
  FILE *files[LL_BUNDLE_JOBS_MAX] = {0};
  pid_t pids[LL_BUNDLE_JOBS_MAX] = {0};
  int rc = slots ? 0 : 70;
  if (rc == 0 && jobs == 1) {
    lua_State *L = state_for(cmd, o, errs);
    rc = L ? 0 : 70;
    for (int i = 0; rc == 0 && i < n; i++)
      rc = (slots[i] = one(L, cmd, dirs[i], o, errs)) ? 0 : 70;
    if (L)
      lua_close(L);
  } else if (rc == 0) {
    fflush(NULL);
    for (int k = 0; rc == 0 && k < jobs; k++) {
      files[k] = tmpfile();
      pids[k] = files[k] ? fork() : -1;
      if (pids[k] == 0)
        _exit(worker(cmd, dirs, n, k, jobs, o, files[k], errs));
      if (pids[k] < 0) {
        fprintf(errs, "leaselua: %s: cannot start a worker: %s\n", cmd,
                strerror(errno));
        rc = 70;
      }
    }
    for (int k = 0; k < jobs; k++) {
      int status = 0;
      if (pids[k] > 0 && (waitpid(pids[k], &status, 0) != pids[k] ||
                          !WIFEXITED(status) || WEXITSTATUS(status) != 0))
        rc = 70;
      if (rc == 0)
        rc = collect(files[k], n, k, jobs, slots);
      if (files[k])
        fclose(files[k]);
    }
    if (rc)
      fprintf(errs, "leaselua: %s: a worker failed: nothing was concluded\n",
              cmd);
  }
  cJSON *arr = rc == 0 ? cJSON_CreateArray() : NULL;
  for (int i = 0; i < n && slots; i++) {
    if (arr && slots[i] && cJSON_AddItemToArray(arr, slots[i]))
      slots[i] = NULL;
    cJSON_Delete(slots[i]);
  }
  free(slots);
  if (rc == 0 && !arr)
    rc = 70;
  *out = arr;
  return rc;
}

/* A run's dir in an index: relative, no "..", no empty part. */
static int relative_ok(const char *d) {
  if (!d || !*d || d[0] == '/' || strlen(d) > 255)
    return 0;
  const char *p = d;
  while (*p) {
    const char *e = strchr(p, '/');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == 0 || (len == 2 && p[0] == '.' && p[1] == '.') ||
        (len == 1 && p[0] == '.'))
      return 0;
    p += len + (e ? 1 : 0);
  }
  return 1;
}

/* Whether dir/sub holds a bundle (its export ledger). */
static int holds_bundle(const char *dir, const char *sub) {
  char p[PATH_MAX];
  struct stat sb;
  int len = snprintf(p, sizeof p, "%s/%s/export/ledger.jsonl", dir, sub);
  return len > 0 && (size_t)len < sizeof p && lstat(p, &sb) == 0;
}

/* A bundle somewhere under dir/sub (a real directory, links never
 * followed, at most depth levels down): its path relative to dir in
 * found, and 1; else 0. */
static int nested_bundle(const char *dir, const char *sub, int depth,
                         char *found, size_t cap) {
  char p[PATH_MAX];
  struct stat sb;
  int len = snprintf(p, sizeof p, "%s/%s", dir, sub);
  if (len <= 0 || (size_t)len >= sizeof p || lstat(p, &sb) != 0 ||
      !S_ISDIR(sb.st_mode))
    return 0;
  if (holds_bundle(dir, sub)) {
    snprintf(found, cap, "%s", sub);
    return 1;
  }
  DIR *d = depth > 0 ? opendir(p) : NULL;
  int hit = 0;
  for (struct dirent *e; d && !hit && (e = readdir(d));) {
    char next[PATH_MAX];
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    int n = snprintf(next, sizeof next, "%s/%s", sub, e->d_name);
    hit = n > 0 && (size_t)n < sizeof next &&
          nested_bundle(dir, next, depth - 1, found, cap);
  }
  if (d)
    closedir(d);
  return hit;
}

/* The index is not evidence, but it chooses what is read: it must not
 * leave out a bundle its directory holds. Every subdirectory of dir that
 * holds one is among runs with "bundle" not false (helper-26 hid a signed
 * HOLD bundle from qualify --require-signature by marking it "bundle":
 * false, or by dropping its entry). 0, or 64 with one line. */
static int index_covers(const char *cmd, const char *path, const char *dir,
                        const cJSON *runs, FILE *errs) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(errs, "leaselua: %s: cannot list %s: %s\n", cmd, dir,
            strerror(errno));
    return 64;
  }
  int rc = 0;
  for (struct dirent *e; !rc && (e = readdir(d));) {
    /* a hidden name is no hiding place, nor a directory a level or more
     * down (helper-32) */
    char found[PATH_MAX];
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
        !nested_bundle(dir, e->d_name, 3, found, sizeof found))
      continue;
    const cJSON *r;
    int listed = 0;
    cJSON_ArrayForEach(r, runs) {
      listed |= ll_streq(ll_json_str(r, "dir"), found) &&
                !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r, "bundle"));
    }
    if (!listed) {
      fprintf(errs,
              "leaselua: %s: %s does not list %s/%s as a bundle, and it holds "
              "one: an index may not leave evidence out (list it, or move it "
              "away)\n",
              cmd, path, dir, found);
      rc = 64;
    }
  }
  closedir(d);
  return rc;
}

int ll_bundle_expand_index(const char *cmd, const char *dir, char ***list,
                           int *n, int *cap, FILE *errs) {
  char path[PATH_MAX];
  int len = snprintf(path, sizeof path, "%s/index.json", dir);
  if (len < 0 || (size_t)len >= sizeof path || access(path, F_OK) != 0)
    return 0;
  ll_buf buf = {0};
  ll_error e = {0};
  if (ll_input_read(path, "index", "DIR", 16u * 1024u * 1024u, &buf, &e) !=
      LL_OK) {
    fprintf(errs, "leaselua: %s: %s\n", cmd, e.message);
    free(buf.p);
    return 64;
  }
  cJSON *j = cJSON_ParseWithLength(buf.p, buf.n);
  free(buf.p);
  const char *format = ll_json_str(j, "format");
  const cJSON *runs = cJSON_GetObjectItemCaseSensitive(j, "runs");
  if (!format || strcmp(format, "leaselua-index-v1") != 0 ||
      !cJSON_IsArray(runs)) {
    fprintf(errs,
            "leaselua: %s: %s is not a leaselua-index-v1 index (format and "
            "runs)\n",
            cmd, path);
    cJSON_Delete(j);
    return 64;
  }
  int rc = 1, i = 0, before = *n;
  const cJSON *r;
  cJSON_ArrayForEach(r, runs) {
    const char *d = ll_json_str(r, "dir");
    if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r, "bundle"))) {
      /* refused before it made a bundle: no evidence to read, said so */
      fprintf(errs, "leaselua: %s: %s: runs[%d] (%s) made no bundle: skipped\n",
              cmd, path, i, d ? d : "?");
      i++;
      continue;
    }
    if (!relative_ok(d)) {
      fprintf(errs,
              "leaselua: %s: %s: runs[%d].dir must be a relative path inside "
              "the index's directory\n",
              cmd, path, i);
      rc = 64;
      break;
    }
    if (*n == *cap) {
      int ncap = *cap ? *cap * 2 : 16;
      char **grown = realloc(*list, (size_t)ncap * sizeof *grown);
      if (!grown) {
        rc = 70;
        break;
      }
      *list = grown;
      *cap = ncap;
    }
    size_t need = strlen(dir) + strlen(d) + 2;
    char *full = malloc(need);
    if (!full) {
      rc = 70;
      break;
    }
    snprintf(full, need, "%s/%s", dir, d);
    (*list)[(*n)++] = full;
    i++;
  }
  if (rc == 1 && index_covers(cmd, path, dir, runs, errs))
    rc = 64; /* after each entry's own check: a bad dir is named first */
  if (rc == 1 && *n == before) {
    fprintf(errs, "leaselua: %s: %s lists no runs with a bundle\n", cmd, path);
    rc = 64;
  }
  cJSON_Delete(j);
  return rc;
}

int ll_bundle_cli_parse(ll_bundle_cli *c, int argc, char **argv,
                        const char *usage, FILE *out, FILE *errs,
                        ll_bundle_cli_extra extra, void *ctx) {
  int bad = 0;
  c->nargs = 0;
  c->args = calloc((size_t)argc + 1, sizeof *c->args);
  if (!c->args)
    return 70;
  for (int i = 0; !bad && i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0) {
      fputs(usage, out);
      return 0;
    }
    if (ll_bundle_cli_opt(c, argc, argv, &i, &bad) ||
        (extra && extra(ctx, argc, argv, &i, &bad)))
      continue;
    if (a[0] == '-')
      bad = 1;
    else
      c->args[c->nargs++] = argv[i];
  }
  if (bad || c->nargs == 0) {
    fputs(usage, errs);
    return 64;
  }
  return -1;
}

void ll_bundle_cli_free(ll_bundle_cli *c) {
  free(c->args);
  c->args = NULL;
  c->nargs = 0;
}

int ll_bundle_cli_opt(ll_bundle_cli *c, int argc, char **argv, int *i,
                      int *bad) {
  const char *a = argv[*i];
  const char *v = *i + 1 < argc && argv[*i + 1][0] ? argv[*i + 1] : NULL;
  if (strcmp(a, "--export-only") == 0) {
    *bad = *bad || c->mode != LL_VERIFY_FULL;
    c->mode = LL_VERIFY_EXPORT_ONLY;
    return 1;
  }
  if (strcmp(a, "--html") == 0) {
    *bad = *bad || c->html || !v;
    c->html = v;
  } else if (strcmp(a, "--jobs") == 0) {
    char *end = NULL;
    long j = v ? strtol(v, &end, 10) : 0;
    *bad = *bad || c->jobs || !v || *end || j < 1 || j > LL_BUNDLE_JOBS_MAX;
    c->jobs = (int)j;
  } else {
    return 0;
  }
  if (v)
    ++*i;
  return 1;
}
