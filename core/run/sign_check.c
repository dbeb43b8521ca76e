/* Checks a signed bundle as a reviewer's two commands would: every file
 * SHA256SUMS lists has its bytes (sha256sum -c), no file is present that
 * it does not list, and ssh-keygen -Y verify accepts SHA256SUMS.sig over
 * SHA256SUMS for a principal of the allowed-signers file. */
#define _GNU_SOURCE
#include "sign.h"
#include "sign_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input.h"

#define SUMS_FILE_MAX (16u * 1024u * 1024u)
#define LL_SIGN_REL_MAX 2048 /* a bundle path is at most 2048 bytes too */

const char *ll_sig_state_name(ll_sig_state s) {
  switch (s) {
  case LL_SIG_GOOD:
    return "good";
  case LL_SIG_UNCHECKED:
    return "unchecked";
  case LL_SIG_BAD:
    return "bad";
  default:
    return "unsigned";
  }
}

static ll_status bad(ll_sign_report *rep, ll_error *err, const char *fmt, ...)
    LL_PRINTF(3, 4);

/* The first problem is kept; the state becomes BAD. */
static ll_status bad(ll_sign_report *rep, ll_error *err, const char *fmt, ...) {
  rep->state = LL_SIG_BAD;
  if (!rep->problem[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rep->problem, sizeof rep->problem, fmt, ap);
    va_end(ap);
  }
  return ll_fail(err, LL_E_TAMPER, "%s", rep->problem);
}

static void keep(char list[][LL_SIGN_NAME_MAX], long *n, const char *name) {
  if (*n < LL_SIGN_LIST_MAX)
    ll_strlcpy(list[*n], name, LL_SIGN_NAME_MAX);
  (*n)++;
}

/* A listed path must stay inside the bundle: relative, no "." or ".."
 * component, no empty one. */
static int safe_rel(const char *p) {
  if (!*p || *p == '/')
    return 0;
  for (const char *s = p; *s;) {
    size_t n = strcspn(s, "/");
    if (n == 0 || (n == 1 && s[0] == '.') ||
        (n == 2 && s[0] == '.' && s[1] == '.'))
      return 0;
    s += n;
    if (*s == '/')
      s++;
    else
      break;
  }
  return p[strlen(p) - 1] != '/';
}

