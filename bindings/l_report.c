/* `leaselua report DIR [--out OUTDIR]`: the bundle passes verify's
 * export-only check and its signature's (verified_rows), the rows that
 * verified go into the sandbox, two strings come back, and only C writes
 * them, under two fixed names, into DIR or OUTDIR (then DIR is only
 * read). The protected ledger is never opened, so the report cannot see
 * a lease ID. */
#include "l_report.h"

#include "identity.h"

#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corroborate.h"
#include "corroborate_query.h"
#include "l_bundle.h"
#include "l_common.h"
#include "l_json.h"
#include "l_sandbox.h"
#include "ledger.h"
#include "output.h"
#include "sign.h"
#include "verify.h"

extern const char ll_known_deviations_json[];

/* The only files `report` may write, relative to DIR or OUTDIR. */
static const char *const report_names[2] = {"report.html", "summary.md"};

typedef struct {
  const cJSON *rows;
  const cJSON *deviations;
  const char *dir;
  const char *signer;              /* the signature line (signer_line) */
  const char *identity;            /* identity.h's statement */
  const cJSON *corroboration;      /* DIR/corroboration.json, or NULL */
  const char *corroboration_query; /* --print-query's text, or NULL */
  const char *compare_html;        /* --compare OTHER's section, or NULL */
} render_args;

/* Runs under lua_pcall, so a Lua error never skips the caller's cleanup:
 * the cJSON trees stay owned by ll_report_main. Returns html, markdown. */
static int render(lua_State *L) {
  const render_args *a = lua_touserdata(L, 1);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "lib.report");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "render");
  ll_lua_push_json(L, a->rows);
  lua_createtable(L, 0, 3);
  lua_pushstring(L, a->dir);
  lua_setfield(L, -2, "dir");
  ll_lua_push_json(L, a->deviations);
  lua_setfield(L, -2, "known_deviations");
  lua_pushstring(L, a->signer);
  lua_setfield(L, -2, "signer");
  lua_pushstring(L, a->identity);
  lua_setfield(L, -2, "identity");
  if (a->corroboration) {
    ll_lua_push_json(L, a->corroboration);
    lua_setfield(L, -2, "corroboration");
  }
  if (a->corroboration_query) {
    lua_pushstring(L, a->corroboration_query);
    lua_setfield(L, -2, "corroboration_query");
  }
  if (a->compare_html) {
    lua_pushstring(L, a->compare_html);
    lua_setfield(L, -2, "compare_html");
  }
  lua_call(L, 2, 2);
  if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
    return ll_lua_raise(L, LL_E_INTERNAL,
                        "lib.report.render returned no html and markdown "
                        "strings");
  return 2;
}

/* Writes text to dir/name through a temporary file in dir, fsync'd, then
 * renamed over name: a reader sees the old file or the whole new one. */
static int write_atomic(const char *dir, const char *name, const char *text,
                        size_t len, FILE *errs) {
  char path[PATH_MAX];
  int n1 = snprintf(path, sizeof path, "%s/%s", dir, name);
  if (n1 < 0 || (size_t)n1 >= sizeof path) {
    fprintf(errs, "leaselua: report: path too long: %s\n", dir);
    return 64;
  }
  if (ll_write_replace(path, NULL, text, len) != 0) {
    fprintf(errs, "leaselua: report: cannot write %s: %s\n", path,
            strerror(errno));
    return 70;
  }
  return 0;
}

/* A report from before the chain broke would still say "hash chain
 * checked" next to rows that no longer check: it goes. */
static void remove_stale(const char *dir, FILE *errs) {
  for (int i = 0; i < 2; i++) {
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/%s", dir, report_names[i]);
    if (n > 0 && (size_t)n < sizeof path && unlink(path) == 0)
      fprintf(errs, "leaselua: report: removed the earlier %s\n", path);
  }
}

/* OUTDIR must be a directory other than DIR, or not exist yet (it is
 * made later, when there is a report to write). 0 when usable, else 64. */
