/* Invariant 15, do no harm to the target (core/judgement/harm.c and its share
 * of baseline.c and the guard): the preflight, the create, the ETag a cleanup
 * Delete is conditioned on, and the stop, each judged from ledger rows and
 * re-derived with fill=0 as verify does. */
#include <string.h>

#include "guard.h"
#include "ll_rows.h"
#include "model.h"
#include "testlib.h"

#define END_STEPS                                                              \
  { S_END, NULL, 0, 0, NULL, 0, 0 }
#define CREATE(st, code)                                                       \
  { S_PUT, NULL, 0, st, code, F_CREATE, 0 }
#define DELETE_IF(st, code)                                                    \
  { S_DELETE, NULL, 0, st, code, F_IF_MATCH, 0 }
#define FRESH PREFLIGHT(404, "ContainerNotFound")

static const ll_guard_req CREATE_REQ = {LL_OP_PUT_BLOB, "A", NULL, 0, 0, 0, 0};
static const ll_guard_req CONTAINER_REQ = {
    LL_OP_CREATE_CONTAINER, "operator", NULL, 0, -1, 0, 0};
static const ll_guard_req DELETE_REQ = {
    LL_OP_DELETE_BLOB, "A", NULL, 0, -1, 0, 0};
static const ll_guard_req READ_REQ = {
    LL_OP_GET_BLOB, "observer", NULL, 0, -1, 0, 0};

/* Builds the rows; the caller frees b. The last request's outcome row is
 * returned. */
static cJSON *rows(ll_rb *b, const ll_step *steps) {
  rb_init(b, &LL_AZURE, 1);
  cJSON *last = NULL;
  for (const ll_step *s = steps; s->op != S_END; s++)
    last = rb_step(b, s);
  CHECK_INT(b->failed, 0);
  return last;
}

static void test_fresh_target(void) {
  ll_rb b;
  static const ll_step steps[] = {FRESH, END_STEPS};
  cJSON *pre = rows(&b, steps);
  CHECK_STR(rb_str(pre, "result_classification"), "STATE_OBSERVED");
  CHECK_STR(rb_str(pre, "expectation"),
            "404 BlobNotFound or ContainerNotFound (a fresh target), or 200 "
            "(the blob exists: the run stops)");
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(pre, "discrepancy")), 0);
  CHECK(ll_model_preflight_done(b.m));
  CHECK(ll_model_stop(b.m, NULL) == NULL);
  ll_error err;
  CHECK_INT(rb_guard(&b, &CONTAINER_REQ, &err), LL_OK);
  /* a preflight observes nothing of a lifecycle */
  CHECK_STR(ll_model_observed_state(b.m), "");
  rb_free(&b);

  static const ll_step blob_missing[] = {PREFLIGHT(404, "BlobNotFound"),
                                         END_STEPS};
  pre = rows(&b, blob_missing);
  CHECK_STR(rb_str(pre, "result_classification"), "STATE_OBSERVED");
  CHECK(ll_model_stop(b.m, NULL) == NULL);
  rb_free(&b);
}

