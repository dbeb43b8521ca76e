/* The scenario table runner shared by test_decide.c and
 * test_decide_hold.c: build the rows, append a decision row, compare the
 * decision, reasons, window finding, statement and one marked row, then
 * re-derive every row with fill=0. */
#ifndef LL_SCENARIO_H
#define LL_SCENARIO_H

#include <stdlib.h>
#include <string.h>

#include "ll_rows.h"

static const ll_profile OTHER_SERVER = {"emulator", NULL, "SomethingElse",
                                        "2026-06-06", NULL};
static const ll_profile REPLAY_EMU = {
    "replay", "emulator", "Azurite-Blob/3.37.0", "2026-06-06", NULL};
static const ll_profile REPLAY_AZURE = {
    "replay", "azure", "Azurite-Blob/3.37.0", "2026-06-06", NULL};

typedef struct {
  const char *name;
  const ll_profile *prof;
  ll_step steps[56];
  const char *decision;
  const char *reason; /* substring of some reason; NULL: no reasons */
  const char *window;
  /* the marked row: a field and its expected value ("null": JSON null) */
  const char *mark_key, *mark_val;
  const char *mark_disc; /* substring of a discrepancy; "": none */
} scenario;

#define NOMARK NULL, NULL, NULL
#define AFTER_BROKEN CHAIN_TO_BROKEN, CHAIN_BROKEN, CHAIN_STALE

static inline int mark_ok(const cJSON *mark, const char *key, const char *val) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(mark, key);
  if (strcmp(val, "null") == 0)
    return cJSON_IsNull(v);
  if (cJSON_IsNumber(v))
    return atol(val) == (long)v->valuedouble;
  return cJSON_IsString(v) && strcmp(v->valuestring, val) == 0;
}

static inline void run_scenario(const scenario *sc) {
  int before = ll_test_fail;
  ll_rb b;
  rb_init(&b, sc->prof, 1);
  cJSON *mark = rb_run(&b, sc->steps);
  ll_step dec = DECIDE;
  cJSON *drow = rb_step(&b, &dec);
  CHECK_INT(b.failed, 0);

  cJSON *reasons = NULL;
  const char *window = NULL;
  ll_decision d = ll_decide(b.m, &reasons, &window);
  CHECK_STR(ll_decision_name(d), sc->decision);
  CHECK_STR(window, sc->window);
  if (sc->reason)
    CHECK(rb_any_contains(reasons, sc->reason));
  else
    CHECK_INT(cJSON_GetArraySize(reasons), 0);
  /* the decision row says the same */
  CHECK_STR(rb_str(drow, "decision"), sc->decision);
  CHECK_STR(rb_str(drow, "window_finding"), sc->window);
  CHECK(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(drow, "reasons"),
                      reasons, 1));
  const char *stmt = rb_str(drow, "statement");
  int gap = strstr(sc->name, "gap") != NULL;
  CHECK(stmt && (d == LL_DEC_ACCEPT && !gap) ==
                    (strstr(stmt, "the observed handoff is accepted") != NULL));
  if (d == LL_DEC_ACCEPT && gap && stmt)
    CHECK(strstr(stmt, "Unlocked-gap control accepted") &&
          strstr(stmt, "revision 102 was accepted"));
  if (d == LL_DEC_ACCEPT && !gap && stmt) {
    CHECK(strstr(stmt, "stale lease A no longer authorized") != NULL);
    CHECK(strstr(stmt, "lease B was positively acquired") != NULL);
    CHECK(strstr(stmt, "API version 2023-11-03") != NULL);
  }
  if (stmt && d != LL_DEC_ACCEPT) {
    char prefix[16];
    snprintf(prefix, sizeof prefix, "%s: ", sc->decision);
    CHECK(strncmp(stmt, prefix, strlen(prefix)) == 0);
  }
  if (stmt && strcmp(sc->prof->kind, "azure") != 0)
    CHECK(strstr(stmt, "not a cloud qualification") != NULL);
  if (stmt && strcmp(sc->prof->kind, "azure") == 0)
    CHECK(strstr(stmt, "Endpoint kind: azure.") != NULL);

  if (sc->mark_key) {
    CHECK(mark != NULL);
    if (mark) {
      CHECK(mark_ok(mark, sc->mark_key, sc->mark_val));
      const cJSON *disc = cJSON_GetObjectItemCaseSensitive(mark, "discrepancy");
      if (sc->mark_disc && !*sc->mark_disc)
        CHECK_INT(cJSON_GetArraySize(disc), 0);
      else if (sc->mark_disc)
        CHECK(rb_any_contains(disc, sc->mark_disc));
    }
  }
  ll_error err = {0};
  CHECK_INT(rb_verify(b.rows, &err), LL_OK);
  if (ll_test_fail > before) {
    char *r = cJSON_PrintUnformatted(reasons);
    fprintf(stderr, "  in scenario \"%s\": %s %s %s\n", sc->name,
            ll_decision_name(d), window, r ? r : "");
    if (mark) {
      char *mk = cJSON_PrintUnformatted(mark);
      fprintf(stderr, "  marked row: %s\n", mk ? mk : "");
      free(mk);
    }
    free(r);
  }
  cJSON_Delete(reasons);
  rb_free(&b);
}

#endif
