/* `leaselua verify`: reads its arguments, runs the core's check
 * (ll_verify_dir_mode), prints the verdict and maps it to an exit code.
 * The check itself returns a report and prints nothing. */
#include "l_verify.h"

#include <string.h>

#include "verify.h"

static const char usage[] =
    "usage: leaselua verify [--export-only] DIR\n"
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
    "exit: 0 consistent, 2 inconsistent, 64 usage or a missing file, 70 "
    "internal\n"
    "      error (out of memory)\n";

int ll_verify_main(int argc, char **argv, FILE *out, FILE *errs) {
  const char *dir = NULL;
  ll_verify_mode mode = LL_VERIFY_FULL;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--export-only") == 0 && mode == LL_VERIFY_FULL) {
      mode = LL_VERIFY_EXPORT_ONLY;
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
    return 2;
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
  return 0;
}
