/* DESIGN.md invariant 16: ACCEPT comes from the positive chain of section 5,
 * never from an empty list of reasons, and never from a fold that lost
 * something to a failed allocation. A complete ACCEPT chain is built, then
 * one thing at a time is taken from the fold's state as a lost allocation
 * would take it; each must turn ACCEPT into HOLD (or RECONCILE). In a
 * LEASELUA_FAILALLOC build, every allocation of the decision is then made
 * to fail in turn. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "ll_rows.h"
#include "model_impl.h"
#include "testlib.h"

static const ll_step chain[] = {CHAIN_FULL, {S_END, NULL, 0, 0, NULL, 0, 0}};

static ll_decision decide(const ll_model *m, int *nreasons, char *first,
                          size_t cap) {
  cJSON *reasons = NULL;
  const char *window = NULL;
  ll_decision d = ll_decide(m, &reasons, &window);
  *nreasons = cJSON_GetArraySize(reasons);
  const cJSON *r0 = cJSON_GetArrayItem(reasons, 0);
  ll_strlcpy(first, cJSON_IsString(r0) ? r0->valuestring : "", cap);
  cJSON_Delete(reasons);
  return d;
}

/* What a lost allocation (or a gap in the fold) could leave behind. */
typedef struct {
  const char *name;
  void (*lose)(ll_model *m);
  const char *want;   /* decision */
  const char *reason; /* substring of the first reason */
} loss;

static void oom(ll_model *m) {
  m->oom = 1;
}
static void hold_text_lost(ll_model *m) {
  m->n_hold = 1; /* counted, its text never kept */
}
static void reconcile_text_lost(ll_model *m) {
  m->n_reconcile = 1;
}
static void discrepancy_text_lost(ll_model *m) {
  m->unexplained = 1;
  m->n_hold = 1;
}
static void evidence_error_text_lost(ll_model *m) {
  m->evidence_errors = 1;
}
static void doubts_list_lost(ll_model *m) {
  cJSON_Delete(m->doubts); /* a NULL list reads as zero doubts */
  m->doubts = NULL;
}
static void no_lifecycle(ll_model *m) {
  m->ep.epoch = 0;
}
static void same_holder(ll_model *m) {
  ll_strlcpy(m->ep.new_holder, m->ep.old_holder, sizeof m->ep.new_holder);
}
static void no_old_holder(ll_model *m) {
  m->ep.old_holder[0] = '\0';
}
static void no_new_write_rev(ll_model *m) {
  m->ep.new_write_rev = -1;
}
static void nothing_accepted(ll_model *m) {
  m->ep.last_accepted = m->ep.content_revision = -1;
}
static void no_manifest(ll_model *m) {
  m->have_manifest = 0;
}

static const loss losses[] = {
    {"an allocation failed while folding", oom, "HOLD",
     "an allocation failed while folding"},
    {"a HOLD reason counted, its text lost", hold_text_lost, "HOLD",
     "could not be kept"},
    {"a RECONCILE reason counted, its text lost", reconcile_text_lost,
     "RECONCILE", "could not be kept"},
    {"an unexplained discrepancy counted, its text lost", discrepancy_text_lost,
     "HOLD", "could not be kept"},
    {"an EVIDENCE_ERROR counted, its text lost", evidence_error_text_lost,
     "HOLD", "evidence chain"},
    {"the doubts list lost", doubts_list_lost, "HOLD", "evidence chain"},
    {"no lifecycle (every listed element present)", no_lifecycle, "HOLD",
     "evidence chain of DESIGN.md section 5 is incomplete"},
    {"the new holder is the old one", same_holder, "HOLD", "evidence chain"},
    {"no old holder named", no_old_holder, "HOLD", "evidence chain"},
    {"no revision for the new holder's write", no_new_write_rev, "HOLD",
     "evidence chain"},
    {"no accepted revision at all", nothing_accepted, "HOLD", "final content"},
    {"no manifest", no_manifest, "HOLD", "evidence chain"},
};

static void test_losses(void) {
  for (size_t i = 0; i < sizeof losses / sizeof losses[0]; i++) {
    ll_rb b;
    char first[512];
    int n;
    rb_init(&b, &LL_AZURE, 1);
    rb_run(&b, chain);
    CHECK_INT(b.failed, 0);
    CHECK_STR(ll_decision_name(decide(b.m, &n, first, sizeof first)), "ACCEPT");
    CHECK_INT(n, 0);
    losses[i].lose(b.m);
    const char *got = ll_decision_name(decide(b.m, &n, first, sizeof first));
    if (strcmp(got, losses[i].want) != 0 ||
        (losses[i].reason && !strstr(first, losses[i].reason)))
      fprintf(stderr, "%s: %s (%s)\n", losses[i].name, got, first);
    CHECK_STR(got, losses[i].want);
    CHECK(n > 0); /* never a decision other than ACCEPT without a reason */
    if (losses[i].reason)
      CHECK(strstr(first, losses[i].reason) != NULL);
    rb_free(&b);
  }
}

