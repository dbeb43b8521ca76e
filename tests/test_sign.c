/* The signed bundle (core/run/include/sign.h) with the real ssh-keygen:
 * the key check's refusals, SHA256SUMS's exact bytes, the signature's
 * check for good and tampered bundles, the kept history, and the parsing
 * of ssh-keygen's lines (sign_impl.h). Also the proc options signing
 * needs: a stdin file, stderr merged, an environment of our choosing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"
#include "proc.h"
#include "sign.h"
#include "sign_impl.h"
#include "testlib.h"

static char root[512];

static const char *at(const char *name) {
  static char buf[8][800];
  static int k;
  k = (k + 1) % 8;
  snprintf(buf[k], sizeof buf[k], "%s/%s", root, name);
  return buf[k];
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *buf = calloc(1, 65536);
  size_t n = buf ? fread(buf, 1, 65535, f) : 0;
  (void)n;
  fclose(f);
  return buf;
}

static int sh(const char *fmt, const char *a, const char *b) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, fmt, a, b);
  return system(cmd);
}

static void test_parse_key(void) {
  static const struct {
    const char *line, *fp, *type;
  } rows[] = {
      {"256 SHA256:abcDEF+/0 me@host (ED25519)\n", "SHA256:abcDEF+/0",
       "ED25519"},
      {"Good \"leaselua-evidence\" signature for a@b with ED25519 key "
       "SHA256:xyz\n",
       "SHA256:xyz", "ED25519"},
      {"Good \"leaselua-evidence\" signature with RSA key SHA256:q1\n",
       "SHA256:q1", "RSA"},
      {"3072 SHA256:r2 no comment (RSA)", "SHA256:r2", "RSA"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    ll_sign_key k;
    CHECK(ll_sign_parse_key(rows[i].line, &k) == 1);
    CHECK_STR(k.fingerprint, rows[i].fp);
    CHECK_STR(k.type, rows[i].type);
  }
  ll_sign_key k;
  CHECK(ll_sign_parse_key("Could not verify signature.\n", &k) == 0);
  CHECK(ll_sign_parse_key(NULL, &k) == 0);
}

static void test_proc_options(void) {
  put(at("in.txt"), "line one\nline two\n");
  const char *cat[] = {"cat", NULL};
  ll_proc_options o = {.argv = cat,
                       .out_cap = 1024,
                       .timeout_ms = 5000,
                       .stdin_path = at("in.txt")};
  ll_proc_result r;
  ll_error err = {0};
  CHECK(ll_proc_capture(&o, &r, &err) == LL_OK);
  CHECK_STR(r.out, "line one\nline two\n");
  ll_proc_result_cleanup(&r);
  /* stdin from /dev/null by default */
  o.stdin_path = NULL;
  CHECK(ll_proc_capture(&o, &r, &err) == LL_OK);
  CHECK_STR(r.out, "");
  ll_proc_result_cleanup(&r);
  /* a stdin that is not a regular file is refused before the start */
  o.stdin_path = root;
  CHECK(ll_proc_capture(&o, &r, &err) == LL_E_IO);
  CHECK(strstr(err.message, "not a regular file") != NULL);
  const char *both[] = {"sh", "-c", "echo out; echo err >&2", NULL};
  ll_proc_options m = {
      .argv = both, .out_cap = 1024, .timeout_ms = 5000, .merge_stderr = 1};
  CHECK(ll_proc_capture(&m, &r, &err) == LL_OK);
  CHECK_STR(r.out, "out\nerr\n");
  ll_proc_result_cleanup(&r);
  const char *env[] = {"env", NULL};
  const char *envp[] = {"ONLY=this", NULL};
  ll_proc_options e = {
      .argv = env, .out_cap = 1024, .timeout_ms = 5000, .envp = envp};
  CHECK(ll_proc_capture(&e, &r, &err) == LL_OK);
  CHECK_STR(r.out, "ONLY=this\n");
  ll_proc_result_cleanup(&r);
}