static int is_hex64(const char *s) {
  for (int i = 0; i < 64; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return 0;
  return 1;
}

static int cmp_ptr(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int listed(char **names, size_t n, const char *rel) {
  return bsearch(&rel, names, n, sizeof *names, cmp_ptr) != NULL;
}

/* A private, unlinked copy of b at offset 0 (-1: it could not be made):
 * what ssh-keygen verifies is then what was checked, not the file read
 * again, which may have changed in between. */
static int bytes_fd(const ll_buf *b) {
  FILE *f = tmpfile();
  int fd = -1;
  if (!f)
    return -1;
  if ((b->n == 0 || fwrite(b->p, 1, b->n, f) == b->n) && fflush(f) == 0)
    fd = dup(fileno(f));
  fclose(f);
  if (fd >= 0 && lseek(fd, 0, SEEK_SET) != 0) {
    close(fd);
    fd = -1;
  }
  return fd;
}

/* The sums SHA256SUMS lists for the files a reader draws from: the
 * export and the corroboration (sign.h, ll_sign_report). */
static void note_listed(ll_sign_report *rep, const char *rel, const char *hex) {
  char *to = strcmp(rel, "export/ledger.jsonl") == 0 ? rep->export_listed
             : strcmp(rel, "corroboration.json") == 0
                 ? rep->corroboration_listed
                 : NULL;
  if (to) {
    memcpy(to, hex, 64);
    to[64] = '\0';
  }
}

/* Reads SHA256SUMS once, checks every file it lists and every file it
 * should, and leaves in *sums_fd a copy of the bytes it read (-1 when it
 * could read none) for the signature's check. */
static ll_status check_sums(const char *dir, ll_sign_report *rep, int *sums_fd,
                            ll_error *err) {
  char path[4608];
  ll_sign_path(path, sizeof path, "%s/" LL_SIGN_SUMS, dir);
  ll_buf b = {0};
  ll_error sub = {0};
  char **names = NULL;
  size_t nn = 0;
  ll_sign_files files = {0};
  ll_status st =
      ll_input_read(path, LL_SIGN_SUMS, "DIR", SUMS_FILE_MAX, &b, &sub);
  if (st != LL_OK) {
    st = st == LL_E_NOMEM ? ll_fail(err, LL_E_NOMEM, "out of memory")
                          : bad(rep, err, "%s", sub.message);
    goto cleanup;
  }
  if ((*sums_fd = bytes_fd(&b)) < 0) {
    st = ll_fail(err, LL_E_IO, "cannot copy " LL_SIGN_SUMS " to check it: %s",
                 strerror(errno));
    goto cleanup;
  }
  size_t lines = 0;
  for (size_t i = 0; i < b.n; i++)
    lines += b.p[i] == '\n';
  names = calloc(lines + 1, sizeof *names);
  if (!names) {
    st = ll_fail(err, LL_E_NOMEM, "out of memory");
    goto cleanup;
  }
  if (b.n && b.p[b.n - 1] != '\n') {
    st = bad(rep, err, LL_SIGN_SUMS " does not end with a newline");
    goto cleanup;
  }
  /* a NUL would end every string below early: the file is malformed
   * (sha256sum never writes one), never a crash or a shorter list */
  const char *nul = b.n ? memchr(b.p, '\0', b.n) : NULL;
  if (nul) {
    size_t at = (size_t)(nul - b.p), lno = 1;
    for (size_t i = 0; i < at; i++)
      lno += b.p[i] == '\n';
    st = bad(rep, err, LL_SIGN_SUMS " line %zu holds a NUL byte", lno);
    goto cleanup;
  }
  long lineno = 0;
  char *end = b.p + b.n;
  for (char *line = b.p; line && line < end; lineno++) {
    char *nl = memchr(line, '\n', (size_t)(end - line));
    if (!nl) { /* unreachable: the file ends with a newline */
      st = bad(rep, err, LL_SIGN_SUMS " line %ld has no newline", lineno + 1);
      goto cleanup;
    }
    *nl = '\0';
    char *rel = line + 66;
    if (strlen(line) < 67 || !is_hex64(line) || line[64] != ' ' ||
        line[65] != ' ' || !safe_rel(rel)) {
      st = bad(rep, err,
               LL_SIGN_SUMS " line %ld is not \"<64 hex>  <relative path>\"",
               lineno + 1);
      goto cleanup;
    }
    if (strlen(rel) > LL_SIGN_REL_MAX) {
      st = bad(rep, err,
               LL_SIGN_SUMS " line %ld names a path longer than %d bytes",
               lineno + 1, LL_SIGN_REL_MAX);
      goto cleanup;
    }
    if (nn && strcmp(names[nn - 1], rel) >= 0) {
      st = bad(rep, err,
               LL_SIGN_SUMS " line %ld is out of order or repeats a file",
               lineno + 1);
      goto cleanup;
    }
    names[nn++] = rel;
    rep->listed++;
    note_listed(rep, rel, line);
    char hex[65];
    ll_status hs = ll_sign_file_sha256(dir, rel, hex, &sub);
    if (hs == LL_E_NOMEM) {
      st = ll_fail(err, LL_E_NOMEM, "out of memory");
      goto cleanup;
    }
    if (hs == LL_OK && memcmp(hex, line, 64) == 0)
      rep->matched++;
    else
      keep(rep->mismatched, &rep->n_mismatched, rel);
    line = nl + 1;
  }
  qsort(names, nn, sizeof *names, cmp_ptr);
  st = ll_sign_walk(dir, &files, &sub);
  if (st == LL_E_NOMEM) {
    st = ll_fail(err, LL_E_NOMEM, "out of memory");
    goto cleanup;
  }
  if (st != LL_OK) {
    st = bad(rep, err, "%s", sub.message);
    goto cleanup;
  }
  for (size_t i = 0; i < files.n; i++)
    if (!listed(names, nn, files.paths[i]))
      keep(rep->uncovered, &rep->n_uncovered, files.paths[i]);
  if (rep->n_mismatched)
    st = bad(rep, err,
             "%ld of %ld files listed in " LL_SIGN_SUMS
             " differ or are gone (first: %.200s)",
             rep->n_mismatched, rep->listed, rep->mismatched[0]);
  else if (rep->n_uncovered)
    st = bad(rep, err,
             "%ld files are not covered by " LL_SIGN_SUMS
             " (first: %.200s): the signature does not vouch for them",
             rep->n_uncovered, rep->uncovered[0]);
cleanup:
  ll_sign_files_free(&files);
  free(names);
  free(b.p);
  return st;
}

/* One signature (sig over sums): with allowed signers, its principal by
 * find-principals and then -Y verify for it; without, check-novalidate.
 * Returns LL_OK (state GOOD or UNCHECKED), LL_E_TAMPER with why filled,
 * LL_E_IO, LL_E_NOMEM. */
static ll_status check_sig(int sums, const char *sig, const char *allowed,
                           ll_sig_state *state, char *principal,
                           ll_sign_key *key, char *why, size_t whycap,
                           ll_error *err) {
  ll_proc_result r = {0};
  ll_status st;
  *state = LL_SIG_BAD;
  principal[0] = '\0';
  memset(key, 0, sizeof *key);
  if (!allowed) {
    const char *const a[] = {
        "-Y", "check-novalidate", "-n", LL_SIGN_NAMESPACE, "-s", sig, NULL};
    st = lseek(sums, 0, SEEK_SET) == 0
             ? ll_sign_keygen(a, &sums, &r, err)
             : ll_fail(err, LL_E_IO, "cannot rewind " LL_SIGN_SUMS);
    if (st != LL_OK)
      return st;
    int ok = r.exited && r.exit_code == 0 && ll_sign_parse_key(r.out, key);
    ll_sign_last_line(&r, why, whycap);
    ll_proc_result_cleanup(&r);
    if (!ok)
      return ll_fail(err, LL_E_TAMPER, "%s", why);
    *state = LL_SIG_UNCHECKED;
    return LL_OK;
  }
  const char *const f[] = {"-Y", "find-principals", "-s", sig,
                           "-f", allowed,           NULL};
  st = ll_sign_keygen(f, NULL, &r, err);
  if (st != LL_OK)
    return st;
  if (!r.exited || r.exit_code != 0 || !r.out || !r.out[0] ||
      r.out[0] == '\n') {
    char line[200];
    ll_sign_last_line(&r, line, sizeof line);
    snprintf(why, whycap,
             "its key is not in the allowed-signers file (ssh-keygen -Y "
             "find-principals: %.150s)",
             line);
    ll_proc_result_cleanup(&r);
    return ll_fail(err, LL_E_TAMPER, "%s", why);
  }
  size_t pn = strcspn(r.out, "\n");
  if (pn >= LL_SIGN_NAME_MAX)
    pn = LL_SIGN_NAME_MAX - 1;
  memcpy(principal, r.out, pn);
  principal[pn] = '\0';
  ll_proc_result_cleanup(&r);
  const char *const v[] = {"-Y", "verify",  "-f", allowed,
                           "-I", principal, "-n", LL_SIGN_NAMESPACE,
                           "-s", sig,       NULL};
  st = lseek(sums, 0, SEEK_SET) == 0
           ? ll_sign_keygen(v, &sums, &r, err)
           : ll_fail(err, LL_E_IO, "cannot rewind " LL_SIGN_SUMS);
  if (st != LL_OK)
    return st;
  int ok = r.exited && r.exit_code == 0 && r.out &&
           strncmp(r.out, "Good ", 5) == 0 && ll_sign_parse_key(r.out, key);
  ll_sign_last_line(&r, why, whycap);
  ll_proc_result_cleanup(&r);
  if (!ok)
    return ll_fail(err, LL_E_TAMPER, "%s", why);
  *state = LL_SIG_GOOD;
  return LL_OK;
}

/* check_sig over the bytes in fd, or over the file sums when fd is -1
 * (nothing was read from it before); closes what it checks. */
static ll_status check_sig_at(int fd, const char *sums, const char *sig,
                              const char *allowed, ll_sig_state *state,
                              char *principal, ll_sign_key *key, char *why,
                              size_t whycap, ll_error *err) {
  if (fd < 0)
    fd = open(sums, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    *state = LL_SIG_BAD;
    return ll_fail(err, LL_E_IO, "cannot read %s: %s", sums, strerror(errno));
  }
  ll_status st =
      check_sig(fd, sig, allowed, state, principal, key, why, whycap, err);
  close(fd);
  return st;
}

/* signatures/1/, 2/ ...: each earlier signature over its own sums. */
static ll_status check_history(const char *dir, const char *allowed,
                               ll_sign_report *rep, ll_error *err) {
  for (int n = 1; n <= LL_SIGN_HISTORY_MAX + 1; n++) {
    char slot[4608], sums[4608], sig[4608], why[256];
    struct stat sb;
    ll_sign_path(slot, sizeof slot, "%s%s/" LL_SIGN_HISTORY "/%d",
                 LL_SIGN_DASH(dir), dir, n);
    if (lstat(slot, &sb) != 0)
      return LL_OK;
    if (n > LL_SIGN_HISTORY_MAX)
      return bad(rep, err, "more than %d earlier signatures",
                 LL_SIGN_HISTORY_MAX);
    ll_sign_past *p = &rep->history[rep->n_history++];
    snprintf(p->dir, sizeof p->dir, LL_SIGN_HISTORY "/%d", n);
    ll_sign_path(sums, sizeof sums, "%s/" LL_SIGN_SUMS, slot);
    ll_sign_path(sig, sizeof sig, "%s/" LL_SIGN_SIG, slot);
    if (lstat(sums, &sb) != 0 || !S_ISREG(sb.st_mode) || lstat(sig, &sb) != 0 ||
        !S_ISREG(sb.st_mode)) {
      p->state = LL_SIG_BAD;
      return bad(rep, err,
                 "%s does not hold " LL_SIGN_SUMS " and " LL_SIGN_SIG
                 " as regular files",
                 p->dir);
    }
    ll_error sub = {0};
    ll_status st = check_sig_at(-1, sums, sig, allowed, &p->state, p->principal,
                                &p->key, why, sizeof why, &sub);
    if (st == LL_E_TAMPER)
      return bad(rep, err, "the earlier signature %s: %s", p->dir, why);
    if (st != LL_OK)
      return ll_fail(err, st, "%s", sub.message);
  }
  return LL_OK;
}

ll_status ll_bundle_check(const char *dir, const char *allowed,
                          ll_sign_report *rep, ll_error *err) {
  char sums[4608], sig[4608], why[256], allowed_arg[4608];
  struct stat sb;
  memset(rep, 0, sizeof *rep);
  if (strlen(dir) > 2048)
    return ll_fail(err, LL_E_IO, "the bundle's path is too long");
  if (allowed) {
    int fd;
    size_t size;
    ll_status st =
        ll_input_open(allowed, "allowed-signers file", "--allowed-signers",
                      SUMS_FILE_MAX, &fd, &size, err);
    if (st != LL_OK)
      return st;
    close(fd);
  }
  ll_sign_path(sums, sizeof sums, "%s%s/" LL_SIGN_SUMS, LL_SIGN_DASH(dir), dir);
  ll_sign_path(sig, sizeof sig, "%s%s/" LL_SIGN_SIG, LL_SIGN_DASH(dir), dir);
  ll_sign_path(allowed_arg, sizeof allowed_arg, "%s%s",
               allowed ? LL_SIGN_DASH(allowed) : "", allowed ? allowed : "");
  if (allowed)
    allowed = allowed_arg;
  int has_sums = lstat(sums, &sb) == 0;
  int has_sig = lstat(sig, &sb) == 0;
  if (has_sig && !S_ISREG(sb.st_mode))
    return bad(rep, err, LL_SIGN_SIG " is not a regular file");
  if (!has_sums && !has_sig) {
    char hist[4608];
    ll_sign_path(hist, sizeof hist, "%s/" LL_SIGN_HISTORY, dir);
    if (lstat(hist, &sb) == 0)
      return bad(rep, err,
                 "the bundle keeps earlier signatures (" LL_SIGN_HISTORY
                 "/) but is no longer signed: it changed after them");
    if (allowed)
      return bad(rep, err,
                 "unsigned: there is no " LL_SIGN_SUMS " and no " LL_SIGN_SIG
                 ", and --allowed-signers asks for a signature");
    return LL_OK; /* UNSIGNED */
  }
  if (!has_sums || !has_sig)
    return bad(rep, err, "%s is there without %s",
               has_sums ? LL_SIGN_SUMS : LL_SIGN_SIG,
               has_sums ? LL_SIGN_SIG : LL_SIGN_SUMS);
  int fd = -1;
  ll_status st = check_sums(dir, rep, &fd, err);
  if (st == LL_E_NOMEM || st == LL_E_IO) {
    if (fd >= 0)
      close(fd);
    return st;
  }
  /* the signature is checked even when the sums are not: the report
   * names its signer either way; over the very bytes the sums were
   * checked from when they could be read */
  ll_error sub = {0};
  ll_sig_state state;
  ll_status ss = check_sig_at(fd, sums, sig, allowed, &state, rep->principal,
                              &rep->key, why, sizeof why, &sub);
  if (ss == LL_E_TAMPER)
    return bad(rep, err, "the signature: %s", why);
  if (ss != LL_OK)
    return ll_fail(err, ss, "%s", sub.message);
  ll_status hs = check_history(dir, allowed, rep, err);
  if (st != LL_OK)
    return st;
  if (hs != LL_OK)
    return hs;
  rep->state = state;
  return LL_OK;
}

int ll_sign_step_reserved(const char *step) {
  if (!step)
    return 0;
  while (*step == ' ' || *step == '\t')
    step++;
  size_t n = strlen(step);
  while (n && (step[n - 1] == ' ' || step[n - 1] == '\t'))
    n--;
  return n == sizeof LL_SIGN_NOTE_STEP - 1 &&
         strncasecmp(step, LL_SIGN_NOTE_STEP, n) == 0;
}

static const char *row_str(const cJSON *row, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

int ll_sign_note_key(const cJSON *row, char key[LL_SIGN_FP_MAX]) {
  const char *rec = row_str(row, "record");
  const char *step = row_str(row, "step");
  if (!rec || strcmp(rec, "note") != 0 || !step ||
      strcmp(step, LL_SIGN_NOTE_STEP) != 0)
    return 0;
  const char *k = row_str(row, LL_SIGN_NOTE_KEY);
  size_t n = k ? strlen(k) : 0;
  if (!k || strncmp(k, "SHA256:", 7) != 0 || n < 8 || n >= LL_SIGN_FP_MAX ||
      strcspn(k, " \t\n") != n)
    return -1;
  memcpy(key, k, n + 1);
  return 1;
}

int ll_sign_declared(const cJSON *rows, char key[LL_SIGN_FP_MAX], int *ended,
                     long *bad_row) {
  key[0] = '\0';
  *ended = 0;
  long seq = 0;
  const cJSON *r;
  cJSON_ArrayForEach(r, rows) {
    seq++;
    char k[LL_SIGN_FP_MAX];
    int got = ll_sign_note_key(r, k);
    if (got < 0) {
      if (bad_row)
        *bad_row = seq;
      return -1;
    }
    if (got > 0)
      memcpy(key, k, sizeof k);
    const char *rec = row_str(r, "record");
    if (rec && strcmp(rec, "decision") == 0)
      *ended = 1;
  }
  return 0;
}

void ll_sign_check_declared(ll_sign_report *rep, const char *declared,
                            int ended) {
  if (!declared || !declared[0] || rep->problem[0])
    return;
  if (rep->state == LL_SIG_UNSIGNED && !ended) {
    /* no decision: the run was killed before it ended, and so before
     * the host could sign it; recovery signs it */
    snprintf(rep->note, sizeof rep->note,
             "the ledger says the host signs it with key %s when the run "
             "ends; the run has not ended (no decision): recover it with "
             "--sign-key",
             declared);
  } else if (rep->state == LL_SIG_UNSIGNED) {
    rep->state = LL_SIG_BAD;
    snprintf(rep->problem, sizeof rep->problem,
             "the ledger says the host signed this bundle with key %s, but "
             "it is unsigned: its signature was removed (or the host was "
             "killed between the decision and the signing)",
             declared);
  } else if (strcmp(rep->key.fingerprint, declared) != 0) {
    rep->state = LL_SIG_BAD;
    snprintf(rep->problem, sizeof rep->problem,
             "signed with key %s, but the ledger says the host signed it "
             "with key %s",
             rep->key.fingerprint, declared);
  }
}

void ll_sign_check_bytes(ll_sign_report *rep, const char *export_sha256,
                         const char *corroboration_sha256) {
  if (rep->problem[0] || rep->state == LL_SIG_UNSIGNED)
    return;
  const char *name = NULL;
  if (export_sha256 && strcmp(export_sha256, rep->export_listed) != 0)
    name = "export/ledger.jsonl";
  else if (corroboration_sha256 &&
           strcmp(corroboration_sha256, rep->corroboration_listed) != 0)
    name = "corroboration.json";
  if (!name)
    return;
  rep->state = LL_SIG_BAD;
  snprintf(rep->problem, sizeof rep->problem,
           "%s as it was checked is not the file " LL_SIGN_SUMS
           " covers: it changed while the bundle was being checked; check "
           "it again",
           name);
}

ll_status ll_bundle_check_declared(const char *dir, const char *allowed,
                                   const char *declared, int ended,
                                   const char *export_sha256,
                                   const char *corroboration_sha256,
                                   ll_sign_report *rep, ll_error *err) {
  ll_status st = ll_bundle_check(dir, allowed, rep, err);
  if (st != LL_OK && st != LL_E_TAMPER)
    return st;
  ll_sign_check_declared(rep, declared, ended);
  ll_sign_check_bytes(rep, export_sha256, corroboration_sha256);
  if (rep->state == LL_SIG_BAD)
    return ll_fail(err, LL_E_TAMPER, "%s", rep->problem);
  return st;
}
