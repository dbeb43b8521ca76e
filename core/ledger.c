/* The evidence ledger: write-ahead, hash-chained, fsync'd JSONL, a
 * protected copy and a sanitized export each with its own chain. */
#include "ledger.h"

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

#include "hash.h"
#include "ledger_impl.h"
#include "sanitize.h"

struct ll_ledger {
  char *dir;
  int fd_prot, fd_exp;
  cJSON *rows, *export_rows;
  long count;
  char prev_prot[LL_SHA256_HEX], prev_exp[LL_SHA256_HEX];
  char **ids, **aliases; /* bindings, in registration order */
  size_t n_binds, cap_ids, cap_aliases;
  char **secrets;
  size_t n_secrets, cap_secrets;
  int broken; /* a durability failure: every later append fails */
};

/* One row ready to write: its line (with '\n') and the parsed copy that
 * joins the in-memory rows once the line is durable. */
typedef struct {
  char *line;
  size_t len;
  cJSON *parsed;
  char hash[LL_SHA256_HEX];
} built_row;

static void built_free(built_row *b) {
  free(b->line);
  cJSON_Delete(b->parsed);
  memset(b, 0, sizeof *b);
}

/* Refuses items whose printing is not plain JSON (raw text could hold a
 * newline and split the line). */
static int plain_json(const cJSON *item) {
  if (cJSON_IsRaw(item) || cJSON_IsInvalid(item))
    return 0;
  for (const cJSON *c = item->child; c; c = c->next)
    if (!plain_json(c))
      return 0;
  return 1;
}

/* Builds {"seq":seq, <src keys but seq/prev_hash/row_hash>, "prev_hash",
 * "row_hash"} and its line. The hashed bytes are the line before
 * ',"row_hash":' plus '}', which is exactly the printing without row_hash.
 * The line is that printing with ',"row_hash":"<hex>"}' in place of its
 * final '}': byte for byte what cJSON prints once row_hash is added (the
 * key and the lowercase hex need no escaping), without printing the row a
 * second time. Parsing it back below, and the reader's canonical-form
 * check, still hold it to cJSON's printing. */
static ll_status build_row(const cJSON *src, long seq, const char *prev,
                           built_row *out, ll_error *err) {
  ll_status st = LL_OK;
  char *bare = NULL, *full = NULL;
  memset(out, 0, sizeof *out);
  cJSON *obj = cJSON_CreateObject();
  if (!obj || !cJSON_AddNumberToObject(obj, "seq", (double)seq))
    goto nomem;
  for (const cJSON *c = src->child; c; c = c->next) {
    if (!c->string || strcmp(c->string, "seq") == 0 ||
        strcmp(c->string, "prev_hash") == 0 ||
        strcmp(c->string, "row_hash") == 0)
      continue;
    cJSON *dup = cJSON_Duplicate(c, 1);
    if (!dup)
      goto nomem;
    cJSON_AddItemToObject(obj, c->string, dup);
  }
  if (!cJSON_AddStringToObject(obj, "prev_hash", prev))
    goto nomem;
  if (!(bare = cJSON_PrintUnformatted(obj)))
    goto nomem;
  size_t blen = strlen(bare);
  if ((st = ll_ledger_chain_hash(prev, bare, blen, "", 0, out->hash)) !=
      LL_OK) {
    st = ll_fail(err, st, "could not hash the evidence row");
    goto cleanup;
  }
  if (blen < 2 || bare[blen - 1] != '}') {
    st = ll_fail(err, LL_E_INTERNAL, "evidence row printing is not an object");
    goto cleanup;
  }
  size_t flen = blen - 1 + ROW_HASH_KEY_LEN + HASH_HEX_LEN + 2;
  if (!(full = cJSON_malloc(flen + 1)))
    goto nomem;
  memcpy(full, bare, blen - 1);
  memcpy(full + blen - 1, ROW_HASH_KEY, ROW_HASH_KEY_LEN);
  memcpy(full + blen - 1 + ROW_HASH_KEY_LEN, out->hash, HASH_HEX_LEN);
  memcpy(full + flen - 2, "\"}", 3); /* with the NUL */
  if (flen > LL_LEDGER_MAX_LINE) {
    st = ll_fail(err, LL_E_TOO_LARGE,
                 "evidence row of %zu bytes is over the %u byte line limit",
                 flen, LL_LEDGER_MAX_LINE);
    goto cleanup;
  }
  /* Kept rows are parsed from the line itself, so memory equals the file
   * (and a row the reader could not parse is never written). */
  const char *end = NULL;
  out->parsed = cJSON_ParseWithLengthOpts(full, flen, &end, 0);
  if (!out->parsed || end != full + flen) {
    st = ll_fail(err, LL_E_USAGE,
                 "evidence row does not read back as JSON "
                 "(nested too deeply?)");
    goto cleanup;
  }
  if (!(out->line = malloc(flen + 1)))
    goto nomem;
  memcpy(out->line, full, flen);
  out->line[flen] = '\n';
  out->len = flen + 1;
  goto cleanup;
nomem:
  st = ll_fail(err, LL_E_NOMEM, "out of memory building an evidence row");
cleanup:
  if (st != LL_OK)
    built_free(out);
  cJSON_free(bare);
  cJSON_free(full);
  cJSON_Delete(obj);
  return st;
}

