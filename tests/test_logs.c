/* The service-log readers (core/corroboration/logs*.c): format detection,
 * the classic tokenizer on the quoting Microsoft's samples show, the JSON
 * forms' fields and statuses kept as written, the time rule, the limits;
 * the principal fingerprint; corroboration.jsonl's chain (chain_file.c). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chain_file.h"
#include "corroborate_write.h"
#include "ledger.h"
#include "logs.h"
#include "testlib.h"

#define TID "72f988bf-86f1-41af-91ab-dddddddddddd"
#define OID "0e0e0e0e-0000-4000-8000-00000000000e"

/* A 2.0 line shaped like the documented PutBlob/ListBlobs samples: a
 * doubled-quote ETag and a JSON authorization detail, quotes unescaped. */
#define CLASSIC_V2                                                             \
  "2.0;2019-02-25T20:06:55.9089848Z;PutBlob;OAuthSuccess;201;95;95;bearer;"    \
  "acct;acct;blob;\"https://acct.blob.core.windows.net/c/b.txt?comp=block&"    \
  "amp;x=1\";\"/acct/c/b.txt\";5569fa10-e01e-00c0-2745-cdb22d000000;0;"        \
  "200.59.21.176:52665;2017-11-09;2581;9;365;0;9;;\"tdz==\";\"\"0x8D1\"\";;"   \
  ";\"Mozilla/5.0 (X11)\";\"https://ms.portal.azure.com/\";\"crid&amp;1\";"    \
  "\"" OID "\";\"" TID "\";\"app\";\"https://storage.azure.com/\";\"iss\";;;"  \
  "\"[{\"action\":\"write\", \"principalType\":\"User\"}]\""

static ll_status parse(ll_log_set *s, const char *text) {
  ll_error err = {0};
  ll_status st = ll_log_parse(s, "t.log", text, strlen(text), &err);
  if (st != LL_OK)
    CHECK(strncmp(err.message, "t.log: ", 7) == 0); /* names the file */
  return st;
}

static void test_classic(void) {
  ll_log_set s = {0};
  CHECK_INT(parse(&s, CLASSIC_V2 "\n"), LL_OK);
  CHECK_INT(s.n, 1);
  const ll_log_rec *r = &s.recs[0];
  CHECK_INT(r->format, LL_LOG_CLASSIC);
  CHECK_STR(r->operation, "PutBlob");
  CHECK_STR(r->status, "201");
  CHECK_STR(r->status_text, "OAuthSuccess");
  CHECK_STR(r->path, "/c/b.txt");
  CHECK_STR(r->request_id, "5569fa10-e01e-00c0-2745-cdb22d000000");
  CHECK_STR(r->client_request_id, "crid&1"); /* HTML-decoded */
  CHECK_STR(r->oid, OID);
  CHECK_STR(r->tid, TID);
  CHECK_STR(r->category, "StorageWrite");
  CHECK_INT(r->utc_ms % 1000, 908);
  ll_log_set_free(&s);
  /* malformed lines: each refused, naming the line */
  static const char *const bad[] = {
      "2.0;2019-02-25T20:06:55Z;PutBlob;OAuthSuccess;201\n", /* too few */
      "3.0;2019-02-25T20:06:55Z;PutBlob\n",                  /* version */
      "1.0;\"unterminated;x\n",
      "1.0;\"q\"x;y\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ll_log_set b = {0};
    CHECK_INT(parse(&b, bad[i]), LL_E_USAGE);
    CHECK_INT(b.n, 0);
    CHECK_INT(b.nfiles, 0);
    ll_log_set_free(&b);
  }
  /* a line with one field too many is not silently read */
  ll_log_set b = {0};
  CHECK_INT(parse(&b, CLASSIC_V2 ";extra\n"), LL_E_USAGE);
  ll_log_set_free(&b);
  /* the shared line reader: a BOM and CRLF line ends, blank lines skipped */
  ll_log_set c = {0};
  CHECK_INT(parse(&c, "\xEF\xBB\xBF" CLASSIC_V2 "\r\n\r\n" CLASSIC_V2), LL_OK);
  CHECK_INT(c.n, 2);
  ll_log_set_free(&c);
}

