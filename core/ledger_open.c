/* Opening an evidence directory (fresh or for recovery) and closing it:
 * the layout, modes, and the recovery that rebuilds a missing export tail. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "alloc.h"
#include "ledger.h"
#include "ledger_impl.h"
#include "sanitize.h"

/* ---- open / close ---------------------------------------------------- */

static ll_status mkdir_p(const char *dir, ll_error *err) {
  char path[PATH_MAX];
  if (!ll_strlcpy(path, dir, sizeof path))
    return ll_fail(err, LL_E_USAGE, "path too long: %s", dir);
  size_t len = strlen(path);
  for (size_t i = 1; i <= len; i++) {
    if (path[i] != '/' && path[i] != '\0')
      continue;
    char saved = path[i];
    path[i] = '\0';
    if (mkdir(path, 0755) == 0) {
      /* Make the new entry durable in its parent. */
      char *slash = strrchr(path, '/');
      ll_status st;
      if (!slash)
        st = ll_ledger_fsync_dir(".", err);
      else if (slash == path)
        st = ll_ledger_fsync_dir("/", err);
      else {
        *slash = '\0';
        st = ll_ledger_fsync_dir(path, err);
        *slash = '/';
      }
      if (st)
        return st;
    } else if (errno != EEXIST) {
      return ll_fail(err, LL_E_IO, "cannot create %s: %s", path,
                     strerror(errno));
    }
    path[i] = saved;
  }
  return LL_OK;
}

static ll_status refuse_existing(const char *dir, ll_error *err) {
  return ll_fail(err, LL_E_EVIDENCE_EXISTS,
                 "evidence directory %s already holds evidence: choose a new "
                 "--evidence or open it for recovery",
                 dir);
}

static ll_status create_layout(ll_ledger *l, ll_error *err) {
  char prot[PATH_MAX], exp[PATH_MAX], file[PATH_MAX];
  struct stat sb;
  ll_status st;
  const char *dir = l->dir;
  if (stat(dir, &sb) == 0) {
    if (!S_ISDIR(sb.st_mode))
      return ll_fail(err, LL_E_IO, "evidence path %s is not a directory", dir);
    DIR *d = opendir(dir);
    if (!d)
      return ll_fail(err, LL_E_IO, "cannot list %s: %s", dir, strerror(errno));
    struct dirent *e;
    int other = 0;
    while (!other && (e = readdir(d)))
      other = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    if (other)
      return refuse_existing(dir, err);
  } else if (errno != ENOENT) {
    return ll_fail(err, LL_E_IO, "cannot stat %s: %s", dir, strerror(errno));
  } else if ((st = mkdir_p(dir, err)) != LL_OK) {
    return st;
  }
  if ((st = ll_ledger_join(prot, dir, "protected", err)) ||
      (st = ll_ledger_join(exp, dir, "export", err)))
    return st;
  /* mkdir without -p: a racing run that got there first is refused. */
  if (mkdir(prot, 0700) != 0)
    return errno == EEXIST ? refuse_existing(dir, err)
                           : ll_fail(err, LL_E_IO, "cannot create %s: %s", prot,
                                     strerror(errno));
  if (chmod(prot, 0700) != 0) /* exactly 0700, whatever the umask */
    return ll_fail(err, LL_E_IO, "cannot chmod %s: %s", prot, strerror(errno));
  if (mkdir(exp, 0755) != 0)
    return errno == EEXIST ? refuse_existing(dir, err)
                           : ll_fail(err, LL_E_IO, "cannot create %s: %s", exp,
                                     strerror(errno));
  if ((st = ll_ledger_fsync_dir(dir, err)))
    return st;
  if ((st = ll_ledger_join(file, prot, "ledger.jsonl", err)))
    return st;
  l->fd_prot =
      open(file, O_CREAT | O_EXCL | O_APPEND | O_WRONLY | O_CLOEXEC, 0600);
  if (l->fd_prot < 0)
    return errno == EEXIST ? refuse_existing(dir, err)
                           : ll_fail(err, LL_E_IO, "cannot create %s: %s", file,
                                     strerror(errno));
  if (fchmod(l->fd_prot, 0600) != 0)
    return ll_fail(err, LL_E_IO, "cannot chmod %s: %s", file, strerror(errno));
  if ((st = ll_ledger_fsync_dir(prot, err)) ||
      (st = ll_ledger_join(file, exp, "ledger.jsonl", err)))
    return st;
  l->fd_exp =
      open(file, O_CREAT | O_EXCL | O_APPEND | O_WRONLY | O_CLOEXEC, 0644);
  if (l->fd_exp < 0)
    return errno == EEXIST ? refuse_existing(dir, err)
                           : ll_fail(err, LL_E_IO, "cannot create %s: %s", file,
                                     strerror(errno));
  return ll_ledger_fsync_dir(exp, err);
}

