/* Invariant 15 on the wire: the run's Lease Blob acquire and break carry
 * If-Match on the blob's ETag as the run's own writes left it (C chooses
 * it, never the script), so a blob replaced between the run's last answer
 * and its lease operation is refused 412 ConditionNotMet by the service:
 * no lease is taken on the other writer's object and no other party's
 * lease is broken. The run then holds, and nothing more is sent. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fake_wire.h"
#include "ledger.h"
#include "run.h"
#include "testlib.h"

static char *root;

static const char *path(const char *leaf) {
  return ll_test_path(root, leaf);
}

#define LOCKS path("locks")
#define OTHER_ETAG "\"0x8DCFFFF\""

static ll_status send(ll_run *r, ll_op op, const char *actor, const char *lease,
                      int bound, long rev, cJSON **row) {
  ll_error err = {0};
  *row = NULL;
  return fw_send(r, op, actor, lease, bound, rev, row, &err);
}

/* The intent row of the outcome row's event (borrowed), or NULL. */
static const cJSON *intent_of(ll_run *r, const cJSON *outcome) {
  const char *ev = fw_str(outcome, "event_id");
  const cJSON *row;
  cJSON_ArrayForEach(row, ll_ledger_export_rows(ll_run_ledger(r))) {
    if (ev && ll_streq(fw_str(row, "record"), "intent") &&
        ll_streq(fw_str(row, "event_id"), ev))
      return row;
  }
  return NULL;
}

/* A run on a fresh blob whose create (revision 0, A's) was accepted and
 * read back, with A bound: the blob is the run's own. */
static ll_run *created(fake_wire *w, const char *ev) {
  ll_error err = {0};
  fw_init(w);
  char blob[64];
  snprintf(blob, sizeof blob, "%s.json", ev); /* a HOLD latches its blob */
  ll_run *r = fw_open(w, path(ev), blob, LOCKS, 0, &err);
  CHECK(r != NULL);
  if (!r) {
    fprintf(stderr, "open: %s\n", err.message);
    return NULL;
  }
  cJSON *row = NULL;
  CHECK_INT(ll_run_declare(r, 0, "A", NULL, &err), LL_OK);
  CHECK_INT(send(r, LL_OP_CREATE_CONTAINER, "operator", NULL, 0, -1, &row),
            LL_OK);
  cJSON_Delete(row);
  CHECK_INT(send(r, LL_OP_PUT_BLOB, "A", NULL, 0, 0, &row), LL_OK);
  cJSON_Delete(row);
  CHECK_INT(send(r, LL_OP_GET_BLOB, "observer", NULL, 0, -1, &row), LL_OK);
  cJSON_Delete(row);
  CHECK_INT(ll_run_bind(r, "A", &err), LL_OK);
  return r;
}

/* The run's own blob: both lease operations go out conditioned on the
 * ETag its create was answered with, and succeed. */
static void test_own_blob(void) {
  fake_wire w;
  ll_run *r = created(&w, "ev-own");
  if (!r)
    return;
  char etag[24];
  ll_strlcpy(etag, w.etag, sizeof etag);
  cJSON *row = NULL;
  CHECK_INT(send(r, LL_OP_LEASE_ACQUIRE, "A", "A", 1, -1, &row), LL_OK);
  CHECK_INT(fw_num(row, "http_status"), 201);
  CHECK_STR(fw_str(intent_of(r, row), "if_match"), etag);
  CHECK(strstr(fw_str(row, "request_shape") ? fw_str(row, "request_shape") : "",
               " if_match=") != NULL);
  CHECK_STR(fw_str(row, "expectation"),
            "201; 412 ConditionNotMet if the blob changed after the run's "
            "last write");
  cJSON_Delete(row);
  CHECK_INT(send(r, LL_OP_LEASE_BREAK, "operator", NULL, 0, -1, &row), LL_OK);
  CHECK_INT(fw_num(row, "http_status"), 202);
  CHECK_STR(fw_str(intent_of(r, row), "if_match"), etag);
  CHECK_STR(w.state, "broken");
  cJSON_Delete(row);
  /* the other lease operations name the run's lease, and carry none */
  CHECK_INT(send(r, LL_OP_LEASE_ACQUIRE, "A", "A", 1, -1, &row), LL_OK);
  cJSON_Delete(row);
  CHECK_INT(send(r, LL_OP_LEASE_RELEASE, "A", "A", 1, -1, &row), LL_OK);
  CHECK_INT(fw_num(row, "http_status"), 200);
  CHECK(fw_str(intent_of(r, row), "if_match") == NULL);
  cJSON_Delete(row);
  ll_run_close(r);
  fw_cleanup(&w);
}

