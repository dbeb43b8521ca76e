/* The evidence ledger: chains, tamper detection, recovery and durability
 * failures. The export's cleaning is in test_ledger_export.c. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ledger_fixture.h"
#include "testlib.h"

static void test_create_and_chain(const char *root) {
  char *dir = path_of(root, "run1");
  mode_t old = umask(0); /* the modes must not depend on the umask */
  int made = make_ledger(dir, NULL);
  umask(old);
  CHECK(made);

  long rows = 0, bad = -1;
  CHECK_INT(verify(path_of(dir, "protected/ledger.jsonl"), &rows, &bad), LL_OK);
  CHECK_INT(rows, N_BASE);
  CHECK_INT(bad, 0);
  CHECK_INT(verify(path_of(dir, "export/ledger.jsonl"), &rows, &bad), LL_OK);
  CHECK_INT(rows, N_BASE);

  struct stat sb;
  CHECK(stat(path_of(dir, "protected"), &sb) == 0 &&
        (sb.st_mode & 07777) == 0700);
  CHECK(stat(path_of(dir, "protected/ledger.jsonl"), &sb) == 0 &&
        (sb.st_mode & 07777) == 0600);

  size_t plen, elen;
  char *prot = read_all(path_of(dir, "protected/ledger.jsonl"), &plen);
  char *exp = read_all(path_of(dir, "export/ledger.jsonl"), &elen);
  CHECK(prot && exp);
  if (!prot || !exp)
    goto cleanup;
  const char *ids[] = {GUID};
  char what[128];
  CHECK_INT(ll_secret_scan(exp, elen, ids, 1, NULL, 0, what, sizeof what), 0);
  CHECK(ll_secret_scan(prot, plen, ids, 1, NULL, 0, what, sizeof what) >= 4);
  CHECK(strstr(prot, GUID) != NULL);
  CHECK(strstr(prot, GUID_UP) != NULL);
  CHECK(strstr(exp, "service echoed lease A in body") != NULL);
  CHECK(strstr(exp, "\"x-ms-lease-id\":\"A\"") != NULL);
  CHECK(strstr(exp, "lease_real_id") == NULL);
  CHECK(strstr(exp, "abc.def") == NULL);
  CHECK(strstr(exp, "Authorization") == NULL);
  /* The caller's seq and row_hash never reach the file. */
  CHECK(strstr(prot, "caller's, ignored") == NULL);
  CHECK(strstr(prot, "\"seq\":99") == NULL);
  static const char head[] = "{\"seq\":1,\"record\":\"manifest\",";
  CHECK(strncmp(prot, head, sizeof head - 1) == 0);
  CHECK(strstr(prot, "\"prev_hash\":\"" LL_GENESIS_HASH "\",\"row_hash\":\"") !=
        NULL);

  /* Reopened rows in memory carry the chain fields. */
  ll_error err = {0};
  ll_ledger *l = ll_ledger_open(dir, LL_LEDGER_RECOVER, &err);
  CHECK(l != NULL);
  if (l) {
    CHECK_INT(ll_ledger_count(l), N_BASE);
    CHECK_INT(cJSON_GetArraySize(ll_ledger_rows(l)), N_BASE);
    CHECK_INT(cJSON_GetArraySize(ll_ledger_export_rows(l)), N_BASE);
    const cJSON *r4 = cJSON_GetArrayItem(ll_ledger_export_rows(l), 3);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(r4, "notes")),
              "service echoed lease A in body");
    CHECK_INT(cJSON_GetNumberValue(cJSON_GetObjectItem(r4, "seq")), 4);
    CHECK_STR(ll_ledger_dir(l), dir);
    ll_ledger_close(l);
  }
cleanup:
  free(prot);
  free(exp);
}

/* ---- 2. tampering ---------------------------------------------------- */

enum { AT_START, AT_KEY, AT_MIDDLE, AT_HASH, AT_NEWLINE };