static void test_target_exists(void) {
  ll_rb b;
  static const ll_step steps[] = {PREFLIGHT(200, NULL), END_STEPS};
  cJSON *pre = rows(&b, steps);
  CHECK_STR(rb_str(pre, "result_classification"), "STATE_OBSERVED");
  ll_code code = LL_OK;
  const char *why = ll_model_stop(b.m, &code);
  CHECK_INT(code, LL_E_TARGET_EXISTS);
  CHECK(why && strstr(why, "the blob /lease-handoff-lab/writer-handoff.json "
                           "already exists (preflight e0001: 200, ETag "
                           "\"0x1DC235DC4CE9210\", 31 bytes, lease "
                           "available/unlocked): leaselua only creates its "
                           "own disposable blob; choose an unused "
                           "AZURE_STORAGE_BLOB or delete it yourself if it is "
                           "yours"));
  ll_error err;
  /* every mutation is refused, the lab's Create Container first; reads
   * are not */
  CHECK_INT(rb_guard(&b, &CONTAINER_REQ, &err), LL_E_TARGET_EXISTS);
  CHECK(strstr(err.message, "Create Container refused (invariant 15): the "
                            "blob /lease-handoff-lab/writer-handoff.json "
                            "already exists") != NULL);
  CHECK_INT(rb_guard(&b, &CREATE_REQ, &err), LL_E_TARGET_EXISTS);
  CHECK_INT(rb_guard(&b, &DELETE_REQ, &err), LL_E_TARGET_EXISTS);
  CHECK_INT(rb_guard(&b, &READ_REQ, &err), LL_OK);
  const char *out = NULL;
  CHECK(!ll_decide_accept_reachable(b.m, &out));
  CHECK(out && strstr(out, "already exists"));

  cJSON *d = rb_decide(&b);
  CHECK_STR(rb_str(d, "decision"), "HOLD");
  const cJSON *reasons = cJSON_GetObjectItem(d, "reasons");
  CHECK(strstr(cJSON_GetArrayItem(reasons, 0)->valuestring, "already exists"));
  CHECK_STR(cJSON_GetArrayItem(reasons, 1)->valuestring,
            "no mutation was sent: the target is as the run found it");
  const cJSON *stop = cJSON_GetObjectItem(d, "target_stop");
  CHECK_STR(rb_str(stop, "kind"), "target_exists");
  CHECK_STR(rb_str(stop, "code"), "LL_E_TARGET_EXISTS");
  CHECK_INT(cJSON_GetObjectItem(stop, "exit")->valueint, 64);
  CHECK_INT(cJSON_GetObjectItem(stop, "invariant")->valueint, 15);
  CHECK_INT(cJSON_GetObjectItem(stop, "mutations_sent")->valueint, 0);
  rb_free(&b);
}

static void test_preflight_failures(void) {
  static const struct {
    const char *name;
    ll_step pre;
    const char *cls, *says, *kind;
    int exit_code;
  } rows_[] = {
      {"no connection", PREFLIGHTF(0, NULL, F_NOT_SENT), "EVIDENCE_ERROR",
       "cannot reach lab.blob.core.windows.net for the preflight read of "
       "/lease-handoff-lab/writer-handoff.json (connection refused: not "
       "sent): nothing was mutated; check AZURE_STORAGE_ACCOUNT_URL",
       "preflight_failed", 64},
      {"forbidden", PREFLIGHT(403, "AuthorizationPermissionMismatch"),
       "EVIDENCE_ERROR",
       "was refused 403 AuthorizationPermissionMismatch: nothing was mutated; "
       "check the credential",
       "preflight_failed", 64},
      {"unauthenticated", PREFLIGHT(401, "InvalidAuthenticationInfo"),
       "EVIDENCE_ERROR", "refused 401 InvalidAuthenticationInfo",
       "preflight_failed", 64},
      {"a 404 that names neither the blob nor the container",
       PREFLIGHT(404, "ResourceNotFound"), "EVIDENCE_ERROR",
       "answered 404 ResourceNotFound, neither 404 (a fresh blob) nor 200",
       "preflight_failed", 64},
      /* the service gave no usable answer: HOLD's exit, not a config error */
      {"no answer", PREFLIGHTF(0, NULL, F_UNKNOWN), "UNKNOWN_OUTCOME",
       "on lab.blob.core.windows.net got no usable answer (response lost "
       "after request was sent): whether the blob exists is unknown, so "
       "nothing was mutated",
       "preflight_unanswered", 2},
      {"a server error", PREFLIGHT(503, "ServerBusy"), "UNKNOWN_OUTCOME",
       "answered 503 ServerBusy: whether the blob exists is unknown",
       "preflight_unanswered", 2},
  };
  for (size_t i = 0; i < sizeof rows_ / sizeof rows_[0]; i++) {
    int before = ll_test_fail;
    ll_rb b;
    ll_step steps[] = {rows_[i].pre, END_STEPS};
    cJSON *pre = rows(&b, steps);
    CHECK_STR(rb_str(pre, "result_classification"), rows_[i].cls);
    ll_code code = LL_OK;
    const char *why = ll_model_stop(b.m, &code);
    CHECK_INT(code, LL_E_PREFLIGHT);
    CHECK(why && strstr(why, rows_[i].says));
    ll_error err;
    CHECK_INT(rb_guard(&b, &CONTAINER_REQ, &err), LL_E_PREFLIGHT);
    CHECK_INT(ll_guard_invariant(err.code), 15);
    /* not a doubt to reconcile: a read is still allowed */
    CHECK_INT(ll_model_doubts(b.m), 0);
    CHECK_INT(rb_guard(&b, &READ_REQ, &err), LL_OK);
    cJSON *d = rb_decide(&b);
    CHECK_STR(rb_str(d, "decision"), "HOLD");
    const cJSON *stop = cJSON_GetObjectItem(d, "target_stop");
    CHECK_STR(rb_str(stop, "kind"), rows_[i].kind);
    CHECK_INT(cJSON_GetObjectItem(stop, "exit")->valueint, rows_[i].exit_code);
    if (ll_test_fail > before)
      fprintf(stderr, "  in preflight case \"%s\": %s\n", rows_[i].name,
              why ? why : "(no stop)");
    rb_free(&b);
  }
}

