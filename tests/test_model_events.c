/* core/judgement/model_events.c: the fold's events by ID. Lookups after
 * the index grows, a replaced event kept once (its newest summary), IDs
 * compared exactly (case and length), and a run's worth of events folded
 * with every one still found. */
#include <stdio.h>
#include <string.h>

#include "jsonx.h"
#include "model_impl.h"
#include "testlib.h"

static cJSON *summary(long n) {
  cJSON *e = cJSON_CreateObject();
  cJSON_AddNumberToObject(e, "http_status", (double)n);
  return e;
}

static long status_of(const ll_model *m, const char *id) {
  return ll_json_long(ll_model_event(m, id), "http_status", -1);
}

int main(void) {
  ll_model *m = ll_model_new();
  CHECK(m != NULL);
  if (!m)
    return ll_test_report("test_model_events");
  CHECK(ll_model_event(m, "e0001") == NULL); /* empty: no index yet */
  CHECK(ll_model_event(m, NULL) == NULL);

  /* 20,000 events: the index grows from 64 slots nine times */
  char id[16];
  int put_ok = 1;
  for (long i = 1; i <= 20000; i++) {
    snprintf(id, sizeof id, "e%04ld", i);
    put_ok &= ll_model_event_put(m, id, summary(i));
  }
  CHECK(put_ok);
  long wrong = 0;
  for (long i = 1; i <= 20000; i++) {
    snprintf(id, sizeof id, "e%04ld", i);
    wrong += status_of(m, id) != i;
  }
  CHECK_INT(wrong, 0);
  CHECK_INT(cJSON_GetArraySize(m->events), 20000);

  /* an outcome replaces its event: one entry, the newest summary */
  CHECK(ll_model_event_put(m, "e0007", summary(412)));
  CHECK(ll_model_event_put(m, "e0007", summary(409)));
  CHECK_INT(status_of(m, "e0007"), 409);
  CHECK_INT(cJSON_GetArraySize(m->events), 20000);
  int seen = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, m->events) seen += strcmp(c->string, "e0007") == 0;
  CHECK_INT(seen, 1);
  CHECK_INT(status_of(m, "e0008"), 8); /* its neighbours untouched */
  CHECK_INT(status_of(m, "e0006"), 6);

  /* exact IDs only: an edited row naming E0007 or e007 finds nothing */
  CHECK(ll_model_event(m, "E0007") == NULL);
  CHECK(ll_model_event(m, "e007") == NULL);
  CHECK(ll_model_event(m, "e00070") == NULL); /* e0070 is, e00070 is not */
  CHECK_INT(status_of(m, "e0070"), 70);
  CHECK(ll_model_event(m, "e20001") == NULL);
  CHECK(ll_model_event(m, "") == NULL);

  /* a row that names no event (a window finding without before_event)
   * finds nothing, even when some event was stored under "" */
  CHECK(ll_model_event_put(m, "", summary(200)));
  CHECK_INT(status_of(m, ""), 200);
  CHECK(ll_model_event(m, NULL) == NULL);

  /* NULL (an allocation that failed upstream) stores nothing */
  CHECK(!ll_model_event_put(m, "e99999", NULL));
  CHECK(ll_model_event(m, "e99999") == NULL);

  ll_model_free(m);
  return ll_test_report("test_model_events");
}
