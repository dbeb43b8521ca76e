/* Re-derives a run from its files. The export alone must give the same
 * classes and decision; the protected ledger must be the run's own (a real
 * file holding the real lease IDs) and the export exactly its sanitized
 * form; the endpoint kind must agree with the host the run talked to. */
#define _GNU_SOURCE
#include "verify.h"
#include "identity.h"
#include "jsonx.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc.h"
#include "endpoint.h"
#include "hash.h"
#include "ledger.h"
#include "model.h"
#include "sanitize.h"
#include "sign.h"
#include "verify_impl.h"

static ll_status problem(ll_verify_report *rep, ll_error *err, long row,
                         const char *fmt, ...) LL_PRINTF(4, 5);
static ll_status problem(ll_verify_report *rep, ll_error *err, long row,
                         const char *fmt, ...) {
  ll_verify_out o = {
      .text = rep->problem, .cap = sizeof rep->problem, .row = &rep->bad_row};
  va_list ap;
  va_start(ap, fmt);
  ll_status st = ll_verify_vproblem(&o, err, row, fmt, ap);
  va_end(ap);
  return st;
}

/* The lease bindings of the protected ledger, in order, without a limit:
 * ids and aliases are borrowed from its rows. */
typedef struct {
  const char **ids, **aliases;
  char (*norm)[LL_SANITIZE_ID_MAX];
  size_t n, cap;
} binds;

static int binds_add(binds *b, const char *id, const char *alias,
                     const char *norm) {
  if (b->n == b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 8;
    const char **ids = ll_realloc(b->ids, cap * sizeof *ids);
    if (ids)
      b->ids = ids;
    const char **al = ids ? ll_realloc(b->aliases, cap * sizeof *al) : NULL;
    if (al)
      b->aliases = al;
    char(*nm)[LL_SANITIZE_ID_MAX] =
        al ? ll_realloc(b->norm, cap * sizeof *nm) : NULL;
    if (!nm)
      return 0;
    b->norm = nm;
    b->cap = cap;
  }
  b->ids[b->n] = id;
  b->aliases[b->n] = alias;
  memcpy(b->norm[b->n], norm, LL_SANITIZE_ID_MAX);
  b->n++;
  return 1;
}

static const char *binds_alias_of(const binds *b, const char *norm) {
  for (size_t i = 0; i < b->n; i++)
    if (strcmp(b->norm[i], norm) == 0)
      return b->aliases[i];
  return NULL;
}

static void binds_free(binds *b) {
  free(b->ids);
  free(b->aliases);
  free(b->norm);
}

#define NOT_PROTECTED                                                          \
  "this is not the run's protected ledger (a copy of the export?)"

/* The real lease IDs the export replaced must be in protected row p: each
 * lease_bind row holds a GUID, bound to one alias only; each request row
 * holds the lease_real_id field, and the ID it sent is the one bound to
 * the alias it names. */
