/* Read-only queries on the fold's state (model.c), for the guard, the
 * run, the bindings and verify, and for the judgement files that the fold
 * calls (decide.c, harm.c). Each answers from the rows applied so far; none
 * calls another file of the group. */
#include <string.h>

#include "jsonx.h"
#include "model_impl.h"

const char *ll_phase_name(ll_phase p) {
  static const char *const n[] = {"none",     "leased", "break-sent",
                                  "breaking", "broken", "released",
                                  "unknown"};
  return (unsigned)p < 7 ? n[p] : "unknown";
}

long ll_model_revision_of(const ll_model *m, const char *sha) {
  if (!sha)
    return LL_REV_UNKNOWN;
  for (int i = 0; i < m->ndecl; i++)
    if (strcmp(m->decl[i].sha, sha) == 0)
      return m->decl[i].revision;
  return LL_REV_NONE;
}

int ll_model_was_rejected(const ll_model *m, long revision) {
  for (int i = 0; i < m->ep.nrejected; i++)
    if (m->ep.rejected[i] == revision)
      return 1;
  return 0;
}

int ll_model_has_manifest(const ll_model *m) {
  return m->have_manifest;
}
const char *ll_model_endpoint_kind(const ll_model *m) {
  return m->endpoint_kind;
}
const char *ll_model_api_version(const ll_model *m) {
  return m->api_version;
}
long ll_model_epoch(const ll_model *m) {
  return m->ep.epoch;
}
int ll_model_destructive(const ll_model *m) {
  return m->ep.destructive;
}
ll_phase ll_model_phase(const ll_model *m) {
  return m->ep.phase;
}
const char *ll_model_holder(const ll_model *m) {
  return m->ep.holder;
}
int ll_model_doubts(const ll_model *m) {
  return cJSON_GetArraySize(m->doubts);
}
const char *ll_model_doubt_event(const ll_model *m, int i) {
  return ll_json_str(cJSON_GetArrayItem(m->doubts, i), "event_id");
}
int ll_model_reconcile_settles(const char *result) {
  return result && (strcmp(result, "MATCH") == 0 ||
                    strcmp(result, "DOUBTFUL_WRITE_COMMITTED") == 0 ||
                    strcmp(result, "DOUBTFUL_WRITE_NOT_PRESENT") == 0);
}
int ll_model_reconciled(const ll_model *m) {
  return m->ep.reconciled;
}
long ll_model_unreconciled(const ll_model *m) {
  return m->ep.unreconciled;
}
int ll_model_probe_done(const ll_model *m) {
  return m->ep.probe_done;
}
long ll_model_break_sent(const ll_model *m) {
  return m->ep.break_period;
}
int ll_model_break_hint(const ll_model *m, double *end_ns, long *hint_s) {
  if (!m->ep.break_answered)
    return 0;
  *end_ns = m->ep.break_end_ns;
  *hint_s = m->ep.break_hint_s;
  return m->ep.break_has_hint;
}
const cJSON *ll_model_open_intents(const ll_model *m) {
  return m->open_intents;
}
const char *ll_model_observed_state(const ll_model *m) {
  return m->ep.obs_state;
}
const char *ll_model_observed_status(const ll_model *m) {
  return m->ep.obs_status;
}
long ll_model_last_accepted(const ll_model *m) {
  return m->ep.last_accepted;
}

int ll_model_actor_permitted(const ll_model *m, const char *actor) {
  const cJSON *a;
  cJSON_ArrayForEach(a, m->actors) {
    if (cJSON_IsString(a) && actor && strcmp(a->valuestring, actor) == 0)
      return 1;
  }
  return 0;
}

const cJSON *ll_model_actors(const ll_model *m) {
  return m->have_manifest ? m->actors : NULL;
}

const char *ll_model_stopped(const ll_model *m) {
  return m->stopped[0] ? m->stopped : NULL;
}

int ll_model_cleanup_confirmed(const ll_model *m) {
  return m->ep.cleanup_confirmed;
}

int ll_model_run_leased(const ll_model *m) {
  return m->run_leased;
}
int ll_model_blob_known_absent(const ll_model *m) {
  return m->absent_confirmed;
}
int ll_model_blob_deleted(const ll_model *m) {
  return m->blob_deleted;
}
int ll_model_release_confirmed(const ll_model *m) {
  return m->release_confirmed;
}
int ll_model_lifecycle_mutations(const ll_model *m) {
  return m->ep.mutations;
}
int ll_model_first_write_pending(const ll_model *m) {
  return m->ep.puts == 0;
}

const char *ll_model_declared(const ll_model *m, long revision,
                              const char *writer) {
  for (int i = 0; i < m->ndecl; i++)
    if (m->decl[i].revision == revision &&
        (!writer || strcmp(m->decl[i].writer, writer) == 0))
      return m->decl[i].sha;
  return NULL;
}

long ll_model_declaration(const ll_model *m, int i, const char **writer,
                          const char **sha) {
  if (i < 0 || i >= m->ndecl)
    return LL_REV_NONE;
  *writer = m->decl[i].writer;
  *sha = m->decl[i].sha;
  return m->decl[i].revision;
}

