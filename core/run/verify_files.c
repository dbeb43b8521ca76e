/* The files beside a bundle's ledgers that a reader is shown as the
 * run's (verify_impl.h): the corroboration chain and its summary, tied to
 * this run, and decision.json, the export's last decision row. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "corroborate_settle.h"
#include "hash.h"
#include "jsonx.h"
#include "ledger.h"
#include "verify_impl.h"

ll_status ll_verify_vproblem(const ll_verify_out *o, ll_error *err, long row,
                             const char *fmt, va_list ap) {
  *o->row = row;
  vsnprintf(o->text, o->cap, fmt, ap);
  return ll_fail(err, LL_E_TAMPER, "%s", o->text);
}

static ll_status problem(const ll_verify_out *o, ll_error *err, long row,
                         const char *fmt, ...) LL_PRINTF(4, 5);
static ll_status problem(const ll_verify_out *o, ll_error *err, long row,
                         const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ll_status st = ll_verify_vproblem(o, err, row, fmt, ap);
  va_end(ap);
  return st;
}

/* dir/name read whole (16 MiB at most) and parsed: NULL when it could not
 * be read or is not JSON, *st LL_E_NOMEM when memory ran out reading. */
/* dir/name parsed; with sha (65 bytes), the SHA-256 of the bytes read
 * too, or "" when none were. */
static cJSON *read_json(const char *dir, const char *name, ll_status *st,
                        char *sha) {
  char path[1024];
  ll_buf buf = {0};
  snprintf(path, sizeof path, "%s/%s", dir, name);
  *st = ll_buf_read_file(&buf, path, 16u * 1024u * 1024u);
  cJSON *j = *st == LL_OK ? cJSON_ParseWithLength(buf.p, buf.n) : NULL;
  if (sha && (*st != LL_OK || ll_sha256_hex(buf.p, buf.n, sha) != LL_OK))
    sha[0] = '\0';
  free(buf.p);
  return j;
}

/* The export's manifest row (its first row of that record), or NULL. */
static const cJSON *manifest_of(const cJSON *exp) {
  const cJSON *row;
  cJSON_ArrayForEach(row, exp) {
    if (ll_json_is(row, "record", "manifest"))
      return row;
  }
  return NULL;
}

/* Every corroboration row names this run: its run ID, blob and account
 * (helper-26 moved another run's chain into a bundle, and verify said
 * consistent, CORROBORATED). */
static ll_status corr_run(const cJSON *rows, const cJSON *exp,
                          const ll_verify_out *o, ll_error *err) {
  static const char *const keys[] = {"run_id", "blob_path", "account_host"};
  const cJSON *man = manifest_of(exp), *row;
  cJSON_ArrayForEach(row, rows) {
    if (!ll_json_is(row, "record", "corroboration"))
      continue;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
      const char *a = ll_json_str(row, keys[i]), *b = ll_json_str(man, keys[i]);
      if (!a || !b || strcmp(a, b) != 0)
        return problem(
            o, err, ll_json_long(row, "seq", 0),
            "corroboration.jsonl row %ld is not this run's: its %s is %.80s, "
            "the manifest's %.80s",
            ll_json_long(row, "seq", 0), keys[i], a ? a : "absent",
            b ? b : "absent");
    }
  }
  return LL_OK;
}

/* Settlement rows belong to the corroboration row that follows them
 * (settlement_seq_first names the first): one without it is what a write
 * that stopped between the two appends leaves. After the last
 * corroboration row that is a problem (run leaselua corroborate again);
 * before a later one it is the history of that interrupted write, which
 * the later corroboration completed (helper-29: corroborating again could
 * not repair it), and no settlement the later row claims. Returns the
 * last corroboration row (NULL: none). */
static const cJSON *corr_rows(const cJSON *rows, const ll_verify_out *o,
                              ll_error *err, ll_status *st) {
  const cJSON *row, *last = NULL;
  long pending = 0; /* seq of the first settlement not yet claimed */
  cJSON_ArrayForEach(row, rows) {
    const char *rec = ll_json_str(row, "record");
    long seq = ll_json_long(row, "seq", 0);
    if (ll_streq(rec, "settlement")) {
      if (!pending)
        pending = seq;
    } else if (ll_streq(rec, "corroboration")) {
      pending = 0;
      last = row;
    }
  }
  if (pending)
    *st = problem(o, err, pending,
                  "corroboration.jsonl: settlement row %ld has no "
                  "corroboration row after it (an incomplete corroboration: "
                  "run leaselua corroborate again)",
                  pending);
  return last;
}

