/* Read-only queries on the fold (model.c), for the guard, the run, the
 * bindings and verify. Each answers from the rows applied so far. */
#include <string.h>

#include "model_impl.h"

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
long ll_model_unreconciled(const ll_model *m) {
  return m->ep.unreconciled;
}
int ll_model_probe_done(const ll_model *m) {
  return m->ep.probe_done;
}
long ll_model_break_sent(const ll_model *m) {
  return m->ep.break_period;
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
