/* The fold over ledger rows. Every decision-relevant fact is derived here
 * from rows alone, so the run, recovery and verify cannot disagree. */
#include "jsonx.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "model_impl.h"
static void cpy(char *dst, size_t cap, const char *src) {
  ll_strlcpy(dst, src ? src : "", cap);
}

/* Drops o[k] if there: searched from the last key, where the intent of
 * the row before sits (open_intents holds only the intents still open). */
static void drop_key_from_end(cJSON *o, const char *k) {
  cJSON *first = o ? o->child : NULL;
  for (cJSON *c = first ? first->prev : NULL; c;
       c = c == first ? NULL : c->prev)
    if (c->string && strcmp(c->string, k) == 0) {
      cJSON_Delete(cJSON_DetachItemViaPointer(o, c));
      return;
    }
}

/* The poller's hint: when the break was answered and how long the service
 * said the lease would stay breaking. */
static void note_break(ll_epoch_state *ep, const cJSON *row) {
  const char *lt = ll_json_str(row, "x_ms_lease_time");
  ep->break_answered = 1;
  ep->break_end_ns = ll_json_double(row, "mono_end_ns", 0);
  ep->break_has_hint = lt != NULL;
  ep->break_hint_s = lt ? atol(lt) : -1;
}

static void add_doubt(ll_model *m, const cJSON *row, ll_op op) {
  cJSON *d = cJSON_CreateObject();
  cJSON_AddStringToObject(d, "event_id", ll_json_str(row, "event_id"));
  cJSON_AddStringToObject(d, "operation", ll_op_name(op));
  cJSON_AddNumberToObject(d, "revision",
                          ll_json_long(row, "payload_revision", LL_REV_NONE));
  cJSON_AddStringToObject(d, "actor", ll_json_str(row, "actor_alias"));
  cJSON_AddStringToObject(d, "lease", ll_json_str(row, "lease_alias_supplied"));
  cJSON_AddStringToObject(d, "class",
                          ll_json_str(row, "result_classification"));
  ll_json_push(m->doubts, d);
}

static void observe(ll_model *m, const cJSON *row) {
  ll_epoch_state *ep = &m->ep;
  const char *st = ll_json_str(row, "observed_lease_state");
  const char *ss = ll_json_str(row, "observed_lease_status");
  cpy(ep->obs_state, sizeof ep->obs_state, st);
  cpy(ep->obs_status, sizeof ep->obs_status, ss);
  cpy(ep->obs_event, sizeof ep->obs_event, ll_json_str(row, "event_id"));
  cpy(m->last_props_event, sizeof m->last_props_event,
      ll_json_str(row, "event_id"));
  cpy(m->last_props_state, sizeof m->last_props_state, st);
  cpy(m->last_props_status, sizeof m->last_props_status, ss);
  m->last_props_ok = 1;
  if (!st)
    return;
  if (strcmp(st, "breaking") == 0) {
    ep->phase = LL_PH_BREAKING;
    ep->saw_breaking = 1;
    /* a break whose answer was lost is still a break: its holder is old */
    if (!ep->old_holder[0])
      cpy(ep->old_holder, sizeof ep->old_holder, ep->holder);
  } else if (strcmp(st, "broken") == 0) {
    if (ep->phase != LL_PH_LEASED)
      ep->phase = LL_PH_BROKEN;
    if (ep->saw_breaking && ss && strcmp(ss, "unlocked") == 0)
      ep->saw_broken_after_breaking = 1; /* broken/unlocked, DESIGN 5 */
  } else if (strcmp(st, "available") == 0 || strcmp(st, "expired") == 0) {
    if (ep->phase != LL_PH_NONE)
      ep->phase = LL_PH_RELEASED;
    if (m->lease_released && strcmp(st, "available") == 0 && ss &&
        strcmp(ss, "unlocked") == 0)
      m->release_confirmed = 1;
  } else if (strcmp(st, "leased") == 0 && ep->phase == LL_PH_UNKNOWN) {
    ep->phase = LL_PH_LEASED; /* holder stays unproven until a renew */
  }
}

