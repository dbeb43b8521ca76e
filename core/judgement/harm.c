/* Invariant 15, do no harm to the target, as facts of the fold: the
 * preflight read, the lifecycle's create (If-None-Match: *), the ETag the
 * cleanup Delete is conditioned on (If-Match), and the stop when the blob
 * was not the run's to touch. Derived from rows alone, like the rest of the
 * model, so the run, recovery and verify agree. */
#include <stdio.h>
#include <string.h>

#include "jsonx.h"
#include "model_impl.h"

static void cpy(char *dst, size_t cap, const char *src) {
  ll_strlcpy(dst, src ? src : "", cap);
}

void ll_harm_manifest(ll_model *m, const cJSON *row) {
  cpy(m->harm.account_host, sizeof m->harm.account_host,
      ll_json_str(row, "account_host"));
  cpy(m->harm.blob_path, sizeof m->harm.blob_path,
      ll_json_str(row, "blob_path"));
}

/* exit: 64 when the run could not start as configured (the blob exists, or
 * cannot be reached or read); 2 (HOLD) when the service's answer was not
 * usable (no complete response, a 5xx). Nothing was mutated either way. */
static void stop(ll_model *m, ll_code code, const char *kind, int exit_code,
                 const char *msg) {
  if (m->harm.stop_code != LL_OK)
    return; /* the first stop is the one that explains the run */
  m->harm.stop_code = code;
  m->harm.stop_exit = exit_code;
  cpy(m->harm.stop_kind, sizeof m->harm.stop_kind, kind);
  cpy(m->harm.stop_msg, sizeof m->harm.stop_msg, msg);
}

#define WHAT_TO_DO                                                             \
  "leaselua only creates its own disposable blob; choose an unused "           \
  "AZURE_STORAGE_BLOB or delete it yourself if it is yours"

/* The preflight: 404 is a fresh target; 200 is someone's blob; anything
 * else (not sent, no usable answer, 401/403, another status) leaves the
 * target unknown. */
static void preflight(ll_model *m, const cJSON *row, const char *cls) {
  ll_harm_run *h = &m->harm;
  const char *outcome = ll_json_str(row, "outcome");
  long status = ll_json_long(row, "http_status", 0);
  const char *code = ll_json_str(row, "azure_error_code");
  const char *path = h->blob_path[0] ? h->blob_path : "?";
  char msg[800];
  if (ll_streq(cls, "STATE_OBSERVED") && status == 404) {
    if (h->preflight == LL_PREFLIGHT_PENDING)
      h->preflight = LL_PREFLIGHT_FRESH; /* BlobNotFound or ContainerNotFound
                                            (baseline.c) */
    return;
  }
  h->preflight = LL_PREFLIGHT_STOPPED;
  if (ll_streq(outcome, "RESPONSE") && status == 200) {
    const char *len = ll_json_str(row, "content_length");
    snprintf(msg, sizeof msg,
             "the blob %.250s already exists (preflight %s: 200, ETag %.64s, "
             "%.24s bytes, lease %.16s/%.16s): " WHAT_TO_DO,
             path, ll_json_pstr(row, "event_id"), ll_json_pstr(row, "etag"),
             len ? len : "?", ll_json_pstr(row, "observed_lease_state"),
             ll_json_pstr(row, "observed_lease_status"));
    stop(m, LL_E_TARGET_EXISTS, "target_exists", 64, msg);
  } else if (ll_streq(outcome, "NOT_SENT")) { /* DNS, refused, TLS */
    snprintf(msg, sizeof msg,
             "cannot reach %.120s for the preflight read of %.200s (%.200s): "
             "nothing was mutated; check AZURE_STORAGE_ACCOUNT_URL, the "
             "network and, for a TLS failure, --ca-file",
             h->account_host[0] ? h->account_host : "the account", path,
             ll_json_pstr(row, "transport_error"));
    stop(m, LL_E_PREFLIGHT, "preflight_failed", 64, msg);
  } else if (!ll_streq(outcome, "RESPONSE") || status >= 500) {
    char got[240];
    if (ll_streq(outcome, "RESPONSE"))
      snprintf(got, sizeof got, "answered %ld %.80s", status,
               code ? code : "(no error code)");
    else
      snprintf(got, sizeof got, "got no usable answer (%.200s)",
               ll_json_pstr(row, "transport_error"));
    snprintf(msg, sizeof msg,
             "the preflight read of %.200s on %.120s %s: whether the blob "
             "exists is unknown, so nothing was mutated; run again once the "
             "endpoint answers",
             path, h->account_host, got);
    stop(m, LL_E_PREFLIGHT, "preflight_unanswered", 2, msg);
  } else if (status == 401 || status == 403) {
    snprintf(msg, sizeof msg,
             "the preflight read of %.200s on %.120s was refused %ld %.80s: "
             "nothing was mutated; check the credential (token, SAS or "
             "identity) and its role on the container",
             path, h->account_host, status, code ? code : "(no error code)");
    stop(m, LL_E_PREFLIGHT, "preflight_failed", 64, msg);
  } else {
    snprintf(msg, sizeof msg,
             "the preflight read of %.200s on %.120s answered %ld %.80s, "
             "neither 404 (a fresh blob) nor 200 (the blob exists): nothing "
             "was mutated; check AZURE_STORAGE_ACCOUNT_URL and the service",
             path, h->account_host, status, code ? code : "(no error code)");
    stop(m, LL_E_PREFLIGHT, "preflight_failed", 64, msg);
  }
}