static int check_outdir(const char *outdir, const struct stat *dir_sb,
                        FILE *errs) {
  struct stat sb;
  if (!*outdir) {
    fprintf(errs, "leaselua: report: --out needs a directory\n");
    return 64;
  }
  if (stat(outdir, &sb) != 0) {
    if (errno == ENOENT)
      return 0;
    fprintf(errs, "leaselua: report: cannot stat --out %s: %s\n", outdir,
            strerror(errno));
    return 64;
  }
  if (!S_ISDIR(sb.st_mode)) {
    fprintf(errs, "leaselua: report: --out %s exists and is not a directory\n",
            outdir);
    return 64;
  }
  if (sb.st_dev == dir_sb->st_dev && sb.st_ino == dir_sb->st_ino) {
    fprintf(errs,
            "leaselua: report: --out %s is the evidence directory itself\n",
            outdir);
    return 64;
  }
  return 0;
}

/* Makes OUTDIR (0700) when it is missing (made meanwhile: checked
 * again): 0, or 64. */
static int make_outdir(const char *outdir, const struct stat *dir_sb,
                       FILE *errs) {
  if (mkdir(outdir, 0700) == 0)
    return 0;
  if (errno == EEXIST)
    return check_outdir(outdir, dir_sb, errs);
  fprintf(errs, "leaselua: report: cannot create --out %s: %s\n", outdir,
          strerror(errno));
  return 64;
}

/* What the report says of the signature: "unsigned", the signing key
 * (whose owner only an allowed-signers file names: leaselua verify), or
 * why the signature does not hold: checked against the ledger's signing
 * declaration as verify checks it (sign.h), so a removed signature is
 * said to be removed. Without an allowed-signers file. 0 when it holds
 * or there is none; else the report is refused with verify's exit code:
 * 2 when it does not hold, 64 when it cannot be checked, 70 out of
 * memory. */
static int signer_line(const char *dir, const cJSON *rows,
                       const ll_verify_report *vr, char *buf, size_t cap) {
  char declared[LL_SIGN_FP_MAX];
  int ended = 0;
  long row = 0;
  if (ll_sign_declared(rows, declared, &ended, &row) < 0) {
    snprintf(buf, cap,
             "BAD SIGNATURE: row %ld is a signing note the host did not "
             "write (leaselua verify %.300s)",
             row, dir);
    return 2;
  }
  ll_sign_report *sr = malloc(sizeof *sr);
  ll_error err = {0};
  if (!sr) {
    snprintf(buf, cap, "signature not checked (out of memory)");
    return 70;
  }
  /* the export and corroboration.json drawn are the bytes signed */
  ll_status st =
      ll_bundle_check_declared(dir, NULL, declared, ended, vr->export_sha256,
                               vr->corroboration_sha256, sr, &err);
  if (st == LL_OK && sr->state == LL_SIG_UNSIGNED) {
    snprintf(buf, cap, "unsigned%s%s%s", sr->note[0] ? " (" : "", sr->note,
             sr->note[0] ? ")" : "");
  } else if (st == LL_OK) {
    int n = snprintf(buf, cap,
                     "signed with %s key %s (%ld files match SHA256SUMS; "
                     "leaselua verify --allowed-signers names the signer)",
                     sr->key.type, sr->key.fingerprint, sr->listed);
    for (int i = 0; i < sr->n_history && n > 0 && (size_t)n < cap; i++)
      n += snprintf(buf + n, cap - (size_t)n, "; earlier: %s by %s key %s",
                    sr->history[i].dir, sr->history[i].key.type,
                    sr->history[i].key.fingerprint);
  } else if (st == LL_E_TAMPER) {
    snprintf(buf, cap, "BAD SIGNATURE: %.600s", sr->problem);
  } else {
    snprintf(buf, cap, "signature not checked: %.400s", err.message);
  }
  free(sr);
  /* a signature that cannot be checked (no ssh-keygen) is refused as
   * verify refuses it (helper-29: drawn with "signature not checked") */
  return st == LL_OK ? 0 : st == LL_E_TAMPER ? 2 : st == LL_E_NOMEM ? 70 : 64;
}