static void content_read(ll_model *m, const cJSON *row, long rev) {
  ll_epoch_state *ep = &m->ep;
  cpy(m->last_read_event, sizeof m->last_read_event,
      ll_json_str(row, "event_id"));
  cpy(m->last_read_sha, sizeof m->last_read_sha,
      ll_json_str(row, "content_sha256"));
  m->last_read_revision = rev;
  m->last_read_ok = 1;
  ep->content_revision = rev;
  ep->content_read_after_last_write = 1;
  if (ep->window_reproduced == LL_WIN_PROBED) { /* its read-back */
    if (rev >= 0 && rev == ep->unreconciled)
      m->window_reproduced_any = 1;
    ep->window_reproduced = LL_WIN_READ_BACK;
  }
  if (cJSON_GetArraySize(m->doubts) > 0)
    return; /* a doubt is settled by the reconcile row, not by one read */
  if (rev >= 0 && ll_model_was_rejected(m, rev)) {
    ll_model_add_reconcile(
        m, "event %s: rejected revision %ld found in the content",
        ll_json_pstr(row, "event_id"), rev);
  } else if (rev < 0) {
    ll_model_add_reconcile(m,
                           "event %s: content is undeclared bytes (sha256 %s), "
                           "the accepted-write ledger says revision %ld",
                           ll_json_pstr(row, "event_id"),
                           ll_json_pstr(row, "content_sha256"),
                           ep->last_accepted);
  } else if (rev != ep->last_accepted) {
    ll_model_add_reconcile(
        m,
        "event %s: content is revision %ld, the accepted-write "
        "ledger says %ld",
        ll_json_pstr(row, "event_id"), rev, ep->last_accepted);
  }
  if (rev >= 0 && rev == ep->gap_write_rev)
    ep->gap_readback = 1;
  if (ep->unreconciled >= 0 && rev == ep->unreconciled) {
    if (ep->new_acquired && ep->new_write_rev == rev)
      ep->new_write_readback = 1;
    ep->unreconciled = LL_REV_NONE;
    ep->content_uncertain = 0;
  }
}

/* Not ll_streq: an empty alias is nobody, so it never matches a holder,
 * not even an empty one (an empty lease must not pass for the old
 * holder's). */
static int is_alias(const char *a, const char *b) {
  return a && b && *a && strcmp(a, b) == 0;
}