static ll_status tamper(ll_error *err, const char *path, const char *fmt, ...)
    LL_PRINTF(3, 4);

static ll_status tamper(ll_error *err, const char *path, const char *fmt, ...) {
  char what[128];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return ll_fail(err, LL_E_TAMPER, "ledger %s: %s", path, what);
}

static ll_status open_for_append(const char *path, int *fd, ll_error *err) {
  *fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (*fd < 0)
    return ll_fail(err, LL_E_IO, "cannot open ledger %s for recovery: %s", path,
                   strerror(errno));
  return LL_OK;
}

/* Sanitized protected row i as compact JSON, for comparing with export. */
static char *sanitized_text(const ll_ledger *l, const cJSON *row) {
  cJSON *s = ll_ledger_sanitize(l, row);
  char *t = s ? cJSON_PrintUnformatted(s) : NULL;
  cJSON_Delete(s);
  return t;
}

/* Compares export row e with the sanitized protected row p, both printed
 * compactly; 1 when equal, 0 when not, -1 when out of memory. */
static int export_matches(const ll_ledger *l, const cJSON *p, const cJSON *e) {
  cJSON *copy = cJSON_Duplicate(e, 1);
  char *want = sanitized_text(l, p), *got = NULL;
  if (copy) {
    cJSON_DeleteItemFromObjectCaseSensitive(copy, "prev_hash");
    cJSON_DeleteItemFromObjectCaseSensitive(copy, "row_hash");
    got = cJSON_PrintUnformatted(copy);
  }
  int same = !want || !got ? -1 : strcmp(want, got) == 0;
  cJSON_Delete(copy);
  cJSON_free(want);
  cJSON_free(got);
  return same;
}

/* Re-derives the export row for protected row p (seq) after a crash
 * between the two writes, and appends it durably. */
static ll_status rederive_export(ll_ledger *l, const cJSON *p, long seq,
                                 ll_error *err) {
  built_row b;
  cJSON *s = ll_ledger_sanitize(l, p);
  if (!s)
    return ll_fail(err, LL_E_NOMEM, "out of memory recovering the export");
  ll_status st = ll_ledger_build_row(s, seq, l->prev_exp, &b, err);
  cJSON_Delete(s);
  if (st)
    return st;
  if (!(st = ll_ledger_scan_line(l, b.line, b.len, 1, "recovered export row",
                                 err)) &&
      !(st = ll_ledger_write_durable(l->fd_exp, b.line, b.len, err))) {
    cJSON_AddItemToArray(l->export_rows, b.parsed);
    b.parsed = NULL;
    memcpy(l->prev_exp, b.hash, sizeof l->prev_exp);
  }
  ll_ledger_built_free(&b);
  return st;
}

static const char *last_hash(const cJSON *rows) {
  const cJSON *r = rows->child;
  while (r && r->next)
    r = r->next;
  return r ? cJSON_GetObjectItemCaseSensitive(r, "row_hash")->valuestring
           : LL_GENESIS_HASH;
}