/* The --compare section: both bundles verified (l_bundle.c) and diffed
 * by lib.compare, left as a string on L's stack. NULL and a line on errs
 * when that failed (*rc 64 or 70). */
static const char *compare_section(lua_State *L, const char *dir,
                                   const char *other, FILE *errs, int *rc) {
  char *dirs[2] = {(char *)dir, (char *)other};
  ll_bundle_opts o = {
      .mode = LL_VERIFY_FULL, .allowed = NULL, .steps = 1, .jobs = 1};
  cJSON *sums = NULL;
  *rc = ll_bundle_summaries("report", dirs, 2, &o, &sums, errs);
  const cJSON *args[2] = {sums ? sums->child : NULL,
                          sums && sums->child ? sums->child->next : NULL};
  if (*rc == 0)
    *rc = ll_bundle_call(L, "report", "lib.compare", "report_section", args, 2,
                         1, errs);
  cJSON_Delete(sums);
  return *rc == 0 ? lua_tostring(L, -1) : NULL;
}

/* verify --export-only's check of dir, then the signature's: 0 with *rows
 * (the caller's) the rows that verified, *corr (the caller's)
 * corroboration.json as verify checked it or NULL, and signer[cap] the
 * report's line
 * on the signature; 2 when the bundle does not verify or its signature
 * does not hold; 64 when a file is missing or the signature cannot be
 * checked (no ssh-keygen); 70 when nothing could be concluded (out of
 * memory). A line on errs says which. */
static int verified_rows(const char *dir, cJSON **rows, cJSON **corr,
                         char *signer, size_t cap, FILE *errs) {
  ll_error err = {0};
  ll_verify_report *vr = malloc(sizeof *vr);
  ll_status st = vr ? ll_verify_dir_checked(dir, LL_VERIFY_EXPORT_ONLY, vr,
                                            rows, corr, &err)
                    : LL_E_NOMEM;
  int rc = 0;
  if (st == LL_E_NOMEM || st == LL_E_INTERNAL) {
    fprintf(errs, "leaselua: report: %s: %s\n", dir,
            st == LL_E_NOMEM ? "out of memory verifying it" : err.message);
    rc = 70;
  } else if (st == LL_E_IO && !vr->problem[0]) {
    fprintf(errs, "leaselua: report: %s: %s\n", dir, err.message);
    rc = 64;
  } else if (st != LL_OK) {
    /* every other failure of the check is a problem of the bundle, as
     * verify counts it (a re-derivation refusing a row, too) */
    fprintf(errs,
            "leaselua: report refused: %s does not verify: %s (leaselua "
            "verify --export-only %s names it)\n",
            dir, vr->problem[0] ? vr->problem : err.message, dir);
    rc = 2;
  }
  if (rc == 0 && (rc = signer_line(dir, *rows, vr, signer, cap)) != 0)
    fprintf(errs, "leaselua: report refused: %s: %s\n", dir, signer);
  free(vr);
  if (rc != 0) {
    cJSON_Delete(*rows);
    cJSON_Delete(*corr);
    *rows = *corr = NULL;
  }
  return rc;
}

int ll_report_main(const char *dir, const char *outdir, FILE *out, FILE *errs) {
  return ll_report_main_with(dir, outdir, NULL, out, errs);
}