/* State changes caused by a response, once it is classed. */
static void outcome(ll_model *m, cJSON *row, ll_op op, const char *cls) {
  if (ll_harm_outcome(m, row, op, cls))
    return; /* the preflight: invariant 15's own fact */
  ll_epoch_state *ep = &m->ep;
  const char *lease = ll_json_str(row, "lease_alias_supplied");
  const char *id = ll_json_str(row, "event_id");
  long rev = ll_json_long(row, "payload_revision", LL_REV_NONE);
  int ok = strcmp(cls, "ACCEPTED_WRITE") == 0 ||
           strcmp(cls, "STATE_OBSERVED") == 0 ||
           strcmp(cls, "BREAK_ACCEPTED_NOT_COMPLETE") == 0;
  int rejected = strcmp(cls, "EXPECTED_REJECTION") == 0;
  /* Any answer to a blob mutation, whatever its class, makes the end state
   * of the blob unknown again until a read confirms it. */
  if (ll_op_is_mutation(op) && op != LL_OP_CREATE_CONTAINER) {
    ep->mutations++;
    if (op == LL_OP_PUT_BLOB)
      ep->puts++;
    m->blob_deleted = m->absent_confirmed = 0;
    m->lease_released = m->release_confirmed = 0;
  }
  /* A read classed as observed with 404 is the absence expected after an
   * accepted delete (baseline.c): it confirms the blob is gone. */
  int absent = ok && !ll_op_is_mutation(op) &&
               ll_json_long(row, "http_status", 0) == 404;
  if (strcmp(cls, "UNKNOWN_OUTCOME") == 0 ||
      (strcmp(cls, "EVIDENCE_ERROR") == 0 && ll_op_is_mutation(op))) {
    add_doubt(m, row, op);
    if (!ll_op_is_mutation(op)) {
      /* a lost read changes nothing on the service */
    } else if (op == LL_OP_PUT_BLOB) {
      ep->content_uncertain = 1;
    } else if (op == LL_OP_LEASE_ACQUIRE && ep->saw_broken_after_breaking &&
               lease && !is_alias(lease, ep->old_holder)) {
      cpy(ep->new_holder, sizeof ep->new_holder, lease);
      ep->new_acquire_doubtful = 1;
      ep->phase = LL_PH_UNKNOWN;
    } else if (op != LL_OP_CREATE_CONTAINER) {
      ep->phase = LL_PH_UNKNOWN;
    }
  }
  if (strcmp(cls, "EVIDENCE_ERROR") == 0) {
    m->evidence_errors++;
    ll_model_add_hold(m, "event %s (%s): EVIDENCE_ERROR%s%s", id ? id : "?",
                      ll_op_name(op),
                      ll_json_str(row, "transport_error") ? ": " : "",
                      ll_json_str(row, "transport_error")
                          ? ll_json_str(row, "transport_error")
                          : "");
  }
  if (absent) {
    m->absent_confirmed = m->blob_deleted;
    if (op == LL_OP_GET_PROPERTIES)
      m->last_props_ok = 0;
    else
      m->last_read_ok = 0;
  } else if (op == LL_OP_GET_PROPERTIES && ok) {
    observe(m, row);
    if (is_alias(ll_json_str(row, "observed_lease_state"), "broken") &&
        is_alias(ll_json_str(row, "observed_lease_status"), "unlocked"))
      ep->saw_broken = 1;
  } else if (op == LL_OP_GET_PROPERTIES) {
    m->last_props_ok = 0;
  } else if (op == LL_OP_GET_BLOB && ok) {
    content_read(m, row,
                 ll_model_revision_of(m, ll_json_str(row, "content_sha256")));
  } else if (op == LL_OP_GET_BLOB) {
    m->last_read_ok = 0;
  } else if (op == LL_OP_PUT_BLOB && ok) {
    if (ll_lease_none(lease) && ep->destructive && ep->saw_broken)
      ep->gap_write_rev = rev;
    ep->last_accepted = rev;
    ep->unreconciled = rev;
    ep->content_read_after_last_write = 0;
    if (ep->new_acquired && is_alias(lease, ep->new_holder))
      ep->new_write_rev = rev;
  } else if (op == LL_OP_PUT_BLOB && rejected) {
    int proven = ll_baseline_rejection_proven(m, row); /* the code */
    if (ep->nrejected < LL_MAX_REJECTED)
      ep->rejected[ep->nrejected++] = rev;
    if (proven && is_alias(lease, ep->old_holder) &&
        ep->saw_broken_after_breaking && !ep->new_acquired &&
        ep->phase == LL_PH_BROKEN)
      ep->stale_rejected_after_broken = 1;
    if (proven && ep->new_acquired && ep->phase == LL_PH_LEASED &&
        !ll_lease_none(lease) && !is_alias(lease, ep->new_holder))
      ep->old_rejected_under_new = 1;
  } else if (op == LL_OP_LEASE_ACQUIRE && ok) {
    cpy(ep->holder, sizeof ep->holder, lease);
    ep->phase = LL_PH_LEASED;
    if (ep->saw_broken_after_breaking && !is_alias(lease, ep->old_holder)) {
      cpy(ep->new_holder, sizeof ep->new_holder, lease);
      ep->new_acquired = 1;
    }
  } else if (op == LL_OP_LEASE_RENEW && ok) {
    cpy(ep->holder, sizeof ep->holder, lease);
    ep->phase = LL_PH_LEASED;
    if (ep->new_acquire_doubtful && is_alias(lease, ep->new_holder))
      ep->new_acquired = 1; /* ownership proven by a conditioned renew */
  } else if (op == LL_OP_LEASE_BREAK && ok) {
    cpy(ep->old_holder, sizeof ep->old_holder, ep->holder);
    ep->phase = LL_PH_BREAK_SENT;
    ep->break_period = ll_json_long(row, "break_period", 0);
  } else if (op == LL_OP_LEASE_RELEASE && ok) {
    ep->phase = LL_PH_RELEASED;
    m->lease_released = 1;
  } else if (op == LL_OP_DELETE_BLOB && ok) {
    ep->phase = LL_PH_RELEASED;
    ep->cleanup_confirmed = 1;
    m->blob_deleted = 1;
  }
  /* After broken, the old holder is never granted the lease again, nor a
   * write: a re-acquire of its ID, a renew or an accepted Put under it
   * means the blob may hold its bytes under its lease, whatever B did. */
  if (ok && ep->saw_broken_after_breaking && !ep->old_regained[0] &&
      (op == LL_OP_LEASE_ACQUIRE || op == LL_OP_LEASE_RENEW ||
       op == LL_OP_PUT_BLOB) &&
      is_alias(lease, ep->old_holder))
    cpy(ep->old_regained, sizeof ep->old_regained, id ? id : "?");
  if (ep->phase != LL_PH_NONE)
    m->run_leased = 1;
}

