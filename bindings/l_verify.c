/* `leaselua verify`: reads its arguments, runs the core's check
 * (ll_verify_dir_mode), prints the verdict (a line, or with --json one
 * JSON object) and maps it to an exit code. The check itself returns a
 * report and prints nothing. */
#include "l_verify.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "l_bundle.h"
#include "l_verdict.h"
#include "sign.h"
#include "verify.h"

static const char usage[] =
    "usage: leaselua verify [--export-only] [--json] [--allowed-signers "
    "FILE]\n"
    "                       [--junit FILE] DIR\n"
    "  Checks the evidence in DIR: both hash chains; that the protected "
    "ledger is\n"
    "  the run's own (a regular file holding the real lease IDs) and the "
    "export\n"
    "  exactly its sanitized form; no secret in the export; the endpoint "
    "kind\n"
    "  against the account host; every class, finding and decision "
    "re-derived\n"
    "  from the export. It reports consistency, not the run's decision.\n"
    "  --export-only  check the export alone: the protected ledger is not "
    "checked\n"
    "  --json         print the verdict as one JSON object on stdout (the "
    "same\n"
    "                 exit codes; on 64 and 70 stdout stays empty)\n"
    "  --allowed-signers FILE\n"
    "                 the bundle must be signed (SHA256SUMS.sig) by a key "
    "of FILE\n"
    "                 (ssh-keygen's allowed-signers format); its principal "
    "is named\n"
    "  --junit FILE   also write the verdict as JUnit XML (schemas/junit.xsd): "
    "each\n"
    "                 step a test case, an unexplained discrepancy a failure, "
    "a WAIT\n"
    "                 skipped; an inconsistent bundle one failed case, "
    "verify\n"
    "  A signed bundle's SHA256SUMS must match every file, and cover every "
    "file.\n"
    "exit: 0 consistent (and, when signed, the signature good), 2 "
    "inconsistent or\n"
    "      a bad signature, 64 usage or a missing file (ssh-keygen missing), "
    "70\n"
    "      internal error (out of memory)\n";

/* The signature part of the verdict: state, signer, key, counts, the
 * file lists and the earlier signatures. NULL when memory ran out. */