static ll_status real_ids(const cJSON *p, long seq, binds *b,
                          ll_verify_report *rep, ll_error *err) {
  const char *rec = ll_json_str(p, "record");
  char norm[LL_SANITIZE_ID_MAX];
  /* a principal's tid and oid: never in the export (identity.h) */
  const char *pid[LL_IDENTITY_IDS_MAX];
  size_t npid =
      ll_identity_ids(cJSON_GetObjectItemCaseSensitive(p, "identities"), pid,
                      LL_IDENTITY_IDS_MAX);
  if (npid > LL_IDENTITY_IDS_MAX)
    return problem(rep, err, seq,
                   "protected row %ld: its identity record holds %zu "
                   "identifiers, more than a run writes (%d)",
                   seq, npid, LL_IDENTITY_IDS_MAX);
  for (size_t i = 0; i < npid; i++)
    if (ll_sanitize_norm_id(pid[i], norm) && !binds_alias_of(b, norm) &&
        !binds_add(b, pid[i], LL_IDENTITY_ALIAS, norm))
      return ll_fail(err, LL_E_NOMEM, "out of memory verifying");
  if (ll_streq(rec, "lease_bind")) {
    const char *alias = ll_json_str(p, "alias");
    const char *id = ll_json_str(p, "lease_real_id");
    if (!alias || !*alias)
      return problem(rep, err, seq,
                     "protected row %ld: lease_bind without "
                     "an alias",
                     seq);
    if (!ll_sanitize_norm_id(id, norm))
      return problem(rep, err, seq,
                     "protected row %ld (lease_bind of %.40s) holds no real "
                     "lease ID: " NOT_PROTECTED,
                     seq, alias);
    const char *other = binds_alias_of(b, norm);
    if (other && strcmp(other, alias) != 0)
      return problem(rep, err, seq,
                     "protected row %ld binds the lease ID of alias %.40s to "
                     "%.40s too",
                     seq, other, alias);
    if (!other && !binds_add(b, id, alias, norm))
      return ll_fail(err, LL_E_NOMEM, "out of memory verifying");
    return LL_OK;
  }
  if (!ll_streq(rec, "intent") && !ll_streq(rec, "outcome"))
    return LL_OK;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, "lease_real_id");
  const char *la = ll_json_str(p, "lease_alias_supplied");
  if (!v)
    return problem(
        rep, err, seq,
        "protected row %ld (%s) has no lease_real_id field: " NOT_PROTECTED,
        seq, rec);
  if (ll_lease_none(la)) {
    if (!cJSON_IsNull(v))
      return problem(rep, err, seq,
                     "protected row %ld sent a lease ID without naming its "
                     "alias",
                     seq);
    return LL_OK;
  }
  const char *bound =
      cJSON_IsString(v) && ll_sanitize_norm_id(v->valuestring, norm)
          ? binds_alias_of(b, norm)
          : NULL;
  if (!ll_streq(bound, la))
    return problem(rep, err, seq,
                   "protected row %ld: the lease ID sent for alias %.40s is "
                   "not one bound to it by an earlier lease_bind row",
                   seq, la);
  return LL_OK;
}

/* Protected rows vs export rows: same count, the real IDs present, and
 * each export row the sanitized protected row (chain fields aside). */
static ll_status compare(const cJSON *prot, const cJSON *exp,
                         ll_verify_report *rep, ll_error *err, binds *b) {
  int np = cJSON_GetArraySize(prot), ne = cJSON_GetArraySize(exp);
  if (np != ne)
    return problem(rep, err, (np < ne ? np : ne) + 1,
                   "export and protected ledgers differ in length: %d "
                   "protected rows, %d export rows",
                   np, ne);
  const cJSON *p = prot->child, *x = exp->child;
  for (long seq = 1; p && x; p = p->next, x = x->next, seq++) {
    ll_status st = real_ids(p, seq, b, rep, err);
    if (st != LL_OK)
      return st;
    cJSON *s = ll_sanitize_row(p, b->ids, b->aliases, b->n);
    cJSON *e = cJSON_Duplicate(x, 1);
    int same = -1;
    if (s && e) {
      cJSON_DeleteItemFromObjectCaseSensitive(s, "prev_hash");
      cJSON_DeleteItemFromObjectCaseSensitive(s, "row_hash");
      cJSON_DeleteItemFromObjectCaseSensitive(e, "prev_hash");
      cJSON_DeleteItemFromObjectCaseSensitive(e, "row_hash");
      same = cJSON_Compare(s, e, 1);
    }
    cJSON_Delete(s);
    cJSON_Delete(e);
    if (same < 0)
      return ll_fail(err, LL_E_NOMEM, "out of memory verifying");
    if (!same)
      return problem(rep, err, seq,
                     "export row %ld is not the sanitized protected row", seq);
  }
  return LL_OK;
}

/* The protected ledger is a regular file of its own: not a symbolic link
 * (nor under one), not the export file itself under a second name. */
static ll_status protected_file(const char *dir, const char *ppath,
                                const char *epath, ll_verify_report *rep,
                                ll_error *err) {
  char pdir[1024];
  struct stat sd, sp, se;
  snprintf(pdir, sizeof pdir, "%s/protected", dir);
  if (lstat(pdir, &sd) != 0 || lstat(ppath, &sp) != 0) {
    if (errno == ENOENT)
      return ll_fail(err, LL_E_IO,
                     "%s: no protected ledger: verify needs it to check the "
                     "export against the real lease IDs; pass --export-only "
                     "to check the export alone",
                     dir);
    return ll_fail(err, LL_E_IO, "cannot stat %s: %s", ppath, strerror(errno));
  }
  if (S_ISLNK(sd.st_mode) || S_ISLNK(sp.st_mode))
    return problem(rep, err, 0,
                   "the protected ledger %s is a symbolic link: the evidence "
                   "needs the run's own file",
                   S_ISLNK(sd.st_mode) ? pdir : ppath);
  if (!S_ISDIR(sd.st_mode) || !S_ISREG(sp.st_mode))
    return problem(rep, err, 0, "the protected ledger %s is not a regular file",
                   ppath);
  if (stat(epath, &se) == 0 && se.st_dev == sp.st_dev && se.st_ino == sp.st_ino)
    return problem(rep, err, 0,
                   "the protected ledger %s is the export file itself (a hard "
                   "link): " NOT_PROTECTED,
                   ppath);
  return LL_OK;
}

