/* Makes a signed bundle: SHA256SUMS over the evidence directory's files,
 * signed by `ssh-keygen -Y sign` with the operator's key. The signature
 * format is ssh-keygen's own (SSHSIG); nothing of it is written here. */
#define _GNU_SOURCE
#include "sign.h"
#include "sign_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"
#include "input.h"
#include "output.h"

extern char **environ;

int ll_sign_path(char *buf, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, cap, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= cap) {
    buf[0] = '\0';
    return 0;
  }
  return 1;
}

void ll_sign_files_free(ll_sign_files *f) {
  for (size_t i = 0; i < f->n; i++)
    free(f->paths[i]);
  free(f->paths);
  memset(f, 0, sizeof *f);
}

static int files_add(ll_sign_files *f, const char *rel) {
  if (f->n == f->cap) {
    size_t cap = f->cap ? f->cap * 2 : 32;
    char **p = realloc(f->paths, cap * sizeof *p);
    if (!p)
      return 0;
    f->paths = p;
    f->cap = cap;
  }
  f->paths[f->n] = strdup(rel);
  return f->paths[f->n] ? (f->n++, 1) : 0;
}

/* A name coreutils would print with a backslash escape, or a reader
 * could not see: refused rather than escaped. */
static int plain_name(const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p < 0x20 || *p == 0x7f || *p == '\\')
      return 0;
  return 1;
}

static ll_status walk_dir(int dfd, const char *prefix, int depth,
                          ll_sign_files *out, ll_error *err) {
  DIR *d = fdopendir(dfd);
  if (!d) {
    close(dfd);
    return ll_fail(err, LL_E_IO, "cannot read the bundle folder %s: %s",
                   *prefix ? prefix : ".", strerror(errno));
  }
  ll_status st = LL_OK;
  struct dirent *e;
  while (st == LL_OK && (errno = 0, e = readdir(d)) != NULL) {
    const char *nm = e->d_name;
    if (strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0)
      continue;
    char rel[4096];
    int k = snprintf(rel, sizeof rel, "%s%s%s", prefix, *prefix ? "/" : "", nm);
    if (k < 0 || (size_t)k >= sizeof rel) {
      st = ll_fail(err, LL_E_IO, "a bundle path is too long under %s", prefix);
      break;
    }
    if (depth == 0 &&
        (strcmp(nm, LL_SIGN_SUMS) == 0 || strcmp(nm, LL_SIGN_SIG) == 0))
      continue;
    if (!plain_name(nm)) {
      st = ll_fail(err, LL_E_IO,
                   "the bundle holds a file whose name has a control "
                   "character or a backslash (under %s): sha256sum would "
                   "escape it",
                   *prefix ? prefix : ".");
      break;
    }
    struct stat sb;
    if (fstatat(dirfd(d), nm, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
      st = ll_fail(err, LL_E_IO, "cannot stat %s: %s", rel, strerror(errno));
    } else if (S_ISREG(sb.st_mode)) {
      if (out->n >= LL_SIGN_FILES_MAX)
        st = ll_fail(err, LL_E_IO, "the bundle holds more than %d files",
                     LL_SIGN_FILES_MAX);
      else if (!files_add(out, rel))
        st = ll_fail(err, LL_E_NOMEM, "out of memory listing the bundle");
    } else if (S_ISDIR(sb.st_mode)) {
      int sub =
          openat(dirfd(d), nm, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (depth + 1 >= LL_SIGN_DEPTH_MAX)
        st = ll_fail(err, LL_E_IO, "the bundle is nested deeper than %d at %s",
                     LL_SIGN_DEPTH_MAX, rel);
      else if (sub < 0)
        st = ll_fail(err, LL_E_IO, "cannot open %s: %s", rel, strerror(errno));
      else
        st = walk_dir(sub, rel, depth + 1, out, err), sub = -1;
      if (sub >= 0)
        close(sub);
    } else {
      st = ll_fail(err, LL_E_IO,
                   "%s is %s, not a regular file: a bundle holds files and "
                   "folders only",
                   rel, S_ISLNK(sb.st_mode) ? "a symbolic link" : "special");
    }
  }
  if (st == LL_OK && errno != 0)
    st = ll_fail(err, LL_E_IO, "cannot read the bundle folder %s: %s",
                 *prefix ? prefix : ".", strerror(errno));
  closedir(d);
  return st;
}

static int by_bytes(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

ll_status ll_sign_walk(const char *dir, ll_sign_files *out, ll_error *err) {
  memset(out, 0, sizeof *out);
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0)
    return ll_fail(err, LL_E_IO, "cannot open the bundle %s: %s", dir,
                   strerror(errno));
  ll_status st = walk_dir(dfd, "", 0, out, err);
  if (st != LL_OK) {
    ll_sign_files_free(out);
    return st;
  }
  if (out->n)
    qsort(out->paths, out->n, sizeof *out->paths, by_bytes);
  return LL_OK;
}

ll_status ll_sign_file_sha256(const char *dir, const char *rel, char hex[65],
                              ll_error *err) {
  char path[4608];
  ll_sign_path(path, sizeof path, "%s/%s", dir, rel);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return ll_fail(err, LL_E_IO, "cannot open %s: %s", rel, strerror(errno));
  struct stat sb;
  ll_sha256 *h = NULL;
  ll_status st = LL_OK;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    st = ll_fail(err, LL_E_IO, "%s is not a regular file", rel);
    goto cleanup;
  }
  h = ll_sha256_new();
  if (!h) {
    st = ll_fail(err, LL_E_NOMEM, "out of memory hashing %s", rel);
    goto cleanup;
  }
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      st = ll_fail(err, LL_E_IO, "cannot read %s: %s", rel, strerror(errno));
      goto cleanup;
    }
    if (n == 0)
      break;
    if (ll_sha256_update(h, buf, (size_t)n) != LL_OK) {
      st = ll_fail(err, LL_E_NOMEM, "cannot hash %s", rel);
      goto cleanup;
    }
  }
  if (ll_sha256_final(h, hex) != LL_OK)
    st = ll_fail(err, LL_E_NOMEM, "cannot hash %s", rel);
