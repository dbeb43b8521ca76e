/* The ledger's export: rows carrying a secret are refused before any byte
 * is written, the sanitizer turns lease IDs into aliases, the secret scan
 * names what it found without repeating it, and the cost of an append. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ledger_fixture.h"
#include "testlib.h"

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
  /* who a binding names, whatever the case and hyphens */
  CHECK_STR(ll_ledger_alias_of(l, GUID_UP), "A");
  CHECK_STR(ll_ledger_alias_of(l, "3F2504E0-4F89-41D3-9A0C-0305E82C3301"), "A");
  CHECK(ll_ledger_alias_of(l, GUID2) == NULL);
  CHECK(ll_ledger_alias_of(l, "not-a-guid") == NULL);
  CHECK(ll_ledger_alias_of(l, NULL) == NULL);
  /* A stretch from inside a bound ID (its first digits gone, as when a
   * secret was replaced over them) reaches neither file: refused, naming
   * the alias, never the digits; the ledger carries on. */
  psize = file_size(pfile);
  esize = file_size(efile);
  CHECK_INT(append_text(l,
                        "{\"record\":\"note\",\"debug\":\"{{secret:token}}"
                        "4f89-41d3-9a0c-0305e82c3301 lost\"}",
                        &seq, &err),
            LL_E_INTERNAL);
  CHECK(strstr(err.message, "export row refused") != NULL);
  CHECK(strstr(err.message, "alias A") != NULL);
  CHECK(strstr(err.message, "0305e82c") == NULL);
  CHECK_INT(file_size(pfile), psize);
  CHECK_INT(file_size(efile), esize);
  CHECK_INT(append_text(l, base_rows[1], &seq, &err), LL_OK);
  CHECK_INT(seq, 3);
  /* An identifier bound under a placeholder alias (an identity's oid) is
   * found whole, not by stretches: a made-up one shares long runs of
   * zeros with other made-up GUIDs. */
  CHECK_INT(ll_ledger_bind_alias(l, "{{identity}}", GUID2, &err), LL_OK);
  CHECK_INT(append_text(l,
                        "{\"record\":\"note\",\"debug\":\"x"
                        "0e4f-4a5b-8c6d-7e8f90a1b2c3\"}",
                        &seq, &err),
            LL_OK);
  CHECK_INT(append_text(l, "{\"record\":\"note\",\"debug\":\"" GUID2 "\"}",
                        &seq, &err),
            LL_OK); /* whole: replaced by its alias in the export */
  char *etext = read_all(efile, &(size_t){0});
  CHECK(etext && strstr(etext, "7e8f90a1b2c3") &&
        strstr(etext, "{{identity}}"));
  CHECK(etext && !strstr(etext, GUID2));
  free(etext);

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

/* An outcome row echoing a secret is kept, the secret replaced by its
 * placeholder and noted: the row of a request that was sent is not lost,
 * and neither ledger holds the secret. */