static void test_json(void) {
  ll_log_set s = {0};
  const char *diag =
      "{\"time\":\"2019-02-28T19:10:21.2123117Z\",\"category\":"
      "\"StorageWrite\","
      "\"operationName\":\"PutBlob\",\"statusCode\":201,\"statusText\":"
      "\"Success\",\"callerIpAddress\":\"192.168.0.1:11111\",\"correlationId\":"
      "\"ad881411-201e-004e-1c99-cfd67d000000\",\"uri\":\"http://acct.blob."
      "core.windows.net/cont1/blobname?timeout=10\",\"identity\":{\"type\":"
      "\"OAuth\",\"requester\":{\"objectId\":\"" OID "\",\"tenantId\":\"" TID
      "\"}},\"properties\":{\"clientRequestId\":\"abc\"}}\r\n"
      "{\"time\":\"2019-02-28T19:10:22.0Z\",\"operationName\":\"GetBlob\","
      "\"statusCode\":\"Unknown\",\"uri\":\"/cont1/blobname\"}\n";
  CHECK_INT(parse(&s, diag), LL_OK);
  CHECK_INT(s.n, 2);
  CHECK_STR(s.recs[0].status, "201");
  CHECK_STR(s.recs[0].path, "/cont1/blobname");
  CHECK_STR(s.recs[0].client_request_id, "abc");
  CHECK_STR(s.recs[0].oid, OID);
  CHECK_STR(s.recs[1].status, "Unknown"); /* kept as logged */
  CHECK_STR(s.recs[1].category, "StorageRead");
  const char *az =
      "[{\"TimeGenerated\":\"2019-02-28T19:10:21.2123117Z\",\"OperationName\":"
      "\"DeleteBlob\",\"StatusCode\":\"202\",\"ClientRequestId\":\"x\","
      "\"Uri\":\"https://a.blob.core.windows.net/c/b\",\"RequesterObjectId\":"
      "\"o\",\"RequesterTenantId\":\"t\",\"TableName\":\"PrimaryResult\"}]";
  CHECK_INT(parse(&s, az), LL_OK);
  CHECK_INT(s.n, 3);
  CHECK_INT(s.recs[2].format, LL_LOG_ANALYTICS);
  CHECK_STR(s.recs[2].category, "StorageDelete");
  CHECK_STR(s.recs[2].status, "202");
  CHECK_INT(s.nfiles, 2);
  /* refused whole: a bad file adds nothing */
  static const char *const bad[] = {
      "{\"time\":\"2019-02-28T19:10:21Z\",\"operationName\":\"PutBlob\"",
      "{\"time\":\"2019-02-28T19:10:21Z\",\"statusCode\":201}\n",
      "{\"time\":\"yesterday\",\"operationName\":\"P\",\"statusCode\":1}\n",
      "{\"time\":\"2019-02-28T19:10:21Z\",\"operationName\":\"P\","
      "\"statusCode\":20.5}\n",
      "[{\"TimeGenerated\":\"2019-02-28T19:10:21Z\"",
      "[1]",
      "[]",
      "hello",
      "",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    CHECK_INT(parse(&s, bad[i]), LL_E_USAGE);
    CHECK_INT(s.n, 3);
    CHECK_INT(s.nfiles, 2);
  }
  ll_log_set_free(&s);
}

static void test_time(void) {
  int64_t t = 0;
  CHECK_INT(ll_log_parse_time("1970-01-01T00:00:00Z", &t), 0);
  CHECK_INT(t, 0);
  CHECK_INT(ll_log_parse_time("2026-12-01T09:00:00.017Z", &t), 0);
  CHECK_INT(t, 1796115600017LL);
  CHECK_INT(ll_log_parse_time("2018/11/08 21:09:36.6900118", &t), 0);
  CHECK_INT(ll_log_parse_time("2026-12-01T09:00:00+01:00", &t), -1);
  CHECK_INT(ll_log_parse_time("2026-13-01T09:00:00Z", &t), -1);
  CHECK_INT(ll_log_parse_time("2026-12-01", &t), -1);
}

static void test_fingerprint(void) {
  char fp[17];
  /* printf 'leaselua-principal-v1:%s:%s' TID OID | sha256sum | cut -c1-16 */
  CHECK_INT(ll_corr_fingerprint(TID, OID, fp), LL_OK);
  CHECK_STR(fp, "1792b1b691b3cec3");
  CHECK_INT(ll_corr_fingerprint("72F988BF-86F1-41AF-91AB-DDDDDDDDDDDD",
                                "0E0E0E0E-0000-4000-8000-00000000000E", fp),
            LL_OK);
  CHECK_STR(fp, "1792b1b691b3cec3"); /* lowercased first */
}

static void test_chain(void) {
  char *dir = ll_test_tmpdir();
  int fd = open(dir, O_RDONLY | O_DIRECTORY);
  ll_error err = {0};
  long seq = 0;
  for (int i = 1; i <= 3; i++) {
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "record", "corroboration");
    cJSON_AddNumberToObject(row, "n", i);
    CHECK_INT(ll_chain_append(fd, "c.jsonl", row, &seq, &err), LL_OK);
    CHECK_INT(seq, i);
    cJSON_Delete(row);
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/c.jsonl", dir);
  cJSON *rows = NULL;
  long bad = 0;
  CHECK_INT(ll_ledger_read_file(path, &rows, &bad, &err), LL_OK);
  CHECK_INT(cJSON_GetArraySize(rows), 3);
  cJSON_Delete(rows);
  /* one byte changed: nothing more is appended */
  FILE *f = fopen(path, "r+");
  fseek(f, 20, SEEK_SET);
  fputc('X', f);
  fclose(f);
  cJSON *row = cJSON_CreateObject();
  CHECK_INT(ll_chain_append(fd, "c.jsonl", row, &seq, &err), LL_E_TAMPER);
  CHECK(strstr(err.message, "c.jsonl") != NULL);
  cJSON_Delete(row);
  /* a link is never followed */
  CHECK_INT(symlinkat("/dev/null", fd, "l.jsonl"), 0);
  row = cJSON_CreateObject();
  CHECK_INT(ll_chain_append(fd, "l.jsonl", row, &seq, &err), LL_E_IO);
  cJSON_Delete(row);
  close(fd);
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK_INT(system(cmd), 0);
  free(dir);
}

int main(void) {
  test_classic();
  test_json();
  test_time();
  test_fingerprint();
  test_chain();
  return ll_test_report("test_logs");
}
