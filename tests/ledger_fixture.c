/* Shared by the ledger tests: paths under the test's directory, whole-file
 * reads and writes, and a small base ledger whose rows carry a lease ID in
 * every place the export must clean. */
#define _XOPEN_SOURCE 700 /* nftw, to remove the test's directory */
#include "ledger_fixture.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
/* Paths live until free_paths() at the end of main. */
static char *paths[256];
static size_t n_paths;

char *path_of(const char *dir, const char *rel) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s/%s", dir, rel);
  if (n_paths == sizeof paths / sizeof paths[0])
    return NULL;
  return paths[n_paths++] = strdup(buf);
}

void free_paths(void) {
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

char *read_all(const char *path, size_t *len) {
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

int write_all(const char *path, const char *b, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return 0;
  int ok = fwrite(b, 1, len, f) == len;
  return fclose(f) == 0 && ok;
}

long file_size(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/* Offsets of the starts of lines; returns the count. */
size_t line_starts(const char *b, size_t len, size_t *starts, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < len && n < cap; i++)
    if (i == 0 || b[i - 1] == '\n')
      starts[n++] = i;
  return n;
}

ll_status append_text(ll_ledger *l, const char *json, long *seq,
                      ll_error *err) {
  cJSON *row = cJSON_Parse(json);
  if (!row)
    return LL_E_PARSE;
  ll_status st = ll_ledger_append(l, row, seq, err);
  cJSON_Delete(row);
  return st;
}

ll_status append_row_text(ll_ledger *l, const char *json, ll_sync sync,
                          ll_error *err) {
  ll_error local = {0};
  cJSON *row = cJSON_Parse(json);
  long seq = 0;
  return row ? ll_ledger_append_row(l, row, sync, &seq, err ? err : &local)
             : LL_E_PARSE;
}

long lines_in(const char *path) {
  size_t len = 0;
  char *b = read_all(path, &len);
  if (!b)
    return -1;
  long n = 0;
  for (size_t i = 0; i < len; i++)
    n += b[i] == '\n' || i + 1 == len;
  free(b);
  return n;
}

const char *const base_rows[] = {
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
const size_t N_BASE = sizeof base_rows / sizeof base_rows[0];

/* A closed ledger in dir holding base_rows (row 4's notes replaced by
 * notes4 when given). Returns 1 on success. */
int make_ledger(const char *dir, const char *notes4) {
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

ll_status verify(const char *path, long *rows, long *bad) {
  cJSON *arr = NULL;
  ll_error err = {0};
  ll_status st = ll_ledger_read_file(path, &arr, bad, &err);
  *rows = cJSON_GetArraySize(arr);
  cJSON_Delete(arr);
  return st;
}

/* ---- 1. create, append, both chains, modes, no lease ID in export ---- */

int remove_tree(const char *root) {
  return nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
