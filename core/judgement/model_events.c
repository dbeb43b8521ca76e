/* The fold's events by ID: each outcome's summary, which the window's and
 * the lease table's rows look up by event ID. The cJSON object m->events
 * owns them; an open-addressing index beside it finds one in O(1), so a
 * run of n rows folds in O(n). Before it, every outcome searched the
 * object key by key for an event of its ID, a fifth of a read's time at
 * 3,000 reads (perf, bench/reads.lua). */
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "jsonx.h"
#include "model_impl.h"

static uint64_t hash_id(const char *s) {
  uint64_t h = 1469598103934665603ULL; /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

/* The slot holding id, or the empty slot where it would go. */
static size_t slot_of(const ll_model *m, const char *id) {
  size_t mask = m->ev_cap - 1, i = (size_t)hash_id(id) & mask;
  while (m->ev_slots[i] && strcmp(m->ev_slots[i]->string, id) != 0)
    i = (i + 1) & mask;
  return i;
}

static int grow(ll_model *m) {
  size_t cap = m->ev_cap ? m->ev_cap * 2 : 64;
  cJSON **old = m->ev_slots;
  size_t old_cap = m->ev_cap;
  /* counted: a failure here is the fold's out of memory (model.c) */
  cJSON **slots = ll_malloc(cap * sizeof *slots);
  if (!slots)
    return 0;
  memset(slots, 0, cap * sizeof *slots);
  m->ev_slots = slots;
  m->ev_cap = cap;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i])
      slots[slot_of(m, old[i]->string)] = old[i];
  ll_free(old);
  return 1;
}

const cJSON *ll_model_event(const ll_model *m, const char *id) {
  if (!id || !m->ev_cap)
    return NULL;
  return m->ev_slots[slot_of(m, id)];
}

int ll_model_event_put(ll_model *m, const char *id, cJSON *e) {
  if (!e)
    return 0;
  if ((m->ev_n + 1) * 2 > m->ev_cap && !grow(m)) {
    cJSON_Delete(e);
    return 0;
  }
  size_t i = slot_of(m, id);
  cJSON *old = m->ev_slots[i];
  if (!ll_json_add(m->events, id, e))
    return 0;
  /* the key the index compares is the new item's own copy of id */
  m->ev_slots[i] = m->events->child->prev;
  if (old)
    cJSON_Delete(cJSON_DetachItemViaPointer(m->events, old));
  else
    m->ev_n++;
  return 1;
}

/* An outcome's summary, kept under its event ID: its operation, class,
 * observed lease state and status, HTTP status, seq and lifecycle, and
 * the cell (with a cell's payload revision and returned-ID match), error
 * code and content revision where it has them. */
void ll_model_remember_event(ll_model *m, const cJSON *row, const char *cls) {
  const char *id = ll_json_str(row, "event_id");
  if (!id)
    return;
  cJSON *e = cJSON_CreateObject();
  cJSON_AddStringToObject(e, "operation", ll_json_str(row, "operation"));
  cJSON_AddStringToObject(e, "class", cls ? cls : "");
  cJSON_AddStringToObject(e, "state",
                          ll_json_str(row, "observed_lease_state")
                              ? ll_json_str(row, "observed_lease_state")
                              : "");
  cJSON_AddStringToObject(e, "status",
                          ll_json_str(row, "observed_lease_status")
                              ? ll_json_str(row, "observed_lease_status")
                              : "");
  cJSON_AddNumberToObject(e, "http_status",
                          ll_json_long(row, "http_status", 0));
  /* what a lease-table cell row copies from it, and where it stands
   * (model_cell.c) */
  cJSON_AddNumberToObject(e, "seq", ll_json_double(row, "seq", 0));
  cJSON_AddNumberToObject(e, "fixture_epoch",
                          ll_json_double(row, "fixture_epoch", -1));
  if (ll_json_str(row, "cell")) {
    cJSON_AddStringToObject(e, "cell", ll_json_str(row, "cell"));
    /* what the cell's verdict weighs beside its status (model_cell.c) */
    const cJSON *rev = ll_json_get(row, "payload_revision");
    if (cJSON_IsNumber(rev))
      cJSON_AddNumberToObject(e, "payload_revision", rev->valuedouble);
    /* an ID proposed: an acquire with none gets whatever the service
     * makes (baseline.c asks the same) */
    const cJSON *same = ll_json_get(row, "returned_lease_matches_proposed");
    if (cJSON_IsBool(same) &&
        !ll_lease_none(ll_json_str(row, "lease_alias_supplied")))
      cJSON_AddBoolToObject(e, "returned_lease_matches_proposed",
                            cJSON_IsTrue(same));
  }
  if (ll_json_str(row, "azure_error_code"))
    cJSON_AddStringToObject(e, "code", ll_json_str(row, "azure_error_code"));
  if (cJSON_IsNumber(ll_json_get(row, "content_revision")))
    cJSON_AddNumberToObject(e, "content_revision",
                            ll_json_double(row, "content_revision", -1));
  ll_model_event_put(m, id, e); /* a failure is counted (ll_model_apply) */
}

void ll_model_events_free(ll_model *m) {
  ll_free(m->ev_slots);
  m->ev_slots = NULL;
  m->ev_cap = m->ev_n = 0;
}