static void test_create(void) {
  ll_rb b;
  static const ll_step steps[] = {FRESH, LIFE(0), END_STEPS};
  rows(&b, steps);
  CHECK(ll_model_creates(b.m));
  ll_step put = CREATE(201, NULL);
  cJSON *r = rb_step(&b, &put);
  CHECK_STR(rb_str(r, "result_classification"), "ACCEPTED_WRITE");
  CHECK_STR(rb_str(r, "expectation"),
            "201; 409 BlobAlreadyExists if the blob exists");
  CHECK(!ll_model_creates(b.m));
  /* a fresh lifecycle creates again */
  ll_step read = READ(0), life = LIFE(0);
  rb_step(&b, &read);
  rb_step(&b, &life);
  CHECK(ll_model_creates(b.m));
  CHECK_STR(ll_model_cleanup_etag(b.m), "");
  rb_free(&b);

  /* a doubtful create is a write: the next Put does not create */
  static const ll_step lost[] = {
      FRESH,
      LIFE(0),
      {S_PUT, NULL, 0, 0, NULL, F_CREATE | F_UNKNOWN, 0},
      END_STEPS};
  rows(&b, lost);
  CHECK(!ll_model_creates(b.m));
  rb_free(&b);
}

static void test_create_refused(void) {
  static const struct {
    long st;
    const char *code;
    int discrepancies;
  } t[] = {{409, "BlobAlreadyExists", 0}, {412, "ConditionNotMet", 1}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    ll_rb b;
    ll_step steps[] = {FRESH, LIFE(0), CREATE(t[i].st, t[i].code), END_STEPS};
    cJSON *r = rows(&b, steps);
    CHECK_STR(rb_str(r, "result_classification"), "EXPECTED_REJECTION");
    CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(r, "discrepancy")),
              t[i].discrepancies);
    ll_code code = LL_OK;
    const char *why = ll_model_stop(b.m, &code);
    CHECK_INT(code, LL_E_TARGET_EXISTS);
    CHECK(why && strstr(why, "(event e0002: the create of revision 0 was "
                             "refused"));
    ll_error err;
    CHECK_INT(rb_guard(&b, &CREATE_REQ, &err), LL_E_TARGET_EXISTS);
    cJSON *d = rb_decide(&b);
    CHECK_STR(rb_str(d, "decision"), "HOLD");
    CHECK_INT(cJSON_GetObjectItem(cJSON_GetObjectItem(d, "target_stop"),
                                  "mutations_sent")
                  ->valueint,
              1);
    rb_free(&b);
  }
  /* without If-None-Match a 409 to a Put is no create's answer */
  ll_rb b;
  static const ll_step plain[] = {
      FRESH, LIFE(0), PUT(NULL, 0, 409, "BlobAlreadyExists"), END_STEPS};
  cJSON *r = rows(&b, plain);
  CHECK_STR(rb_str(r, "result_classification"), "EVIDENCE_ERROR");
  CHECK(ll_model_stop(b.m, NULL) == NULL);
  rb_free(&b);
}