static ll_status apply_outcome(ll_model *m, cJSON *row, int fill,
                               ll_error *err) {
  int opi = ll_op_from_name(ll_json_str(row, "operation"));
  if (opi < 0)
    return ll_fail(err, LL_E_TAMPER, "row %ld: unknown operation",
                   ll_json_long(row, "seq", 0));
  /* a cell attempt leaves its answer to its cell row (baseline.c): only
   * in a run whose flow row declared the lease table */
  if (ll_json_get(row, "cell") && !m->table.on)
    return ll_fail(err, LL_E_TAMPER,
                   "row %ld: a lease-table cell attempt in a run that is "
                   "no lease-table run",
                   ll_json_long(row, "seq", 0));
  const char *id = ll_json_str(row, "event_id");
  if (id)
    drop_key_from_end(m->open_intents, id);
  cJSON *d = cJSON_CreateObject();
  if (!d)
    return ll_fail(err, LL_E_NOMEM, "out of memory");
  ll_baseline_classify(m, row, d);
  long rev = ll_model_revision_of(m, ll_json_str(row, "content_sha256"));
  if (opi == LL_OP_GET_BLOB && ll_json_str(row, "content_sha256")) {
    if (rev >= 0)
      cJSON_AddNumberToObject(d, "content_revision", rev);
    else
      cJSON_AddNullToObject(d, "content_revision");
  }
  const ll_epoch_state *ep = &m->ep;
#define STATE_OR_NULL(key, val)                                                \
  do {                                                                         \
    if (*(val))                                                                \
      cJSON_AddStringToObject(d, key, val);                                    \
    else                                                                       \
      cJSON_AddNullToObject(d, key);                                           \
  } while (0)
  STATE_OR_NULL("lease_state_before", ep->obs_state);
  STATE_OR_NULL("lease_status_before", ep->obs_status);
  STATE_OR_NULL("lease_before_source", ep->obs_event);
#undef STATE_OR_NULL
  ll_status st = ll_model_settle(row, d, fill, err);
  const char *cls = ll_json_str(d, "result_classification")
                        ? ll_json_str(d, "result_classification")
                        : "";
  if (st == LL_OK) {
    const cJSON *it;
    cJSON_ArrayForEach(it, ll_json_get(d, "discrepancy")) {
      const cJSON *by = ll_json_get(it, "explained_by");
      if (!cJSON_IsString(by)) {
        m->unexplained++;
        ll_model_add_hold(m, "event %s (%s): unexplained discrepancy: %s",
                          id ? id : "?", ll_json_pstr(row, "operation"),
                          ll_json_pstr(it, "text"));
      }
    }
    outcome(m, row, (ll_op)opi, cls);
    ll_model_remember_event(m, row, cls);
    if (opi == LL_OP_LEASE_BREAK &&
        strcmp(cls, "BREAK_ACCEPTED_NOT_COMPLETE") == 0)
      note_break(&m->ep, row);
  }
  cJSON_Delete(d);
  return st;
}