static void test_tamper(const char *root) {
  char *dir = path_of(root, "tamper");
  CHECK(make_ledger(dir, NULL));
  const char *files[] = {"protected/ledger.jsonl", "export/ledger.jsonl"};
  static const struct {
    int row;
    int where;
  } flips[] = {
      {1, AT_START},  {1, AT_KEY},    {1, AT_HASH}, {1, AT_NEWLINE},
      {3, AT_KEY},    {3, AT_MIDDLE}, {3, AT_HASH}, {3, AT_NEWLINE},
      {5, AT_START},  {5, AT_MIDDLE}, {5, AT_HASH}, {5, AT_NEWLINE},
      {2, AT_MIDDLE}, {4, AT_HASH},
  };
  char *copy = path_of(root, "tampered.jsonl");
  for (size_t f = 0; f < 2; f++) {
    size_t len, starts[16];
    char *orig = read_all(path_of(dir, files[f]), &len);
    CHECK(orig != NULL);
    if (!orig)
      continue;
    size_t n = line_starts(orig, len, starts, 16);
    CHECK_INT(n, N_BASE);
    for (size_t i = 0; i < sizeof flips / sizeof flips[0]; i++) {
      int r = flips[i].row;
      size_t s = starts[r - 1], e = r < (int)n ? starts[r] - 1 : len - 1;
      size_t off = flips[i].where == AT_START    ? s
                   : flips[i].where == AT_KEY    ? s + 10
                   : flips[i].where == AT_MIDDLE ? (s + e) / 2
                   : flips[i].where == AT_HASH   ? e - 10
                                                 : e;
      char *b = malloc(len);
      memcpy(b, orig, len);
      b[off] ^= 0x01;
      CHECK(write_all(copy, b, len));
      long rows = -1, bad = 0;
      ll_status st = verify(copy, &rows, &bad);
      if (st != LL_E_TAMPER || bad != r)
        fprintf(stderr, "file %s row %d where %d: st %d bad %ld\n", files[f], r,
                flips[i].where, st, bad);
      CHECK_INT(st, LL_E_TAMPER);
      CHECK_INT(bad, r);
      CHECK_INT(rows, r - 1); /* rows up to the first bad one */
      free(b);
    }

    /* Deleting line 3: the row after it is named (it sits at line 3). */
    char *b = malloc(len);
    size_t l3 = starts[3] - starts[2];
    memcpy(b, orig, starts[2]);
    memcpy(b + starts[2], orig + starts[3], len - starts[3]);
    CHECK(write_all(copy, b, len - l3));
    long rows, bad;
    ll_error err = {0};
    cJSON *arr = NULL;
    CHECK_INT(ll_ledger_read_file(copy, &arr, &bad, &err), LL_E_TAMPER);
    CHECK_INT(bad, 3);
    CHECK_STR(err.message, "chain broken at row 3: seq out of order");
    cJSON_Delete(arr);

    /* Swapping lines 2 and 3. */
    size_t l2 = starts[2] - starts[1];
    memcpy(b, orig, len);
    memcpy(b + starts[1], orig + starts[2], l3);
    memcpy(b + starts[1] + l3, orig + starts[1], l2);
    CHECK(write_all(copy, b, len));
    CHECK_INT(verify(copy, &rows, &bad), LL_E_TAMPER);
    CHECK_INT(bad, 2);

    /* A last line without its newline. */
    CHECK(write_all(copy, orig, len - 1));
    CHECK_INT(ll_ledger_read_file(copy, &arr, &bad, &err), LL_E_TAMPER);
    CHECK_INT(bad, N_BASE);
    CHECK_STR(err.message, "chain broken at row 5: truncated last line");
    cJSON_Delete(arr);

    /* A blank line at the end is a row that is not JSON. */
    free(b);
    CHECK(write_all(copy, orig, len));
    FILE *fp = fopen(copy, "ab");
    CHECK(fp && fputs("\n", fp) >= 0 && fclose(fp) == 0);
    CHECK_INT(verify(copy, &rows, &bad), LL_E_TAMPER);
    CHECK_INT(bad, N_BASE + 1);

    /* The untouched file still verifies. */
    CHECK(write_all(copy, orig, len));
    CHECK_INT(verify(copy, &rows, &bad), LL_OK);
    CHECK_INT(rows, N_BASE);
    free(orig);
  }
  long rows, bad;
  CHECK_INT(verify(path_of(root, "no-such-file"), &rows, &bad), LL_E_IO);
}

