/* The lease IDs a run did not choose never reach its export: the ID the
 * service chose for an acquire with no proposed ID, another ID than the
 * one proposed, a changed ID, wherever the service echoed them; and a
 * break in flight when the process died is recovered with no period.
 * End to end through ll_run_* against an in-process wire (fake_wire.h);
 * split from test_lifecycle.c, whose run cases these began as. */
#include <stdlib.h>
#include <string.h>

#include "fake_wire.h"
#include "jsonx.h"
#include "lease_table.h"
#include "testlib.h"

static char *root;

static const char *path(const char *leaf) {
  return ll_test_path(root, leaf);
}

/* The ID the service chose for an acquire with no proposed ID never reaches
 * the export, even echoed in another header the row records. A GUID is
 * bound as X and the table goes on; an ID that is not a GUID, too long or
 * too short, is kept out of both ledgers and stops the table (guid 0). */
static void service_id_case(const char *id, int guid, const char *dir) {
  fake_wire w;
  fw_init(&w);
  w.service_id = id;
  ll_error err = {0};
  char evdir[64], file[64];
  snprintf(evdir, sizeof evdir, "%s", dir);
  snprintf(file, sizeof file, "%s.json", dir);
  ll_run *r = fw_open(&w, path(evdir), file, path("locks"), 0, &err);
  CHECK(r != NULL);
  if (!r)
    return;
  ll_flow_plan fp = {.name = "lease-table",
                     .actors = {"A", "B", "operator", "observer"},
                     .nactors = 4,
                     .break_periods = {0, 10},
                     .nbreaks = 2,
                     .lease_table = 1};
  const ll_lease_plan *p = NULL;
  cJSON *row = NULL;
  CHECK_INT(ll_run_plan(r, &fp, NULL, &err), LL_OK);
  CHECK_INT(ll_lease_table_begin(r, 10, 0, NULL, &p, &err), LL_OK);
  CHECK_INT(ll_lease_table_lifecycle(r, &row, &err), LL_OK);
  cJSON_Delete(row);
  int attempted = 0, failed = 0;
  for (int k = 0; p && k < p->life[0].ncells; k++) {
    const ll_lt_cell *c = &p->cells[p->life[0].first + k];
    row = NULL;
    failed += ll_lease_table_cell(r, c->state, c->op, &row, &err) != LL_OK;
    attempted += c->op == LL_LO_ACQUIRE_NONE && row &&
                 strcmp(ll_json_pstr(row, "verdict"), "NOT_REACHED") != 0;
    cJSON_Delete(row);
  }
  CHECK_INT(attempted, guid ? 1 : 0);
  if (guid) {
    CHECK_INT(failed, 0);
    CHECK(strcmp(w.holder, id) == 0); /* the service's ID was handed out */
  }
  char *text = cJSON_PrintUnformatted(ll_ledger_export_rows(ll_run_ledger(r)));
  CHECK(text && strstr(text, id) == NULL);
  CHECK(text && strstr(text, guid ? "\"x_ms_request_id\":\"X\""
                                  : "{{secret:lease-id}}") != NULL);
  free(text);
  ll_run_close(r);
  static const char *const files[] = {"export/ledger.jsonl",
                                      "protected/ledger.jsonl"};
  for (int k = 0; k < (guid ? 1 : 2); k++) {
    char fp2[128];
    snprintf(fp2, sizeof fp2, "%s/%s", evdir, files[k]);
    FILE *f = fopen(path(fp2), "r");
    CHECK(f != NULL);
    char line[65536];
    int seen = 0;
    while (f && fgets(line, sizeof line, f))
      seen |= strstr(line, id) != NULL;
    if (f)
      fclose(f);
    CHECK_INT(seen, 0);
  }
  fw_cleanup(&w);
}

static void test_service_id_never_exported(void) {
  service_id_case("0b9e5a4c-7d21-4f3e-9a6b-2c8d1e0f4a57", 1, "ev-xid");
  service_id_case("0b9e5a4c-7d21-4f3e-9a6b-2c8d1e0f4a57-and-more", 0,
                  "ev-xlong");
  /* shorter than a GUID and not one: no alias can name it either */
  service_id_case("lease-7f3e9a6b", 0, "ev-xshort");
}

/* A run on w whose first lifecycle has A bound, the container made, and
 * revision 0 written and read back: the start of the cases below. NULL
 * when it could not be opened. */