/* The cleanup Delete refused 412 by its If-Match after a complete chain:
 * someone else wrote the blob, RECONCILE. The reason is counted, so a
 * text lost to a failed allocation still stands against ACCEPT. */
static void test_cleanup_condition_counted(void) {
  static const ll_step steps[] = {
      CHAIN_FULL,
      {S_DELETE, NULL, 0, 412, "ConditionNotMet", F_IF_MATCH, 0},
      {S_END, NULL, 0, 0, NULL, 0, 0}};
  ll_rb b;
  char first[512];
  int n;
  rb_init(&b, &LL_AZURE, 1);
  rb_run(&b, steps);
  CHECK_INT(b.failed, 0);
  CHECK_STR(ll_decision_name(decide(b.m, &n, first, sizeof first)),
            "RECONCILE");
  CHECK(strstr(first, "the cleanup Delete was refused 412 ConditionNotMet") !=
        NULL);
  /* its text lost: the count still decides */
  while (cJSON_GetArraySize(b.m->reconcile_reasons) > 0)
    cJSON_DeleteItemFromArray(b.m->reconcile_reasons, 0);
  CHECK_STR(ll_decision_name(decide(b.m, &n, first, sizeof first)),
            "RECONCILE");
  CHECK(strstr(first, "could not be kept") != NULL);
  rb_free(&b);
}

/* A fold marked untrustworthy refuses every later row and every mutation. */
static void test_oom_model(void) {
  ll_rb b;
  rb_init(&b, &LL_AZURE, 1);
  rb_run(&b, chain);
  b.m->oom = 1;
  const char *why = NULL;
  CHECK(ll_model_hold_reason(b.m) != NULL);
  CHECK_INT(ll_decide_accept_reachable(b.m, &why), 0);
  cJSON *row = cJSON_CreateObject();
  cJSON_AddStringToObject(row, "record", "note");
  ll_error e = {0};
  CHECK_INT(ll_model_apply(b.m, row, 1, &e), LL_E_NOMEM);
  cJSON_Delete(row);
  CHECK_INT(ll_model_apply(b.m, NULL, 1, &e), LL_E_NOMEM);
  rb_free(&b);
  /* a counted HOLD whose text is lost still stops mutations */
  rb_init(&b, &LL_AZURE, 1);
  rb_run(&b, chain);
  b.m->n_hold = 1;
  CHECK(ll_model_hold_reason(b.m) != NULL);
  rb_free(&b);
}

#ifdef LEASELUA_FAILALLOC
/* Each allocation of ll_decide fails in turn: never ACCEPT, and no
 * list (the caller records nothing). Then each allocation of folding the
 * decision row: LL_E_NOMEM, and the model refuses what follows. */
static void test_failalloc(void) {
  ll_rb b;
  rb_init(&b, &LL_AZURE, 1);
  rb_run(&b, chain);
  unsigned long total = 0, n;
  for (n = 1;; n++) {
    cJSON *reasons = NULL;
    const char *window = NULL;
    ll_failalloc_arm(n);
    ll_decision d = ll_decide(b.m, &reasons, &window);
    int fired = ll_failalloc_fired();
    ll_failalloc_arm(0);
    if (!fired) {
      CHECK_STR(ll_decision_name(d), "ACCEPT");
      cJSON_Delete(reasons);
      break;
    }
    total++;
    CHECK_INT(d, LL_DEC_HOLD);
    CHECK(reasons == NULL);
    cJSON_Delete(reasons);
  }
  CHECK(total >= 2); /* an ACCEPT's two (empty) lists, at least */
  rb_free(&b);
  for (n = 1;; n++) {
    rb_init(&b, &LL_AZURE, 1);
    rb_run(&b, chain);
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "record", "decision");
    cJSON_AddNullToObject(row, "decision");
    ll_error e = {0};
    ll_failalloc_arm(n);
    ll_status st = ll_model_apply(b.m, row, 1, &e);
    int fired = ll_failalloc_fired();
    ll_failalloc_arm(0);
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(row, "decision");
    if (!fired) {
      CHECK_INT(st, LL_OK);
      CHECK(cJSON_IsString(dec) && strcmp(dec->valuestring, "ACCEPT") == 0);
    } else {
      /* the half-filled row is never written: the run dies on NOMEM */
      CHECK_INT(st, LL_E_NOMEM);
      CHECK(ll_model_hold_reason(b.m) != NULL);
      CHECK_INT(ll_model_apply(b.m, row, 1, &e), LL_E_NOMEM);
    }
    cJSON_Delete(row);
    rb_free(&b);
    if (!fired)
      break;
  }
  fprintf(stderr,
          "test_fail_closed: %lu allocations of the decision and %lu "
          "of its row failed in turn\n",
          total, n - 1);
}
#endif

int main(void) {
  test_losses();
  test_cleanup_condition_counted();
  test_oom_model();
#ifdef LEASELUA_FAILALLOC
  test_failalloc();
#endif
  return ll_test_report("test_fail_closed");
}