static ll_status recover(ll_ledger *l, ll_error *err) {
  char prot[PATH_MAX], pfile[PATH_MAX], efile[PATH_MAX];
  ll_error sub = {0};
  long bad = 0;
  ll_status st;
  if ((st = ll_ledger_join(prot, l->dir, "protected", err)) ||
      (st = ll_ledger_join(pfile, prot, "ledger.jsonl", err)) ||
      (st = ll_ledger_join(efile, l->dir, "export/ledger.jsonl", err)) ||
      (st = open_for_append(pfile, &l->fd_prot, err)) ||
      (st = open_for_append(efile, &l->fd_exp, err)))
    return st;
  if (chmod(prot, 0700) != 0 || fchmod(l->fd_prot, 0600) != 0)
    return ll_fail(err, LL_E_IO, "cannot restore the modes of %s: %s", prot,
                   strerror(errno));
  const char *files[2] = {pfile, efile};
  cJSON **arrays[2] = {&l->rows, &l->export_rows};
  for (int k = 0; k < 2; k++) {
    cJSON_Delete(*arrays[k]);
    st = ll_ledger_read_file(files[k], arrays[k], &bad, &sub);
    if (st == LL_E_TAMPER)
      return tamper(err, files[k], "%s", sub.message);
    if (st)
      return ll_fail(err, st, "%s", sub.message);
  }
  long np = cJSON_GetArraySize(l->rows),
       ne = cJSON_GetArraySize(l->export_rows);
  if (ne > np)
    return tamper(err, efile, "has more rows than the protected ledger (%ld)",
                  np);
  /* Every binding first: a row written after a direct ll_ledger_bind_alias
   * but before its lease_bind row was sanitized with it. Bindings made only
   * through ll_ledger_bind_alias do not survive a reopen. */
  const cJSON *p, *e;
  cJSON_ArrayForEach(p, l->rows) {
    if (ll_ledger_is_lease_bind(p) && (st = ll_ledger_bind_from_row(l, p, err)))
      return st;
  }
  ll_strlcpy(l->prev_prot, last_hash(l->rows), sizeof l->prev_prot);
  ll_strlcpy(l->prev_exp, last_hash(l->export_rows), sizeof l->prev_exp);
  long seq = 1;
  for (p = l->rows->child, e = l->export_rows->child; p; p = p->next, seq++) {
    if (!e) {
      if ((st = rederive_export(l, p, seq, err)))
        return st;
      continue;
    }
    int same = export_matches(l, p, e);
    if (same < 0)
      return ll_fail(err, LL_E_NOMEM, "out of memory checking %s", efile);
    if (!same)
      return tamper(err, efile, "row %ld is not the sanitized protected row",
                    seq);
    e = e->next;
  }
  l->count = np;
  return LL_OK;
}

ll_ledger *ll_ledger_open(const char *dir, ll_ledger_mode mode, ll_error *err) {
  ll_alloc_init();
  if (!dir || !*dir) {
    ll_fail(err, LL_E_USAGE, "ledger_open needs an evidence directory");
    return NULL;
  }
  ll_ledger *l = calloc(1, sizeof *l);
  if (l)
    l->fd_prot = l->fd_exp = -1; /* before anything can fail */
  if (!l || !(l->dir = strdup(dir)) || !(l->rows = cJSON_CreateArray()) ||
      !(l->export_rows = cJSON_CreateArray())) {
    ll_ledger_close(l);
    ll_fail(err, LL_E_NOMEM, "out of memory opening the ledger");
    return NULL;
  }
  memcpy(l->prev_prot, LL_GENESIS_HASH, sizeof l->prev_prot);
  memcpy(l->prev_exp, LL_GENESIS_HASH, sizeof l->prev_exp);
  ll_status st = mode == LL_LEDGER_CREATE ? create_layout(l, err)
                 : mode == LL_LEDGER_RECOVER
                     ? recover(l, err)
                     : ll_fail(err, LL_E_USAGE, "unknown ledger mode");
  if (st != LL_OK) {
    ll_ledger_close(l);
    return NULL;
  }
  return l;
}

void ll_ledger_close(ll_ledger *l) {
  if (!l)
    return;
  /* Rows appended without a sync become durable here at the latest. */
  if (l->fd_prot >= 0) {
    (void)fsync(l->fd_prot);
    close(l->fd_prot);
  }
  if (l->fd_exp >= 0) {
    (void)fsync(l->fd_exp);
    close(l->fd_exp);
  }
  for (size_t i = 0; i < l->n_binds; i++) {
    free(l->ids[i]);
    free(l->aliases[i]);
  }
  for (size_t i = 0; i < l->n_secrets; i++)
    free(l->secrets[i]);
  free(l->ids);
  free(l->aliases);
  free(l->secrets);
  cJSON_Delete(l->rows);
  cJSON_Delete(l->export_rows);
  free(l->dir);
  free(l);
}