/* The secret scan of the export's bytes: the very bytes its rows were
 * parsed from (read once: a file swapped in between is never half
 * checked). */
static ll_status scan_export(const ll_buf *buf, const binds *b,
                             ll_verify_report *rep, ll_error *err) {
  char what[128] = "";
  size_t hits =
      ll_secret_scan(buf->p, buf->n, b->ids, b->n, NULL, 0, what, sizeof what);
  if (!hits && (memmem(buf->p, buf->n, "lease_real_id", 13) ||
                memmem(buf->p, buf->n, "Bearer ey", 9))) {
    hits = 1;
    snprintf(what, sizeof what, "a lease_real_id field or a bearer token");
  }
  if (hits)
    return problem(rep, err, 0, "secret found in the export: %s", what);
  return LL_OK;
}

static void copy_field(char *dst, size_t cap, const cJSON *row, const char *k) {
  ll_strlcpy(dst, ll_json_str(row, k) ? ll_json_str(row, k) : "", cap);
}

/* From the export alone: row 1 is the manifest, its endpoint kind agrees
 * with its account host and with every row's, and every lease alias a
 * request names was bound before. */
static ll_status check_rows(const cJSON *exp, ll_verify_report *rep,
                            ll_error *err) {
  const cJSON *m = exp->child;
  if (!ll_json_is(m, "record", "manifest"))
    return problem(rep, err, 1, "row 1 is not the run manifest");
  copy_field(rep->endpoint_kind, sizeof rep->endpoint_kind, m, "endpoint_kind");
  copy_field(rep->fixture_label, sizeof rep->fixture_label, m, "fixture_label");
  copy_field(rep->account_host, sizeof rep->account_host, m, "account_host");
  copy_field(rep->container, sizeof rep->container, m, "container");
  copy_field(rep->blob_path, sizeof rep->blob_path, m, "blob_path");
  const char *declared = ll_json_str(m, "declared_azure_host");
  ll_error sub = {0};
  if (ll_endpoint_check(rep->endpoint_kind, rep->account_host,
                        ll_json_str(m, "fixture_label"), declared,
                        &sub) != LL_OK)
    return problem(rep, err, 1, "manifest: %s", sub.message);
  rep->host_declared = declared != NULL;
  ll_identity_statement(m, rep->identity, sizeof rep->identity);
  const cJSON *sh = cJSON_GetObjectItemCaseSensitive(m, "shared_identity");
  rep->shared_identity = cJSON_IsBool(sh) ? cJSON_IsTrue(sh) : -1;
  long ibad = 0;
  char iproblem[300];
  if (ll_identity_check_rows(exp, &ibad, iproblem, sizeof iproblem) != LL_OK)
    return problem(rep, err, ibad, "row %ld: %s", ibad, iproblem);
  cJSON *aliases = cJSON_CreateArray();
  ll_status st = aliases ? LL_OK : ll_fail(err, LL_E_NOMEM, "out of memory");
  long seq = 1;
  for (const cJSON *r = m->next; r && st == LL_OK; r = r->next) {
    seq++;
    const char *rec = ll_json_str(r, "record");
    const char *kind = ll_json_str(r, "endpoint_kind");
    const char *la = ll_json_str(r, "lease_alias_supplied");
    if (kind && !ll_streq(kind, rep->endpoint_kind)) {
      st = problem(rep, err, seq,
                   "row %ld says endpoint_kind %.20s, the manifest %.20s", seq,
                   kind, rep->endpoint_kind);
    } else if (ll_streq(rec, "manifest")) {
      st = problem(rep, err, seq, "row %ld is a second run manifest", seq);
    } else if (ll_streq(rec, "note") &&
               ll_json_is(r, "step", LL_SIGN_NOTE_STEP)) {
      /* the host's declaration (sign.h): the last one names the key */
      if (ll_sign_note_key(r, rep->sign_declared) < 0)
        st = problem(rep, err, seq,
                     "row %ld is a signing note the host did not write "
                     "(no " LL_SIGN_NOTE_KEY
                     " fingerprint): only the host writes "
                     "one, when it opens the run; the ledger was edited",
                     seq);
    } else if (ll_streq(rec, "lease_bind")) {
      const char *a = ll_json_str(r, "alias");
      rep->lease_bindings++;
      if (!a || !ll_json_push(aliases, cJSON_CreateString(a)))
        st = a ? ll_fail(err, LL_E_NOMEM, "out of memory")
               : problem(rep, err, seq, "row %ld: lease_bind without an alias",
                         seq);
    } else if ((ll_streq(rec, "intent") || ll_streq(rec, "outcome")) &&
               !ll_lease_none(la)) {
      int known = 0;
      const cJSON *a;
      cJSON_ArrayForEach(a, aliases) {
        known |= ll_streq(a->valuestring, la);
      }
      if (!known)
        st = problem(rep, err, seq,
                     "row %ld names lease alias %.40s, which no earlier "
                     "lease_bind row bound",
                     seq, la);
    }
  }
  cJSON_Delete(aliases);
  char why[600];
  long unpaired = st == LL_OK ? ll_verify_pairs(exp, why, sizeof why) : 0;
  if (unpaired < 0)
    st = ll_fail(err, LL_E_NOMEM, "out of memory verifying");
  else if (unpaired > 0)
    st = problem(rep, err, unpaired, "row %ld: %s", unpaired, why);
  return st;
}