static void test_redact(const char *root) {
  ll_error err = {0};
  char *dir = path_of(root, "redact");
  ll_ledger *l = ll_ledger_open(dir, LL_LEDGER_CREATE, &err);
  CHECK(l != NULL);
  if (!l)
    return;
  long seq = 0;
  CHECK_INT(append_text(l, base_rows[0], &seq, &err), LL_OK);
  CHECK_INT(ll_ledger_add_named_secret(l, "tok-XYZ-123456", "token", &err),
            LL_OK);
  CHECK_INT(ll_ledger_add_named_secret(l, "tok-2", "", &err), LL_E_USAGE);
  static const char text[] =
      "{\"record\":\"outcome\",\"error_message\":\"token tok-XYZ-123456 "
      "refused\",\"server\":\"echo/tok-XYZ-123456\",\"etag\":null,"
      "\"discrepancy\":[{\"text\":\"saw ?sig=abc\"}],\"notes\":\"first\"}";
  cJSON *row = cJSON_Parse(text);
  CHECK_INT(ll_ledger_append(l, row, &seq, &err), LL_E_INTERNAL); /* as is */
  CHECK_INT(ll_ledger_redact(l, row, &err), LL_OK);
  CHECK_STR(cJSON_GetObjectItem(row, "error_message")->valuestring,
            "token {{secret:token}} refused");
  CHECK_STR(cJSON_GetObjectItem(row, "notes")->valuestring,
            "first; the service echoed a secret in error_message, server, "
            "discrepancy[0].text; replaced by {{secret:token}}, sig=REDACTED");
  CHECK_INT(ll_ledger_append(l, row, &seq, &err), LL_OK);
  CHECK_INT(seq, 2);
  cJSON_Delete(row);
  /* nothing to replace: the row and its notes are left as they are */
  row = cJSON_Parse("{\"record\":\"outcome\",\"notes\":null}");
  CHECK_INT(ll_ledger_redact(l, row, &err), LL_OK);
  CHECK(cJSON_IsNull(cJSON_GetObjectItem(row, "notes")));
  cJSON_Delete(row);
  ll_ledger_close(l);
  static const char *const files[] = {"protected/ledger.jsonl",
                                      "export/ledger.jsonl"};
  for (size_t i = 0; i < 2; i++) {
    size_t n;
    char *t = read_all(path_of(dir, files[i]), &n);
    CHECK(t && strstr(t, "tok-XYZ") == NULL && strstr(t, "sig=abc") == NULL);
    CHECK(t && strstr(t, "{{secret:token}} refused") != NULL);
    free(t);
  }
}

/* The export line is printed from a copy that borrows the protected row's
 * keys and strings, copying the protected line's bytes for every member
 * the two share: read back, every export row must be exactly the export
 * form of its protected row, whatever its members (replaced IDs, a sig=,
 * dropped keys, fractions, NaN, nested values, escapes). */