/* Whether a and b hold the same members, as JSON values, but those
 * named in skip_a (members of a only) and skip_b (of b only): 1 yes, 0
 * no (*bad the first differing key). */
static int same_but(const cJSON *a, const char *const *skip_a, const cJSON *b,
                    const char *const *skip_b, const char **bad) {
  const cJSON *sides[2] = {a, b};
  const char *const *skips[2] = {skip_a, skip_b};
  for (int s = 0; s < 2; s++) {
    const cJSON *it;
    cJSON_ArrayForEach(it, sides[s]) {
      int skipped = !it->string;
      for (const char *const *k = skips[s]; !skipped && *k; k++)
        skipped = strcmp(it->string, *k) == 0;
      if (skipped)
        continue;
      const cJSON *other =
          cJSON_GetObjectItemCaseSensitive(sides[1 - s], it->string);
      if (!other || !cJSON_Compare(it, other, 1)) {
        *bad = it->string;
        return 0;
      }
    }
  }
  return 1;
}

/* corroboration.json must be the chain's last corroboration row, member
 * for member, with the settlement rows it names as its "settlements"
 * (helper-28: only the verdict and counts were compared, and the report
 * drew the rest from the file). */
static const char *corr_mismatch(const cJSON *j, const cJSON *rows,
                                 const cJSON *last) {
  static const char *const only_json[] = {"corroboration_seq", "settlements",
                                          NULL};
  static const char *const only_row[] = {"seq", "prev_hash", "row_hash",
                                         "settlement_seq_first", NULL};
  static const char *const settle_row[] = {"seq", "prev_hash", "row_hash",
                                           "run_id", NULL};
  static const char *const none[] = {NULL};
  /* the verdict and counts first: what a reader looks at */
  static const char *const strs[] = {"record", "verdict", "run_id",
                                     "corroborated_utc"};
  static const char *const nums[] = {
      "requests",         "log_records",      "contradictions_total",
      "missing_total",    "unrecorded_total", "inferred_key_notes_total",
      "settlements_total"};
  for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) {
    const char *a = ll_json_str(j, strs[i]), *b = ll_json_str(last, strs[i]);
    if (!a || !b || strcmp(a, b) != 0)
      return strs[i];
  }
  for (size_t i = 0; i < sizeof nums / sizeof *nums; i++)
    if (ll_json_long(j, nums[i], -1) != ll_json_long(last, nums[i], -2))
      return nums[i];
  if (ll_json_long(j, "corroboration_seq", -1) != ll_json_long(last, "seq", -2))
    return "corroboration_seq";
  const char *bad = NULL;
  if (!same_but(j, only_json, last, only_row, &bad))
    return bad;
  /* the settlement rows from settlement_seq_first up to the last row */
  long first = ll_json_long(last, "settlement_seq_first", 0);
  const cJSON *listed = cJSON_GetObjectItemCaseSensitive(j, "settlements");
  const cJSON *want = listed ? listed->child : NULL, *row;
  cJSON_ArrayForEach(row, rows) {
    long seq = ll_json_long(row, "seq", 0);
    if (row == last)
      break;
    if (!first || seq < first || !ll_json_is(row, "record", "settlement"))
      continue;
    if (!want || !same_but(row, settle_row, want, none, &bad))
      return "settlements";
    want = want->next;
  }
  return want ? "settlements" : NULL;
}

/* The export as the corroboration read it: its rows up to export_seq,
 * whose row_hash must be export_row_hash (a recovery may have appended
 * rows since), as references in a new array (the caller deletes it), or
 * NULL when the export holds no such row (*st LL_E_NOMEM when memory ran
 * out). */
static cJSON *corr_prefix(const cJSON *j, const cJSON *exp, ll_status *st) {
  long upto = ll_json_long(j, "export_seq", -1);
  const char *hash = ll_json_str(j, "export_row_hash");
  cJSON *pre = cJSON_CreateArray();
  if (!pre) {
    *st = LL_E_NOMEM;
    return NULL;
  }
  const cJSON *row;
  int found = 0;
  cJSON_ArrayForEach(row, exp) {
    long seq = ll_json_long(row, "seq", 0);
    if (seq > upto)
      break;
    if (!cJSON_AddItemReferenceToArray(pre, (cJSON *)row)) {
      *st = LL_E_NOMEM;
      cJSON_Delete(pre);
      return NULL;
    }
    found = seq == upto && hash && ll_json_is(row, "row_hash", hash);
  }
  if (!found) {
    cJSON_Delete(pre);
    return NULL;
  }
  return pre;
}