/* A create refused because the blob is there: 409 BlobAlreadyExists is the
 * documented answer; a 412 (ConditionNotMet, or a lease error from someone
 * else's lease) also says the blob exists. Nothing was written. */
static int create_refused(const cJSON *row) {
  long status = ll_json_long(row, "http_status", 0);
  return ll_json_is(row, "if_none_match", "*") &&
         ll_json_is(row, "outcome", "RESPONSE") &&
         ((status == 409 &&
           ll_json_is(row, "azure_error_code", "BlobAlreadyExists")) ||
          status == 412);
}

/* An ETag the service answered one of the run's own writes with, or that
 * a reconcile found on bytes a doubtful Put of the run declared. */
static void own_etag(ll_model *m, const char *etag) {
  ll_harm_run *h = &m->harm;
  if (!etag || !etag[0] || ll_model_own_etag(m, etag))
    return;
  cpy(h->own_etags[h->n_own_etags % LL_OWN_ETAGS], sizeof h->own_etags[0],
      etag);
  h->n_own_etags++;
}

/* The run's blob was read back under the ETag of its own write: the blob
 * is the lifecycle's own from here on (lease operations, the Delete). */
static void adopt(ll_harm_epoch *he, const char *etag) {
  cpy(he->cleanup_etag, sizeof he->cleanup_etag, etag);
  if (he->cleanup_etag[0])
    he->created = 1;
}

/* Another writer's object, or another party's lease, seen in an answer
 * about the run's blob: a HOLD that nothing lifts, so no mutation follows
 * (guard.c) and the blob is left for the operator. Two facts, each before
 * the row changes the fold:
 * - once a write of the run was answered with an ETag, every later 2xx
 *   answer about the blob, but a Put's own, names one of the run's own
 *   ETags (a Lease Blob answer carries the blob's ETag, unchanged), or,
 *   after a Put answered without one, the ETag its read-back found; while
 *   a request's outcome is unknown the reconcile decides instead
 *   (model_query.c);
 * - a read that finds the blob leased or breaking while no lease of the
 *   run can be current (none taken in this lifecycle, or released, or
 *   broken and not taken again): the lease is someone else's, and a break
 *   would break it. */
static void foreign(ll_model *m, const cJSON *row, ll_op op, const char *etag) {
  const ll_harm_epoch *he = &m->ep.harm;
  long status = ll_json_long(row, "http_status", 0);
  if (op == LL_OP_CREATE_CONTAINER || !he->written || status < 200 ||
      status > 299 || !ll_json_is(row, "outcome", "RESPONSE") ||
      cJSON_GetArraySize(m->doubts) > 0)
    return;
  if (op != LL_OP_PUT_BLOB && etag && etag[0] &&
      (!he->etag_unknown || he->pinned[0]) && !ll_model_own_etag(m, etag) &&
      !ll_streq(etag, he->pinned)) {
    ll_model_add_hold(
        m,
        "event %s (%s): the blob's ETag %.128s is none this run's writes "
        "were answered with: another writer replaced the blob; no mutation "
        "follows and the blob is left for the operator",
        ll_json_pstr(row, "event_id"), ll_op_name(op), etag);
  }
  const char *st = ll_json_str(row, "lease_state_after"); /* reads only */
  ll_phase ph = m->ep.phase;
  if ((op == LL_OP_GET_PROPERTIES || op == LL_OP_GET_BLOB) &&
      (ll_streq(st, "leased") || ll_streq(st, "breaking")) &&
      (ph == LL_PH_NONE || ph == LL_PH_RELEASED || ph == LL_PH_BROKEN)) {
    ll_model_add_hold(
        m,
        "event %s (%s): the blob is %s, but no lease of this run can be "
        "current (%s): another party's lease; no mutation follows and the "
        "blob is left for the operator",
        ll_json_pstr(row, "event_id"), ll_op_name(op), st,
        ph == LL_PH_NONE       ? "none was taken in this lifecycle"
        : ph == LL_PH_RELEASED ? "the run's lease was released or ended"
                               : "the run's lease was broken");
  }
}

