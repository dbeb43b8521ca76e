/* The evidence directory is the run's own (ledger_open.c): made 0700 or
 * accepted only empty, owned by the user and not writable by group or
 * others; every file made relative to its descriptor, never through a
 * link; recovery refuses what a run never makes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ledger_fixture.h"
#include "testlib.h"

static int mode_of(const char *path) {
  struct stat sb;
  return lstat(path, &sb) == 0 ? (int)(sb.st_mode & 07777) : -1;
}

static int is_link(const char *path) {
  struct stat sb;
  return lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode);
}

static int is_empty(const char *dir) {
  char cmd[700];
  snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", dir);
  return system(cmd) == 0;
}

static ll_ledger *open_as(const char *dir, ll_ledger_mode mode, ll_error *e) {
  memset(e, 0, sizeof *e);
  return ll_ledger_open(dir, mode, e);
}

static void test_create(const char *root) {
  ll_error err;
  /* made by the run: parents 0755, the directory 0700, whatever the umask */
  mode_t old = umask(0);
  ll_ledger *l = open_as(path_of(root, "made/a/ev"), LL_LEDGER_CREATE, &err);
  umask(old);
  CHECK(l != NULL);
  ll_ledger_close(l);
  CHECK_INT(mode_of(path_of(root, "made/a/ev")), 0700);
  CHECK_INT(mode_of(path_of(root, "made/a")), 0755);
  CHECK_INT(mode_of(path_of(root, "made/a/ev/protected")), 0700);

  /* made beforehand: accepted only empty, own, not group/other writable */
  static const struct {
    const char *name;
    int mode;
    int owner_nobody;
    ll_code code;
    const char *want;
  } cases[] = {
      {"pre755", 0755, 0, LL_OK, NULL},
      {"pre700", 0700, 0, LL_OK, NULL},
      {"pre777", 0777, 0, LL_E_USAGE,
       "/pre777 is writable by group or others (mode 0777)"},
      {"pre770", 0770, 0, LL_E_USAGE, "(mode 0770)"},
      {"pre1777", 01777, 0, LL_E_USAGE, "(mode 1777)"},
      {"pre702", 0702, 0, LL_E_USAGE, "(mode 0702)"},
      {"nobody", 0755, 1, LL_E_USAGE,
       "/nobody is owned by uid 65534, not by this user (uid 0)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *dir = path_of(root, cases[i].name);
    CHECK(mkdir(dir, 0700) == 0 && chmod(dir, (mode_t)cases[i].mode) == 0);
    if (cases[i].owner_nobody && (geteuid() != 0 || chown(dir, 65534, -1)))
      continue; /* needs root: the specs run as root */
    l = open_as(dir, LL_LEDGER_CREATE, &err);
    CHECK_INT(err.code, cases[i].code);
    CHECK((l != NULL) == (cases[i].code == LL_OK));
    if (cases[i].want && !strstr(err.message, cases[i].want))
      fprintf(stderr, "case %s: %s\n", cases[i].name, err.message);
    CHECK(!cases[i].want || strstr(err.message, cases[i].want) != NULL);
    if (!l)
      CHECK(is_empty(dir)); /* nothing written */
    ll_ledger_close(l);
    CHECK_INT(mode_of(dir), cases[i].mode);
  }

  /* a link as the evidence path, or inside a fresh one: refused */
  CHECK(mkdir(path_of(root, "real"), 0700) == 0 &&
        symlink("real", path_of(root, "ev-link")) == 0);
  l = open_as(path_of(root, "ev-link"), LL_LEDGER_CREATE, &err);
  CHECK(l == NULL && strstr(err.message, "is a symbolic link") != NULL);
  CHECK(is_empty(path_of(root, "real")));
  /* nor through its name with a trailing '/' or '/.' */
  static const char *const via[] = {"ev-link/", "ev-link//", "ev-link/.",
                                    "ev-link/.."};
  for (size_t i = 0; i < sizeof via / sizeof via[0]; i++) {
    l = open_as(path_of(root, via[i]), LL_LEDGER_CREATE, &err);
    CHECK(l == NULL && err.code == LL_E_USAGE);
    ll_ledger_close(l);
  }
  CHECK(is_empty(path_of(root, "real")));
  CHECK(mkdir(path_of(root, "slash"), 0700) == 0);
  l = open_as(path_of(root, "slash/"), LL_LEDGER_CREATE, &err);
  CHECK(l != NULL); /* a directory's own name may end in '/' */
  if (l)
    CHECK_STR(ll_ledger_dir(l), path_of(root, "slash"));
  ll_ledger_close(l);
  CHECK(mkdir(path_of(root, "planted"), 0700) == 0 &&
        symlink("../real", path_of(root, "planted/protected")) == 0);
  l = open_as(path_of(root, "planted"), LL_LEDGER_CREATE, &err);
  CHECK(l == NULL);
  CHECK_INT(err.code, LL_E_EVIDENCE_EXISTS);
  CHECK(is_empty(path_of(root, "real")));
}

/* write_json and append go where the ledger was opened, whatever
 * happens to the path afterwards, and never through a link. */