/* The reasons of a decision row (re-derived equal by the model), in the
 * report: the string items, the first LL_VERIFY_REASONS_MAX of them. */
static void keep_reasons(ll_verify_report *rep, const cJSON *reasons) {
  const cJSON *r;
  rep->n_reasons = 0;
  rep->reasons_total = 0;
  cJSON_ArrayForEach(r, reasons) {
    if (!cJSON_IsString(r))
      continue;
    if (rep->n_reasons < LL_VERIFY_REASONS_MAX)
      ll_strlcpy(rep->reasons[rep->n_reasons++], r->valuestring,
                 LL_VERIFY_REASON_LEN);
    rep->reasons_total++;
  }
}

/* Re-derives every derived field from the export alone; the decision
 * reported is the one that stands (ll_verify_stands). */
static ll_status rederive(const cJSON *exp, ll_verify_report *rep,
                          ll_error *err) {
  ll_model *m = ll_model_new();
  if (!m)
    return ll_fail(err, LL_E_NOMEM, "out of memory verifying");
  ll_status st = LL_OK;
  cJSON *row;
  cJSON_ArrayForEach(row, exp) {
    st = ll_model_apply(m, row, 0, err);
    if (st == LL_E_NOMEM)
      break;
    if (st != LL_OK) {
      rep->bad_row = ll_json_long(row, "seq", 0);
      snprintf(rep->problem, sizeof rep->problem, "re-derivation: %s",
               err->message);
      break;
    }
    if (ll_json_is(row, "record", "decision")) {
      copy_field(rep->decision, sizeof rep->decision, row, "decision");
      copy_field(rep->window, sizeof rep->window, row, "window_finding");
      keep_reasons(rep, cJSON_GetObjectItemCaseSensitive(row, "reasons"));
    }
  }
  /* a decision that a request follows does not stand: no decision */
  if (st == LL_OK &&
      !ll_verify_stands(exp, &rep->decision_row, &rep->decision_followed_by)) {
    rep->decision[0] = rep->window[0] = '\0';
    rep->n_reasons = 0;
    rep->reasons_total = 0;
  }
  rep->cleanup_confirmed = ll_model_cleanup_confirmed(m);
  rep->absent_confirmed = ll_model_blob_known_absent(m);
  rep->destructive = ll_model_destructive(m);
  ll_model_free(m);
  return st;
}