/* One write() per line: after SIGKILL a line is wholly there or absent, so
 * the reader treats a final line without '\n' as tampering, not as a crash
 * to repair. (A power loss mid-write is outside that promise; fsync below
 * bounds it to the row in flight, which was never acted on.) */
static ll_status write_line(int fd, const char *buf, size_t len, int sync,
                            ll_error *err) {
  ssize_t n;
  do
    n = write(fd, buf, len);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return ll_fail(err, LL_E_DURABILITY,
                   "could not make the evidence row durable: %s: nothing was "
                   "sent",
                   strerror(errno));
  if ((size_t)n != len)
    return ll_fail(err, LL_E_DURABILITY,
                   "could not make the evidence row durable: short write "
                   "(%zd of %zu bytes): nothing was sent",
                   n, len);
  if (sync && fsync(fd) != 0)
    return ll_fail(err, LL_E_DURABILITY,
                   "could not make the evidence row durable: %s: nothing was "
                   "sent",
                   strerror(errno));
  return LL_OK;
}

static ll_status write_durable(int fd, const char *buf, size_t len,
                               ll_error *err) {
  return write_line(fd, buf, len, 1, err);
}

static ll_status fsync_dir(const char *path, ll_error *err) {
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return ll_fail(err, LL_E_IO, "cannot open directory %s: %s", path,
                   strerror(errno));
  int rc = fsync(fd);
  int e = errno;
  close(fd);
  if (rc != 0 && e != EINVAL) /* EINVAL: the file system cannot sync dirs */
    return ll_fail(err, LL_E_IO, "cannot fsync directory %s: %s", path,
                   strerror(e));
  return LL_OK;
}

static ll_status join(char *out, const char *a, const char *b, ll_error *err) {
  int n = snprintf(out, PATH_MAX, "%s/%s", a, b);
  if (n < 0 || n >= PATH_MAX)
    return ll_fail(err, LL_E_USAGE, "path too long: %s/%s", a, b);
  return LL_OK;
}

/* ---- scanning -------------------------------------------------------- */

static ll_status scan_line(const ll_ledger *l, const char *line, size_t len,
                           int with_ids, const char *which, ll_error *err) {
  ll_scan_result r;
  ll_sanitize_scan(line, len, (const char *const *)l->ids,
                   with_ids ? l->n_binds : 0, (const char *const *)l->secrets,
                   l->n_secrets, &r);
  if (!r.hits)
    return LL_OK;
  if (r.kind == LL_SCAN_ID)
    return ll_fail(err, LL_E_INTERNAL,
                   "%s refused: it would hold the lease ID of alias %s at "
                   "offset %zu",
                   which, l->aliases[r.index], r.offset);
  if (r.kind == LL_SCAN_SECRET)
    return ll_fail(err, LL_E_INTERNAL,
                   "%s refused: it would hold secret #%zu at offset %zu", which,
                   r.index + 1, r.offset);
  return ll_fail(err, LL_E_INTERNAL,
                 "%s refused: it would hold a sig= value at offset %zu", which,
                 r.offset);
}