/* The service refused the request's If-Match: 412 ConditionNotMet. */
static int if_match_refused(const cJSON *row) {
  return ll_json_long(row, "http_status", 0) == 412 &&
         ll_json_is(row, "azure_error_code", "ConditionNotMet") &&
         ll_json_str(row, "if_match");
}

int ll_harm_outcome(ll_model *m, const cJSON *row, ll_op op, const char *cls) {
  ll_harm_epoch *he = &m->ep.harm;
  const char *outcome = ll_json_str(row, "outcome");
  const char *etag = ll_json_str(row, "etag");
  int ok = ll_streq(cls, "ACCEPTED_WRITE") || ll_streq(cls, "STATE_OBSERVED");
  int doubtful =
      ll_streq(cls, "UNKNOWN_OUTCOME") || ll_streq(cls, "EVIDENCE_ERROR");
  if (ll_op_is_mutation(op) && !ll_streq(outcome, "NOT_SENT"))
    m->harm.mutations_sent++;
  if (cJSON_IsTrue(ll_json_get(row, "preflight"))) {
    preflight(m, row, cls);
    return 1;
  }
  foreign(m, row, op, etag);
  if (op == LL_OP_PUT_BLOB && ok) {
    he->written = 1;
    cpy(he->put_etag, sizeof he->put_etag, etag);
    own_etag(m, etag);
    he->etag_unknown = !etag || !etag[0];
    he->pinned[0] = '\0';
    if (!etag || !etag[0]) {
      ll_harm_run *h = &m->harm;
      int i = h->n_etagless++ % LL_OWN_ETAGS;
      h->etagless_rev[i] = ll_json_long(row, "payload_revision", LL_REV_NONE);
      cpy(h->etagless_actor[i], sizeof h->etagless_actor[0],
          ll_json_str(row, "actor_alias"));
    }
  } else if (op == LL_OP_PUT_BLOB && doubtful) {
    he->written = 1; /* the bytes may have changed: only a reconcile says */
    he->put_etag[0] = he->cleanup_etag[0] = '\0';
  } else if (op == LL_OP_PUT_BLOB && create_refused(row)) {
    char msg[800];
    snprintf(msg, sizeof msg,
             "the blob %.250s already exists (event %s: the create of "
             "revision %ld was refused %ld %.60s): " WHAT_TO_DO,
             m->harm.blob_path[0] ? m->harm.blob_path : "?",
             ll_json_pstr(row, "event_id"),
             ll_json_long(row, "payload_revision", -1),
             ll_json_long(row, "http_status", 0),
             ll_json_pstr(row, "azure_error_code"));
    stop(m, LL_E_TARGET_EXISTS, "target_exists", 64, msg);
  } else if (op == LL_OP_GET_BLOB && ok) {
    cpy(m->harm.last_read_etag, sizeof m->harm.last_read_etag, etag);
    /* the read-back of the accepted Put (as model.c's content_read sees
     * it), answered with the ETag that Put returned */
    long rev = ll_model_revision_of(m, ll_json_str(row, "content_sha256"));
    if (cJSON_GetArraySize(m->doubts) == 0 && m->ep.unreconciled >= 0 &&
        rev == m->ep.unreconciled && he->put_etag[0] &&
        ll_streq(etag, he->put_etag))
      adopt(he, he->put_etag);
    /* a Put answered without an ETag: its read-back's ETag is the one the
     * next answers are checked against (helper-35: the check was off until
     * the next Put), though the blob is adopted only by a reconcile */
    else if (cJSON_GetArraySize(m->doubts) == 0 && he->etag_unknown &&
             !he->pinned[0] && m->ep.unreconciled >= 0 &&
             rev == m->ep.unreconciled)
      cpy(he->pinned, sizeof he->pinned, etag);
  } else if (op == LL_OP_GET_BLOB) {
    m->harm.last_read_etag[0] = '\0';
  } else if (op == LL_OP_DELETE_BLOB && (ok || doubtful)) {
    /* the run's blob is (or may be) gone: whatever is there next is not
     * the lifecycle's own */
    he->created = 0;
  } else if (op == LL_OP_DELETE_BLOB && ll_streq(cls, "EXPECTED_REJECTION") &&
             if_match_refused(row)) {
    /* counted, so that a text lost to a failed allocation still stands
     * against ACCEPT (invariant 16) */
    ll_model_add_reconcile(
        m,
        "event %s: the cleanup Delete was refused 412 ConditionNotMet: "
        "the blob changed after the run's last read-back (If-Match %s), "
        "so someone else wrote it; the blob is left for the operator",
        ll_json_pstr(row, "event_id"), ll_json_pstr(row, "if_match"));
  } else if (ll_op_lease_conditioned(op) && if_match_refused(row)) {
    /* the blob is not the generation the run's writes left: another
     * writer replaced it, and the lease operation took nothing */
    ll_model_add_hold(
        m,
        "event %s (%s): refused 412 ConditionNotMet on If-Match %.128s: "
        "the blob is no longer the one this run's writes left, so another "
        "writer replaced or deleted it; no mutation follows and the blob "
        "is left for the operator",
        ll_json_pstr(row, "event_id"), ll_op_name(op),
        ll_json_pstr(row, "if_match"));
  }
  return 0;
}