static void test_key_check(void) {
  CHECK(sh("ssh-keygen -q -t ed25519 -N '' -C t -f '%s' </dev/null", at("k"),
           "") == 0);
  CHECK(sh("ssh-keygen -q -t ed25519 -N pw -f '%s' </dev/null", at("kp"), "") ==
        0);
  CHECK(sh("cp '%s' '%s'", at("k"), at("loose")) == 0);
  CHECK(chmod(at("loose"), 0644) == 0);
  CHECK(symlink(at("k"), at("link")) == 0);
  ll_sign_key key;
  ll_error err = {0};
  CHECK(ll_sign_key_check(at("k"), &key, &err) == LL_OK);
  CHECK(strncmp(key.fingerprint, "SHA256:", 7) == 0);
  CHECK_STR(key.type, "ED25519");
  static const struct {
    const char *name, *says;
  } bad[] = {
      {"kp", "without a passphrase"},    {"loose", "bad permissions"},
      {"link", "symbolic link"},         {"none", "No such file"},
      {"k.pub", "without a passphrase"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ll_error e = {0};
    CHECK_INT(ll_sign_key_check(at(bad[i].name), &key, &e), LL_E_USAGE);
    if (!strstr(e.message, bad[i].says))
      fprintf(stderr, "%s: %s\n", bad[i].name, e.message);
    CHECK(strstr(e.message, bad[i].says) != NULL);
    CHECK(strchr(e.message, '\n') == NULL);
  }
}

static void test_sign_and_check(void) {
  CHECK(mkdir(at("b"), 0700) == 0);
  CHECK(mkdir(at("b/sub"), 0700) == 0);
  put(at("b/z.json"), "{}\n");
  put(at("b/sub/a.jsonl"), "row\n");
  put(at("b/A"), "");
  ll_error err = {0};
  CHECK(ll_bundle_is_signed(at("b")) == 0);
  CHECK(ll_bundle_sign(at("b"), at("k"), &err) == LL_OK);
  CHECK(ll_bundle_is_signed(at("b")) == 1);
  /* the coreutils format, sorted by byte order, the two files left out */
  char want[1024] = "", hex[LL_SHA256_HEX];
  static const struct {
    const char *name, *text;
  } files[] = {{"A", ""}, {"sub/a.jsonl", "row\n"}, {"z.json", "{}\n"}};
  for (size_t i = 0; i < 3; i++) {
    CHECK(ll_sha256_hex(files[i].text, strlen(files[i].text), hex) == LL_OK);
    size_t n = strlen(want);
    snprintf(want + n, sizeof want - n, "%s  %s\n", hex, files[i].name);
  }
  char *sums = slurp(at("b/SHA256SUMS"));
  CHECK(sums != NULL);
  CHECK_STR(sums ? sums : "", want);
  free(sums);
  put(at("allowed"), "");
  CHECK(sh("printf 'me@example %%s\\n' \"$(ssh-keygen -y -f '%s')\" > '%s'",
           at("k"), at("allowed")) == 0);
  ll_sign_report rep;
  CHECK(ll_bundle_check(at("b"), NULL, &rep, &err) == LL_OK);
  CHECK_INT(rep.state, LL_SIG_UNCHECKED);
  CHECK_INT(rep.listed, 3);
  CHECK(ll_bundle_check(at("b"), at("allowed"), &rep, &err) == LL_OK);
  CHECK_INT(rep.state, LL_SIG_GOOD);
  CHECK_STR(rep.principal, "me@example");
  /* changes: each is BAD, naming the file */
  static const struct {
    const char *cmd, *says;
    int mismatched, uncovered;
  } rows[] = {
      {"printf x >> '%s/z.json'", "differ", 1, 0},
      {"rm '%s/A'", "differ or are gone", 1, 0},
      {"touch '%s/sub/new'", "not covered", 0, 1},
      {"ln -s z.json '%s/sub/l'", "symbolic link", 0, 0},
      {"rm '%s/SHA256SUMS.sig'", "without", 0, 0},
      {"sed -i 1d '%s/SHA256SUMS'", "signature", 0, 1},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -a '%s' '%s'", at("c"),
             at("b"), at("c"));
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof cmd, rows[i].cmd, at("c"));
    CHECK(system(cmd) == 0);
    ll_error e = {0};
    CHECK_INT(ll_bundle_check(at("c"), at("allowed"), &rep, &e), LL_E_TAMPER);
    CHECK_INT(rep.state, LL_SIG_BAD);
    if (!strstr(rep.problem, rows[i].says))
      fprintf(stderr, "row %zu: %s\n", i, rep.problem);
    CHECK(strstr(rep.problem, rows[i].says) != NULL);
    CHECK_INT(rep.n_mismatched, rows[i].mismatched);
    CHECK_INT(rep.n_uncovered, rows[i].uncovered);
  }
  /* re-signing keeps the earlier signature, which the new sums cover */
  char *old = slurp(at("b/SHA256SUMS.sig"));
  put(at("b/z.json"), "{\"more\":1}\n");
  CHECK(ll_bundle_sign(at("b"), at("k"), &err) == LL_OK);
  char *kept = slurp(at("b/signatures/1/SHA256SUMS.sig"));
  CHECK(old && kept && strcmp(old, kept) == 0);
  free(old);
  free(kept);
  sums = slurp(at("b/SHA256SUMS"));
  CHECK(sums && strstr(sums, "  signatures/1/SHA256SUMS.sig\n") != NULL);
  free(sums);
  CHECK(ll_bundle_check(at("b"), at("allowed"), &rep, &err) == LL_OK);
  CHECK_INT(rep.state, LL_SIG_GOOD);
  CHECK_INT(rep.n_history, 1);
  CHECK_STR(rep.history[0].dir, "signatures/1");
  CHECK_STR(rep.history[0].principal, "me@example");
  /* a link in the bundle is never signed */
  CHECK(symlink("z.json", at("b/l")) == 0);
  CHECK_INT(ll_bundle_sign(at("b"), at("k"), &err), LL_E_IO);
  CHECK(strstr(err.message, "symbolic link") != NULL);
  /* unsigned: fine alone, a failure when a signature is asked for */
  CHECK(mkdir(at("u"), 0700) == 0);
  put(at("u/f"), "x");
  CHECK(ll_bundle_check(at("u"), NULL, &rep, &err) == LL_OK);
  CHECK_INT(rep.state, LL_SIG_UNSIGNED);
  CHECK_INT(ll_bundle_check(at("u"), at("allowed"), &rep, &err), LL_E_TAMPER);
  CHECK_INT(ll_bundle_check(at("u"), at("none"), &rep, &err), LL_E_USAGE);
}