static ll_run *written_run(fake_wire *w, const char *evdir, const char *file) {
  ll_error err = {0};
  ll_run *r = fw_open(w, path(evdir), file, path("locks"), 0, &err);
  CHECK(r != NULL);
  if (!r)
    return NULL;
  CHECK_INT(ll_run_declare(r, 0, "A", NULL, &err), LL_OK);
  CHECK_INT(ll_run_bind(r, "A", &err), LL_OK);
  CHECK_INT(
      fw_send(r, LL_OP_CREATE_CONTAINER, "operator", NULL, 0, -1, NULL, &err),
      LL_OK);
  CHECK_INT(ll_run_lifecycle(r, 0, "first", NULL, &err), LL_OK);
  CHECK_INT(fw_send(r, LL_OP_PUT_BLOB, "A", NULL, 0, 0, NULL, &err), LL_OK);
  CHECK_INT(fw_send(r, LL_OP_GET_BLOB, "observer", NULL, 0, -1, NULL, &err),
            LL_OK);
  return r;
}

/* An acquire answered 201 with another lease ID than the one proposed (a
 * service that does not do what Lease Blob says): that ID is no binding
 * of the run, but it names a lease, so neither ledger carries it, even
 * where the server echoed it in a header the row records, in another
 * case or without hyphens (echo). The row says the IDs differ. A value
 * that is not a GUID is not learnt (as a secret, "1" or "http_status"
 * would be found in every row, which would then be refused): the run goes
 * on recording. */
static void swapped_case(const char *id, const char *echo, int guid,
                         const char *dir) {
  fake_wire w;
  fw_init(&w);
  w.swap_id = id;
  w.echo_id = echo;
  ll_error err = {0};
  char file[64];
  snprintf(file, sizeof file, "%s.json", dir);
  ll_run *r = written_run(&w, dir, file);
  if (!r)
    return;
  cJSON *row = NULL;
  fw_send(r, LL_OP_LEASE_ACQUIRE, "A", "A", 1, -1, &row, &err);
  CHECK(row != NULL);
  CHECK(cJSON_IsFalse(
      cJSON_GetObjectItem(row, "returned_lease_matches_proposed")));
  if (guid)
    CHECK_STR(ll_json_str(row, "x_ms_request_id"), "{{secret:lease-id}}");
  else /* not learnt: the service's own value, and the run goes on */
    CHECK_STR(ll_json_str(row, "x_ms_request_id"), id);
  cJSON_Delete(row);
  CHECK_STR(w.holder, id);
  /* the run still records: a read after it */
  CHECK_INT(
      fw_send(r, LL_OP_GET_PROPERTIES, "observer", NULL, 0, -1, NULL, &err),
      LL_OK);
  ll_run_close(r);
  if (!guid) {
    fw_cleanup(&w);
    return;
  }
  static const char *const files[] = {"export/ledger.jsonl",
                                      "protected/ledger.jsonl"};
  for (int k = 0; k < 2; k++) {
    char fp[128];
    snprintf(fp, sizeof fp, "%s/%s", dir, files[k]);
    FILE *f = fopen(path(fp), "r");
    CHECK(f != NULL);
    char line[65536];
    int seen = 0, rows = 0;
    while (f && fgets(line, sizeof line, f))
      seen |= strstr(line, id) != NULL || (echo && strstr(line, echo)), rows++;
    if (f)
      fclose(f);
    CHECK(rows > 5);
    CHECK_INT(seen, 0);
  }
  fw_cleanup(&w);
}

static void test_swapped_id_never_recorded(void) {
  swapped_case("5a0c9e1f-3b7d-4c2a-8e6f-1d9b0a7c3e52", NULL, 1, "ev-swap");
  swapped_case("5a0c9e1f-3b7d-4c2a-8e6f-1d9b0a7c3e52",
               "5A0C9E1F3B7D4C2A8E6F1D9B0A7C3E52", 1, "ev-swap-upper");
  swapped_case("5A0C9E1F-3B7D-4C2A-8E6F-1D9B0A7C3E53",
               "5a0c9e1f-3b7d-4c2a-8e6f-1d9b0a7c3e53", 1, "ev-swap-lower");
  swapped_case("1", NULL, 0, "ev-swap-short");
  swapped_case("http_status", NULL, 0, "ev-swap-key");
}

/* A change answered 200 that does not name the proposed ID (another ID,
 * none, or the proposed one beside another): the row says the IDs differ
 * and is an EVIDENCE_ERROR, the new ID is not bound active (the writer
 * keeps sending the ID it had), and no ID the answer carried reaches
 * either ledger. */