cleanup:
  ll_sha256_free(h);
  close(fd);
  return st;
}

/* Variables that could make ssh-keygen ask somebody, sign with an
 * agent's key instead of the file named, or load a library of the
 * caller's choosing beside the private key (LD_PRELOAD; under the ASan
 * specs it would also make ssh-keygen's own leaks fail the signing). */
static int dropped(const char *kv) {
  static const char *const names[] = {
      "SSH_ASKPASS=", "SSH_ASKPASS_REQUIRE=", "DISPLAY=", "SSH_AUTH_SOCK=",
      "LD_PRELOAD="};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strncmp(kv, names[i], strlen(names[i])) == 0)
      return 1;
  return 0;
}

ll_status ll_sign_keygen(const char *const *args, const int *stdin_fd,
                         ll_proc_result *r, ll_error *err) {
  size_t nargs = 0, nenv = 0;
  while (args[nargs])
    nargs++;
  while (environ && environ[nenv])
    nenv++;
  const char **argv = calloc(nargs + 2, sizeof *argv);
  const char **envp = calloc(nenv + 1, sizeof *envp);
  ll_status st = LL_OK;
  if (!argv || !envp) {
    memset(r, 0, sizeof *r);
    st = ll_fail(err, LL_E_NOMEM, "out of memory starting ssh-keygen");
    goto cleanup;
  }
  argv[0] = "ssh-keygen";
  for (size_t i = 0; i < nargs; i++)
    argv[i + 1] = args[i];
  size_t k = 0;
  for (size_t i = 0; i < nenv; i++)
    if (!dropped(environ[i]))
      envp[k++] = environ[i];
  ll_proc_options o = {.argv = argv,
                       .out_cap = 64 * 1024,
                       .timeout_ms = 30000,
                       .stdin_fd = stdin_fd,
                       .merge_stderr = 1,
                       .envp = envp};
  st = ll_proc_capture(&o, r, err);
  if (st == LL_E_IO)
    st = ll_fail(err, LL_E_IO,
                 "cannot start ssh-keygen (%s): install openssh-client",
                 err ? err->message : "");
cleanup:
  free(argv);
  free(envp);
  return st;
}

void ll_sign_last_line(const ll_proc_result *r, char *buf, size_t cap) {
  const char *p = r->out, *best = NULL;
  if (r->timed_out)
    p = "ssh-keygen took longer than 30 s";
  /* the last line that says something: ssh-keygen puts its reason last,
   * after banners of '@' */
  for (const char *q = p; q && *q;) {
    size_t n = strcspn(q, "\r\n");
    if (n && strspn(q, "@ ") < n)
      best = q;
    q += n;
    q += strspn(q, "\r\n");
  }
  size_t n = 0;
  for (const char *q = best;
       q && *q && *q != '\n' && *q != '\r' && n + 1 < cap && n < 200; q++)
    buf[n++] = (*q >= 0x20 && *q < 0x7f) ? *q : '?';
  buf[n] = '\0';
  if (!n)
    ll_strlcpy(buf, "(no output)", cap);
}