static void put_bytes(const char *path, const char *p, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (f) {
    CHECK(fwrite(p, 1, n, f) == n);
    fclose(f);
  }
}

/* Review finding 3: a SHA256SUMS holding a NUL byte crashed the check
 * (strchr found no newline after the NUL). Every malformed file is a BAD
 * signature file, never a crash: NULs anywhere, no final newline, empty
 * lines, very long lines, and random mixes of the bytes that matter. */
static void test_malformed_sums(void) {
  char hex[LL_SHA256_HEX];
  CHECK(ll_sha256_hex("{}\n", 3, hex) == LL_OK);
  char good[128];
  snprintf(good, sizeof good, "%s  z.json\n", hex);
  static char buf[200000];
  static const struct {
    const char *what;
    int kind;
  } cases[] = {
      {"NUL alone", 0},         {"NUL after a good line", 1},
      {"NUL in a path", 2},     {"no final newline", 3},
      {"an empty line", 4},     {"a very long line", 5},
      {"a NUL, no newline", 6},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t n = 0;
    switch (cases[i].kind) {
    case 0:
      memcpy(buf, "\0\n", 2), n = 2;
      break;
    case 1:
      n = strlen(good);
      memcpy(buf, good, n);
      memcpy(buf + n, "\0x\n", 3), n += 3;
      break;
    case 2:
      n = strlen(good);
      memcpy(buf, good, n);
      buf[66] = '\0';
      break;
    case 3:
      n = strlen(good) - 1;
      memcpy(buf, good, n);
      break;
    case 4:
      n = strlen(good);
      memcpy(buf, good, n);
      buf[n++] = '\n';
      break;
    case 5:
      memcpy(buf, hex, 64);
      memset(buf + 64, 'a', sizeof buf - 65);
      buf[64] = buf[65] = ' ';
      buf[sizeof buf - 1] = '\n';
      n = sizeof buf;
      break;
    default:
      memcpy(buf, hex, 64);
      memcpy(buf + 64, "  z\0", 4), n = 68;
      break;
    }
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "rm -rf '%s' && mkdir '%s' && printf '{}\\n' > '%s/z.json'",
             at("m"), at("m"), at("m"));
    CHECK(system(cmd) == 0);
    CHECK(ll_bundle_sign(at("m"), at("k"), &(ll_error){0}) == LL_OK);
    put_bytes(at("m/SHA256SUMS"), buf, n);
    ll_sign_report rep;
    ll_error e = {0};
    CHECK_INT(ll_bundle_check(at("m"), NULL, &rep, &e), LL_E_TAMPER);
    CHECK_INT(rep.state, LL_SIG_BAD);
    if (!strstr(rep.problem, "SHA256SUMS"))
      fprintf(stderr, "%s: %s\n", cases[i].what, rep.problem);
    CHECK(strstr(rep.problem, "SHA256SUMS") != NULL);
  }
  /* random mixes of NUL, newline, space, hex, '/', '.': never a crash,
   * never LL_OK (the signature no longer matches, at the least) */
  static const char alphabet[] = {'\0', '\n', ' ', 'a', '0', '/', '.', 'z'};
  unsigned long seed = 12345;
  for (int round = 0; round < 48; round++) {
    size_t n = 0;
    if (round % 2)
      n = strlen(good), memcpy(buf, good, n);
    size_t extra = (size_t)(round * 37 % 300) + 1;
    for (size_t j = 0; j < extra; j++) {
      seed = seed * 1103515245u + 12345u;
      buf[n++] = alphabet[(seed >> 16) % sizeof alphabet];
    }
    put_bytes(at("m/SHA256SUMS"), buf, n);
    ll_sign_report rep;
    ll_error e = {0};
    CHECK_INT(ll_bundle_check(at("m"), NULL, &rep, &e), LL_E_TAMPER);
    CHECK_INT(rep.state, LL_SIG_BAD);
  }
}