static void test_cleanup_etag(void) {
  ll_rb b;
  ll_error err;
  /* nothing written in this lifecycle: nothing to delete */
  static const ll_step none[] = {FRESH, LIFE(0), END_STEPS};
  rows(&b, none);
  CHECK_INT(rb_guard(&b, &DELETE_REQ, &err), LL_E_DELETE_UNCONFIRMED);
  CHECK(strstr(err.message, "no ETag to condition the delete on") != NULL);
  CHECK_INT(ll_guard_invariant(err.code), 15);
  rb_free(&b);

  /* written and read back: the Put's ETag */
  static const ll_step back[] = {FRESH, LIFE(0), CREATE(201, NULL), READ(0),
                                 END_STEPS};
  rows(&b, back);
  CHECK_STR(ll_model_cleanup_etag(b.m), RB_ETAG);
  CHECK_INT(rb_guard(&b, &DELETE_REQ, &err), LL_OK);
  rb_free(&b);

  /* a doubtful Put forgets it; a reconcile that explains the content
   * takes its read's ETag */
  static const ll_step doubt[] = {FRESH,
                                  LIFE(0),
                                  CREATE(201, NULL),
                                  READ(0),
                                  PUTF(NULL, 1, 0, NULL, F_UNKNOWN),
                                  END_STEPS};
  rows(&b, doubt);
  CHECK_STR(ll_model_cleanup_etag(b.m), "");
  ll_step props = PROPS("available", "unlocked"), read = READ(1), recon = RECON;
  rb_step(&b, &props);
  rb_step(&b, &read);
  cJSON *rc = rb_step(&b, &recon);
  CHECK_STR(rb_str(rc, "result"), "DOUBTFUL_WRITE_COMMITTED");
  CHECK_STR(ll_model_cleanup_etag(b.m), RB_ETAG);
  rb_free(&b);
}

static void test_delete_condition_fails(void) {
  ll_rb b;
  static const ll_step steps[] = {FRESH,
                                  LIFE(0),
                                  CREATE(201, NULL),
                                  READ(0),
                                  DELETE_IF(412, "ConditionNotMet"),
                                  END_STEPS};
  cJSON *r = rows(&b, steps);
  CHECK_STR(rb_str(r, "result_classification"), "EXPECTED_REJECTION");
  CHECK_STR(rb_str(r, "expectation"),
            "202; 412 ConditionNotMet if the blob changed after the read-back");
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(r, "discrepancy")), 0);
  CHECK(!ll_model_cleanup_confirmed(b.m));
  cJSON *d = rb_decide(&b);
  CHECK_STR(rb_str(d, "decision"), "RECONCILE");
  CHECK(rb_any_contains(cJSON_GetObjectItem(d, "reasons"),
                        "the cleanup Delete was refused 412 ConditionNotMet: "
                        "the blob changed after the run's last read-back"));
  CHECK(cJSON_GetObjectItem(d, "target_stop") == NULL);
  rb_free(&b);

  /* the same 412 without If-Match is not the condition's answer */
  static const ll_step plain[] = {
      FRESH,
      LIFE(0),
      CREATE(201, NULL),
      READ(0),
      {S_DELETE, NULL, 0, 412, "ConditionNotMet", 0, 0},
      END_STEPS};
  r = rows(&b, plain);
  CHECK_STR(rb_str(r, "result_classification"), "EVIDENCE_ERROR");
  rb_free(&b);
}

/* A ledger written before the preflight existed: its run is past its
 * first mutation, so a recovery sends none (the blob it finds is its own). */
static void test_old_ledger(void) {
  ll_rb b;
  static const ll_step steps[] = {LIFE(0), PUT(NULL, 0, 201, NULL), READ(0),
                                  END_STEPS};
  rows(&b, steps);
  CHECK(ll_model_preflight_done(b.m));
  CHECK(ll_model_stop(b.m, NULL) == NULL);
  rb_free(&b);
  static const ll_step nothing_sent[] = {LIFE(0), READ(0), END_STEPS};
  rows(&b, nothing_sent);
  CHECK(!ll_model_preflight_done(b.m));
  rb_free(&b);
}

static void test_codes(void) {
  CHECK_STR(ll_code_name(LL_E_TARGET_EXISTS), "LL_E_TARGET_EXISTS");
  CHECK_STR(ll_code_name(LL_E_PREFLIGHT), "LL_E_PREFLIGHT");
  CHECK_STR(ll_code_name(LL_E_DELETE_UNCONFIRMED), "LL_E_DELETE_UNCONFIRMED");
  CHECK_INT(ll_guard_invariant(LL_E_TARGET_EXISTS), 15);
  CHECK_INT(ll_guard_invariant(LL_E_PREFLIGHT), 15);
  CHECK_INT(ll_guard_invariant(LL_E_DELETE_UNCONFIRMED), 15);
  CHECK_INT(ll_code_exit(LL_E_TARGET_EXISTS), 64);
  CHECK_INT(ll_code_exit(LL_E_PREFLIGHT), 64);
}

int main(void) {
  test_fresh_target();
  test_target_exists();
  test_preflight_failures();
  test_create();
  test_create_refused();
  test_cleanup_etag();
  test_delete_condition_fails();
  test_old_ledger();
  test_codes();
  return ll_test_report("test_harm");
}