void ll_harm_reconcile(ll_model *m, const char *result,
                       const char *not_adopted) {
  ll_harm_epoch *he = &m->ep.harm;
  if (not_adopted) {
    /* The bytes are explained, the object is not the run's, and no later
     * reconcile makes it so: nothing is conditioned on its ETag, and the
     * run holds. */
    ll_model_add_hold(
        m,
        "reconcile (content event %s): the content is revision %ld, but the "
        "blob's ETag %.128s is none this run's writes were answered with, "
        "nor on bytes a doubtful Put of this run declared: another writer's "
        "object, not adopted; no mutation follows and the blob is left for "
        "the operator",
        m->last_read_event, m->last_read_revision, not_adopted);
    he->cleanup_etag[0] = he->put_etag[0] = '\0';
  } else if (ll_model_reconcile_settles(result)) {
    /* The reconcile's content read identified declared bytes the ledger
     * explains, under an ETag a write of the run was answered with or on
     * the bytes a doubtful Put of the run declared (model_query.c): the
     * generation this run vouches for. */
    adopt(he, m->harm.last_read_etag);
    own_etag(m, he->cleanup_etag);
    he->put_etag[0] = '\0';
    he->etag_unknown = 0;
    he->pinned[0] = '\0';
  } else if (!ll_streq(result, "INCOMPLETE")) {
    he->cleanup_etag[0] = '\0'; /* content the ledger cannot explain */
  }
}

void ll_harm_decide_reasons(const ll_model *m, cJSON *hold) {
  if (m->harm.stop_code == LL_OK)
    return;
  char buf[128];
  if (m->harm.mutations_sent == 0)
    snprintf(buf, sizeof buf,
             "no mutation was sent: the target is as the "
             "run found it");
  else
    snprintf(buf, sizeof buf,
             "%ld mutation request(s) were sent before the stop; none after",
             m->harm.mutations_sent);
  cJSON_InsertItemInArray(hold, 0, cJSON_CreateString(buf));
  cJSON_InsertItemInArray(hold, 0, cJSON_CreateString(m->harm.stop_msg));
}

/* Only a stopped run's decision carries "target_stop", so decisions recorded
 * before invariant 15 still verify. */
void ll_model_stop_fields(const ll_model *m, cJSON *d) {
  if (m->harm.stop_code == LL_OK)
    return;
  cJSON *s = cJSON_AddObjectToObject(d, "target_stop");
  cJSON_AddStringToObject(s, "kind", m->harm.stop_kind);
  cJSON_AddStringToObject(s, "code", ll_code_name(m->harm.stop_code));
  cJSON_AddNumberToObject(s, "invariant", 15);
  cJSON_AddNumberToObject(s, "exit", m->harm.stop_exit);
  cJSON_AddStringToObject(s, "message", m->harm.stop_msg);
  cJSON_AddNumberToObject(s, "mutations_sent", (double)m->harm.mutations_sent);
}

/* A run that already sent a mutation is past its first one: a ledger from
 * before the preflight existed is recovered without one (the blob it finds
 * is its own). */
int ll_model_preflight_done(const ll_model *m) {
  return m->harm.preflight != LL_PREFLIGHT_PENDING ||
         m->harm.mutations_sent > 0;
}

const char *ll_model_stop(const ll_model *m, ll_code *code) {
  if (code)
    *code = m->harm.stop_code;
  return m->harm.stop_code != LL_OK ? m->harm.stop_msg : NULL;
}

int ll_model_stop_exit(const ll_model *m) {
  return m->harm.stop_code != LL_OK ? m->harm.stop_exit : 0;
}

int ll_model_creates(const ll_model *m) {
  return !m->ep.harm.written;
}

const char *ll_model_cleanup_etag(const ll_model *m) {
  return m->ep.harm.cleanup_etag;
}

/* The blob's ETag as the run's own writes left it: the last accepted Put's
 * answer, else (that answer named none) the ETag its read-back found, else
 * the last one read back or adopted. "" when no answer named it (a Put and
 * its read-back without one, a doubtful Put not yet reconciled): the guard
 * then refuses the acquire and the break. */
const char *ll_model_lease_etag(const ll_model *m) {
  const ll_harm_epoch *he = &m->ep.harm;
  if (he->put_etag[0])
    return he->put_etag;
  if (he->etag_unknown)
    return he->pinned;
  return he->cleanup_etag;
}

int ll_model_created(const ll_model *m) {
  return m->ep.harm.created;
}
