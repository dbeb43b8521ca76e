/* The evidence ledger: chains, tamper detection, recovery, durability
 * failures, the export sanitizer and the secret scan. */
#define _XOPEN_SOURCE 700 /* nftw, to remove the test's directory */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ledger.h"
#include "testlib.h"

#define GUID "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
#define GUID_UP "3F2504E04F8941D39A0C0305E82C3301"
#define GUID2 "b3a1c7d2-0e4f-4a5b-8c6d-7e8f90a1b2c3"

/* ---- helpers --------------------------------------------------------- */

/* Paths live until free_paths() at the end of main. */
static char *paths[256];
static size_t n_paths;

static char *path_of(const char *dir, const char *rel) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s/%s", dir, rel);
  if (n_paths == sizeof paths / sizeof paths[0])
    return NULL;
  return paths[n_paths++] = strdup(buf);
}

static void free_paths(void) {
  while (n_paths)
    free(paths[--n_paths]);
}

static int remove_entry(const char *path, const struct stat *sb, int flag,
                        struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  *len = 0;
  if (!f)
    return NULL;
  size_t cap = 4096;
  char *b = malloc(cap + 1);
  size_t n;
  while (b && (n = fread(b + *len, 1, cap - *len, f)) > 0) {
    *len += n;
    if (*len == cap)
      b = realloc(b, (cap *= 2) + 1);
  }
  fclose(f);
  if (b)
    b[*len] = '\0';
  return b;
}

static int write_all(const char *path, const char *b, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return 0;
  int ok = fwrite(b, 1, len, f) == len;
  return fclose(f) == 0 && ok;
}

static long file_size(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/* Offsets of the starts of lines; returns the count. */
static size_t line_starts(const char *b, size_t len, size_t *starts,
                          size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < len && n < cap; i++)
    if (i == 0 || b[i - 1] == '\n')
      starts[n++] = i;
  return n;
}

static ll_status append_text(ll_ledger *l, const char *json, long *seq,
                             ll_error *err) {
  cJSON *row = cJSON_Parse(json);
  if (!row)
    return LL_E_PARSE;
  ll_status st = ll_ledger_append(l, row, seq, err);
  cJSON_Delete(row);
  return st;
}

static const char *const base_rows[] = {
    ("{\"record\":\"manifest\",\"endpoint_kind\":\"replay\",\"run_id\":"
     "\"r1\"}"),
    ("{\"record\":\"lease_bind\",\"alias\":\"A\",\"lease_real_id\":\"" GUID
     "\"}"),
    ("{\"record\":\"intent\",\"operation\":\"put_blob\",\"lease_alias_"
     "supplied\":\"A\",\"lease_real_id\":\"" GUID
     "\",\"request_headers\":{\"x-ms-lease-id\":\"" GUID
     "\",\"Authorization\":\"Bearer abc.def\"}}"),
    ("{\"record\":\"outcome\",\"operation\":\"put_blob\",\"http_status\":201,"
     "\"notes\":\"service echoed lease " GUID_UP " in body\"}"),
    /* the caller's seq and row_hash are replaced */
    ("{\"record\":\"outcome\",\"operation\":\"get_blob\",\"http_status\":200,"
     "\"seq\":99,\"row_hash\":\"caller's, ignored\"}"),
};
#define N_BASE (sizeof base_rows / sizeof base_rows[0])

/* A closed ledger in dir holding base_rows (row 4's notes replaced by
 * notes4 when given). Returns 1 on success. */
static int make_ledger(const char *dir, const char *notes4) {
  ll_error err = {0};
  ll_ledger *l = ll_ledger_open(dir, LL_LEDGER_CREATE, &err);
  if (!l)
    return 0;
  int ok = 1;
  for (size_t i = 0; i < N_BASE && ok; i++) {
    cJSON *row = cJSON_Parse(base_rows[i]);
    if (i == 3 && notes4)
      cJSON_ReplaceItemInObject(row, "notes", cJSON_CreateString(notes4));
    long seq = 0;
    ok = ll_ledger_append(l, row, &seq, &err) == LL_OK && seq == (long)i + 1;
    cJSON_Delete(row);
  }
  ll_ledger_close(l);
  return ok;
}