/* Another writer replaced the blob after the read-back: the acquire is
 * refused by its condition, no lease is taken, and the run holds. */
static void test_replaced_before_acquire(void) {
  fake_wire w;
  ll_run *r = created(&w, "ev-acq");
  if (!r)
    return;
  char etag[24];
  ll_strlcpy(etag, w.etag, sizeof etag);
  strcpy(w.etag, OTHER_ETAG);
  cJSON *row = NULL;
  CHECK_INT(send(r, LL_OP_LEASE_ACQUIRE, "A", "A", 1, -1, &row), LL_OK);
  CHECK_INT(fw_num(row, "http_status"), 412);
  CHECK_STR(fw_str(row, "azure_error_code"), "ConditionNotMet");
  CHECK_STR(fw_str(row, "result_classification"), "EXPECTED_REJECTION");
  CHECK_STR(fw_str(intent_of(r, row), "if_match"), etag);
  CHECK_STR(w.state, "available"); /* nothing leased */
  cJSON_Delete(row);
  int sent = w.requests;
  CHECK_INT(send(r, LL_OP_LEASE_BREAK, "operator", NULL, 0, -1, &row),
            LL_E_HOLD);
  CHECK_INT(send(r, LL_OP_DELETE_BLOB, "A", NULL, 0, -1, &row), LL_E_HOLD);
  CHECK_INT(w.requests, sent);
  CHECK_INT(send(r, LL_OP_GET_PROPERTIES, "observer", NULL, 0, -1, &row),
            LL_OK); /* reads still go out */
  cJSON_Delete(row);
  ll_error err = {0};
  cJSON *d = NULL;
  CHECK_INT(ll_run_decide(r, 0, &d, &err), LL_OK);
  CHECK_STR(fw_str(d, "decision"), "HOLD");
  char *text = cJSON_PrintUnformatted(cJSON_GetObjectItem(d, "reasons"));
  CHECK(text && strstr(text, "(Lease Acquire): refused 412 ConditionNotMet "
                             "on If-Match") != NULL);
  free(text);
  cJSON_Delete(d);
  ll_run_close(r);
  fw_cleanup(&w);
}

/* The blob replaced and leased by another party while the run's lease
 * ran: the operator's break is refused, and the other lease stands. */
static void test_replaced_before_break(void) {
  fake_wire w;
  ll_run *r = created(&w, "ev-brk");
  if (!r)
    return;
  cJSON *row = NULL;
  CHECK_INT(send(r, LL_OP_LEASE_ACQUIRE, "A", "A", 1, -1, &row), LL_OK);
  cJSON_Delete(row);
  strcpy(w.etag, OTHER_ETAG);
  strcpy(w.holder, "another party's lease");
  CHECK_INT(send(r, LL_OP_LEASE_BREAK, "operator", NULL, 0, -1, &row), LL_OK);
  CHECK_INT(fw_num(row, "http_status"), 412);
  CHECK_STR(fw_str(row, "result_classification"), "EXPECTED_REJECTION");
  CHECK_STR(w.state, "leased"); /* not broken */
  CHECK_STR(w.holder, "another party's lease");
  cJSON_Delete(row);
  int sent = w.requests;
  CHECK_INT(send(r, LL_OP_LEASE_BREAK, "operator", NULL, 0, -1, &row),
            LL_E_HOLD);
  CHECK_INT(w.requests, sent);
  ll_run_close(r);
  fw_cleanup(&w);
}

int main(void) {
  root = ll_test_tmpdir();
  CHECK(root != NULL);
  if (root) {
    CHECK_INT(mkdir(LOCKS, 0700), 0);
    test_own_blob();
    test_replaced_before_acquire();
    test_replaced_before_break();
    ll_test_rmtree(root);
    free(root);
  }
  return ll_test_report("test_lease_condition");
}