int ll_sign_parse_key(const char *text, ll_sign_key *key) {
  memset(key, 0, sizeof *key);
  const char *f = text ? strstr(text, "SHA256:") : NULL;
  if (!f)
    return 0;
  size_t n = strcspn(f, " \n\t");
  if (n >= sizeof key->fingerprint)
    return 0;
  memcpy(key->fingerprint, f, n);
  /* -Y verify: "... with ED25519 key SHA256:..."; -l: "... (ED25519)" */
  const char *end = f;
  const char *kw = end - text >= 5 ? end - 5 : NULL;
  if (kw && strncmp(kw, " key ", 5) == 0) {
    const char *t = kw;
    while (t > text && t[-1] != ' ')
      t--;
    size_t tn = (size_t)(kw - t);
    if (tn < sizeof key->type)
      memcpy(key->type, t, tn);
  } else {
    const char *eol = f + strcspn(f, "\n");
    const char *open = NULL;
    for (const char *q = f; q < eol; q++)
      if (*q == '(')
        open = q;
    const char *close = open ? memchr(open, ')', (size_t)(eol - open)) : NULL;
    if (close && (size_t)(close - open - 1) < sizeof key->type)
      memcpy(key->type, open + 1, (size_t)(close - open - 1));
  }
  return 1;
}

ll_status ll_sign_key_check(const char *key_path, ll_sign_key *out,
                            ll_error *err) {
  int fd = -1;
  size_t size = 0;
  ll_status st = ll_input_open(key_path, "signing key", "--sign-key",
                               LL_TOKEN_FILE_MAX, &fd, &size, err);
  if (st != LL_OK)
    return st;
  close(fd);
  ll_proc_result r = {0};
  char arg[4608];
  if (!ll_sign_path(arg, sizeof arg, "%s%s", LL_SIGN_DASH(key_path), key_path))
    return ll_fail(err, LL_E_USAGE, "--sign-key: the path is too long");
  const char *const priv[] = {"-y", "-P", "", "-f", arg, NULL};
  st = ll_sign_keygen(priv, NULL, &r, err);
  if (st != LL_OK)
    return st == LL_E_IO ? ll_fail(err, LL_E_USAGE, "--sign-key: %s",
                                   err ? err->message : "ssh-keygen")
                         : st;
  if (!r.exited || r.exit_code != 0) {
    char why[256];
    ll_sign_last_line(&r, why, sizeof why);
    ll_proc_result_cleanup(&r);
    return ll_fail(err, LL_E_USAGE,
                   "--sign-key %s: ssh-keygen does not read it as a private "
                   "key without a passphrase (%s): give a key made with "
                   "ssh-keygen -t ed25519 -N '' -f FILE, mode 0600",
                   key_path, why);
  }
  ll_proc_result_cleanup(&r);
  const char *const fp[] = {"-l", "-f", arg, NULL};
  st = ll_sign_keygen(fp, NULL, &r, err);
  if (st != LL_OK)
    return st == LL_E_IO ? ll_fail(err, LL_E_USAGE, "--sign-key: %s",
                                   err ? err->message : "ssh-keygen")
                         : st;
  ll_sign_key key;
  int ok = r.exited && r.exit_code == 0 && ll_sign_parse_key(r.out, &key);
  char why[256];
  ll_sign_last_line(&r, why, sizeof why);
  ll_proc_result_cleanup(&r);
  if (!ok)
    return ll_fail(err, LL_E_USAGE,
                   "--sign-key %s: ssh-keygen -l gives no fingerprint for it "
                   "(%s)",
                   key_path, why);
  if (out)
    *out = key;
  return LL_OK;
}

static int exists_at(const char *dir, const char *rel) {
  char path[4608];
  struct stat sb;
  ll_sign_path(path, sizeof path, "%s/%s", dir, rel);
  return lstat(path, &sb) == 0;
}

int ll_bundle_is_signed(const char *dir) {
  return exists_at(dir, LL_SIGN_SUMS) || exists_at(dir, LL_SIGN_SIG) ||
         exists_at(dir, LL_SIGN_HISTORY);
}

/* Moves SHA256SUMS and SHA256SUMS.sig into signatures/N/, N the next free
 * number, so that the sums written next cover the earlier custody. */