/* Whether a settlement names what the run left unknown in pre: an outcome
 * row with outcome UNKNOWN, or an intent with no outcome (OPEN), with its
 * event, operation and client request ID, a numeric logged status, and
 * no other settlement for the same row (helper-29: a settlement naming
 * an ordinary 409 turned the re-derived decision into ACCEPT). */
static int settles_unknown(const cJSON *s, const cJSON *settled,
                           const cJSON *pre) {
  long seq = ll_json_long(s, "outcome_seq", -1);
  const cJSON *other;
  cJSON_ArrayForEach(other, settled) {
    if (other != s && ll_json_long(other, "outcome_seq", -2) == seq)
      return 0;
  }
  const char *status = ll_json_str(s, "logged_status");
  if (!status || !*status || strspn(status, "0123456789") != strlen(status))
    return 0;
  const cJSON *row = NULL, *it;
  cJSON_ArrayForEach(it, pre) {
    if (ll_json_long(it, "seq", 0) == seq)
      row = it;
  }
  const char *how = ll_json_str(s, "ledger_outcome");
  if (!row || !how)
    return 0;
  if (ll_streq(how, "UNKNOWN")) {
    if (!ll_json_is(row, "record", "outcome") ||
        !ll_json_is(row, "outcome", "UNKNOWN"))
      return 0;
  } else if (ll_streq(how, "OPEN")) {
    if (!ll_json_is(row, "record", "intent"))
      return 0;
    const char *ev = ll_json_str(row, "event_id");
    cJSON_ArrayForEach(it, pre) {
      if (ll_json_is(it, "record", "outcome") && ll_json_is(it, "event_id", ev))
        return 0;
    }
  } else {
    return 0;
  }
  static const char *const same[] = {"event_id", "operation",
                                     "client_request_id"};
  for (size_t i = 0; i < sizeof same / sizeof *same; i++)
    if (!ll_streq(ll_json_str(s, same[i]), ll_json_str(row, same[i])))
      return 0;
  return 1;
}

/* The decisions corroboration.json states, against the export as the
 * corroboration read it (corr_prefix): the run's own (its last decision
 * row then), and, with settlements (each of an unknown outcome), the one
 * the fold derives with each settled outcome in place of its UNKNOWN.
 * NULL when all agree, else the key; *st LL_E_NOMEM when memory ran
 * out. */
static const char *corr_decisions(const cJSON *j, const cJSON *exp,
                                  ll_status *st) {
  cJSON *pre = corr_prefix(j, exp, st);
  if (!pre)
    return "export_seq";
  const char *bad = NULL;
  /* what corroborate writes, by the code that writes it */
  cJSON *want = ll_corr_decision_run(pre);
  if (!want)
    *st = LL_E_NOMEM;
  if (!want ||
      !cJSON_Compare(want, cJSON_GetObjectItemCaseSensitive(j, "decision_run"),
                     1))
    bad = "decision_run";
  cJSON_Delete(want);
  const cJSON *settled = cJSON_GetObjectItemCaseSensitive(j, "settlements");
  const cJSON *s;
  cJSON_ArrayForEach(s, settled) {
    if (!bad && !settles_unknown(s, settled, pre))
      bad = "settlements";
  }
  const cJSON *logs = cJSON_GetObjectItemCaseSensitive(j, "decision_with_logs");
  if (!bad && cJSON_GetArraySize(settled) == 0 && !cJSON_IsNull(logs))
    bad = "decision_with_logs";
  if (!bad && cJSON_GetArraySize(settled) > 0) {
    ll_error e = {0};
    cJSON *re = ll_corr_rederive(pre, settled, &e);
    if (!re && e.code == LL_E_NOMEM)
      *st = LL_E_NOMEM;
    if (!re || !cJSON_Compare(re, logs, 1))
      bad = "decision_with_logs";
    cJSON_Delete(re);
  }
  cJSON_Delete(pre);
  return bad;
}