const char *ll_model_hold_reason(const ll_model *m) {
  if (m->oom)
    return "an allocation failed while folding the evidence: the run's state "
           "is not trustworthy";
  const cJSON *first = cJSON_GetArrayItem(m->hold_reasons, 0);
  if (cJSON_IsString(first))
    return first->valuestring;
  /* counted but its text lost: still a HOLD that nothing lifts */
  return m->n_hold > 0 ? LL_REASON_LOST : NULL;
}

int ll_model_own_etag(const ll_model *m, const char *etag) {
  const ll_harm_run *h = &m->harm;
  int n = h->n_own_etags < LL_OWN_ETAGS ? h->n_own_etags : LL_OWN_ETAGS;
  for (int i = 0; etag && etag[0] && i < n; i++)
    if (strcmp(h->own_etags[i], etag) == 0)
      return 1;
  return 0;
}

/* Invariant 15: the ETag of a reconcile's content read becomes the run's
 * (the cleanup Delete's If-Match) only when a write of the run was answered
 * with it, or when the bytes read are the very payload a doubtful Put of the
 * run declared (or an accepted Put whose lost answer the logs settled, so
 * that it names no ETag) (its revision and writer, whose SHA-256 the intent row
 * records); else the object is another writer's, even with the same bytes
 * (the canonical payload names no run). The read ETag then, else NULL. */
static const char *etag_not_adopted(const ll_model *m, long found) {
  const char *etag = m->harm.last_read_etag;
  if (!etag[0] || ll_model_own_etag(m, etag))
    return NULL;
  const cJSON *d;
  cJSON_ArrayForEach(d, m->doubts) {
    const cJSON *rv = ll_json_get(d, "revision");
    const char *actor = ll_json_str(d, "actor");
    if (strcmp(ll_json_pstr(d, "operation"), "Put Blob") != 0 ||
        !cJSON_IsNumber(rv) || !actor || found < 0 ||
        (long)rv->valuedouble != found)
      continue;
    if (ll_streq(ll_model_declared(m, found, actor), m->last_read_sha))
      return NULL;
  }
  const ll_harm_run *h = &m->harm;
  int n = h->n_etagless < LL_OWN_ETAGS ? h->n_etagless : LL_OWN_ETAGS;
  for (int i = 0; i < n && found >= 0; i++)
    if (h->etagless_rev[i] == found && h->etagless_actor[i][0] &&
        ll_streq(ll_model_declared(m, found, h->etagless_actor[i]),
                 m->last_read_sha))
      return NULL;
  return etag;
}

cJSON *ll_model_reconcile_row(const ll_model *m, ll_error *err) {
  cJSON *r = cJSON_CreateObject();
  if (!r) {
    ll_fail(err, LL_E_NOMEM, "out of memory");
    return NULL;
  }
  const ll_epoch_state *ep = &m->ep;
  const char *res;
  long found = m->last_read_revision;
  int doubtful_found = 0;
  const cJSON *d;
  cJSON_ArrayForEach(d, m->doubts) {
    const cJSON *rv = ll_json_get(d, "revision");
    if (strcmp(ll_json_pstr(d, "operation"), "Put Blob") == 0 &&
        cJSON_IsNumber(rv) && (long)rv->valuedouble == found && found >= 0)
      doubtful_found = 1;
  }
  if (!m->last_props_ok || !m->last_read_ok)
    res = "INCOMPLETE";
  else if (doubtful_found)
    res = "DOUBTFUL_WRITE_COMMITTED";
  else if (found >= 0 && ll_model_was_rejected(m, found))
    res = "REJECTED_REVISION_FOUND";
  else if (found >= 0 && found == ep->last_accepted)
    res = cJSON_GetArraySize(m->doubts) > 0 && ep->content_uncertain
              ? "DOUBTFUL_WRITE_NOT_PRESENT"
              : "MATCH";
  else
    res = "MISMATCH";
  cJSON_AddStringToObject(r, "record", "reconcile");
  cJSON_AddNumberToObject(r, "fixture_epoch", ep->epoch);
  cJSON_AddStringToObject(r, "properties_event", m->last_props_event);
  cJSON_AddStringToObject(r, "observed_lease_state", m->last_props_state);
  cJSON_AddStringToObject(r, "observed_lease_status", m->last_props_status);
  cJSON_AddStringToObject(r, "content_event", m->last_read_event);
  cJSON_AddStringToObject(r, "content_sha256", m->last_read_sha);
  cJSON_AddNumberToObject(r, "content_revision", found);
  cJSON_AddNumberToObject(r, "accepted_revision", ep->last_accepted);
  ll_json_add(r, "doubts", cJSON_Duplicate(m->doubts, 1));
  cJSON_AddStringToObject(r, "result", res);
  /* only on a reconcile that would otherwise settle, so the rows of a run
   * that never met another writer's object re-derive as they were */
  const char *foreign =
      ll_model_reconcile_settles(res) ? etag_not_adopted(m, found) : NULL;
  if (foreign)
    cJSON_AddStringToObject(r, "etag_not_adopted", foreign);
  return r;
}
