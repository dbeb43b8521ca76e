/* The index of a multi-version run: its parent directory, index.json,
 * and the exit code of the whole (run_index.h). */
#include "run_index.h"

#include "output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decide.h"
#include "ledger.h"
#include <cjson/cJSON.h>

ll_status ll_index_prepare(const char *parent, ll_error *err) {
  struct stat sb;
  if (lstat(parent, &sb) == 0) {
    if (!S_ISDIR(sb.st_mode) || sb.st_uid != geteuid())
      return ll_fail(err, LL_E_EVIDENCE_EXISTS,
                     "%s is not a directory of yours: choose a new --evidence "
                     "DIR for the versions' bundles",
                     parent);
    DIR *d = opendir(parent);
    if (!d)
      return ll_fail(err, LL_E_IO, "cannot read %s: %s", parent,
                     strerror(errno));
    int empty = 1;
    for (struct dirent *e; empty && (e = readdir(d));)
      empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    if (!empty)
      return ll_fail(err, LL_E_EVIDENCE_EXISTS,
                     "%s already holds files: choose a new --evidence DIR "
                     "for the versions' bundles (one per version, and "
                     "index.json)",
                     parent);
    return LL_OK;
  } else if (errno != ENOENT) {
    return ll_fail(err, LL_E_IO, "cannot read %s: %s", parent, strerror(errno));
  }
  return ll_ledger_mkdir_p(parent, err);
}

static cJSON *index_json(const char *flow, const char *created_utc,
                         const ll_index_run *runs, size_t n) {
  cJSON *root = cJSON_CreateObject();
  if (root) {
    cJSON_AddStringToObject(root, "format", LL_INDEX_FORMAT);
    cJSON_AddStringToObject(root, "flow", flow);
    cJSON_AddStringToObject(root, "created_utc", created_utc);
  }
  cJSON *ran = root ? cJSON_AddArrayToObject(root, "runs") : NULL;
  cJSON *left = root ? cJSON_AddArrayToObject(root, "not_run") : NULL;
  if (!ran || !left || !cJSON_GetObjectItemCaseSensitive(root, "created_utc")) {
    cJSON_Delete(root);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    cJSON *r = cJSON_CreateObject();
    if (!r || !cJSON_AddItemToArray(runs[i].ran ? ran : left, r)) {
      cJSON_Delete(r);
      cJSON_Delete(root);
      return NULL;
    }
    cJSON_AddStringToObject(r, "api_version", runs[i].api_version);
    if (!runs[i].ran) {
      cJSON_AddStringToObject(r, "reason", runs[i].reason);
      continue;
    }
    cJSON_AddStringToObject(r, "dir", runs[i].api_version);
    cJSON_AddBoolToObject(r, "bundle", runs[i].bundle);
    if (runs[i].decision >= 0)
      cJSON_AddStringToObject(r, "decision",
                              ll_decision_name((ll_decision)runs[i].decision));
    else
      cJSON_AddNullToObject(r, "decision");
    if (runs[i].exit_code >= 0)
      cJSON_AddNumberToObject(r, "exit", runs[i].exit_code);
    else /* started, not ended (or killed before the index was rewritten) */
      cJSON_AddNullToObject(r, "exit");
  }
  return root;
}

ll_status ll_index_write(const char *parent, const char *flow,
                         const char *created_utc, const ll_index_run *runs,
                         size_t n, ll_error *err) {
  char tmp[PATH_MAX], path[PATH_MAX];
  int a = snprintf(tmp, sizeof tmp, "%s/." LL_INDEX_FILE ".tmp", parent);
  int b = snprintf(path, sizeof path, "%s/" LL_INDEX_FILE, parent);
  if (a < 0 || b < 0 || (size_t)a >= sizeof tmp || (size_t)b >= sizeof path)
    return ll_fail(err, LL_E_USAGE, "--evidence is too long: %s", parent);
  cJSON *root = index_json(flow, created_utc, runs, n);
  char *text = root ? cJSON_Print(root) : NULL;
  cJSON_Delete(root);
  if (!text)
    return ll_fail(err, LL_E_NOMEM, "out of memory writing %s", path);
  ll_status st = LL_OK;
  size_t len = strlen(text);
  text[len] = '\n'; /* the terminator replaced: written by length */
  if (ll_write_replace(path, tmp, text, len + 1) != 0)
    st = ll_fail(err, LL_E_IO, "cannot write %s: %s", path, strerror(errno));
  cJSON_free(text);
  return st;
}

/* Higher is worse: 70, 64, then HOLD, RECONCILE, WAIT, ACCEPT. */
static int severity(int code) {
  switch (code) {
  case 0:
    return 0;
  case 1:
    return 1;
  case 3:
    return 2;
  case 2:
    return 3;
  case 64:
    return 4;
  default:
    return 5; /* 70, or any code this list does not know */
  }
}

int ll_index_worst_exit(const ll_index_run *runs, size_t n) {
  int worst = 0;
  for (size_t i = 0; i < n; i++)
    if (runs[i].ran && severity(runs[i].exit_code) > severity(worst))
      worst = runs[i].exit_code;
  return worst;
}