int ll_report_main_with(const char *dir, const char *outdir,
                        const char *compare, FILE *out, FILE *errs) {
  struct stat sb;
  if (!dir || !*dir || stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    fprintf(errs, "leaselua: report: %s is not a directory\n",
            dir ? dir : "(null)");
    return 64;
  }
  if (outdir && check_outdir(outdir, &sb, errs) != 0)
    return 64;
  if (!outdir && ll_bundle_is_signed(dir)) {
    fprintf(errs,
            "leaselua: report: %s is a signed bundle: a report written into "
            "it would be a file its SHA256SUMS does not cover; pass --out "
            "OUTDIR\n",
            dir);
    return 64;
  }
  if (compare && ll_bundle_arg_check("report --compare", compare, errs))
    return 64;
  const char *target = outdir ? outdir : dir;
  char ledger[PATH_MAX];
  int n = snprintf(ledger, sizeof ledger, "%s/export/ledger.jsonl", dir);
  if (n < 0 || (size_t)n >= sizeof ledger) {
    fprintf(errs, "leaselua: report: path too long: %s\n", dir);
    return 64;
  }
  if (access(ledger, R_OK) != 0) {
    fprintf(errs,
            "leaselua: report: %s has no readable export/ledger.jsonl: not an "
            "evidence directory\n",
            dir);
    return 64;
  }
  int rc = 70;
  cJSON *rows = NULL, *deviations = NULL, *corroboration = NULL;
  char *query = NULL;
  lua_State *L = NULL;
  /* The rows shown are the rows verify proves from the export alone
   * (chain, canonical form, no secret, every classification and decision
   * re-derived, the files beside the ledgers, the signature): a banner is
   * never drawn from a bundle `verify --export-only` does not pass. */
  char signer[1024];
  if ((rc = verified_rows(dir, &rows, &corroboration, signer, sizeof signer,
                          errs)) != 0) {
    if (rc != 64)
      remove_stale(target, errs);
    goto cleanup;
  }
  rc = 70;
  deviations = cJSON_Parse(ll_known_deviations_json);
  /* the query that fetches the logs, from the rows that verified: no file
   * of DIR is read again after the check (a file swapped in between would
   * be drawn unchecked) */
  ll_buf qbuf = {0};
  ll_error cerr = {0};
  if (ll_corr_query_rows(rows, dir, LL_CORR_MARGIN_DEFAULT, &qbuf, &cerr) ==
      LL_OK)
    query = qbuf.p;
  else
    free(qbuf.p);
  if (!(L = luaL_newstate())) {
    fprintf(errs, "leaselua: out of memory\n");
    goto cleanup;
  }
  ll_sandbox_open(L);
  const char *compare_html = NULL;
  if (compare && !(compare_html = compare_section(L, dir, compare, errs, &rc)))
    goto cleanup;
  rc = 70;
  /* the same sentence verify prints (identity.h), from the manifest row */
  char identity[400];
  ll_identity_statement(rows ? rows->child : NULL, identity, sizeof identity);
  render_args args = {.rows = rows,
                      .deviations = deviations,
                      .dir = dir,
                      .signer = signer,
                      .identity = identity,
                      .corroboration = corroboration,
                      .corroboration_query = query,
                      .compare_html = compare_html};
  lua_pushcfunction(L, ll_lua_traceback);
  lua_pushcfunction(L, render);
  lua_pushlightuserdata(L, &args);
  if (lua_pcall(L, 1, 2, -3) != LUA_OK) {
    fprintf(errs, "leaselua: report: %s\n",
            lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                           : "(error object)");
    goto cleanup;
  }
  for (int i = 0; i < 2; i++) {
    size_t len;
    const char *text = lua_tolstring(L, -2 + i, &len);
    char what[128];
    /* The rows are sanitized already; this is the last line of defence
     * against a SAS signature reaching a file a reviewer will forward. */
    if (ll_secret_scan(text, len, NULL, 0, NULL, 0, what, sizeof what) > 0) {
      fprintf(errs,
              "leaselua: report: %s would contain a secret (%s): not "
              "written\n",
              report_names[i], what);
      goto cleanup;
    }
  }
  if (outdir && (rc = make_outdir(outdir, &sb, errs)) != 0)
    goto cleanup;
  for (int i = 0; i < 2; i++) {
    size_t len;
    const char *text = lua_tolstring(L, -2 + i, &len);
    if ((rc = write_atomic(target, report_names[i], text, len, errs)) != 0)
      goto cleanup;
    fprintf(out, "report: %s/%s\n", target, report_names[i]);
  }
  rc = 0;
cleanup:
  if (L)
    lua_close(L);
  cJSON_Delete(deviations);
  cJSON_Delete(corroboration);
  free(query);
  cJSON_Delete(rows);
  return rc;
}