static cJSON *signature_json(const ll_sign_report *sr) {
  cJSON *o = cJSON_CreateObject();
  int ok = o && ll_verdict_signer(o, sr);
  ok = ok && cJSON_AddNumberToObject(o, "files_listed", (double)sr->listed);
  ok = ok && cJSON_AddNumberToObject(o, "files_matched", (double)sr->matched);
  cJSON *mis = ok ? cJSON_AddArrayToObject(o, "mismatched") : NULL;
  cJSON *unc = mis ? cJSON_AddArrayToObject(o, "uncovered") : NULL;
  cJSON *hist = unc ? cJSON_AddArrayToObject(o, "history") : NULL;
  ok = hist != NULL;
  for (long i = 0; ok && i < sr->n_mismatched && i < LL_SIGN_LIST_MAX; i++)
    ok = cJSON_AddItemToArray(mis, cJSON_CreateString(sr->mismatched[i]));
  for (long i = 0; ok && i < sr->n_uncovered && i < LL_SIGN_LIST_MAX; i++)
    ok = cJSON_AddItemToArray(unc, cJSON_CreateString(sr->uncovered[i]));
  ok = ok && cJSON_AddNumberToObject(
                 o, "files_omitted",
                 (double)((sr->n_mismatched > LL_SIGN_LIST_MAX
                               ? sr->n_mismatched - LL_SIGN_LIST_MAX
                               : 0) +
                          (sr->n_uncovered > LL_SIGN_LIST_MAX
                               ? sr->n_uncovered - LL_SIGN_LIST_MAX
                               : 0)));
  for (int i = 0; ok && i < sr->n_history; i++) {
    const ll_sign_past *p = &sr->history[i];
    cJSON *h = cJSON_CreateObject();
    ok = cJSON_AddItemToArray(hist, h);
    ok = ok && cJSON_AddStringToObject(h, "dir", p->dir);
    ok = ok && cJSON_AddStringToObject(h, "state", ll_sig_state_name(p->state));
    ok = ok && cJSON_AddItemToObject(h, "principal",
                                     ll_verdict_str_or_null(p->principal));
    ok = ok && cJSON_AddItemToObject(
                   h, "key", ll_verdict_str_or_null(p->key.fingerprint));
  }
  ok = ok &&
       cJSON_AddItemToObject(o, "problem", ll_verdict_str_or_null(sr->problem));
  ok = ok && cJSON_AddItemToObject(o, "note", ll_verdict_str_or_null(sr->note));
  if (!ok) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

/* The verdict as one JSON object on out, built by cJSON: what the text
 * line says, and on inconsistency the problems it names (the ledger's,
 * then the signature's). Returns 0 when printed, -1 when memory ran out
 * (nothing printed). */
static int print_json(const ll_verify_report *rep, const char *what,
                      const ll_sign_report *sr, FILE *out) {
  int consistent = !what && !sr->problem[0];
  cJSON *o = cJSON_CreateObject();
  int ok = o && cJSON_AddBoolToObject(o, "consistent", consistent);
  ok = ok && ll_verdict_outcome(o, rep);
  ok = ok &&
       cJSON_AddNumberToObject(o, "reasons_omitted",
                               (double)(rep->reasons_total - rep->n_reasons));
  /* a decision row that a request follows, which does not stand */
  ok = ok && cJSON_AddItemToObject(
                 o, "decision_followed_by",
                 rep->decision_followed_by
                     ? cJSON_CreateNumber((double)rep->decision_followed_by)
                     : cJSON_CreateNull());
  ok = ok && cJSON_AddNumberToObject(o, "export_rows", (double)rep->rows);
  ok = ok && cJSON_AddNumberToObject(o, "lease_bindings",
                                     (double)rep->lease_bindings);
  ok = ok && ll_verdict_scope(o, rep);
  ok =
      ok && cJSON_AddItemToObject(o, "shared_identity",
                                  rep->shared_identity < 0
                                      ? cJSON_CreateNull()
                                      : cJSON_CreateBool(rep->shared_identity));
  cJSON *sig = ok ? signature_json(sr) : NULL;
  ok = sig && cJSON_AddItemToObject(o, "signature", sig);
  if (!ok)
    cJSON_Delete(sig);
  cJSON *problems = ok ? cJSON_AddArrayToObject(o, "problems") : NULL;
  ok = problems != NULL;
  if (ok && what) {
    cJSON *p = cJSON_CreateObject();
    ok = cJSON_AddItemToArray(problems, p); /* false when p is NULL */
    ok = ok && cJSON_AddItemToObject(
                   p, "row",
                   rep->bad_row > 0 ? cJSON_CreateNumber((double)rep->bad_row)
                                    : cJSON_CreateNull());
    ok = ok && cJSON_AddStringToObject(p, "problem", what);
  }
  if (ok && sr->problem[0]) {
    char text[900];
    snprintf(text, sizeof text, "signature: %s", sr->problem);
    cJSON *p = cJSON_CreateObject();
    ok = cJSON_AddItemToArray(problems, p);
    ok = ok && cJSON_AddItemToObject(p, "row", cJSON_CreateNull());
    ok = ok && cJSON_AddStringToObject(p, "problem", text);
  }
  char *text = ok ? cJSON_PrintUnformatted(o) : NULL;
  cJSON_Delete(o);
  if (!text)
    return -1;
  fprintf(out, "%s\n", text);
  free(text);
  return 0;
}

/* One line for the signature, and one per earlier signature. */
static void print_signature(const ll_sign_report *sr, FILE *out) {
  if (sr->state == LL_SIG_UNSIGNED) {
    fprintf(out, "verify: signature: unsigned%s%s%s\n", sr->note[0] ? " (" : "",
            sr->note, sr->note[0] ? ")" : "");
    return;
  }
  if (sr->state == LL_SIG_GOOD)
    fprintf(out,
            "verify: signature: good: signed by %s (%s key %s), %ld files "
            "match " LL_SIGN_SUMS "\n",
            sr->principal, sr->key.type, sr->key.fingerprint, sr->listed);
  else
    fprintf(out,
            "verify: signature: unchecked: a valid signature by %s key %s, "
            "%ld files match " LL_SIGN_SUMS
            "; pass --allowed-signers FILE to name the signer\n",
            sr->key.type, sr->key.fingerprint, sr->listed);
  for (int i = 0; i < sr->n_history; i++) {
    const ll_sign_past *p = &sr->history[i];
    fprintf(out, "verify: earlier signature %s: %s: %s%s%s key %s\n", p->dir,
            ll_sig_state_name(p->state), p->principal,
            p->principal[0] ? ", " : "", p->key.type, p->key.fingerprint);
  }
}

static void print_files(const char *what, char list[][LL_SIGN_NAME_MAX], long n,
                        FILE *errs) {
  for (long i = 0; i < n && i < LL_SIGN_LIST_MAX; i++)
    fprintf(errs, "leaselua: verify:   %s: %s\n", what, list[i]);
  if (n > LL_SIGN_LIST_MAX)
    fprintf(errs, "leaselua: verify:   (%ld more %s)\n", n - LL_SIGN_LIST_MAX,
            what);
}

/* The JUnit file of one bundle: its summary (l_bundle.c, the same check
 * again, with its steps) through lib.junit.verify. 0, 64 or 70. */
static int write_junit(const char *dir, ll_verify_mode mode,
                       const char *allowed, const char *path, FILE *errs) {
  char *dirs[1] = {(char *)dir};
  ll_bundle_opts o = {.mode = mode, .allowed = allowed, .steps = 1, .jobs = 1};
  cJSON *sums = NULL;
  lua_State *L = NULL;
  int rc = ll_bundle_summaries("verify", dirs, 1, &o, &sums, errs);
  if (rc == 0)
    rc = (L = ll_bundle_state(errs)) ? 0 : 70;
  const cJSON *args[1] = {sums ? sums->child : NULL};
  if (rc == 0)
    rc = ll_bundle_call(L, "verify", "lib.junit", "verify", args, 1, 1, errs);
  size_t len = 0;
  const char *xml = rc == 0 && lua_type(L, -1) == LUA_TSTRING
                        ? lua_tolstring(L, -1, &len)
                        : NULL;
  if (rc == 0)
    rc = xml ? ll_bundle_emit("verify", path, xml, len, NULL, errs) : 70;
  if (L)
    lua_close(L);
  cJSON_Delete(sums);
  return rc;
}

int ll_verify_main(int argc, char **argv, FILE *out, FILE *errs) {
  const char *dir = NULL, *allowed = NULL, *junit = NULL;
  ll_verify_mode mode = LL_VERIFY_FULL;
  int json = 0;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--export-only") == 0 && mode == LL_VERIFY_FULL) {
      mode = LL_VERIFY_EXPORT_ONLY;
    } else if (strcmp(argv[i], "--json") == 0 && !json) {
      json = 1;
    } else if (strcmp(argv[i], "--allowed-signers") == 0 && !allowed &&
               i + 1 < argc && argv[i + 1][0]) {
      allowed = argv[++i];
    } else if (strncmp(argv[i], "--allowed-signers=", 18) == 0 && !allowed &&
               argv[i][18]) {
      allowed = argv[i] + 18;
    } else if (strcmp(argv[i], "--junit") == 0 && !junit && i + 1 < argc &&
               argv[i + 1][0]) {
      junit = argv[++i];
    } else if (strncmp(argv[i], "--junit=", 8) == 0 && !junit && argv[i][8]) {
      junit = argv[i] + 8;
    } else if (strcmp(argv[i], "--help") == 0) {
      fputs(usage, out);
      return 0;
    } else if (argv[i][0] == '-' || dir) {
      fputs(usage, errs);
      return 64;
    } else {
      dir = argv[i];
    }
  }
  if (!dir) {
    fputs(usage, errs);
    return 64;
  }
  ll_verify_report rep;
  ll_error err = {0};
  ll_status st = ll_verify_dir_mode(dir, mode, &rep, &err);
  if (st == LL_E_IO) {
    fprintf(errs, "leaselua: verify: %s\n", err.message);
    return 64;
  }
  if (st == LL_E_NOMEM) {
    fprintf(errs, "leaselua: verify: %s: nothing was concluded\n", err.message);
    return 70;
  }
  ll_sign_report sr;
  ll_error serr = {0};
  /* the signature against the ledger's declaration too (sign.h) */
  ll_status ss = ll_bundle_check_declared(
      dir, allowed, rep.sign_declared, rep.decision_row > 0, rep.export_sha256,
      rep.corroboration_sha256, &sr, &serr);
  if (ss == LL_E_NOMEM) {
    fprintf(errs, "leaselua: verify: out of memory checking the signature: "
                  "nothing was concluded\n");
    return 70;
  }
  if (ss != LL_OK && ss != LL_E_TAMPER) {
    fprintf(errs, "leaselua: verify: %s\n", serr.message);
    return 64;
  }
  const char *what = NULL;
  if (st != LL_OK) {
    what = rep.problem[0] ? rep.problem : err.message;
    if (rep.bad_row > 0)
      fprintf(errs, "leaselua: verify: INCONSISTENT at row %ld: %s\n",
              rep.bad_row, what);
    else
      fprintf(errs, "leaselua: verify: INCONSISTENT: %s\n", what);
  }
  if (sr.problem[0]) {
    fprintf(errs, "leaselua: verify: BAD SIGNATURE: %s\n", sr.problem);
    print_files("differs or is gone", sr.mismatched, sr.n_mismatched, errs);
    print_files("not covered", sr.uncovered, sr.n_uncovered, errs);
  }
  int rc = what || sr.problem[0] ? 2 : 0;
  if (junit) {
    int jr = write_junit(dir, mode, allowed, junit, errs);
    if (jr)
      return jr;
  }
  if (json) {
    if (print_json(&rep, what, &sr, out) == 0)
      return rc;
    fputs("leaselua: verify: out of memory printing the verdict\n", errs);
    return 70;
  }
  if (rc)
    return rc;
  char kind[96];
  snprintf(kind, sizeof kind, "%s%s%s%s%s", rep.endpoint_kind,
           rep.host_declared ? " (host declared Azure by the operator)" : "",
           rep.fixture_label[0] ? " (fixture " : "", rep.fixture_label,
           rep.fixture_label[0] ? ")" : "");
  char prot[128];
  if (rep.protected_read)
    snprintf(prot, sizeof prot,
             "export matches the protected ledger (%ld lease bindings)",
             rep.lease_bindings);
  else
    snprintf(prot, sizeof prot,
             "export only: the protected ledger was not checked");
  char dec[160];
  if (rep.decision[0])
    snprintf(dec, sizeof dec, "decision %s", rep.decision);
  else if (rep.decision_followed_by)
    snprintf(dec, sizeof dec,
             "no decision (the decision of row %ld does not stand: request "
             "row %ld follows it)",
             rep.decision_row, rep.decision_followed_by);
  else
    snprintf(dec, sizeof dec, "decision (none recorded)");
  fprintf(out,
          "verify: consistent: %ld export rows, %s, endpoint kind %s, %s, "
          "window %s\n",
          rep.rows, prot, kind, dec, rep.window[0] ? rep.window : "-");
  print_signature(&sr, out);
  if (rep.identity[0])
    fprintf(out, "verify: identities: %s\n", rep.identity);
  return 0;
}
