/* core/evidence/ledger_back.c: a ledger keeps no row it appends until a
 * reader asks; the first ask reads every row back from the export file
 * and the lines waiting (writing none of them), checked against the chain
 * the handle wrote, and refuses a file edited, cut or grown under it; from
 * then on each appended row is kept and the borrowed array stays current;
 * the last row is the caller's to take, once. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonx.h"
#include "ledger_fixture.h"
#include "ledger_impl.h"
#include "testlib.h"

static const char *const intent =
    "{\"record\":\"intent\",\"event_id\":\"e0001\",\"http_method\":\"HEAD\"}";
static const char *const outcome =
    "{\"record\":\"outcome\",\"event_id\":\"e0001\",\"http_status\":200}";

static ll_ledger *fresh(const char *root, const char *name, char **efile) {
  char *dir = path_of(root, name);
  ll_error err = {0};
  ll_ledger *l = ll_ledger_open(dir, LL_LEDGER_CREATE, &err);
  *efile = path_of(dir, "export/ledger.jsonl");
  return l;
}

/* Each row of rows prints as the matching line of the export file. */
static int rows_are_file(const cJSON *rows, const char *efile) {
  size_t len = 0, starts[64];
  char *text = read_all(efile, &len);
  size_t n = text ? line_starts(text, len, starts, 64) : 0;
  int same = text && (int)n == cJSON_GetArraySize(rows);
  size_t i = 0;
  for (const cJSON *r = rows ? rows->child : NULL; same && r; r = r->next) {
    char *p = cJSON_PrintUnformatted(r);
    size_t end = i + 1 < n ? starts[i + 1] - 1 : len - 1;
    same = p && strlen(p) == end - starts[i] &&
           memcmp(p, text + starts[i], end - starts[i]) == 0;
    cJSON_free(p);
    i++;
  }
  free(text);
  return same;
}

/* Nothing kept until asked; the ask reads back what was written, and
 * what waits without writing it; then the array stays current. */
static void test_kept_once_asked(const char *root) {
  char *e;
  ll_ledger *l = fresh(root, "asked", &e);
  CHECK(l != NULL);
  if (!l)
    return;
  for (int i = 0; i < 5; i++) {
    CHECK_INT(append_row_text(l, intent, LL_SYNC_NONE, NULL), LL_OK);
    cJSON *last = ll_ledger_take_last(l);
    CHECK_INT(ll_json_long(last, "seq", 0), i + 1);
    CHECK(ll_json_str(last, "row_hash") != NULL);
    CHECK(ll_ledger_take_last(l) == NULL); /* taken once */
    cJSON_Delete(last);
  }
  CHECK_INT(cJSON_GetArraySize(l->export_rows), 0); /* none kept */
  CHECK_INT(append_row_text(l, outcome, LL_SYNC_DEFER, NULL), LL_OK);
  CHECK_INT(lines_in(e), 5); /* the sixth export line waits */
  const cJSON *rows = ll_ledger_export_rows(l);
  CHECK_INT(cJSON_GetArraySize(rows), 6);
  CHECK_INT(lines_in(e), 5); /* read back, not written */
  CHECK_STR(ll_json_str(ll_json_last(rows), "record"), "outcome");
  CHECK_INT(ll_json_long(ll_json_last(rows), "seq", 0), 6);
  ll_error err = {0};
  CHECK_INT(ll_ledger_flush_export(l, &err), LL_OK);
  CHECK(rows_are_file(rows, e));
  /* asked once: rows appended now join the same array */
  CHECK_INT(append_row_text(l, outcome, LL_SYNC_NONE, NULL), LL_OK);
  CHECK_INT(cJSON_GetArraySize(rows), 7);
  cJSON *ref = ll_ledger_take_last(l);
  CHECK(ref != NULL && ref->child == ll_json_last(rows)->child);
  cJSON_Delete(ref); /* the reference only: the row stays kept */
  CHECK(ll_ledger_export_rows(l) == rows);
  CHECK(rows_are_file(rows, e));
  ll_ledger_close(l);
}

/* The first ask after an edit, a cut or an extra line refuses to read
 * back: the rows a reader gets are the rows the run wrote. */
static void test_edited_file_refused(const char *root) {
  static const char *const names[] = {"edit", "cut", "grown"};
  for (int k = 0; k < 3; k++) {
    char *e;
    ll_ledger *l = fresh(root, names[k], &e);
    CHECK(l != NULL);
    if (!l)
      return;
    for (int i = 0; i < 3; i++)
      CHECK_INT(append_row_text(l, outcome, LL_SYNC_NONE, NULL), LL_OK);
    size_t len = 0;
    char *text = read_all(e, &len);
    CHECK(text != NULL && len > 20);
    if (!text) {
      ll_ledger_close(l);
      return;
    }
    if (k == 0) {
      char *at = strstr(text, "200");
      if (at)
        at[2] = '1'; /* status 201 in the first row */
      CHECK(write_all(e, text, len));
    } else if (k == 1) {
      CHECK(truncate(e, (off_t)(len - 10)) == 0);
    } else {
      int fd = open(e, O_WRONLY | O_APPEND);
      CHECK(fd >= 0 && write(fd, text, 60) == 60);
      CHECK(fd >= 0 && write(fd, "\n", 1) == 1);
      if (fd >= 0)
        close(fd);
    }
    free(text);
    const cJSON *rows = NULL;
    ll_error err = {0};
    CHECK_INT(ll_ledger_read_back(l, &rows, &err), LL_E_TAMPER);
    CHECK(rows == NULL);
    CHECK(strstr(err.message, "export ledger") != NULL);
    CHECK(ll_ledger_export_rows(l) == NULL);
    /* all or nothing: no row read back before the bad line stays */
    CHECK_INT(l->exp_parsed, 0);
    CHECK_INT(cJSON_GetArraySize(l->export_rows), 0);
    /* and nothing more is appended to a bundle that no longer verifies */
    ll_error e2 = {0};
    CHECK_INT(append_text(l, outcome, NULL, &e2), LL_E_TAMPER);
    CHECK(strstr(e2.message, "unusable") != NULL);
    ll_ledger_close(l);
  }
}

/* A reopened ledger holds every row it read at open. */
static void test_recovered_rows(const char *root) {
  char *e;
  ll_ledger *l = fresh(root, "reopen", &e);
  CHECK(l != NULL);
  if (!l)
    return;
  CHECK_INT(append_row_text(l, intent, LL_SYNC_NONE, NULL), LL_OK);
  CHECK_INT(append_row_text(l, outcome, LL_SYNC_NONE, NULL), LL_OK);
  ll_ledger_close(l);
  ll_error err = {0};
  l = ll_ledger_open(path_of(root, "reopen"), LL_LEDGER_RECOVER, &err);
  CHECK(l != NULL);
  if (!l)
    return;
  const cJSON *rows = ll_ledger_export_rows(l);
  CHECK_INT(cJSON_GetArraySize(rows), 2);
  CHECK_INT(append_row_text(l, outcome, LL_SYNC_NONE, NULL), LL_OK);
  CHECK_INT(cJSON_GetArraySize(rows), 3);
  CHECK(rows_are_file(rows, e));
  ll_ledger_close(l);
}

int main(void) {
  char *root = ll_test_tmpdir();
  CHECK(root != NULL);
  if (!root)
    return ll_test_report("test_ledger_back");
  test_kept_once_asked(root);
  test_edited_file_refused(root);
  test_recovered_rows(root);
  CHECK(remove_tree(root) == 0);
  free(root);
  free_paths();
  return ll_test_report("test_ledger_back");
}