static ll_status keep_history(const char *dir, ll_error *err) {
  char hist[4608], slot[4608], from[4608], to[4608];
  if (!exists_at(dir, LL_SIGN_SUMS) && !exists_at(dir, LL_SIGN_SIG))
    return LL_OK;
  ll_sign_path(hist, sizeof hist, "%s/%s", dir, LL_SIGN_HISTORY);
  if (mkdir(hist, 0700) != 0 && errno != EEXIST)
    return ll_fail(err, LL_E_IO, "cannot make %s: %s", hist, strerror(errno));
  int n;
  for (n = 1; n <= LL_SIGN_HISTORY_MAX; n++) {
    ll_sign_path(slot, sizeof slot, "%s/%d", hist, n);
    if (mkdir(slot, 0700) == 0)
      break;
    if (errno != EEXIST)
      return ll_fail(err, LL_E_IO, "cannot make %s: %s", slot, strerror(errno));
  }
  if (n > LL_SIGN_HISTORY_MAX)
    return ll_fail(err, LL_E_IO,
                   "%s already keeps %d earlier signatures: the bundle is "
                   "not re-signed",
                   hist, LL_SIGN_HISTORY_MAX);
  const char *names[] = {LL_SIGN_SUMS, LL_SIGN_SIG};
  for (int i = 0; i < 2; i++) {
    ll_sign_path(from, sizeof from, "%s/%s", dir, names[i]);
    ll_sign_path(to, sizeof to, "%s/%s", slot, names[i]);
    if (rename(from, to) != 0 && errno != ENOENT)
      return ll_fail(err, LL_E_IO, "cannot move %s to %s: %s", from, to,
                     strerror(errno));
  }
  return LL_OK;
}

/* SHA256SUMS through .SHA256SUMS.tmp (O_EXCL, never a link followed),
 * fsync'd and renamed into place. */
static ll_status write_sums(const char *dir, const ll_buf *text,
                            ll_error *err) {
  char tmp[4608], path[4608];
  ll_sign_path(tmp, sizeof tmp, "%s/." LL_SIGN_SUMS ".tmp", dir);
  ll_sign_path(path, sizeof path, "%s/" LL_SIGN_SUMS, dir);
  if (ll_write_replace(path, tmp, text->p, text->n) != 0)
    return ll_fail(err, LL_E_IO, "cannot write %s: %s", path, strerror(errno));
  return LL_OK;
}

ll_status ll_bundle_sign(const char *dir, const char *key_path, ll_error *err) {
  ll_sign_files files = {0};
  ll_buf text = {0};
  ll_proc_result r = {0};
  char tmp[4608], sums[4608], key[4608];
  struct stat sb;
  ll_status st = LL_OK;
  if (strlen(dir) > 2048)
    return ll_fail(err, LL_E_IO, "the bundle's path is too long");
  if (lstat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    return ll_fail(err, LL_E_IO, "%s is not a bundle folder", dir);
  ll_sign_path(tmp, sizeof tmp, "%s/." LL_SIGN_SUMS ".tmp", dir);
  (void)unlink(tmp); /* left by a signing that was killed */
  st = keep_history(dir, err);
  if (st == LL_OK)
    st = ll_sign_walk(dir, &files, err);
  for (size_t i = 0; st == LL_OK && i < files.n; i++) {
    char hex[LL_SHA256_HEX];
    st = ll_sign_file_sha256(dir, files.paths[i], hex, err);
    if (st == LL_OK) {
      ll_buf_put(&text, hex, 64);
      ll_buf_put(&text, "  ", 2);
      ll_buf_put(&text, files.paths[i], strlen(files.paths[i]));
      ll_buf_put(&text, "\n", 1);
    }
  }
  if (st == LL_OK && (text.oom || !text.p))
    st = ll_fail(err, LL_E_NOMEM, "out of memory writing " LL_SIGN_SUMS);
  if (st == LL_OK)
    st = write_sums(dir, &text, err);
  if (st != LL_OK)
    goto cleanup;
  /* the one positional argument: "./" before a relative dir named like
   * an option ("-Yx"), and "--" ending the options as well */
  ll_sign_path(sums, sizeof sums, "%s%s/" LL_SIGN_SUMS, LL_SIGN_DASH(dir), dir);
  ll_sign_path(key, sizeof key, "%s%s", LL_SIGN_DASH(key_path), key_path);
  const char *const args[] = {"-Y", "sign", "-P", "",
                              "-f", key,    "-n", LL_SIGN_NAMESPACE,
                              "--", sums,   NULL};
  st = ll_sign_keygen(args, NULL, &r, err);
  if (st != LL_OK)
    goto cleanup;
  if (!r.exited || r.exit_code != 0 || !exists_at(dir, LL_SIGN_SIG)) {
    char why[256];
    ll_sign_last_line(&r, why, sizeof why);
    st = ll_fail(err, LL_E_IO, "ssh-keygen -Y sign failed: %s", why);
    goto cleanup;
  }
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)fsync(dfd);
    close(dfd);
  }
cleanup:
  ll_proc_result_cleanup(&r);
  ll_sign_files_free(&files);
  free(text.p);
  return st;
}
