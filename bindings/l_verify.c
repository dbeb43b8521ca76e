/* `leaselua verify`: reads its arguments, runs the core's check
 * (ll_verify_dir_mode), prints the verdict (a line, or with --json one
 * JSON object) and maps it to an exit code. The check itself returns a
 * report and prints nothing. */
#include "l_verify.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "verify.h"

static const char usage[] =
    "usage: leaselua verify [--export-only] [--json] DIR\n"
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
    "exit: 0 consistent, 2 inconsistent, 64 usage or a missing file, 70 "
    "internal\n"
    "      error (out of memory)\n";

/* A string, or null when the check did not reach it. */
static cJSON *str_or_null(const char *s) {
  return s && *s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

/* The verdict as one JSON object on out, built by cJSON: what the text
 * line says, and on inconsistency the problem it names. Returns 0 when
 * printed, -1 when memory ran out (nothing printed). */
static int print_json(const ll_verify_report *rep, int consistent,
                      const char *what, FILE *out) {
  cJSON *o = cJSON_CreateObject();
  int ok = o && cJSON_AddBoolToObject(o, "consistent", consistent);
  ok = ok && cJSON_AddItemToObject(o, "decision", str_or_null(rep->decision));
  ok = ok && cJSON_AddItemToObject(o, "window", str_or_null(rep->window));
  cJSON *reasons = ok ? cJSON_AddArrayToObject(o, "reasons") : NULL;
  ok = reasons != NULL;
  for (int i = 0; ok && i < rep->n_reasons; i++)
    ok = cJSON_AddItemToArray(reasons, cJSON_CreateString(rep->reasons[i]));
  ok = ok &&
       cJSON_AddNumberToObject(o, "reasons_omitted",
                               (double)(rep->reasons_total - rep->n_reasons));
  ok = ok && cJSON_AddNumberToObject(o, "export_rows", (double)rep->rows);
  ok = ok && cJSON_AddNumberToObject(o, "lease_bindings",
                                     (double)rep->lease_bindings);
  ok = ok && cJSON_AddBoolToObject(o, "protected_checked", rep->protected_read);
  ok = ok && cJSON_AddBoolToObject(o, "export_only", rep->export_only);
  ok = ok && cJSON_AddItemToObject(o, "endpoint_kind",
                                   str_or_null(rep->endpoint_kind));
  ok = ok && cJSON_AddItemToObject(o, "fixture_label",
                                   str_or_null(rep->fixture_label));
  ok = ok && cJSON_AddBoolToObject(o, "host_declared", rep->host_declared);
  ok = ok && cJSON_AddItemToObject(o, "identity", str_or_null(rep->identity));
  ok =
      ok && cJSON_AddItemToObject(o, "shared_identity",
                                  rep->shared_identity < 0
                                      ? cJSON_CreateNull()
                                      : cJSON_CreateBool(rep->shared_identity));
  cJSON *problems = ok ? cJSON_AddArrayToObject(o, "problems") : NULL;
  ok = problems != NULL;
  if (ok && !consistent) {
    cJSON *p = cJSON_CreateObject();
    ok = cJSON_AddItemToArray(problems, p); /* false when p is NULL */
    ok = ok && cJSON_AddItemToObject(
                   p, "row",
                   rep->bad_row > 0 ? cJSON_CreateNumber((double)rep->bad_row)
                                    : cJSON_CreateNull());
    ok = ok && cJSON_AddStringToObject(p, "problem", what);
  }
  char *text = ok ? cJSON_PrintUnformatted(o) : NULL;
  cJSON_Delete(o);
  if (!text)
    return -1;
  fprintf(out, "%s\n", text);
  free(text);
  return 0;
}

int ll_verify_main(int argc, char **argv, FILE *out, FILE *errs) {
  const char *dir = NULL;
  ll_verify_mode mode = LL_VERIFY_FULL;
  int json = 0;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--export-only") == 0 && mode == LL_VERIFY_FULL) {
      mode = LL_VERIFY_EXPORT_ONLY;
    } else if (strcmp(argv[i], "--json") == 0 && !json) {
      json = 1;
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
  if (st != LL_OK) {
    const char *what = rep.problem[0] ? rep.problem : err.message;
    if (rep.bad_row > 0)
      fprintf(errs, "leaselua: verify: INCONSISTENT at row %ld: %s\n",
              rep.bad_row, what);
    else
      fprintf(errs, "leaselua: verify: INCONSISTENT: %s\n", what);
    if (json && print_json(&rep, 0, what, out) != 0) {
      fputs("leaselua: verify: out of memory printing the verdict\n", errs);
      return 70;
    }
    return 2;
  }
  if (json) {
    if (print_json(&rep, 1, NULL, out) == 0)
      return 0;
    fputs("leaselua: verify: out of memory printing the verdict\n", errs);
    return 70;
  }
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
  fprintf(out,
          "verify: consistent: %ld export rows, %s, endpoint kind %s, "
          "decision %s, window %s\n",
          rep.rows, prot, kind,
          rep.decision[0] ? rep.decision : "(none recorded)",
          rep.window[0] ? rep.window : "-");
  if (rep.identity[0])
    fprintf(out, "verify: identities: %s\n", rep.identity);
  return 0;
}