/* ---- 3. refusal to reuse, recovery ----------------------------------- */

static void test_recovery(const char *root) {
  ll_error err = {0};
  char *dir = path_of(root, "rec");
  CHECK(make_ledger(dir, NULL));

  /* CREATE refuses evidence, and any non-empty directory. */
  ll_ledger *l = ll_ledger_open(dir, LL_LEDGER_CREATE, &err);
  CHECK(l == NULL);
  CHECK_INT(err.code, LL_E_EVIDENCE_EXISTS);
  CHECK(strstr(err.message, "already holds evidence: choose a new "
                            "--evidence or open it for recovery") != NULL);
  char *other = path_of(root, "other");
  CHECK(mkdir(other, 0755) == 0 &&
        write_all(path_of(other, "note.txt"), "x", 1));
  err.code = LL_OK;
  CHECK(ll_ledger_open(other, LL_LEDGER_CREATE, &err) == NULL);
  CHECK_INT(err.code, LL_E_EVIDENCE_EXISTS);
  char *empty = path_of(root, "empty");
  CHECK(mkdir(empty, 0755) == 0);
  l = ll_ledger_open(empty, LL_LEDGER_CREATE, &err);
  CHECK(l != NULL);
  ll_ledger_close(l);
  CHECK(ll_ledger_open(path_of(root, "a/b/c"), LL_LEDGER_RECOVER, &err) ==
        NULL);
  CHECK_INT(err.code, LL_E_IO);
  l = ll_ledger_open(path_of(root, "a/b/c"), LL_LEDGER_CREATE, &err);
  CHECK(l != NULL); /* mkdir -p */
  ll_ledger_close(l);

  /* RECOVER continues seq and both chains. */
  l = ll_ledger_open(dir, LL_LEDGER_RECOVER, &err);
  CHECK(l != NULL);
  if (!l)
    return;
  CHECK_INT(ll_ledger_count(l), N_BASE);
  long seq = 0;
  CHECK_INT(append_text(l,
                        "{\"record\":\"outcome\",\"notes\":\"lease " GUID
                        " again\"}",
                        &seq, &err),
            LL_OK);
  CHECK_INT(seq, N_BASE + 1);
  ll_ledger_close(l);
  char *pfile = path_of(dir, "protected/ledger.jsonl");
  char *efile = path_of(dir, "export/ledger.jsonl");
  long rows, bad;
  CHECK_INT(verify(pfile, &rows, &bad), LL_OK);
  CHECK_INT(rows, N_BASE + 1);
  CHECK_INT(verify(efile, &rows, &bad), LL_OK);
  CHECK_INT(rows, N_BASE + 1);

  /* A crash between the two writes: the export lacks its last row. */
  size_t elen, starts[16];
  char *exp = read_all(efile, &elen);
  size_t n = line_starts(exp, elen, starts, 16);
  CHECK(strstr(exp + starts[n - 1], "lease A again") != NULL);
  CHECK(truncate(efile, (off_t)starts[n - 1]) == 0);
  l = ll_ledger_open(dir, LL_LEDGER_RECOVER, &err);
  CHECK(l != NULL);
  if (l) {
    CHECK_INT(ll_ledger_count(l), N_BASE + 1);
    CHECK_INT(cJSON_GetArraySize(ll_ledger_export_rows(l)), N_BASE + 1);
  }
  ll_ledger_close(l);
  size_t elen2;
  char *exp2 = read_all(efile, &elen2);
  CHECK(exp2 && elen2 == elen && memcmp(exp, exp2, elen) == 0);
  CHECK_INT(verify(efile, &rows, &bad), LL_OK);
  CHECK_INT(rows, N_BASE + 1);
  free(exp2);

  /* An export longer than the protected ledger is tampering. */
  size_t plen, pst[16];
  char *prot = read_all(pfile, &plen);
  size_t pn = line_starts(prot, plen, pst, 16);
  CHECK(truncate(pfile, (off_t)pst[pn - 1]) == 0);
  CHECK(ll_ledger_open(dir, LL_LEDGER_RECOVER, &err) == NULL);
  CHECK_INT(err.code, LL_E_TAMPER);
  CHECK(strstr(err.message, "more rows") != NULL);
  CHECK(write_all(pfile, prot, plen));

  /* A broken protected chain is named. */
  prot[pst[2] + 10] ^= 1;
  CHECK(write_all(pfile, prot, plen));
  CHECK(ll_ledger_open(dir, LL_LEDGER_RECOVER, &err) == NULL);
  CHECK_INT(err.code, LL_E_TAMPER);
  CHECK(strstr(err.message, "protected/ledger.jsonl: chain broken at row 3") !=
        NULL);
  prot[pst[2] + 10] ^= 1;
  CHECK(write_all(pfile, prot, plen));
  free(prot);
  free(exp);

  /* An export that chains but is not the sanitized protected ledger. */
  char *x = path_of(root, "recx"), *y = path_of(root, "recy");
  CHECK(make_ledger(x, NULL) && make_ledger(y, "different notes"));
  char *ybytes = read_all(path_of(y, "export/ledger.jsonl"), &elen);
  CHECK(write_all(path_of(x, "export/ledger.jsonl"), ybytes, elen));
  free(ybytes);
  CHECK(ll_ledger_open(x, LL_LEDGER_RECOVER, &err) == NULL);
  CHECK_INT(err.code, LL_E_TAMPER);
  CHECK(strstr(err.message, "row 4 is not the sanitized protected row") !=
        NULL);
}