static void changed_case(const char *other, const char *dup, const char *dir) {
  fake_wire w;
  fw_init(&w);
  ll_error err = {0};
  char file[64];
  snprintf(file, sizeof file, "%s.json", dir);
  ll_run *r = written_run(&w, dir, file);
  if (!r)
    return;
  CHECK_INT(fw_send(r, LL_OP_LEASE_ACQUIRE, "A", "A", 1, -1, NULL, &err),
            LL_OK);
  char before[64];
  snprintf(before, sizeof before, "%s", w.holder);
  w.change_id = other;
  w.change_dup = dup;
  cJSON *row = NULL;
  fw_send(r, LL_OP_LEASE_CHANGE, "A", "A", 1, -1, &row, &err);
  CHECK(row != NULL);
  CHECK(cJSON_IsFalse(
      cJSON_GetObjectItem(row, "returned_lease_matches_proposed")));
  CHECK_STR(ll_json_str(row, "result_classification"), "EVIDENCE_ERROR");
  cJSON_Delete(row);
  /* no mutation after that doubt */
  int mutations = w.mutations;
  CHECK(fw_send(r, LL_OP_LEASE_RENEW, "A", "A", 1, -1, NULL, &err) != LL_OK);
  CHECK_INT(w.mutations, mutations);
  ll_run_close(r);
  static const char *const files[] = {"export/ledger.jsonl",
                                      "protected/ledger.jsonl"};
  for (int k = 0; k < 2; k++) {
    char fp[128];
    snprintf(fp, sizeof fp, "%s/%s", dir, files[k]);
    FILE *f = fopen(path(fp), "r");
    CHECK(f != NULL);
    char line[65536];
    int seen = 0, rows = 0;
    int active = 0; /* a change's new ID bound active: none */
    while (f && fgets(line, sizeof line, f)) {
      seen |= (other && *other && strstr(line, other)) ||
              (dup && strstr(line, dup));
      active += strstr(line, "\"record\":\"lease_bind\"") &&
                strstr(line, "\"state\":\"active\"");
      rows++;
    }
    if (f)
      fclose(f);
    CHECK(rows > 5);
    CHECK_INT(seen, 0);
    if (k == 1)
      CHECK_INT(active, 0);
  }
  fw_cleanup(&w);
}

static void test_changed_id_checked(void) {
  changed_case("6b1d0f2a-4c8e-4d3b-9f70-2eac1b8d4f63", NULL, "ev-chg-other");
  changed_case("", NULL, "ev-chg-none");
  changed_case(NULL, "6b1d0f2a-4c8e-4d3b-9f70-2eac1b8d4f64", "ev-chg-dup");
}

/* Drops the last line of a file (a process killed before it wrote it). */
static void drop_last_line(const char *file) {
  FILE *f = fopen(file, "r");
  CHECK(f != NULL);
  if (!f)
    return;
  static char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  while (n > 0 && buf[n - 1] == '\n')
    n--;
  while (n > 0 && buf[n - 1] != '\n')
    n--;
  f = fopen(file, "w");
  CHECK(f != NULL);
  if (f) {
    CHECK(fwrite(buf, 1, n, f) == n);
    fclose(f);
  }
}

/* A break in flight when the process died: its intent records no period,
 * so the outcome recovery writes for it says none (null), never 0. */
static void test_recovered_break(void) {
  fake_wire w;
  fw_init(&w);
  ll_error err = {0};
  ll_run *r = written_run(&w, "ev-rbreak", "rbreak.json");
  if (!r)
    return;
  CHECK_INT(fw_send(r, LL_OP_LEASE_ACQUIRE, "A", "A", 1, -1, NULL, &err),
            LL_OK);
  CHECK_INT(fw_send(r, LL_OP_LEASE_BREAK, "operator", NULL, 0, -1, NULL, &err),
            LL_OK);
  ll_run_close(r);
  drop_last_line(path("ev-rbreak/protected/ledger.jsonl"));
  drop_last_line(path("ev-rbreak/export/ledger.jsonl"));
  r = fw_open(&w, path("ev-rbreak"), "rbreak.json", path("locks"), 1, &err);
  CHECK(r != NULL);
  if (!r) {
    fprintf(stderr, "recover: %s\n", err.message);
    fw_cleanup(&w);
    return;
  }
  const cJSON *row, *found = NULL;
  cJSON_ArrayForEach(row, ll_ledger_export_rows(ll_run_ledger(r))) {
    if (ll_json_is(row, "record", "outcome") &&
        ll_json_is(row, "operation", "Lease Break"))
      found = row;
  }
  CHECK(found != NULL);
  CHECK_STR(ll_json_str(found, "outcome"), "UNKNOWN");
  CHECK(cJSON_IsNull(cJSON_GetObjectItem(found, "break_period")));
  ll_run_close(r);
  fw_cleanup(&w);
}

int main(void) {
  root = ll_test_tmpdir();
  CHECK(root != NULL);
  if (root) {
    test_service_id_never_exported();
    test_swapped_id_never_recorded();
    test_changed_id_checked();
    test_recovered_break();
    ll_test_rmtree(root);
    free(root);
  }
  return ll_test_report("test_lease_ids");
}
