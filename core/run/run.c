/* One evidence run: every request passes manifest, guard, durable intent,
 * one attempt on the wire, and a classified outcome row, in that order. */
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "endpoint.h"
#include "guard.h"
#include "hash.h"
#include "jsonx.h"
#include "manifest.h"
#include "payload.h"
#include "run_impl.h"
#include "run_row.h"
#include "sign.h"
#include "verify.h"

ll_status ll_run_dead(ll_run *r, ll_error *err) {
  if (r->nomem)
    return ll_fail(err, LL_E_NOMEM,
                   "out of memory: an allocation failed earlier in this run, "
                   "so its evidence could be incomplete; nothing more is sent "
                   "or recorded");
  return ll_fail(err, LL_E_DURABILITY,
                 "the evidence ledger failed earlier: nothing more is sent");
}

ll_status ll_run_check_alloc(ll_run *r, ll_error *err) {
  if (!r->nomem && !ll_alloc_failed_since(r->alloc_mark))
    return LL_OK;
  r->dead = r->nomem = 1;
  return ll_run_dead(r, err);
}

ll_status ll_run_settle(ll_run *r, ll_status st, cJSON **out, ll_error *err) {
  if (st != LL_E_NOMEM && !r->nomem && !ll_alloc_failed_since(r->alloc_mark))
    return st;
  if (out) {
    cJSON_Delete(*out);
    *out = NULL;
  }
  int first = !r->nomem;
  r->dead = r->nomem = 1;
  if (st == LL_E_NOMEM && first)
    return st; /* its own message says what could not be allocated */
  return ll_run_dead(r, err);
}

/* Whether a row of record rec is past the session's bound (run.h,
 * LL_RUN_EVIDENCE_MAX): a start at the bound, anything else past the
 * closing room. */
static int beyond_bound(const ll_run *r, const char *rec) {
  static const char *const starts[] = {"intent",    "note",    "refusal",
                                       "lifecycle", "declare", "flow"};
  size_t bytes = ll_ledger_bytes(r->ledger);
  size_t used = bytes > r->evidence_base ? bytes - r->evidence_base : 0;
  int start = !r->closing && rec && strcmp(rec, "stop") == 0;
  for (size_t i = 0; !start && rec && i < sizeof starts / sizeof *starts; i++)
    start = strcmp(rec, starts[i]) == 0;
  return start ? used >= LL_RUN_EVIDENCE_MAX
               : used >= LL_RUN_EVIDENCE_MAX + LL_RUN_CLOSING_ROOM;
}

/* Appends row to the ledger, folding it into the model first so derived
 * fields are filled, and takes it: the one tree the builder made is the
 * row the fold fills and the ledger seals, prints once and keeps. A
 * failure makes the run dead: no more requests. A row built, folded or
 * written across a failed allocation (NULL: its builder ran out) is never
 * written (or is the last one): the run dies with LL_E_NOMEM. */
