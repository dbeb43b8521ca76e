/* Re-derives a run from its files. The export alone must give the same
 * classes and decision; with the protected ledger at hand, the export must
 * also be exactly its sanitized form. */
#define _GNU_SOURCE
#include "verify.h"
#include "jsonx.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ledger.h"
#include "model.h"
#include "sanitize.h"
static ll_status problem(ll_verify_report *rep, ll_error *err, long row,
                         const char *fmt, const char *detail) {
  rep->bad_row = row;
  snprintf(rep->problem, sizeof rep->problem, fmt, detail);
  return ll_fail(err, LL_E_TAMPER, "%s", rep->problem);
}

/* Protected rows vs export rows: same count, and each export row is the
 * sanitized protected row (chain fields aside). */
static ll_status compare(const cJSON *prot, const cJSON *exp,
                         ll_verify_report *rep, ll_error *err, cJSON *ids_out) {
  const char *ids[16], *aliases[16];
  size_t n = 0;
  int np = cJSON_GetArraySize(prot), ne = cJSON_GetArraySize(exp);
  if (np != ne) {
    char d[64];
    snprintf(d, sizeof d, "%d protected rows, %d export rows", np, ne);
    return problem(rep, err, (np < ne ? np : ne) + 1,
                   "export and protected ledgers differ in length: %s", d);
  }
  for (int i = 0; i < np; i++) {
    const cJSON *p = cJSON_GetArrayItem(prot, i);
    const char *rec = ll_json_str(p, "record");
    if (rec && strcmp(rec, "lease_bind") == 0 && n < 16 &&
        ll_json_str(p, "lease_real_id")) {
      ids[n] = ll_json_str(p, "lease_real_id");
      aliases[n] = ll_json_str(p, "alias") ? ll_json_str(p, "alias") : "?";
      cJSON_AddItemToArray(ids_out, cJSON_CreateString(ids[n]));
      n++;
    }
    cJSON *s = ll_sanitize_row(p, ids, aliases, n);
    cJSON *e = cJSON_Duplicate(cJSON_GetArrayItem(exp, i), 1);
    cJSON_DeleteItemFromObjectCaseSensitive(s, "prev_hash");
    cJSON_DeleteItemFromObjectCaseSensitive(s, "row_hash");
    cJSON_DeleteItemFromObjectCaseSensitive(e, "prev_hash");
    cJSON_DeleteItemFromObjectCaseSensitive(e, "row_hash");
    int same = s && e && cJSON_Compare(s, e, 1);
    cJSON_Delete(s);
    cJSON_Delete(e);
    if (!same) {
      char d[24];
      snprintf(d, sizeof d, "%d", i + 1);
      return problem(rep, err, i + 1,
                     "export row %s is not the sanitized protected row", d);
    }
  }
  return LL_OK;
}

static ll_status scan_export(const char *path, const cJSON *ids,
                             ll_verify_report *rep, ll_error *err) {
  ll_buf b = {0};
  ll_status st = ll_buf_read_file(&b, path, SIZE_MAX);
  if (st != LL_OK) {
    free(b.p);
    return st == LL_E_NOMEM ? ll_fail(err, LL_E_NOMEM, "out of memory")
                            : ll_fail(err, LL_E_IO, "cannot read %s", path);
  }
  char *buf = b.p;
  size_t len = b.n;
  const char *list[16];
  size_t n = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, ids) {
    if (n < 16)
      list[n++] = it->valuestring;
  }
  char what[128] = "";
  size_t hits = ll_secret_scan(buf, len, list, n, NULL, 0, what, sizeof what);
  if (!hits && (memmem(buf, len, "lease_real_id", 13) ||
                memmem(buf, len, "Bearer ey", 9))) {
    hits = 1;
    snprintf(what, sizeof what, "a lease_real_id field or a bearer token");
  }
  free(buf);
  if (hits)
    return problem(rep, err, 0, "secret found in the export: %s", what);
  return LL_OK;
}

