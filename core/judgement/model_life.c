/* The fold's life: a new model, its state at the start of a lifecycle,
 * the reasons it gathers, and its end. model.c folds rows into it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "jsonx.h"
#include "model_impl.h"

static void add_reason_v(cJSON *list, const char *fmt, va_list ap) {
  char buf[512];
  vsnprintf(buf, sizeof buf, fmt, ap);
  ll_json_push(list, cJSON_CreateString(buf));
}

/* The fold's HOLD and RECONCILE reasons are counted apart from their
 * text: the decision tests the counts, so a text lost to a failed
 * allocation still stands against ACCEPT. */
void ll_model_add_hold(ll_model *m, const char *fmt, ...) {
  va_list ap;
  m->n_hold++;
  va_start(ap, fmt);
  add_reason_v(m->hold_reasons, fmt, ap);
  va_end(ap);
}

void ll_model_add_reconcile(ll_model *m, const char *fmt, ...) {
  va_list ap;
  m->n_reconcile++;
  va_start(ap, fmt);
  add_reason_v(m->reconcile_reasons, fmt, ap);
  va_end(ap);
}

/* A lifecycle starts with nothing known of its blob. */
void ll_model_epoch_reset(ll_epoch_state *ep, long epoch, int destructive) {
  memset(ep, 0, sizeof *ep);
  ep->epoch = epoch;
  ep->destructive = destructive;
  ep->break_period = LL_BREAK_NONE;
  ep->last_accepted = LL_REV_NONE;
  ep->unreconciled = LL_REV_NONE;
  ep->content_revision = LL_REV_UNKNOWN;
  ep->new_write_rev = LL_REV_NONE;
  ep->gap_write_rev = LL_REV_NONE;
}

ll_model *ll_model_new(void) {
  ll_alloc_init();
  ll_model *m = calloc(1, sizeof *m);
  if (!m)
    return NULL;
  ll_model_epoch_reset(&m->ep, 0, 0);
  m->doubts = cJSON_CreateArray();
  m->open_intents = cJSON_CreateObject();
  m->events = cJSON_CreateObject();
  m->hold_reasons = cJSON_CreateArray();
  m->reconcile_reasons = cJSON_CreateArray();
  m->last_read_revision = LL_REV_UNKNOWN;
  ll_strlcpy(m->api_version, LL_API_VERSION, sizeof m->api_version);
  if (!m->doubts || !m->open_intents || !m->events || !m->hold_reasons ||
      !m->reconcile_reasons) {
    ll_model_free(m);
    return NULL;
  }
  return m;
}

void ll_model_free(ll_model *m) {
  if (!m)
    return;
  cJSON_Delete(m->actors);
  cJSON_Delete(m->doubts);
  cJSON_Delete(m->open_intents);
  cJSON_Delete(m->events);
  ll_model_events_free(m);
  cJSON_Delete(m->hold_reasons);
  cJSON_Delete(m->reconcile_reasons);
  free(m);
}