/* ---- 4. durability --------------------------------------------------- */

static void test_durability(const char *root) {
  char *dir = path_of(root, "durable");
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int code = 0;
    ll_error err = {0};
    long seq = 0;
    signal(SIGXFSZ, SIG_IGN);
    ll_ledger *l = ll_ledger_open(dir, LL_LEDGER_CREATE, &err);
    if (!l)
      _exit(100);
    if (append_text(l, base_rows[0], &seq, &err) != LL_OK || seq != 1)
      code |= 1;
    long size = file_size(path_of(dir, "protected/ledger.jsonl"));
    struct rlimit rl;
    getrlimit(RLIMIT_FSIZE, &rl);
    rl.rlim_cur = (rlim_t)size;
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
      code |= 2;
    if (append_text(l, base_rows[2], &seq, &err) != LL_E_DURABILITY ||
        seq != 0 ||
        !strstr(err.message, "could not make the evidence row durable: ") ||
        !strstr(err.message, ": nothing was sent"))
      code |= 4;
    if (append_text(l, base_rows[3], &seq, &err) != LL_E_DURABILITY)
      code |= 8;
    if (ll_ledger_count(l) != 1)
      code |= 16;
    if (file_size(path_of(dir, "protected/ledger.jsonl")) != size)
      code |= 32;
    ll_ledger_close(l);
    _exit(code);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK_INT(WEXITSTATUS(status), 0);
  /* What was written before the failure still verifies. */
  long rows, bad;
  CHECK_INT(verify(path_of(dir, "protected/ledger.jsonl"), &rows, &bad), LL_OK);
  CHECK_INT(rows, 1);
}

/* ---- 5. refusing secrets --------------------------------------------- */

int main(void) {
  char *root = ll_test_tmpdir();
  CHECK(root != NULL);
  if (!root)
    return ll_test_report("test_ledger");
  test_create_and_chain(root);
  test_tamper(root);
  test_recovery(root);
  test_durability(root);
  CHECK(remove_tree(root) == 0);
  free(root);
  free_paths();
  return ll_test_report("test_ledger");
}