ll_status ll_verify_dir(const char *dir, ll_verify_report *rep, ll_error *err) {
  char ppath[1024], epath[1024];
  cJSON *prot = NULL, *exp = NULL, *ids = cJSON_CreateArray();
  long bad = 0;
  ll_status st;
  memset(rep, 0, sizeof *rep);
  snprintf(ppath, sizeof ppath, "%s/protected/ledger.jsonl", dir);
  snprintf(epath, sizeof epath, "%s/export/ledger.jsonl", dir);
  struct stat sb;
  if (stat(epath, &sb) != 0) {
    cJSON_Delete(ids);
    return ll_fail(err, LL_E_IO, "%s: no export ledger (%s)", dir,
                   strerror(errno));
  }
  st = ll_ledger_read_file(epath, &exp, &bad, err);
  if (st != LL_OK) {
    rep->bad_row = bad;
    snprintf(rep->problem, sizeof rep->problem, "export: %s", err->message);
    goto done;
  }
  rep->rows = cJSON_GetArraySize(exp);
  if (stat(ppath, &sb) == 0) {
    st = ll_ledger_read_file(ppath, &prot, &bad, err);
    if (st != LL_OK) {
      rep->bad_row = bad;
      snprintf(rep->problem, sizeof rep->problem, "protected: %s",
               err->message);
      goto done;
    }
    rep->protected_read = 1;
    st = compare(prot, exp, rep, err, ids);
    if (st != LL_OK)
      goto done;
  }
  st = scan_export(epath, ids, rep, err);
  if (st != LL_OK)
    goto done;
  /* Re-derive everything from the export alone. */
  ll_model *m = ll_model_new();
  cJSON *row;
  cJSON_ArrayForEach(row, exp) {
    st = ll_model_apply(m, row, 0, err);
    if (st != LL_OK) {
      const cJSON *seq = cJSON_GetObjectItemCaseSensitive(row, "seq");
      rep->bad_row = cJSON_IsNumber(seq) ? (long)seq->valuedouble : 0;
      snprintf(rep->problem, sizeof rep->problem, "re-derivation: %s",
               err->message);
      break;
    }
    const char *rec = ll_json_str(row, "record");
    if (rec && strcmp(rec, "manifest") == 0 && ll_json_str(row, "blob_path"))
      ll_strlcpy(rep->blob_path, ll_json_str(row, "blob_path"),
                 sizeof rep->blob_path);
    if (rec && strcmp(rec, "decision") == 0) {
      ll_strlcpy(rep->decision, ll_json_str(row, "decision"),
                 sizeof rep->decision);
      ll_strlcpy(rep->window, ll_json_str(row, "window_finding"),
                 sizeof rep->window);
    }
  }
  rep->cleanup_confirmed = ll_model_cleanup_confirmed(m);
  rep->destructive = ll_model_destructive(m);
  ll_model_free(m);
  if (st == LL_OK && rep->rows == 0)
    st = problem(rep, err, 1, "%s", "the export ledger is empty");
done:
  cJSON_Delete(prot);
  cJSON_Delete(exp);
  cJSON_Delete(ids);
  return st;
}

int ll_verify_main(const char *dir, FILE *out, FILE *errs) {
  ll_verify_report rep;
  ll_error err = {0};
  ll_status st = ll_verify_dir(dir, &rep, &err);
  if (st == LL_E_IO) {
    fprintf(errs, "leaselua: verify: %s\n", err.message);
    return 64;
  }
  if (st != LL_OK) {
    fprintf(errs, "leaselua: verify: INCONSISTENT at row %ld: %s\n",
            rep.bad_row, rep.problem[0] ? rep.problem : err.message);
    return 2;
  }
  fprintf(out,
          "verify: consistent: %ld export rows, %s, decision %s, window %s\n",
          rep.rows,
          rep.protected_read ? "export matches the protected ledger"
                             : "export only (protected ledger not read)",
          rep.decision[0] ? rep.decision : "(none recorded)",
          rep.window[0] ? rep.window : "-");
  return 0;
}