static void test_no_follow(const char *root) {
  ll_error err;
  const char *dir = path_of(root, "nf");
  const char *victim = path_of(root, "victim");
  CHECK(write_all(victim, "untouched\n", 10));
  ll_ledger *l = open_as(dir, LL_LEDGER_CREATE, &err);
  CHECK(l != NULL);
  if (!l)
    return;
  cJSON *v = cJSON_Parse("{\"decision\":\"HOLD\"}");
  /* a link planted at the name is replaced, not followed */
  CHECK(symlink(victim, path_of(dir, "decision.json")) == 0);
  CHECK_INT(ll_ledger_write_json(l, "decision.json", v, &err), LL_OK);
  CHECK(!is_link(path_of(dir, "decision.json")));
  /* and one planted at the temporary name is removed, not written to */
  CHECK(symlink(victim, path_of(dir, ".expected.json.tmp")) == 0);
  CHECK_INT(ll_ledger_write_json(l, "expected.json", v, &err), LL_OK);
  CHECK(access(path_of(dir, ".expected.json.tmp"), F_OK) != 0 &&
        !is_link(path_of(dir, ".expected.json.tmp")));
  size_t n;
  char *text = read_all(victim, &n);
  CHECK(text && strcmp(text, "untouched\n") == 0);
  free(text);
  /* the path moved and re-pointed: the ledger keeps writing where it was */
  const char *moved = path_of(root, "nf-moved");
  const char *decoy = path_of(root, "decoy");
  CHECK(mkdir(decoy, 0700) == 0 && rename(dir, moved) == 0 &&
        symlink("decoy", dir) == 0);
  long seq = 0;
  CHECK_INT(append_text(l, base_rows[0], &seq, &err), LL_OK);
  CHECK_INT(ll_ledger_write_json(l, "manifest.json", v, &err), LL_OK);
  CHECK(is_empty(decoy));
  CHECK(access(path_of(moved, "manifest.json"), F_OK) == 0);
  CHECK_INT(file_size(path_of(moved, "protected/ledger.jsonl")) > 0, 1);
  cJSON_Delete(v);
  ll_ledger_close(l);
  CHECK(unlink(dir) == 0 && rename(moved, dir) == 0);
}

/* Recovery reopens only a bundle a run made: no link anywhere in it, and
 * every folder and ledger file the user's own, not writable by others. */
static void test_recover(const char *root) {
  static const struct {
    const char *name;
    const char *cmd; /* %s: the evidence directory, %s: the outside dir */
    const char *want;
  } cases[] = {
      {"clean", "true", NULL},
      {"protected-0755", "chmod 755 %s/protected", NULL},
      {"dir-0777", "chmod 777 %s", "is writable by group or others"},
      {"prot-0770", "chmod 770 %s/protected", "is writable by group or others"},
      {"file-0666", "chmod 666 %s/export/ledger.jsonl",
       "export/ledger.jsonl is writable by group or others"},
      {"link-top", "ln -s %s/../victim %s/decision.json",
       "decision.json is a symbolic link"},
      {"link-ledger",
       "mv %s/protected/ledger.jsonl %s/moved && ln -s %s/moved "
       "%s/protected/ledger.jsonl",
       "protected/ledger.jsonl is a symbolic link"},
      {"link-folder", "mv %s/export %s/moved && ln -s %s/moved %s/export",
       "/export is a symbolic link"},
      {"link-in-export", "ln -s ../../victim %s/export/extra",
       "export/extra is a symbolic link"},
      {"nobody", "chown 65534 %s/protected/ledger.jsonl",
       "ledger.jsonl is owned by uid 65534"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char name[64], cmd[2048];
    snprintf(name, sizeof name, "rec-%s", cases[i].name);
    const char *dir = path_of(root, name);
    snprintf(name, sizeof name, "out-%s", cases[i].name);
    const char *out = path_of(root, name);
    CHECK(make_ledger(dir, NULL) && mkdir(out, 0700) == 0);
    if (strstr(cases[i].cmd, "chown") && geteuid() != 0)
      continue; /* needs root: the specs run as root */
    if (strcmp(cases[i].name, "link-ledger") == 0 ||
        strcmp(cases[i].name, "link-folder") == 0)
      snprintf(cmd, sizeof cmd, cases[i].cmd, dir, out, out, dir);
    else if (strcmp(cases[i].name, "link-top") == 0)
      snprintf(cmd, sizeof cmd, cases[i].cmd, dir, dir);
    else
      snprintf(cmd, sizeof cmd, cases[i].cmd, dir);
    CHECK(system(cmd) == 0);
    long before = file_size(path_of(dir, "protected/ledger.jsonl"));
    ll_error err;
    ll_ledger *l = open_as(dir, LL_LEDGER_RECOVER, &err);
    CHECK((l != NULL) == (cases[i].want == NULL));
    if (cases[i].want) {
      CHECK_INT(err.code, LL_E_USAGE);
      if (!strstr(err.message, cases[i].want))
        fprintf(stderr, "case %s: %s\n", cases[i].name, err.message);
      CHECK(strstr(err.message, cases[i].want) != NULL);
      CHECK(strchr(err.message, '\n') == NULL);
    }
    if (l) {
      CHECK_INT(mode_of(path_of(dir, "protected")), 0700);
      CHECK_INT(ll_ledger_count(l), N_BASE);
    }
    ll_ledger_close(l);
    if (!is_link(path_of(dir, "protected/ledger.jsonl")))
      CHECK_INT(file_size(path_of(dir, "protected/ledger.jsonl")), before);
  }
}

int main(void) {
  char *root = ll_test_tmpdir();
  CHECK(root != NULL);
  if (!root)
    return ll_test_report("test_ledger_dir");
  test_create(root);
  test_no_follow(root);
  test_recover(root);
  CHECK(remove_tree(root) == 0);
  free(root);
  free_paths();
  return ll_test_report("test_ledger_dir");
}