/* Review finding 4: a relative bundle path starting with '-' was read by
 * ssh-keygen as options. It is signed and checked like any other. */
static void test_dash_dir(void) {
  char cwd[1024];
  CHECK(getcwd(cwd, sizeof cwd) != NULL);
  CHECK(chdir(root) == 0);
  CHECK(mkdir("-Yx", 0700) == 0);
  put("-Yx/f", "x\n");
  ll_error err = {0};
  CHECK_INT(ll_bundle_sign("-Yx", at("k"), &err), LL_OK);
  if (err.message[0])
    fprintf(stderr, "-Yx: %s\n", err.message);
  ll_sign_report rep;
  CHECK_INT(ll_bundle_check("-Yx", at("allowed"), &rep, &err), LL_OK);
  CHECK_INT(rep.state, LL_SIG_GOOD);
  CHECK_INT(rep.listed, 1);
  CHECK(chdir(cwd) == 0);
}

/* The host's signing declaration (review findings 1 and 2): which note
 * steps are the host's, which rows are its declaration, and the one check
 * of a declaration against a signature report. */
static void test_declared(void) {
  static const struct {
    const char *step;
    int reserved;
  } steps[] = {{"signing", 1},  {"Signing", 1}, {" SIGNING\t", 1},
               {"signing2", 0}, {"8", 0},       {"", 0},
               {"sign", 0}};
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
    CHECK_INT(ll_sign_step_reserved(steps[i].step), steps[i].reserved);
  CHECK_INT(ll_sign_step_reserved(NULL), 0);
  static const struct {
    const char *row, *key;
    int got;
  } rows[] = {
      {"{\"record\":\"note\",\"step\":\"signing\",\"text\":\"t\","
       "\"sign_key\":\"SHA256:abc\"}",
       "SHA256:abc", 1},
      {"{\"record\":\"note\",\"step\":\"signing\",\"text\":\"with "
       "SHA256:abc\"}",
       "", -1},
      {"{\"record\":\"note\",\"step\":\"signing\",\"sign_key\":\"abc\"}", "",
       -1},
      {"{\"record\":\"note\",\"step\":\"signing\",\"sign_key\":\"SHA256:\"}",
       "", -1},
      {"{\"record\":\"note\",\"step\":\"signing\",\"sign_key\":\"SHA256:a b\"}",
       "", -1},
      {"{\"record\":\"note\",\"step\":\"signing\",\"sign_key\":1}", "", -1},
      {"{\"record\":\"note\",\"step\":\"8\",\"sign_key\":\"SHA256:abc\"}", "",
       0},
      {"{\"record\":\"stop\",\"step\":\"signing\"}", "", 0},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    cJSON *r = cJSON_Parse(rows[i].row);
    char key[LL_SIGN_FP_MAX] = "";
    CHECK(r != NULL);
    CHECK_INT(ll_sign_note_key(r, key), rows[i].got);
    CHECK_STR(key, rows[i].key);
    cJSON_Delete(r);
  }
  /* over rows: the last declaration counts, a forged one stops it */
  cJSON *all = cJSON_Parse(
      "[{\"record\":\"manifest\"},"
      "{\"record\":\"note\",\"step\":\"signing\",\"sign_key\":\"SHA256:k1\"},"
      "{\"record\":\"decision\"},"
      "{\"record\":\"note\",\"step\":\"signing\",\"sign_key\":\"SHA256:k2\"}]");
  char key[LL_SIGN_FP_MAX];
  int ended = 0;
  long bad = 0;
  CHECK_INT(ll_sign_declared(all, key, &ended, &bad), 0);
  CHECK_STR(key, "SHA256:k2");
  CHECK_INT(ended, 1);
  cJSON_AddItemToArray(all, cJSON_Parse("{\"record\":\"note\",\"step\":"
                                        "\"signing\",\"text\":\"no key\"}"));
  CHECK_INT(ll_sign_declared(all, key, &ended, &bad), -1);
  CHECK_INT(bad, 5);
  cJSON_Delete(all);
  /* the declaration against a report */
  static const struct {
    ll_sig_state state;
    const char *fp, *declared;
    int ended;
    ll_sig_state want;
    const char *problem, *note;
  } checks[] = {
      {LL_SIG_UNSIGNED, "", "", 1, LL_SIG_UNSIGNED, "", ""},
      {LL_SIG_UNSIGNED, "", "SHA256:k", 1, LL_SIG_BAD,
       "its signature was removed", ""},
      {LL_SIG_UNSIGNED, "", "SHA256:k", 0, LL_SIG_UNSIGNED, "",
       "the run has not ended"},
      {LL_SIG_UNCHECKED, "SHA256:k", "SHA256:k", 1, LL_SIG_UNCHECKED, "", ""},
      {LL_SIG_GOOD, "SHA256:j", "SHA256:k", 1, LL_SIG_BAD,
       "signed with key SHA256:j, but the ledger says", ""},
      {LL_SIG_GOOD, "SHA256:j", "", 1, LL_SIG_GOOD, "", ""},
  };
  for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
    ll_sign_report rep = {.state = checks[i].state};
    ll_strlcpy(rep.key.fingerprint, checks[i].fp, sizeof rep.key.fingerprint);
    ll_sign_check_declared(&rep, checks[i].declared, checks[i].ended);
    CHECK_INT(rep.state, checks[i].want);
    CHECK(strstr(rep.problem, checks[i].problem) != NULL);
    CHECK(strstr(rep.note, checks[i].note) != NULL);
    CHECK(!checks[i].problem[0] == !rep.problem[0]);
  }
  /* the combined check on disk: an unsigned folder that declared a key */
  CHECK(mkdir(at("d"), 0700) == 0);
  put(at("d/f"), "x");
  ll_sign_report rep;
  ll_error e = {0};
  CHECK_INT(ll_bundle_check_declared(at("d"), NULL, "SHA256:k", 1, NULL, NULL,
                                     &rep, &e),
            LL_E_TAMPER);
  CHECK(strstr(e.message, "its signature was removed") != NULL);
  CHECK_INT(
      ll_bundle_check_declared(at("d"), NULL, "", 1, NULL, NULL, &rep, &e),
      LL_OK);
  CHECK_INT(rep.state, LL_SIG_UNSIGNED);
}