ll_status ll_run_append_take(ll_run *r, cJSON *row, ll_error *err) {
  ll_status st;
  if (r->replay_failure.code) {
    if (err)
      *err = r->replay_failure;
    st = r->replay_failure.code;
    goto cleanup;
  }
  if (r->dead) {
    st = ll_run_dead(r, err);
    goto cleanup;
  }
  if ((st = ll_run_check_alloc(r, err)) != LL_OK)
    goto cleanup;
  if (!row) {
    r->dead = r->nomem = 1;
    st = ll_run_dead(r, err);
    goto cleanup;
  }
  const char *rec = ll_json_str(row, "record");
  int decision = rec && strcmp(rec, "decision") == 0;
  if (!decision && beyond_bound(r, rec)) {
    /* unwritten and unfolded: nothing is sent for it either */
    st = ll_fail(err, LL_E_SCOPE,
                 "the run's evidence reached its bound (%zu MiB of protected "
                 "ledger in this session): nothing more is started or sent; "
                 "what is under way is completed and the decision recorded",
                 LL_RUN_EVIDENCE_MAX >> 20);
    goto cleanup;
  }
  st = ll_model_apply(r->model, row, 1, err);
  if (st == LL_E_NOMEM || ll_run_check_alloc(r, err) != LL_OK) {
    r->dead = r->nomem = 1;
    st = ll_run_dead(r, err);
    goto cleanup;
  }
  if (st != LL_OK)
    goto cleanup;
  /* Write-ahead where it protects something: an intent that can change
   * the service is fsync'd before it leaves; a read changes nothing, and
   * the decision is synced in both files. A read's intent leaves its
   * export line waiting (LL_SYNC_DEFER): the protected line is the
   * write-ahead record, and the export line is written when the request
   * is on its way (ll_ledger_flush_hook through on_wire: its head left on
   * an open connection, or a new one is about to be set up), or as the
   * request ends without it. Every other row writes what waits and its
   * own line at once, so a run killed between requests leaves an export
   * that verifies as it is. */
  const char *method = ll_json_str(row, "http_method");
  ll_sync sync = LL_SYNC_NONE;
  if (decision)
    sync = LL_SYNC_BOTH;
  else if (rec && strcmp(rec, "intent") == 0)
    sync = method && (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
               ? LL_SYNC_DEFER
               : LL_SYNC_PROTECTED;
  long seq = 0;
  st = ll_ledger_append_row(r->ledger, row, sync, &seq, err);
  row = NULL; /* the ledger's, whatever the result */
  if (st == LL_E_NOMEM || ll_run_check_alloc(r, err) != LL_OK) {
    r->dead = r->nomem = 1;
    st = ll_run_dead(r, err);
    goto cleanup;
  }
  if (st != LL_OK)
    r->dead = 1;
cleanup:
  cJSON_Delete(row);
  return st;
}

ll_status ll_run_append(ll_run *r, const cJSON *row, ll_error *err) {
  return ll_run_append_take(r, row ? cJSON_Duplicate(row, 1) : NULL, err);
}

/* The export row of the last append, the tree the ledger sealed (not a
 * copy): the caller's to delete. */
cJSON *ll_run_last_export(ll_run *r) {
  return ll_ledger_take_last(r->ledger);
}

ll_writer *ll_run_writer(ll_run *r, const char *alias) {
  for (int i = 0; alias && i < r->nwriters; i++)
    if (strcmp(r->writers[i].alias, alias) == 0)
      return &r->writers[i];
  return NULL;
}

int ll_run_is_bound(const ll_run *r, const char *alias) {
  return ll_run_writer((ll_run *)r, alias) != NULL;
}

static int alias_ok(const char *a) {
  size_t n = a ? strlen(a) : 0;
  if (n == 0 || n >= LL_ALIAS_MAX)
    return 0;
  for (size_t i = 0; i < n; i++)
    if (!ll_alias_char(a[i]))
      return 0;
  return 1;
}

/* Records alias -> lease ID (protected only) and tells the sanitizer. */
ll_status ll_run_bind_row(ll_run *r, const char *alias, const char *id,
                          const char *state, ll_error *err) {
  ll_status st = ll_ledger_bind_alias(r->ledger, alias, id, err);
  if (st != LL_OK)
    return st;
  return ll_run_append_take(r, ll_row_bind(alias, id, state), err);
}

static int plan_has_actor(const ll_run *r, const char *alias) {
  for (int i = 0; i < r->plan.nactors; i++)
    if (strcmp(r->plan.actors[i], alias) == 0)
      return 1;
  return 0;
}

ll_status ll_run_actor_ok(const ll_run *r, const char *alias, ll_error *err) {
  if (!alias_ok(alias))
    return ll_fail(err, LL_E_USAGE,
                   "writer alias must be 1-15 letters, digits, '-' or '_'");
  if (r->planned && r->plan.nactors > 0 && !plan_has_actor(r, alias))
    return ll_fail(err, LL_E_USAGE,
                   "actor %s is not among the actors the flow declared at "
                   "open: declare it in leaselua.open{actors = ...}",
                   alias);
  return LL_OK;
}

int ll_run_role(const char *alias) {
  return alias &&
         (strcmp(alias, "operator") == 0 || strcmp(alias, "observer") == 0);
}

static ll_status bind_writer(ll_run *r, const char *alias, ll_error *err) {
  if (alias_ok(alias) && ll_run_writer(r, alias))
    return LL_OK; /* bound before, so checked before */
  ll_status ok = ll_run_actor_ok(r, alias, err);
  if (ok != LL_OK)
    return ok;
  if (r->nwriters >= LL_MAX_WRITERS)
    return ll_fail(err, LL_E_USAGE, "too many writers (max %d)",
                   LL_MAX_WRITERS);
  ll_writer *w = &r->writers[r->nwriters];
  ll_strlcpy(w->alias, alias, sizeof w->alias);
  ll_status st = ll_guid_v4(w->lease_id);
  if (st != LL_OK)
    return ll_fail(err, st, "could not generate a lease ID");
  st = ll_run_bind_row(r, alias, w->lease_id, NULL, err);
  if (st == LL_OK)
    r->nwriters++;
  return st;
}

ll_status ll_run_bind(ll_run *r, const char *alias, ll_error *err) {
  if (r->dead)
    return ll_run_dead(r, err);
  return ll_run_settle(r, bind_writer(r, alias, err), NULL, err);
}

static ll_status declare(ll_run *r, long revision, const char *writer,
                         cJSON **out_row, ll_error *err) {
  ll_payload p;
  ll_status st = ll_payload_build(revision, writer, &p, err);
  if (st != LL_OK)
    return st;
  if (out_row)
    *out_row = NULL;
  if (!ll_model_declared(r->model, revision, writer)) {
    if (ll_model_declared(r->model, revision, NULL))
      return ll_fail(err, LL_E_USAGE,
                     "revision %ld is already declared for another writer",
                     revision);
    ll_row b;
    ll_row_begin(&b, "declare");
    ll_row_num(&b, "revision", revision);
    ll_row_str(&b, "writer", writer);
    ll_row_str(&b, "payload", p.bytes);
    ll_row_str(&b, "payload_sha256", p.sha256);
    st = ll_run_append_take(r, ll_row_end(&b), err);
    if (st != LL_OK)
      return st;
    r->expected_dirty = 1;
  }
  if (out_row) {
    ll_row b;
    ll_row_begin(&b, NULL);
    ll_row_num(&b, "revision", revision);
    ll_row_str(&b, "writer", writer);
    ll_row_str(&b, "payload", p.bytes);
    ll_row_str(&b, "payload_sha256", p.sha256);
    if (!(*out_row = ll_row_end(&b)))
      return ll_fail(err, LL_E_NOMEM, "out of memory declaring a revision");
  }
  return LL_OK;
}

ll_status ll_run_declare(ll_run *r, long revision, const char *writer,
                         cJSON **out_row, ll_error *err) {
  if (out_row)
    *out_row = NULL;
  ll_status st = declare(r, revision, writer, out_row, err);
  return ll_run_settle(r, st, out_row, err);
}

/* The gap control overwrites the blob without a lease: it is authorised
 * only by an accepted, cleaned-up main handoff on the same target. A live
 * gap control needs a live one (emulator or azure, never a replay, which
 * proves nothing about any real blob) on the same endpoint kind, account
 * host, container and blob, whose cleanup was confirmed by a read that
 * found the blob absent. A replayed gap control sends nothing: it is
 * authorised by a replayed main handoff of the same target, whose
 * recorded delete was accepted. */
/* The authorising run must still match its signature: its sums and the
 * signature's own validity (whose key it is, only the reviewer's
 * allowed-signers file says), and a run whose ledger declares signing
 * must be signed, by that key: a stripped signature is refused here as
 * `leaselua verify` refuses it (the one check, sign.h). */
static ll_status after_signature(const char *after, const ll_verify_report *rep,
                                 ll_error *err) {
  if (!ll_bundle_is_signed(after) && !rep->sign_declared[0])
    return LL_OK;
  ll_sign_report *sr = malloc(sizeof *sr);
  if (!sr)
    return ll_fail(err, LL_E_NOMEM, "out of memory checking --after");
  ll_status st = ll_bundle_check_declared(
      after, NULL, rep->sign_declared, rep->decision_row > 0,
      rep->export_sha256, rep->corroboration_sha256, sr, err);
  if (st == LL_E_TAMPER)
    st = ll_fail(err, LL_E_USAGE,
                 "--after %s %s, but its signature does not hold (%.400s): "
                 "it is not the run it was",
                 after,
                 ll_bundle_is_signed(after) ? "is signed"
                                            : "was signed (its ledger says so)",
                 sr->problem);
  else if (st == LL_E_IO)
    st = ll_fail(err, LL_E_USAGE, "--after %s is signed: %.400s", after,
                 err ? err->message : "ssh-keygen");
  free(sr);
  return st;
}

ll_status ll_run_check_after(ll_run *r, const char *after, ll_error *err) {
  ll_verify_report rep;
  char path[512], host[256];
  const char *kind = ll_model_endpoint_kind(r->model);
  int replay = strcmp(kind, "replay") == 0;
  if (!after || !*after)
    return ll_fail(err, LL_E_USAGE,
                   "a destructive lifecycle needs --after DIR naming the "
                   "evidence of an accepted main handoff on this blob");
  ll_status st = ll_verify_dir(after, &rep, err);
  if (st == LL_E_NOMEM)
    return st;
  if (st != LL_OK) {
    char why[sizeof err->message]; /* ll_fail writes err->message */
    ll_strlcpy(why, rep.problem[0] ? rep.problem : err->message, sizeof why);
    return ll_fail(err, LL_E_USAGE,
                   "--after %s does not verify (%s): run the main handoff "
                   "first",
                   after, why);
  }
  st = after_signature(after, &rep, err);
  if (st != LL_OK)
    return st;
  int live = strcmp(rep.endpoint_kind, "emulator") == 0 ||
             strcmp(rep.endpoint_kind, "azure") == 0;
  if (!replay && !live)
    return ll_fail(err, LL_E_USAGE,
                   "--after %s is %s evidence: a gap control on a live blob "
                   "needs a live main handoff (emulator or azure), never a "
                   "replay",
                   after, rep.endpoint_kind);
  if (strcmp(rep.decision, "ACCEPT") != 0 || rep.destructive)
    return ll_fail(err, LL_E_USAGE,
                   "--after %s is not an accepted main handoff (decision "
                   "%s%s): the gap control runs only after one",
                   after, rep.decision[0] ? rep.decision : "none",
                   rep.destructive ? ", and it was itself destructive" : "");
  if (strcmp(rep.endpoint_kind, kind) != 0)
    return ll_fail(err, LL_E_USAGE,
                   "--after %s ran against endpoint kind %s, this run against "
                   "%s: use a main handoff on the same endpoint",
                   after, rep.endpoint_kind, kind);
  ll_manifest_recorded_host(&r->target, replay, host, sizeof host);
  if (!ll_endpoint_same_host(rep.account_host, host))
    return ll_fail(err, LL_E_USAGE,
                   "--after %s ran on account host %s, not %s: use a main "
                   "handoff on the same account",
                   after, rep.account_host, host);
  ll_target_blob_path(&r->target, path, sizeof path);
  if (strcmp(rep.container, r->target.container) != 0 ||
      strcmp(rep.blob_path, path) != 0)
    return ll_fail(err, LL_E_USAGE,
                   "--after %s concerns %s, not %s: use the same owned blob "
                   "path",
                   after, rep.blob_path, path);
  if (!rep.cleanup_confirmed)
    return ll_fail(err, LL_E_USAGE,
                   "--after %s did not confirm its cleanup: finish and clean "
                   "up the main fixture first",
                   after);
  if (!replay && !rep.absent_confirmed)
    return ll_fail(err, LL_E_USAGE,
                   "--after %s did not confirm its cleanup by a read that "
                   "found the blob absent (404 after the accepted delete): "
                   "the gap control needs that observation",
                   after);
  return LL_OK;
}

/* A refusal row: what was refused, the code and the invariant it names. */
ll_status ll_run_refusal(ll_run *r, const char *step, const char *op,
                         const char *actor, ll_status code, ll_error *err) {
  ll_error keep = *err;
  cJSON *row = ll_row_refusal(
      ll_model_epoch(r->model), r->step[0] ? r->step : step, op, actor,
      ll_code_name(code), ll_code_invariant(code), keep.message);
  ll_status st = ll_run_append_take(r, row, err);
  if (st != LL_OK)
    return st;
  *err = keep;
  return code;
}

static ll_status lifecycle(ll_run *r, int destructive, const char *reason,
                           const char *after_dir, ll_error *err) {
  if (!destructive && r->planned && r->plan.window_attempts > 0 &&
      ll_model_epoch(r->model) >= r->plan.window_attempts)
    return ll_fail(err, LL_E_USAGE,
                   "lifecycle %ld exceeds the %ld window attempts the flow "
                   "declared at open",
                   ll_model_epoch(r->model) + 1, r->plan.window_attempts);
  if (destructive) {
    ll_status st = ll_run_check_after(r, after_dir, err);
    if (st != LL_OK)
      return st;
  }
  /* The guard's scope is the blob: a lifecycle starts only from a known
   * state, and resets neither the latch nor the read-back rule. */
  ll_error why = {0};
  ll_status gst = ll_guard_lifecycle(r->model, &why);
  if (gst != LL_OK) {
    if (err)
      *err = why;
    return ll_run_refusal(r, "lifecycle", "Lifecycle", "operator", gst,
                          err ? err : &why);
  }
  ll_row b;
  ll_row_begin(&b, "lifecycle");
  ll_row_num(&b, "fixture_epoch", ll_model_epoch(r->model) + 1);
  ll_row_bool(&b, "destructive", destructive);
  ll_row_str(&b, "reason", reason);
  if (destructive)
    ll_row_str(&b, "after_run", after_dir);
  return ll_run_append_take(r, ll_row_end(&b), err);
}

ll_status ll_run_table_refuses(const ll_run *r, const char *what,
                               ll_error *err) {
  if (!r->planned || !r->plan.lease_table || r->table_engine > 0)
    return LL_OK;
  return ll_fail(err, LL_E_ORDER,
                 "%s: in a run opened for the lease table only the lease "
                 "table's engine sends requests and starts lifecycles "
                 "(run:lease_lifecycle, run:cell)",
                 what);
}

ll_status ll_run_lifecycle(ll_run *r, int destructive, const char *reason,
                           const char *after_dir, ll_error *err) {
  ll_status st = ll_run_table_refuses(r, "run:lifecycle", err);
  if (st != LL_OK)
    return st;
  st = lifecycle(r, destructive, reason, after_dir, err);
  return ll_run_settle(r, st, NULL, err);
}

ll_status ll_run_note(ll_run *r, const char *step, const char *text,
                      ll_error *err) {
  if (ll_sign_step_reserved(step))
    return ll_fail(err, LL_E_USAGE,
                   "run:note: the step '%s' is the host's (its signing "
                   "declaration, which leaselua verify trusts): a script "
                   "cannot write it; name the note's step otherwise",
                   LL_SIGN_NOTE_STEP);
  ll_row b;
  ll_row_begin(&b, "note");
  ll_row_str(&b, "step", step);
  ll_row_str(&b, "text", text);
  ll_status st = ll_run_append_take(r, ll_row_end(&b), err);
  return ll_run_settle(r, st, NULL, err);
}

ll_status ll_run_note_signing(ll_run *r, const char *text,
                              const char *fingerprint, ll_error *err) {
  if (!fingerprint || strncmp(fingerprint, "SHA256:", 7) != 0 ||
      strlen(fingerprint) >= LL_SIGN_FP_MAX)
    return ll_fail(err, LL_E_USAGE,
                   "the signing key has no SHA256 fingerprint");
  ll_row b;
  ll_row_begin(&b, "note");
  ll_row_str(&b, "step", LL_SIGN_NOTE_STEP);
  ll_row_str(&b, "text", text);
  ll_row_str(&b, LL_SIGN_NOTE_KEY, fingerprint);
  ll_status st = ll_run_append_take(r, ll_row_end(&b), err);
  return ll_run_settle(r, st, NULL, err);
}

ll_status ll_run_end_transport(ll_run *r, ll_error *err) {
  if (r->nomem)
    return ll_run_dead(r, err);
  if (r->replay_failure.code) {
    *err = r->replay_failure;
    return r->replay_failure.code;
  }
  if (!r->transport->finish)
    return LL_OK;
  ll_status st = r->transport->finish(r->transport, err);
  if (st == LL_E_REPLAY)
    r->replay_failure = *err;
  return st;
}

const char *ll_run_replay_detail(const ll_run *r) {
  if (r->replay_failure.code != LL_E_REPLAY)
    return NULL;
  const char *d =
      r->transport->detail ? r->transport->detail(r->transport) : NULL;
  return d ? d : r->replay_failure.message;
}

void ll_run_set_step(ll_run *r, const char *label) {
  ll_strlcpy(r->step, label ? label : "", sizeof r->step);
}

const ll_model *ll_run_model(const ll_run *r) {
  return r->model;
}
ll_ledger *ll_run_ledger(ll_run *r) {
  return r->ledger;
}
ll_clock *ll_run_clock(ll_run *r) {
  return r->clock;
}
const char *ll_run_id(const ll_run *r) {
  return r->run_id;
}