/* A reconcile that explained the content by the ledger settles every
 * doubt: a doubtful Put found is committed, and the reconcile's own
 * content read is the read-back it was owed. */
static void settle_doubts(ll_model *m, long found) {
  ll_epoch_state *ep = &m->ep;
  cJSON *dd;
  cJSON_ArrayForEach(dd, m->doubts) {
    if (strcmp(ll_json_pstr(dd, "operation"), "Put Blob") == 0 &&
        ll_json_long(dd, "revision", LL_REV_NONE) == found) {
      ep->last_accepted = found; /* the doubtful Put is committed */
      if (ep->new_acquired &&
          is_alias(ll_json_str(dd, "lease"), ep->new_holder)) {
        ep->new_write_rev = found;
        ep->new_write_readback = 1;
      }
      ep->content_uncertain = 0;
    }
  }
  /* the reconcile's own content read is the read-back it was owed */
  if (ep->unreconciled >= 0 && found == ep->unreconciled) {
    if (ep->new_acquired && ep->new_write_rev == found)
      ep->new_write_readback = 1;
    ep->content_uncertain = 0;
  }
  ep->unreconciled = LL_REV_NONE;
  ep->content_revision = found;
  ep->content_read_after_last_write = 1;
  while (cJSON_GetArraySize(m->doubts) > 0) /* emptied, never reallocated */
    cJSON_DeleteItemFromArray(m->doubts, 0);
}

static ll_status apply_reconcile(ll_model *m, cJSON *row, int fill,
                                 ll_error *err) {
  cJSON *d = ll_model_reconcile_row(m, err);
  if (!d)
    return err ? err->code : LL_E_INTERNAL;
  cJSON_DeleteItemFromObjectCaseSensitive(d, "record");
  ll_status st = ll_model_settle(row, d, fill, err);
  if (st == LL_OK) {
    const char *res = ll_json_str(d, "result");
    const char *foreign = ll_json_str(d, "etag_not_adopted");
    ll_epoch_state *ep = &m->ep;
    long found = ll_json_long(d, "content_revision", LL_REV_NONE);
    ep->reconciled = ll_model_reconcile_settles(res) && !foreign;
    if (!res) {
      /* not derived (out of memory): ll_model_apply says so */
    } else if (foreign) {
      /* another writer's object: ll_harm_reconcile holds, doubts stay */
    } else if (ep->reconciled) {
      settle_doubts(m, found);
    } else if (strcmp(res, "INCOMPLETE") != 0) {
      /* MISMATCH, REJECTED_REVISION_FOUND: the ledger does not explain it */
      ll_model_add_reconcile(m, "reconcile: %s (content %ld)", res, found);
    }
    ll_harm_reconcile(m, res, foreign);
  }
  cJSON_Delete(d);
  return st;
}

static ll_status apply_finding(ll_model *m, cJSON *row, int fill,
                               ll_error *err) {
  const char *kind = ll_json_str(row, "kind");
  const char *res = ll_json_str(row, "result");
  if (kind && strcmp(kind, "window") == 0) {
    const cJSON *b = ll_model_event(m, ll_json_str(row, "before_event"));
    const cJSON *p = ll_model_event(m, ll_json_str(row, "put_event"));
    const cJSON *a = ll_model_event(m, ll_json_str(row, "after_event"));
#define BREAKING(e)                                                            \
  ((e) && strcmp(ll_json_pstr(e, "state"), "breaking") == 0 &&                 \
   strcmp(ll_json_pstr(e, "status"), "locked") == 0)
    const char *want = "INCONCLUSIVE_WINDOW";
    if (BREAKING(b) && BREAKING(a) && p &&
        strcmp(ll_json_pstr(p, "class"), "ACCEPTED_WRITE") == 0)
      want = "REPRODUCED";
    else if (BREAKING(b) && BREAKING(a) && p &&
             strcmp(ll_json_pstr(p, "class"), "UNKNOWN_OUTCOME") != 0 &&
             ll_json_long(p, "http_status", 0) >= 400)
      want = "CONTRADICTED"; /* a rejection where A is documented to write */
#undef BREAKING
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "result", want);
    ll_status st = ll_model_settle(row, d, fill, err);
    cJSON_Delete(d);
    if (st != LL_OK)
      return st;
    m->ep.probe_done = 1;
    /* The seed also needs the probe's revision to reconcile after the
     * write: until a read-back shows it, the attempt is inconclusive. */
    if (strcmp(want, "REPRODUCED") == 0) {
      m->ep.window_reproduced = LL_WIN_PROBED;
      m->window_inconclusive_any = 1;
    } else if (strcmp(want, "INCONCLUSIVE_WINDOW") == 0) {
      m->ep.window_inconclusive = m->window_inconclusive_any = 1;
    }
    return LL_OK;
  }
  if (kind && strcmp(kind, "poll") == 0 && res && strcmp(res, "HOLD") == 0) {
    snprintf(m->ep.poll_hold, sizeof m->ep.poll_hold, "poll: %s",
             ll_json_str(row, "reason") ? ll_json_str(row, "reason") : "HOLD");
  } else if (kind && strcmp(kind, "poll") == 0 && res &&
             strcmp(res, "BROKEN") == 0) {
    m->ep.poll_hold[0] = '\0'; /* a later observation supersedes it */
  }
  return LL_OK;
}