static ll_status verify(const char *path, long *rows, long *bad) {
  cJSON *arr = NULL;
  ll_error err = {0};
  ll_status st = ll_ledger_read_file(path, &arr, bad, &err);
  *rows = cJSON_GetArraySize(arr);
  cJSON_Delete(arr);
  return st;
}

/* ---- 1. create, append, both chains, modes, no lease ID in export ---- */

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

static void test_secret_refusal(const char *root) {
  ll_error err = {0};
  char *dir = path_of(root, "secret");
  ll_ledger *l = ll_ledger_open(dir, LL_LEDGER_CREATE, &err);
  CHECK(l != NULL);
  if (!l)
    return;
  long seq = 0;
  CHECK_INT(append_text(l, base_rows[0], &seq, &err), LL_OK);
  CHECK_INT(ll_ledger_add_secret(l, "tok-XYZ-123456", &err), LL_OK);
  CHECK_INT(ll_ledger_add_secret(l, "", &err), LL_E_USAGE);
  char *pfile = path_of(dir, "protected/ledger.jsonl");
  char *efile = path_of(dir, "export/ledger.jsonl");
  long psize = file_size(pfile), esize = file_size(efile);

  static const struct {
    const char *row;
    ll_code want;
  } cases[] = {
      /* a field the sanitizer keeps */
      {"{\"record\":\"note\",\"debug\":\"got tok-XYZ-123456 from cache\"}",
       LL_E_INTERNAL},
      /* dropped from the export, but tokens reach no file at all */
      {"{\"record\":\"note\",\"h\":{\"authorization\":\"tok-XYZ-123456\"}}",
       LL_E_INTERNAL},
      /* a SAS signature reaches no file either */
      {"{\"record\":\"note\",\"url\":\"https://h/c/b?sv=1&sig=abc\"}",
       LL_E_INTERNAL},
      {"{\"record\":\"lease_bind\",\"alias\":\"A\",\"lease_real_id\":\"nope\"}",
       LL_E_BAD_LEASE_ID},
      {"{\"record\":\"lease_bind\",\"alias\":\"A\"}", LL_E_USAGE},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    seq = -1;
    err.message[0] = '\0';
    CHECK_INT(append_text(l, cases[i].row, &seq, &err), cases[i].want);
    CHECK_INT(seq, 0);
    CHECK(strstr(err.message, "tok-XYZ") == NULL);
    CHECK_INT(file_size(pfile), psize);
    CHECK_INT(file_size(efile), esize);
  }
  /* Over the reader's line limit: refused before anything is written. */
  size_t big = 1024 * 1024 + 16;
  char *huge = malloc(big + 1);
  memset(huge, 'x', big);
  huge[big] = '\0';
  cJSON *row = cJSON_CreateObject();
  cJSON_AddStringToObject(row, "notes", huge);
  CHECK_INT(ll_ledger_append(l, row, &seq, &err), LL_E_TOO_LARGE);
  CHECK_INT(file_size(pfile), psize);
  cJSON_Delete(row);
  free(huge);
  CHECK_INT(ll_ledger_count(l), 1);
  /* A refusal is not a durability failure: the ledger carries on. */
  CHECK_INT(append_text(l, base_rows[1], &seq, &err), LL_OK);
  CHECK_INT(seq, 2);
  CHECK_INT(ll_ledger_bind_alias(l, "B", GUID, &err), LL_E_USAGE);
  CHECK_INT(ll_ledger_bind_alias(l, "A", GUID_UP, &err), LL_OK);

  /* write_json: atomic, pretty, same secret rules, plain names only. */
  cJSON *v = cJSON_Parse("{\"run_id\":\"r1\",\"n\":[1,2]}");
  CHECK_INT(ll_ledger_write_json(l, "manifest.json", v, &err), LL_OK);
  size_t len;
  char *text = read_all(path_of(dir, "manifest.json"), &len);
  cJSON *back = text ? cJSON_Parse(text) : NULL;
  CHECK(back && cJSON_Compare(back, v, 1));
  CHECK(text && strchr(text, '\n') != NULL && text[len - 1] == '\n');
  CHECK(access(path_of(dir, "manifest.json.tmp"), F_OK) != 0);
  cJSON_Delete(back);
  free(text);
  static const char *const bad_names[] = {"",    "..",   ".",
                                          "a/b", "../x", "x..json"};
  for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++)
    CHECK_INT(ll_ledger_write_json(l, bad_names[i], v, &err), LL_E_USAGE);
  cJSON_AddStringToObject(v, "leak", GUID);
  CHECK_INT(ll_ledger_write_json(l, "expected.json", v, &err), LL_E_INTERNAL);
  CHECK(access(path_of(dir, "expected.json"), F_OK) != 0);
  cJSON_Delete(v);
  ll_ledger_close(l);
}