static void test_export_matches_protected(const char *root) {
  ll_error err = {0};
  char dir[2048];
  snprintf(dir, sizeof dir, "%s", path_of(root, "export-match"));
  ll_ledger *l = ll_ledger_open(dir, LL_LEDGER_CREATE, &err);
  CHECK(l != NULL);
  if (!l)
    return;
  CHECK_INT(ll_ledger_bind_alias(l, "A", GUID, &err), LL_OK);
  static const char *const rows[] = {
      "{\"record\":\"intent\",\"lease_real_id\":\"" GUID "\",\"lease_alias_"
      "supplied\":\"A\",\"n\":null,\"t\":true,\"f\":false,\"x\":1.5}",
      "{\"record\":\"outcome\",\"notes\":\"id " GUID
      "\",\"url\":\"/b?x=Bearer abc"
      "&x=1\",\"q\":\"quo\\\"te\\\\ \\u0001\",\"d\":[1,{\"k\":\"" GUID "\"}],"
      "\"e\":0.1,\"big\":1e300,\"neg\":-0.0,\"Cookie\":\"c\",\"k\":\"v\","
      "\"k2\":\"w\",\"seq\":99,\"prev_hash\":\"p\",\"row_hash\":\"r\"}",
      "{\"record\":\"finding\",\"h\":{\"authorization\":\"Bearer t\"},\"s\":"
      "\"plain\",\"u\":\"\\u00e9\"}",
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    cJSON *r = cJSON_Parse(rows[i]);
    CHECK(r != NULL);
    CHECK_INT(ll_ledger_append(l, r, NULL, &err), LL_OK);
    cJSON *nan = cJSON_CreateObject();
    cJSON_AddStringToObject(nan, "record", "x");
    cJSON_AddNumberToObject(nan, "nan", 0.0 / 0.0);
    cJSON_AddNumberToObject(nan, "third", 1.0 / 3.0);
    CHECK_INT(ll_ledger_append(l, nan, NULL, &err), LL_OK);
    cJSON_Delete(nan);
    cJSON_Delete(r);
  }
  char pp[4096], pe[4096];
  snprintf(pp, sizeof pp, "%s/protected/ledger.jsonl", dir);
  snprintf(pe, sizeof pe, "%s/export/ledger.jsonl", dir);
  /* the export rows kept in memory (the rows themselves, sanitized in
   * place) print as the export file's lines, byte for byte */
  size_t elen = 0, starts[16];
  char *etext = read_all(pe, &elen);
  size_t nl = etext ? line_starts(etext, elen, starts, 16) : 0;
  CHECK_INT((int)nl, cJSON_GetArraySize(ll_ledger_export_rows(l)));
  size_t li = 0;
  for (const cJSON *k = ll_ledger_export_rows(l)->child; k && li < nl;
       k = k->next, li++) {
    char *printed = cJSON_PrintUnformatted(k);
    size_t end = li + 1 < nl ? starts[li + 1] - 1 : elen - 1;
    CHECK(printed && strlen(printed) == end - starts[li] &&
          memcmp(printed, etext + starts[li], end - starts[li]) == 0);
    cJSON_free(printed);
  }
  free(etext);
  /* a row that cannot print as plain JSON is refused whole, wherever the
   * raw item sits (even under a key the ledger sets itself) */
  static const char *const raw_keys[] = {"x", "seq", "row_hash"};
  long before = file_size(pe);
  for (size_t i = 0; i < sizeof raw_keys / sizeof raw_keys[0]; i++) {
    cJSON *bad_row = cJSON_CreateObject();
    cJSON_AddStringToObject(bad_row, "record", "note");
    cJSON *in = cJSON_AddObjectToObject(bad_row, "in");
    cJSON_AddRawToObject(i ? bad_row : in, raw_keys[i], "1\n2");
    CHECK_INT(ll_ledger_append(l, bad_row, NULL, &err), LL_E_USAGE);
    cJSON_Delete(bad_row);
  }
  CHECK(file_size(pe) == before);
  ll_ledger_close(l);
  cJSON *prot = NULL, *exp = NULL;
  long bad = 0;
  CHECK_INT(ll_ledger_read_file(pp, &prot, &bad, &err), LL_OK);
  if (bad)
    fprintf(stderr, "  %s\n", err.message);
  CHECK_INT(ll_ledger_read_file(pe, &exp, &bad, &err), LL_OK);
  l = ll_ledger_open(path_of(root, "export-match-2"), LL_LEDGER_CREATE, &err);
  CHECK(l != NULL);
  if (l)
    CHECK_INT(ll_ledger_bind_alias(l, "A", GUID, &err), LL_OK);
  CHECK_INT(cJSON_GetArraySize(prot), 6);
  CHECK_INT(cJSON_GetArraySize(exp), 6);
  const cJSON *p = prot ? prot->child : NULL, *e = exp ? exp->child : NULL;
  for (; p && e && l; p = p->next, e = e->next) {
    cJSON *want = ll_ledger_sanitize(l, p);
    cJSON *got = cJSON_Duplicate(e, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(got, "prev_hash");
    cJSON_DeleteItemFromObjectCaseSensitive(got, "row_hash");
    char *a = cJSON_PrintUnformatted(want), *b = cJSON_PrintUnformatted(got);
    CHECK_STR(b, a);
    cJSON_free(a);
    cJSON_free(b);
    cJSON_Delete(want);
    cJSON_Delete(got);
  }
  ll_ledger_close(l);
  cJSON_Delete(prot);
  cJSON_Delete(exp);
}

int main(void) {
  char *root = ll_test_tmpdir();
  CHECK(root != NULL);
  if (!root)
    return ll_test_report("test_ledger_export");
  test_secret_refusal(root);
  test_sanitizer(root);
  test_redact(root);
  test_export_matches_protected(root);
  test_append_cost(root);
  CHECK(remove_tree(root) == 0);
  free(root);
  free_paths();
  return ll_test_report("test_ledger_export");
}