static ll_status apply_row(ll_model *m, cJSON *row, int fill, ll_error *err) {
  const char *rec = ll_json_str(row, "record");
  long seq = ll_json_long(row, "seq", 0);
  if (!rec)
    return ll_fail(err, LL_E_TAMPER, "row %ld: no record type", seq);
  if (!m->have_manifest && strcmp(rec, "manifest") != 0)
    return ll_fail(err, LL_E_MANIFEST,
                   "row %ld: %s before the run manifest (invariant 11)", seq,
                   rec);
  m->last_seq = seq;
  if (strcmp(rec, "manifest") == 0) {
    m->have_manifest = 1;
    cpy(m->run_id, sizeof m->run_id, ll_json_str(row, "run_id"));
    cpy(m->endpoint_kind, sizeof m->endpoint_kind,
        ll_json_str(row, "endpoint_kind"));
    const char *label = ll_json_str(row, "fixture_label");
    cpy(m->judged_as, sizeof m->judged_as,
        strcmp(m->endpoint_kind, "replay") == 0 && label ? label
                                                         : m->endpoint_kind);
    if (ll_json_str(row, "api_version"))
      cpy(m->api_version, sizeof m->api_version,
          ll_json_str(row, "api_version"));
    cJSON_Delete(m->actors);
    m->actors = cJSON_Duplicate(ll_json_get(row, "permitted_actors"), 1);
    ll_harm_manifest(m, row);
  } else if (strcmp(rec, "declare") == 0) {
    if (m->ndecl >= LL_MAX_DECL)
      return ll_fail(err, LL_E_USAGE, "too many declared payloads");
    ll_decl *d = &m->decl[m->ndecl++];
    d->revision = ll_json_long(row, "revision", -1);
    cpy(d->writer, sizeof d->writer, ll_json_str(row, "writer"));
    cpy(d->sha, sizeof d->sha, ll_json_str(row, "payload_sha256"));
  } else if (strcmp(rec, "lifecycle") == 0) {
    const cJSON *x = ll_json_get(row, "destructive");
    /* The read-back rule and a doubtful Put's uncertainty concern the
     * blob's bytes, not the lifecycle: they carry over (invariant 14). */
    long unreconciled = m->ep.unreconciled;
    int uncertain = m->ep.content_uncertain;
    ll_model_epoch_reset(&m->ep,
                         ll_json_long(row, "fixture_epoch", m->ep.epoch + 1),
                         cJSON_IsTrue(x));
    m->ep.unreconciled = unreconciled;
    m->ep.content_uncertain = uncertain;
    m->last_props_ok = m->last_read_ok = 0;
  } else if (strcmp(rec, "intent") == 0) {
    const char *id = ll_json_str(row, "event_id");
    if (id) {
      drop_key_from_end(m->open_intents, id);
      ll_json_add(m->open_intents, id, cJSON_Duplicate(row, 1));
    }
  } else if (strcmp(rec, "outcome") == 0) {
    return apply_outcome(m, row, fill, err);
  } else if (strcmp(rec, "cell") == 0) {
    return ll_model_apply_cell(m, row, fill, err);
  } else if (strcmp(rec, "flow") == 0) {
    if (cJSON_IsTrue(ll_json_get(row, "lease_table")))
      m->table.on = 1;
  } else if (strcmp(rec, "reconcile") == 0) {
    return apply_reconcile(m, row, fill, err);
  } else if (strcmp(rec, "finding") == 0) {
    return apply_finding(m, row, fill, err);
  } else if (strcmp(rec, "decision") == 0) {
    cJSON *reasons = NULL;
    const char *window = NULL;
    ll_decision dec = ll_decide(m, &reasons, &window);
    cJSON *d = cJSON_CreateObject();
    char *stmt = ll_decide_statement(m, dec);
    /* a decision computed on a failed allocation is never recorded */
    if (!reasons || !d || !stmt) {
      cJSON_Delete(reasons);
      cJSON_Delete(d);
      free(stmt);
      return ll_fail(err, LL_E_NOMEM, "out of memory deciding");
    }
    cJSON_AddStringToObject(d, "decision", ll_decision_name(dec));
    ll_json_add(d, "reasons", reasons);
    cJSON_AddStringToObject(d, "window_finding", window);
    cJSON_AddStringToObject(d, "statement", stmt);
    free(stmt);
    /* the HOLD latch left open, checkable by the next run on the blob */
    cJSON_AddNumberToObject(d, "open_doubts", cJSON_GetArraySize(m->doubts));
    ll_model_stop_fields(m, d);
    if (m->table.on)
      ll_json_add(d, "lease_table", ll_model_table_counts(m));
    ll_status st = ll_model_settle(row, d, fill, err);
    cJSON_Delete(d);
    snprintf(m->stopped, sizeof m->stopped,
             "decided: the decision is recorded");
    return st;
  } else if (strcmp(rec, "stop") == 0) {
    const char *kind = ll_json_str(row, "kind");
    const char *why = ll_json_str(row, "reason");
    snprintf(m->stopped, sizeof m->stopped, "%s: %s", kind ? kind : "stop",
             why ? why : "");
    if (kind && strcmp(kind, "no-decision") == 0)
      cpy(m->abandoned, sizeof m->abandoned, why);
  } else if (strcmp(rec, "recovery") == 0) {
    m->stopped[0] = m->abandoned[0] = '\0'; /* a new session goes on */
  } else if (strcmp(rec, "lease_bind") != 0 && strcmp(rec, "refusal") != 0 &&
             strcmp(rec, "note") != 0) {
    /* a row no writer makes, which every reader would skip: a forger's
     * way to hide a row without deleting it */
    return ll_fail(err, LL_E_TAMPER, "row %ld: unknown record type %.40s", seq,
                   rec);
  }
  /* lease_bind, refusal and note rows change no state. */
  return LL_OK;
}

/* A row folded across a failed allocation may have left the fold half
 * updated (a doubt, a reason, an event not kept): the model then refuses
 * every later row and its decision is HOLD (decide.c). A re-derivation that
 * failed for want of memory is LL_E_NOMEM, never a false LL_E_TAMPER. */
ll_status ll_model_apply(ll_model *m, cJSON *row, int fill, ll_error *err) {
  if (m->oom)
    return ll_fail(err, LL_E_NOMEM,
                   "out of memory: an allocation failed while folding an "
                   "earlier row, so this run's state is not trustworthy");
  if (!row)
    return ll_fail(err, LL_E_NOMEM, "out of memory: no row to fold");
  unsigned long mark = ll_alloc_failures();
  ll_status st = apply_row(m, row, fill, err);
  if (ll_alloc_failed_since(mark)) {
    m->oom = 1;
    return ll_fail(err, LL_E_NOMEM,
                   "out of memory while folding row %ld: this run's state is "
                   "no longer trustworthy",
                   ll_json_long(row, "seq", 0));
  }
  return st;
}