ll_status ll_verify_dir_checked(const char *dir, ll_verify_mode mode,
                                ll_verify_report *rep, cJSON **rows,
                                cJSON **corroboration, ll_error *err) {
  char ppath[1024], epath[1024];
  cJSON *prot = NULL, *exp = NULL, *corr = NULL;
  ll_buf ebuf = {0};
  binds b = {0};
  long bad = 0;
  ll_status st;
  ll_alloc_init();
  unsigned long mark = ll_alloc_failures();
  memset(rep, 0, sizeof *rep);
  rep->export_only = mode == LL_VERIFY_EXPORT_ONLY;
  snprintf(ppath, sizeof ppath, "%s/protected/ledger.jsonl", dir);
  snprintf(epath, sizeof epath, "%s/export/ledger.jsonl", dir);
  struct stat sb;
  if (stat(epath, &sb) != 0)
    return ll_fail(err, LL_E_IO, "%s: no export ledger (%s)", dir,
                   strerror(errno));
  errno = 0;
  st = ll_buf_read_file(&ebuf, epath, SIZE_MAX);
  if (st != LL_OK) {
    int e = errno; /* the read's, or 0: never a stale one */
    free(ebuf.p);
    return st == LL_E_NOMEM
               ? ll_fail(err, LL_E_NOMEM, "out of memory verifying %s", dir)
               : ll_fail(err, LL_E_IO, "cannot read %s: %s", epath,
                         e ? strerror(e) : "unreadable");
  }
  if (ll_sha256_hex(ebuf.p, ebuf.n, rep->export_sha256) != LL_OK) {
    free(ebuf.p);
    return ll_fail(err, LL_E_NOMEM, "out of memory verifying %s", dir);
  }
  st = ll_ledger_read_mem(ebuf.p, ebuf.n, epath, &exp, &bad, err);
  if (st != LL_OK) {
    rep->bad_row = bad;
    snprintf(rep->problem, sizeof rep->problem, "export: %s", err->message);
    goto done;
  }
  rep->rows = cJSON_GetArraySize(exp);
  if (rep->rows == 0) {
    st = problem(rep, err, 1, "%s", "the export ledger is empty");
    goto done;
  }
  if (!rep->export_only) {
    st = protected_file(dir, ppath, epath, rep, err);
    if (st == LL_OK)
      st = ll_ledger_read_file(ppath, &prot, &bad, err);
    if (st != LL_OK) {
      if (st == LL_E_TAMPER && !rep->problem[0]) {
        rep->bad_row = bad;
        snprintf(rep->problem, sizeof rep->problem, "protected: %s",
                 err->message);
      }
      goto done;
    }
    rep->protected_read = 1;
    st = compare(prot, exp, rep, err, &b);
    if (st != LL_OK)
      goto done;
  }
  st = check_rows(exp, rep, err);
  if (st == LL_OK)
    st = scan_export(&ebuf, &b, rep, err);
  if (st == LL_OK)
    st = rederive(exp, rep, err);
  /* the files beside the ledgers: what a reader is shown as the run's */
  ll_verify_out o = {rep->problem, sizeof rep->problem, &rep->bad_row,
                     rep->corroboration_sha256};
  if (st == LL_OK)
    st = ll_verify_corroboration(dir, exp, &o, &corr, err);
  if (st == LL_OK)
    st = ll_verify_decision_file(dir, exp, &o, err);
done:
  /* a problem may quote a protected row's value: never a lease ID */
  ll_sanitize_message(rep->problem, sizeof rep->problem,
                      (const char *const *)b.ids, b.n);
  if (st != LL_OK && err)
    ll_sanitize_message(err->message, sizeof err->message,
                        (const char *const *)b.ids, b.n);
  binds_free(&b);
  free(ebuf.p);
  cJSON_Delete(prot);
  /* a check that ran short of memory proves nothing either way */
  if (st == LL_E_NOMEM || ll_alloc_failed_since(mark)) {
    cJSON_Delete(exp);
    cJSON_Delete(corr);
    rep->problem[0] = '\0';
    return ll_fail(err, LL_E_NOMEM, "out of memory verifying %s", dir);
  }
  /* only what was just proven consistent leaves, never that of a problem */
  if (rows && st == LL_OK)
    *rows = exp;
  else
    cJSON_Delete(exp);
  if (corroboration && st == LL_OK)
    *corroboration = corr;
  else
    cJSON_Delete(corr);
  return st;
}

ll_status ll_verify_dir_rows(const char *dir, ll_verify_mode mode,
                             ll_verify_report *rep, cJSON **rows,
                             ll_error *err) {
  return ll_verify_dir_checked(dir, mode, rep, rows, NULL, err);
}

ll_status ll_verify_dir_mode(const char *dir, ll_verify_mode mode,
                             ll_verify_report *rep, ll_error *err) {
  return ll_verify_dir_rows(dir, mode, rep, NULL, err);
}

ll_status ll_verify_dir(const char *dir, ll_verify_report *rep, ll_error *err) {
  return ll_verify_dir_mode(dir, LL_VERIFY_FULL, rep, err);
}
