/* libFuzzer target: reading a ledger for `leaselua verify` (core/ledger
 * ll_ledger_read_file, then core/verify's re-derivation). The first byte
 * picks the mode:
 *   even: the rest is written as export/ledger.jsonl as it is (the line
 *         reader and the chain check see arbitrary bytes);
 *   odd:  each line that parses as a JSON object gets a valid seq,
 *         prev_hash and row_hash first, so the rows reach the model's fold
 *         that verify runs (a fuzzer cannot forge SHA-256 itself).
 * Files live in a private temporary directory, removed at exit. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "hash.h"
#include "ledger.h"
#include "verify.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[256], exp_dir[300], path[320];

static void remove_dir(void) {
  unlink(path);
  rmdir(exp_dir);
  rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  struct stat sb;
  const char *base = stat("/dev/shm", &sb) == 0 ? "/dev/shm" : "/tmp";
  snprintf(dir, sizeof dir, "%s/leaselua-fuzz-ledger.XXXXXX", base);
  if (!mkdtemp(dir))
    abort();
  snprintf(exp_dir, sizeof exp_dir, "%s/export", dir);
  snprintf(path, sizeof path, "%s/ledger.jsonl", exp_dir);
  if (mkdir(exp_dir, 0700) != 0)
    abort();
  atexit(remove_dir);
  return 0;
}

/* One line made chain-valid: {..., "seq":n, "prev_hash":prev,
 * "row_hash":sha256(prev || line-without-row_hash)}. */
static int chained(FILE *f, const char *line, size_t len, long *n,
                   char prev[LL_SHA256_HEX]) {
  cJSON *row = cJSON_ParseWithLength(line, len);
  if (!cJSON_IsObject(row)) {
    cJSON_Delete(row);
    return 0;
  }
  cJSON_DeleteItemFromObjectCaseSensitive(row, "seq");
  cJSON_DeleteItemFromObjectCaseSensitive(row, "prev_hash");
  cJSON_DeleteItemFromObjectCaseSensitive(row, "row_hash");
  /* seq first and prev_hash last, as the ledger writes them */
  cJSON *first = cJSON_CreateObject();
  cJSON_AddNumberToObject(first, "seq", (double)++*n);
  cJSON *it = row->child;
  while (it) {
    cJSON *next = it->next;
    const char *name = it->string;
    cJSON *moved = cJSON_DetachItemViaPointer(row, it);
    cJSON_AddItemToObject(first, name, moved);
    it = next;
  }
  cJSON_AddStringToObject(first, "prev_hash", prev);
  cJSON_Delete(row);
  char *text = cJSON_PrintUnformatted(first);
  cJSON_Delete(first);
  if (!text)
    return 0;
  size_t tl = strlen(text);
  char hash[LL_SHA256_HEX];
  ll_sha256 *h = ll_sha256_new();
  int ok = h && ll_sha256_update(h, prev, 64) == LL_OK &&
           ll_sha256_update(h, text, tl) == LL_OK &&
           ll_sha256_final(h, hash) == LL_OK;
  ll_sha256_free(h);
  if (ok) {
    fwrite(text, 1, tl - 1, f);
    fprintf(f, ",\"row_hash\":\"%s\"}\n", hash);
    memcpy(prev, hash, LL_SHA256_HEX);
  }
  cJSON_free(text);
  return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  FILE *f = fopen(path, "wb");
  if (!f)
    abort();
  const char *in = (const char *)data + 1;
  size_t len = size - 1;
  if ((data[0] & 1) == 0) {
    fwrite(in, 1, len, f);
  } else {
    char prev[LL_SHA256_HEX] = LL_GENESIS_HASH;
    long n = 0;
    size_t i = 0;
    while (i < len) {
      const char *nl = memchr(in + i, '\n', len - i);
      size_t end = nl ? (size_t)(nl - in) : len;
      chained(f, in + i, end - i, &n, prev);
      i = end + 1;
    }
  }
  fclose(f);
  /* verify reads the file with ll_ledger_read_file, then folds the rows */
  ll_error err = {0};
  ll_verify_report rep;
  ll_status st = ll_verify_dir_mode(dir, LL_VERIFY_EXPORT_ONLY, &rep, &err);
  if (st == LL_E_IO)
    __builtin_trap(); /* the file is there: only a verdict may come back */
  if (st == LL_OK && rep.rows <= 0)
    __builtin_trap();
  return 0;
}