/* ---- bindings and secrets -------------------------------------------- */

/* Grows a string vector to hold at least n + 1 entries. */
static int grow(char ***v, size_t n, size_t *cap) {
  if (n < *cap)
    return 1;
  size_t c = *cap ? *cap * 2 : 4;
  char **p = realloc(*v, c * sizeof *p);
  if (!p)
    return 0;
  *v = p;
  *cap = c;
  return 1;
}

ll_status ll_ledger_bind_alias(ll_ledger *l, const char *alias,
                               const char *lease_id, ll_error *err) {
  char norm[LL_SANITIZE_ID_MAX], other[LL_SANITIZE_ID_MAX];
  if (!l || !alias || !*alias || strlen(alias) > 64 || !lease_id)
    return ll_fail(err, LL_E_USAGE,
                   "bind_alias needs an alias (1 to 64 "
                   "bytes) and a lease ID");
  if (!ll_sanitize_norm_id(lease_id, norm))
    return ll_fail(err, LL_E_BAD_LEASE_ID,
                   "lease ID for alias %s is not a GUID", alias);
  for (size_t i = 0; i < l->n_binds; i++) {
    ll_sanitize_norm_id(l->ids[i], other);
    if (strcmp(norm, other) != 0)
      continue;
    if (strcmp(alias, l->aliases[i]) == 0)
      return LL_OK;
    return ll_fail(err, LL_E_USAGE,
                   "lease ID already bound to alias %s, not %s", l->aliases[i],
                   alias);
  }
  /* Two vectors with one count; each keeps its own capacity. */
  if (!grow(&l->ids, l->n_binds, &l->cap_ids) ||
      !grow(&l->aliases, l->n_binds, &l->cap_aliases))
    return ll_fail(err, LL_E_NOMEM, "out of memory binding an alias");
  char *a = strdup(alias), *id = strdup(lease_id);
  if (!a || !id) {
    free(a);
    free(id);
    return ll_fail(err, LL_E_NOMEM, "out of memory binding an alias");
  }
  l->aliases[l->n_binds] = a;
  l->ids[l->n_binds++] = id;
  return LL_OK;
}

ll_status ll_ledger_add_secret(ll_ledger *l, const char *secret,
                               ll_error *err) {
  if (!l || !secret || !*secret)
    return ll_fail(err, LL_E_USAGE, "add_secret needs a non-empty secret");
  for (size_t i = 0; i < l->n_secrets; i++)
    if (strcmp(l->secrets[i], secret) == 0)
      return LL_OK;
  if (!grow(&l->secrets, l->n_secrets, &l->cap_secrets))
    return ll_fail(err, LL_E_NOMEM, "out of memory registering a secret");
  if (!(l->secrets[l->n_secrets] = strdup(secret)))
    return ll_fail(err, LL_E_NOMEM, "out of memory registering a secret");
  l->n_secrets++;
  return LL_OK;
}

static int is_lease_bind(const cJSON *row) {
  const cJSON *rec = cJSON_GetObjectItemCaseSensitive(row, "record");
  return cJSON_IsString(rec) && strcmp(rec->valuestring, "lease_bind") == 0;
}

static ll_status bind_from_row(ll_ledger *l, const cJSON *row, ll_error *err) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(row, "alias");
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(row, "lease_real_id");
  if (!cJSON_IsString(a) || !cJSON_IsString(id))
    return ll_fail(err, LL_E_USAGE,
                   "a lease_bind row needs string fields alias and "
                   "lease_real_id");
  return ll_ledger_bind_alias(l, a->valuestring, id->valuestring, err);
}

