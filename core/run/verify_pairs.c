/* verify's pairing of each outcome row with the intent of its request:
 * the outcome copies its intent's fields (run_row.c, ll_row_outcome), so
 * an outcome whose intent is missing, already answered, or says something
 * else is a ledger that was edited. */
#include "verify_impl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "jsonx.h"

/* The fields an outcome row copies from its intent row. */
static const char *const PAIRED[] = {"run_id",
                                     "fixture_epoch",
                                     "step",
                                     "operation",
                                     "actor_alias",
                                     "principal",
                                     "request_started_utc",
                                     "http_method",
                                     "blob_path",
                                     "requested_api_version",
                                     "lease_alias_supplied",
                                     "lease_real_id",
                                     "payload_revision",
                                     "payload_sha256",
                                     "request_shape",
                                     "client_request_id",
                                     "if_none_match",
                                     "if_match",
                                     "preflight"};

/* One request: its intent row, and whether an outcome answered it. */
typedef struct {
  const char *event; /* borrowed from the intent row; NULL: empty slot */
  const cJSON *intent;
  long answered; /* seq of its outcome, 0: none yet */
} slot;

typedef struct {
  slot *s;
  size_t cap; /* a power of two, at least twice the intents */
} table;

static size_t hash(const char *k) {
  size_t h = 5381;
  for (; *k; k++)
    h = h * 33 + (unsigned char)*k;
  return h;
}

/* The slot of event: its own, or the empty one where it would go. */
static slot *find(const table *t, const char *event) {
  size_t i = hash(event) & (t->cap - 1);
  while (t->s[i].event && strcmp(t->s[i].event, event) != 0)
    i = (i + 1) & (t->cap - 1);
  return &t->s[i];
}

/* The first field in which intent and outcome differ, or NULL: a field
 * absent from both is the same, one present in one only differs. */
static const char *differs(const cJSON *intent, const cJSON *outcome) {
  for (size_t i = 0; i < sizeof PAIRED / sizeof *PAIRED; i++) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(intent, PAIRED[i]);
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(outcome, PAIRED[i]);
    if ((a || b) && !(a && b && cJSON_Compare(a, b, 1)))
      return PAIRED[i];
  }
  return NULL;
}

long ll_verify_pairs(const cJSON *rows, char *why, size_t cap) {
  size_t intents = 0;
  const cJSON *row;
  cJSON_ArrayForEach(row, rows) {
    intents += ll_json_is(row, "record", "intent");
  }
  table t = {.cap = 16};
  while (t.cap < intents * 2 && t.cap < SIZE_MAX / 4 / sizeof *t.s)
    t.cap *= 2;
  t.s = ll_malloc(t.cap * sizeof *t.s);
  if (t.s)
    memset(t.s, 0, t.cap * sizeof *t.s);
  if (!t.s) {
    snprintf(why, cap, "out of memory pairing outcomes with intents");
    return -1;
  }
  long bad = 0;
  cJSON_ArrayForEach(row, rows) {
    int intent = ll_json_is(row, "record", "intent");
    if (!intent && !ll_json_is(row, "record", "outcome"))
      continue;
    long seq = ll_json_long(row, "seq", 0);
    const char *ev = ll_json_str(row, "event_id");
    slot *s = ev && *ev ? find(&t, ev) : NULL;
    const char *field = s && !intent && s->event && !s->answered
                            ? differs(s->intent, row)
                            : NULL;
    if (!s) {
      snprintf(why, cap, "%s row without an event_id: it pairs with nothing",
               intent ? "an intent" : "an outcome");
    } else if (intent && s->event) {
      snprintf(why, cap,
               "intent of event %.40s repeats the event_id of the intent at "
               "row %ld: each request has its own",
               ev, ll_json_long(s->intent, "seq", 0));
    } else if (intent) {
      s->event = ev;
      s->intent = row;
      continue;
    } else if (!s->event) {
      snprintf(why, cap,
               "outcome of event %.40s has no intent row before it: a "
               "request's intent is written before it is sent",
               ev);
    } else if (s->answered) {
      snprintf(why, cap,
               "outcome of event %.40s: its intent (row %ld) already has its "
               "outcome (row %ld): one request, one outcome",
               ev, ll_json_long(s->intent, "seq", 0), s->answered);
    } else if (field) {
      snprintf(why, cap,
               "outcome of event %.40s does not pair with its intent (row "
               "%ld): %s differs, where an outcome copies it from its intent",
               ev, ll_json_long(s->intent, "seq", 0), field);
    } else {
      s->answered = seq > 0 ? seq : 1;
      continue;
    }
    bad = seq > 0 ? seq : 1;
    break;
  }
  free(t.s);
  return bad;
}