/* The files a reader checked must be the files SHA256SUMS lists: a
 * signed report turns BAD when either sum differs, an unsigned one and
 * an absent sum (NULL) are left alone. */
static void test_check_bytes(void) {
  static ll_sign_report rep;
  char a[65], b[65];
  memset(a, 'a', 64);
  memset(b, 'b', 64);
  a[64] = b[64] = '\0';
  memset(&rep, 0, sizeof rep);
  rep.state = LL_SIG_UNCHECKED;
  memcpy(rep.export_listed, a, sizeof a);
  ll_sign_check_bytes(&rep, a, "");
  CHECK_INT(rep.state, LL_SIG_UNCHECKED);
  CHECK_STR(rep.problem, "");
  ll_sign_check_bytes(&rep, NULL, NULL);
  CHECK_INT(rep.state, LL_SIG_UNCHECKED);
  ll_sign_check_bytes(&rep, b, "");
  CHECK_INT(rep.state, LL_SIG_BAD);
  CHECK(strstr(rep.problem, "export/ledger.jsonl as it was checked is not "
                            "the file SHA256SUMS covers") != NULL);
  /* a corroboration.json checked that the sums do not list, and one
   * listed that the reader did not find */
  rep.state = LL_SIG_GOOD;
  rep.problem[0] = '\0';
  ll_sign_check_bytes(&rep, a, b);
  CHECK_INT(rep.state, LL_SIG_BAD);
  CHECK(strstr(rep.problem, "corroboration.json as it was checked") != NULL);
  rep.state = LL_SIG_GOOD;
  rep.problem[0] = '\0';
  memcpy(rep.corroboration_listed, b, sizeof b);
  ll_sign_check_bytes(&rep, a, "");
  CHECK_INT(rep.state, LL_SIG_BAD);
  /* unsigned: nothing to compare with */
  memset(&rep, 0, sizeof rep);
  ll_sign_check_bytes(&rep, b, b);
  CHECK_INT(rep.state, LL_SIG_UNSIGNED);
  CHECK_STR(rep.problem, "");
}

int main(void) {
  char *d = ll_test_tmpdir();
  CHECK(d != NULL);
  if (!d)
    return ll_test_report("test_sign");
  ll_strlcpy(root, d, sizeof root);
  test_parse_key();
  test_proc_options();
  test_key_check();
  test_sign_and_check();
  test_malformed_sums();
  test_dash_dir();
  test_declared();
  test_check_bytes();
  CHECK(ll_test_rmtree(root) == 0);
  free(d);
  return ll_test_report("test_sign");
}
