/* The index of a multi-version run: its parent directory is new or empty,
 * index.json holds the contract's fields, and the exit of the whole is
 * the worst of the runs in the documented order. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_index.h"
#include "testlib.h"

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  static char buf[8192];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

static void test_prepare(void) {
  char base[] = "/tmp/test_run_index.XXXXXX";
  CHECK(mkdtemp(base) != NULL);
  char parent[256], file[300];
  snprintf(parent, sizeof parent, "%s/a/b/matrix", base);
  ll_error err = {0};
  CHECK_INT(ll_index_prepare(parent, &err), LL_OK);
  struct stat sb;
  CHECK(stat(parent, &sb) == 0 && S_ISDIR(sb.st_mode));
  CHECK_INT((int)(sb.st_mode & 0777), 0700);
  CHECK_INT(ll_index_prepare(parent, &err), LL_OK); /* empty: taken */
  snprintf(file, sizeof file, "%s/x", parent);
  FILE *f = fopen(file, "w");
  CHECK(f != NULL);
  if (f)
    fclose(f);
  CHECK_INT(ll_index_prepare(parent, &err), LL_E_EVIDENCE_EXISTS);
  CHECK(strstr(err.message, "already holds files") != NULL);
  CHECK_INT(ll_index_prepare(file, &err), LL_E_EVIDENCE_EXISTS);
  unlink(file);

  ll_index_run runs[3] = {
      {.api_version = "2021-12-02", .ran = 1, .bundle = 1, .decision = 0},
      {.api_version = "2023-11-03",
       .ran = 1,
       .bundle = 1,
       .decision = 2,
       .exit_code = 2},
      {.api_version = "2025-01-05", .reason = "not run: because"},
  };
  CHECK_INT(ll_index_write(parent, "main-handoff", "2026-12-01T00:00:00Z", runs,
                           3, &err),
            LL_OK);
  snprintf(file, sizeof file, "%s/" LL_INDEX_FILE, parent);
  cJSON *j = cJSON_Parse(slurp(file));
  CHECK(j != NULL);
  CHECK_STR(cJSON_GetObjectItem(j, "format")->valuestring, LL_INDEX_FORMAT);
  CHECK_STR(cJSON_GetObjectItem(j, "flow")->valuestring, "main-handoff");
  CHECK_STR(cJSON_GetObjectItem(j, "created_utc")->valuestring,
            "2026-12-01T00:00:00Z");
  cJSON *r = cJSON_GetObjectItem(j, "runs");
  CHECK_INT(cJSON_GetArraySize(r), 2);
  cJSON *r1 = cJSON_GetArrayItem(r, 1);
  CHECK_STR(cJSON_GetObjectItem(r1, "dir")->valuestring, "2023-11-03");
  CHECK_STR(cJSON_GetObjectItem(r1, "decision")->valuestring, "HOLD");
  CHECK_INT(cJSON_GetObjectItem(r1, "exit")->valueint, 2);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(r1, "bundle")));
  cJSON *nr = cJSON_GetObjectItem(j, "not_run");
  CHECK_INT(cJSON_GetArraySize(nr), 1);
  CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(nr, 0), "api_version")
                ->valuestring,
            "2025-01-05");
  cJSON_Delete(j);
  /* a run that recorded no decision: null, never a made-up one */
  runs[1].decision = -1;
  runs[1].exit_code = 64;
  runs[1].bundle = 0;
  CHECK_INT(ll_index_write(parent, "main-handoff", "t", runs, 2, &err), LL_OK);
  j = cJSON_Parse(slurp(file));
  r1 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "runs"), 1);
  CHECK(cJSON_IsNull(cJSON_GetObjectItem(r1, "decision")));
  CHECK(cJSON_IsFalse(cJSON_GetObjectItem(r1, "bundle")));
  cJSON_Delete(j);
  char tmp[300];
  snprintf(tmp, sizeof tmp, "%s/." LL_INDEX_FILE ".tmp", parent);
  CHECK(access(tmp, F_OK) != 0); /* renamed into place */
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
  CHECK(system(cmd) == 0);
}

static int worst(const int *codes, size_t n) {
  ll_index_run runs[8] = {0};
  for (size_t i = 0; i < n; i++)
    runs[i].ran = 1, runs[i].exit_code = codes[i];
  return ll_index_worst_exit(runs, n);
}

static void test_worst(void) {
  CHECK_INT(worst((int[]){0, 0}, 2), 0);
  CHECK_INT(worst((int[]){0, 1}, 2), 1);
  CHECK_INT(worst((int[]){3, 1}, 2), 3);
  CHECK_INT(worst((int[]){3, 2, 1}, 3), 2); /* HOLD over RECONCILE */
  CHECK_INT(worst((int[]){2, 64}, 2), 64);
  CHECK_INT(worst((int[]){70, 64, 2}, 3), 70);
  ll_index_run skipped[2] = {{.ran = 1, .exit_code = 1},
                             {.ran = 0, .exit_code = 70}};
  CHECK_INT(ll_index_worst_exit(skipped, 2), 1); /* not run: not counted */
}

int main(void) {
  test_prepare();
  test_worst();
  return ll_test_report("test_run_index");
}