cJSON *ll_ledger_sanitize(const ll_ledger *l, const cJSON *row) {
  return ll_sanitize_row(row, l ? (const char *const *)l->ids : NULL,
                         l ? (const char *const *)l->aliases : NULL,
                         l ? l->n_binds : 0);
}

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
        st = fsync_dir(".", err);
      else if (slash == path)
        st = fsync_dir("/", err);
      else {
        *slash = '\0';
        st = fsync_dir(path, err);
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
  if ((st = join(prot, dir, "protected", err)) ||
      (st = join(exp, dir, "export", err)))
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
  if ((st = fsync_dir(dir, err)))
    return st;
  if ((st = join(file, prot, "ledger.jsonl", err)))
    return st;
  l->fd_prot =
      open(file, O_CREAT | O_EXCL | O_APPEND | O_WRONLY | O_CLOEXEC, 0600);
  if (l->fd_prot < 0)
    return errno == EEXIST ? refuse_existing(dir, err)
                           : ll_fail(err, LL_E_IO, "cannot create %s: %s", file,
                                     strerror(errno));
  if (fchmod(l->fd_prot, 0600) != 0)
    return ll_fail(err, LL_E_IO, "cannot chmod %s: %s", file, strerror(errno));
  if ((st = fsync_dir(prot, err)) ||
      (st = join(file, exp, "ledger.jsonl", err)))
    return st;
  l->fd_exp =
      open(file, O_CREAT | O_EXCL | O_APPEND | O_WRONLY | O_CLOEXEC, 0644);
  if (l->fd_exp < 0)
    return errno == EEXIST ? refuse_existing(dir, err)
                           : ll_fail(err, LL_E_IO, "cannot create %s: %s", file,
                                     strerror(errno));
  return fsync_dir(exp, err);
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
  ll_status st = build_row(s, seq, l->prev_exp, &b, err);
  cJSON_Delete(s);
  if (st)
    return st;
  if (!(st = scan_line(l, b.line, b.len, 1, "recovered export row", err)) &&
      !(st = write_durable(l->fd_exp, b.line, b.len, err))) {
    cJSON_AddItemToArray(l->export_rows, b.parsed);
    b.parsed = NULL;
    memcpy(l->prev_exp, b.hash, sizeof l->prev_exp);
  }
  built_free(&b);
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
  if ((st = join(prot, l->dir, "protected", err)) ||
      (st = join(pfile, prot, "ledger.jsonl", err)) ||
      (st = join(efile, l->dir, "export/ledger.jsonl", err)) ||
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
    if (is_lease_bind(p) && (st = bind_from_row(l, p, err)))
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

/* ---- appending ------------------------------------------------------- */

/* A refusal (USAGE, TOO_LARGE, BAD_LEASE_ID, or INTERNAL for a secret the
 * row would leak) writes nothing and leaves the ledger usable. A failed
 * write or fsync (DURABILITY) leaves it unusable for this process; the
 * partial row is truncated away so that recovery can reopen the files. */
ll_status ll_ledger_append(ll_ledger *l, const cJSON *row, long *out_seq,
                           ll_error *err) {
  return ll_ledger_append_sync(l, row, LL_SYNC_BOTH, out_seq, err);
}

ll_status ll_ledger_append_sync(ll_ledger *l, const cJSON *row, ll_sync sync,
                                long *out_seq, ll_error *err) {
  built_row p = {0}, e = {0};
  cJSON *san = NULL;
  ll_status st;
  if (out_seq)
    *out_seq = 0;
  if (!l || !cJSON_IsObject(row))
    return ll_fail(err, LL_E_USAGE, "ledger_append needs a JSON object");
  if (l->broken)
    return ll_fail(err, LL_E_DURABILITY,
                   "the ledger is unusable after an earlier durability "
                   "failure: nothing was sent");
  if (!plain_json(row))
    return ll_fail(err, LL_E_USAGE, "evidence row holds a raw or invalid item");
  if (is_lease_bind(row) && (st = bind_from_row(l, row, err)))
    return st;
  long seq = l->count + 1;
  if ((st = build_row(row, seq, l->prev_prot, &p, err)))
    goto cleanup;
  if (!(san = ll_ledger_sanitize(l, p.parsed))) {
    st = ll_fail(err, LL_E_NOMEM, "out of memory sanitizing a row");
    goto cleanup;
  }
  if ((st = build_row(san, seq, l->prev_exp, &e, err)))
    goto cleanup;
  /* Protected rows may hold lease IDs but never tokens or SAS signatures
   * (invariant 9); export rows hold neither. */
  if ((st = scan_line(l, p.line, p.len, 0, "protected row", err)) ||
      (st = scan_line(l, e.line, e.len, 1, "export row", err)))
    goto cleanup;
  struct stat sp, se;
  if (fstat(l->fd_prot, &sp) != 0 || fstat(l->fd_exp, &se) != 0) {
    st = ll_fail(err, LL_E_DURABILITY,
                 "cannot stat the ledger: %s: nothing was sent",
                 strerror(errno));
    l->broken = 1;
    goto cleanup;
  }
  if ((st = write_line(l->fd_prot, p.line, p.len, sync != LL_SYNC_NONE, err)) ||
      (st = write_line(l->fd_exp, e.line, e.len, sync == LL_SYNC_BOTH, err))) {
    /* Take back whatever part of this row reached either file, so the
     * ledger ends on a whole row and a recovery can reopen it. The row was
     * never acted on: nothing was sent. */
    if (ftruncate(l->fd_prot, sp.st_size) == 0)
      (void)fsync(l->fd_prot);
    if (ftruncate(l->fd_exp, se.st_size) == 0)
      (void)fsync(l->fd_exp);
    l->broken = 1;
    goto cleanup;
  }
  cJSON_AddItemToArray(l->rows, p.parsed);
  cJSON_AddItemToArray(l->export_rows, e.parsed);
  p.parsed = e.parsed = NULL;
  memcpy(l->prev_prot, p.hash, sizeof l->prev_prot);
  memcpy(l->prev_exp, e.hash, sizeof l->prev_exp);
  l->count = seq;
  if (out_seq)
    *out_seq = seq;
cleanup:
  cJSON_Delete(san);
  built_free(&p);
  built_free(&e);
  return st;
}

const cJSON *ll_ledger_rows(const ll_ledger *l) {
  return l ? l->rows : NULL;
}

const cJSON *ll_ledger_export_rows(const ll_ledger *l) {
  return l ? l->export_rows : NULL;
}

long ll_ledger_count(const ll_ledger *l) {
  return l ? l->count : 0;
}

const char *ll_ledger_dir(const ll_ledger *l) {
  return l ? l->dir : NULL;
}

ll_status ll_ledger_write_json(ll_ledger *l, const char *name,
                               const cJSON *value, ll_error *err) {
  char path[PATH_MAX], tmp[PATH_MAX];
  char *text = NULL;
  ll_status st = LL_OK;
  int fd = -1;
  if (!l || !name || !*name || !value || strchr(name, '/') ||
      strstr(name, "..") || strcmp(name, ".") == 0)
    return ll_fail(err, LL_E_USAGE, "write_json needs a plain file name");
  if ((st = join(path, l->dir, name, err)))
    return st;
  if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
    return ll_fail(err, LL_E_USAGE, "path too long: %s.tmp", path);
  if (!(text = cJSON_Print(value)))
    return ll_fail(err, LL_E_NOMEM, "out of memory printing %s", name);
  size_t len = strlen(text);
  /* These files sit beside the export: the same secret rules apply. */
  if ((st = scan_line(l, text, len, 1, name, err)))
    goto cleanup;
  fd = open(tmp, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) {
    st = ll_fail(err, LL_E_IO, "cannot create %s: %s", tmp, strerror(errno));
    goto cleanup;
  }
  text[len] = '\n'; /* replaces the NUL, which is not written */
  for (size_t off = 0; off < len + 1;) {
    ssize_t n = write(fd, text + off, len + 1 - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      st = ll_fail(err, LL_E_IO, "cannot write %s: %s", tmp,
                   n < 0 ? strerror(errno) : "no progress");
      goto cleanup;
    }
    off += (size_t)n;
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    fd = -1;
    st = ll_fail(err, LL_E_IO, "cannot fsync %s: %s", tmp, strerror(errno));
    goto cleanup;
  }
  fd = -1;
  if (rename(tmp, path) != 0) {
    st = ll_fail(err, LL_E_IO, "cannot rename %s: %s", tmp, strerror(errno));
    goto cleanup;
  }
  st = fsync_dir(l->dir, err);
cleanup:
  if (fd >= 0)
    close(fd);
  if (st != LL_OK)
    unlink(tmp);
  cJSON_free(text);
  return st;
}