static ll_status corr_summary(const char *dir, const cJSON *rows,
                              const cJSON *last, const cJSON *exp,
                              const ll_verify_out *o, cJSON **keep,
                              ll_error *err) {
  ll_status st;
  cJSON *j = read_json(dir, "corroboration.json", &st, o->corr_sha256);
  if (st == LL_E_NOMEM)
    return ll_fail(err, LL_E_NOMEM, "out of memory");
  if (!j)
    return problem(o, err, 0, "corroboration.json is unreadable or not JSON");
  st = LL_OK;
  /* a key of j's may be named: copied before j goes */
  char bad[64] = "";
  const char *b = corr_mismatch(j, rows, last);
  if (b)
    snprintf(bad, sizeof bad, "%s", b);
  const char *dec = b ? NULL : corr_decisions(j, exp, &st);
  /* the file as checked, for a reader that shows it (never read twice) */
  if (keep && st == LL_OK && !bad[0] && !dec)
    *keep = j;
  else
    cJSON_Delete(j);
  if (st == LL_E_NOMEM)
    return ll_fail(err, LL_E_NOMEM, "out of memory");
  if (bad[0])
    return problem(o, err, ll_json_long(last, "seq", 0),
                   "corroboration.json differs from corroboration.jsonl's "
                   "last corroboration row in '%s'",
                   bad);
  if (dec)
    return problem(o, err, ll_json_long(last, "seq", 0),
                   "corroboration.json's '%s' is not what the export says "
                   "(its rows up to export_seq, whose hash it names: the "
                   "run's last decision row then; settlements of outcomes "
                   "the run left unknown; the decision the fold derives "
                   "with them)",
                   dec);
  return LL_OK;
}

ll_status ll_verify_corroboration(const char *dir, const cJSON *exp,
                                  const ll_verify_out *o, cJSON **keep,
                                  ll_error *err) {
  char path[1024], jpath[1024];
  struct stat sb, jb;
  snprintf(path, sizeof path, "%s/corroboration.jsonl", dir);
  snprintf(jpath, sizeof jpath, "%s/corroboration.json", dir);
  int have_l = lstat(path, &sb) == 0, have_j = lstat(jpath, &jb) == 0;
  if (!have_l && !have_j)
    return LL_OK;
  if (!have_l)
    return problem(o, err, 0,
                   "corroboration.json is present without "
                   "corroboration.jsonl, the chain it must come from");
  if (!S_ISREG(sb.st_mode))
    return problem(o, err, 0, "corroboration.jsonl is not a regular file");
  if (have_j && !S_ISREG(jb.st_mode))
    return problem(o, err, 0, "corroboration.json is not a regular file");
  cJSON *rows = NULL;
  long bad = 0;
  ll_error e = {0};
  ll_status st = ll_ledger_read_file(path, &rows, &bad, &e);
  if (st == LL_E_TAMPER) {
    cJSON_Delete(rows);
    return problem(o, err, 0, "corroboration.jsonl: %s", e.message);
  }
  if (st != LL_OK) {
    cJSON_Delete(rows);
    return ll_fail(err, st, "%s", e.message);
  }
  const cJSON *last = corr_rows(rows, o, err, &st);
  if (st == LL_OK)
    st = corr_run(rows, exp, o, err);
  if (st == LL_OK && !last)
    st = problem(o, err, 0, "corroboration.jsonl holds no corroboration row");
  else if (st == LL_OK && !have_j)
    st = problem(o, err, 0,
                 "corroboration.jsonl is present without corroboration.json "
                 "(the corroboration was not finished: run leaselua "
                 "corroborate again)");
  else if (st == LL_OK)
    st = corr_summary(dir, rows, last, exp, o, keep, err);
  cJSON_Delete(rows);
  return st;
}

/* decision.json, when there, is the export's last decision row, equal as
 * JSON values: never another decision (helper-26 set it to ACCEPT beside
 * a HOLD ledger, and verify said nothing), never one where the ledger has
 * none. The last, not the standing one: a recovered session killed before
 * its own decision leaves the first session's file, which is still the
 * last decision the ledger holds. */
ll_status ll_verify_decision_file(const char *dir, const cJSON *exp,
                                  const ll_verify_out *o, ll_error *err) {
  char path[1024];
  struct stat sb;
  snprintf(path, sizeof path, "%s/decision.json", dir);
  if (lstat(path, &sb) != 0)
    return LL_OK; /* a run stopped before its decision has none */
  if (!S_ISREG(sb.st_mode))
    return problem(o, err, 0, "decision.json is not a regular file");
  ll_status st;
  cJSON *j = read_json(dir, "decision.json", &st, NULL);
  if (st == LL_E_NOMEM)
    return ll_fail(err, LL_E_NOMEM, "out of memory");
  const cJSON *row, *last = NULL;
  cJSON_ArrayForEach(row, exp) {
    if (ll_json_is(row, "record", "decision"))
      last = row;
  }
  int same = j && last && cJSON_Compare(j, last, 1);
  cJSON_Delete(j);
  if (same)
    return LL_OK;
  if (!last)
    return problem(o, err, 0,
                   "decision.json is present, but the ledger "
                   "holds no decision row");
  return problem(o, err, ll_json_long(last, "seq", 0),
                 "decision.json is not the export's last decision "
                 "row (row %ld)",
                 ll_json_long(last, "seq", 0));
}