/* ---- 6. sanitizer and scan tables ------------------------------------ */

static void test_sanitizer(const char *root) {
  ll_error err = {0};
  ll_ledger *l = ll_ledger_open(path_of(root, "san"), LL_LEDGER_CREATE, &err);
  CHECK(l != NULL);
  if (!l)
    return;
  CHECK_INT(ll_ledger_bind_alias(l, "A", GUID, &err), LL_OK);
  CHECK_INT(ll_ledger_bind_alias(l, "B", GUID2, &err), LL_OK);
  static const struct {
    const char *in, *want;
  } cases[] = {
      {"{\"url\":\"https://a/c/b?sv=1&sig=abc%2Fd%3D&se=2\"}",
       "{\"url\":\"https://a/c/b?sv=1&sig=REDACTED&se=2\"}"},
      {"{\"url\":\"https://a/c/b?sig=xyz\"}",
       "{\"url\":\"https://a/c/b?sig=REDACTED\"}"},
      {"{\"u\":\"PUT /b?SIG=q HTTP/1.1\"}",
       "{\"u\":\"PUT /b?SIG=REDACTED HTTP/1.1\"}"},
      {"{\"h\":\"Bearer eyJ0.abc.def\"}", "{\"h\":\"Bearer REDACTED\"}"},
      {"{\"h\":\"auth: bearer  tok, next\"}",
       "{\"h\":\"auth: bearer  REDACTED, next\"}"},
      {"{\"h\":\"cupbearer x\"}", "{\"h\":\"cupbearer x\"}"},
      {"{\"req\":{\"headers\":{\"Authorization\":\"Bearer x\",\"x-ms-"
       "version\":\"v\"}}}",
       "{\"req\":{\"headers\":{\"x-ms-version\":\"v\"}}}"},
      {"{\"lease_real_id\":\"" GUID "\",\"lease_alias_supplied\":\"A\"}",
       "{\"lease_alias_supplied\":\"A\"}"},
      {"{\"Set-Cookie\":\"a\",\"arr\":[{\"COOKIE\":\"c\",\"k\":1}]}",
       "{\"arr\":[{\"k\":1}]}"},
      {"{\"seq\":3,\"prev_hash\":\"x\",\"row_hash\":\"y\",\"n\":{\"row_"
       "hash\":\"keep\"}}",
       "{\"seq\":3,\"n\":{\"row_hash\":\"keep\"}}"},
      {"{\"notes\":\"id " GUID_UP " and " GUID2 "\"}",
       "{\"notes\":\"id A and B\"}"},
      {"{\"n\":\"mixed 3f2504e0-4F89-41d3-9A0C-0305e82c3301x-\"}",
       "{\"n\":\"mixed Ax-\"}"},
      {"{\"n\":[\"3F25-04E0-4F89-41D3-9A0C-0305-E82C-3301\"]}",
       "{\"n\":[\"A\"]}"},
      {"{\"a\":1.5,\"b\":true,\"c\":null,\"d\":[1,\"x\"]}",
       "{\"a\":1.5,\"b\":true,\"c\":null,\"d\":[1,\"x\"]}"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cJSON *in = cJSON_Parse(cases[i].in);
    cJSON *out = ll_ledger_sanitize(l, in);
    char *got = out ? cJSON_PrintUnformatted(out) : NULL;
    CHECK_STR(got, cases[i].want);
    char *after = in ? cJSON_PrintUnformatted(in) : NULL;
    CHECK_STR(after, cases[i].in); /* the input is left alone */
    cJSON_free(after);
    cJSON_free(got);
    cJSON_Delete(out);
    cJSON_Delete(in);
  }
  ll_ledger_close(l);

  static const char *const ids[] = {GUID, GUID2};
  static const char *const secrets[] = {"SECRETVALUE", "s2-xyz"};
  static const struct {
    const char *text;
    size_t hits;
    const char *what;
  } scans[] = {
      {"nothing here", 0, ""},
      {"lease " GUID_UP, 1, "lease ID #1 at offset 6"},
      {"x " GUID2 " y", 1, "lease ID #2 at offset 2"},
      {"a sig=abc", 1, "sig= value at offset 2"},
      {"a sig=", 1, "sig= value at offset 2"},
      {"a sig=REDACTEDx", 1, "sig= value at offset 2"},
      {"a sig=REDACTED&b=1", 0, ""},
      {"{\"u\":\"x?sig=REDACTED\"}", 0, ""},
      {"{\"u\":\"x?sig=REDACTED\\n\"}", 0, ""},
      {"tok SECRETVALUE", 1, "secret #1 at offset 4"},
      {"tok secretvalue", 0, ""},
      {"s2-xyz and s2-xyz", 2, "secret #2 at offset 0"},
      {"sig=q " GUID " SECRETVALUE", 3, "sig= value at offset 0"},
  };
  for (size_t i = 0; i < sizeof scans / sizeof scans[0]; i++) {
    char what[128] = "unset";
    size_t hits = ll_secret_scan(scans[i].text, strlen(scans[i].text), ids, 2,
                                 secrets, 2, what, sizeof what);
    CHECK_INT(hits, scans[i].hits);
    CHECK_STR(what, scans[i].what);
    CHECK(strstr(what, "SECRET") == NULL && strstr(what, "xyz") == NULL);
  }
}

/* ---- 7. the cost of fsync -------------------------------------------- */

static int cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

static void test_append_cost(const char *root) {
  enum { N = 200 };
  static long us[N];
  ll_error err = {0};
  ll_ledger *l = ll_ledger_open(path_of(root, "bench"), LL_LEDGER_CREATE, &err);
  CHECK(l != NULL);
  if (!l)
    return;
  cJSON *row = cJSON_Parse(base_rows[3]);
  int ok = 1;
  for (int i = 0; i < N; i++) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    ok &= ll_ledger_append(l, row, NULL, &err) == LL_OK;
    clock_gettime(CLOCK_MONOTONIC, &b);
    us[i] = (b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000;
  }
  CHECK(ok);
  CHECK_INT(ll_ledger_count(l), N);
  cJSON_Delete(row);
  ll_ledger_close(l);
  qsort(us, N, sizeof us[0], cmp_long);
  printf("ledger append median: %ld us/row\n", us[N / 2]);
}

int main(void) {
  char *root = ll_test_tmpdir();
  CHECK(root != NULL);
  if (!root)
    return ll_test_report("test_ledger");
  test_create_and_chain(root);
  test_tamper(root);
  test_recovery(root);
  test_durability(root);
  test_secret_refusal(root);
  test_sanitizer(root);
  test_append_cost(root);
  CHECK(nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0);
  free(root);
  free_paths();
  return ll_test_report("test_ledger");
}
