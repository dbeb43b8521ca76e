/* Input files (core/base/include/input.h): a regular file under its limit is
 * read; a FIFO, a directory, a device, a socket, a link and a file over the
 * limit are refused before any read, each with one line naming it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "input.h"
#include "output.h"
#include "testlib.h"

static char root[512];

static const char *at(const char *name) {
  static char buf[4][700];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", root, name);
  return buf[k];
}

static void put(const char *path, const char *text, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (f) {
    CHECK(fwrite(text, 1, n, f) == n);
    fclose(f);
  }
}

/* A FIFO blocks the test if opened the old way: alarm turns a hang into a
 * failure instead of a stuck ctest. */
static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "test_input: an input file blocked\n";
  if (write(2, msg, sizeof msg - 1) < 0)
    _exit(3);
  _exit(2);
}

static void test_refusals(void) {
  put(at("ok.json"), "{\"a\":1}", 7);
  put(at("empty"), "", 0);
  put(at("big"), "0123456789", 10);
  CHECK(mkfifo(at("fifo"), 0600) == 0);
  CHECK(mkdir(at("dir"), 0700) == 0);
  CHECK(symlink("ok.json", at("link")) == 0);
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  ll_strlcpy(sa.sun_path, at("sock"), sizeof sa.sun_path);
  CHECK(s >= 0 && bind(s, (struct sockaddr *)&sa, sizeof sa) == 0);

  static const struct {
    const char *name; /* NULL: the path is given as is */
    const char *path;
    size_t max;
    ll_code code;
    const char *want;
  } cases[] = {
      {"ok.json", NULL, 64, LL_OK, NULL},
      {"empty", NULL, 64, LL_OK, NULL},
      {"big", NULL, 10, LL_OK, NULL},
      {"big", NULL, 9, LL_E_USAGE,
       "/big is larger than the 9 bytes limit (10 bytes): pass a smaller "
       "file to --thing"},
      {"fifo", NULL, 64, LL_E_USAGE,
       "/fifo is a FIFO, not a regular file: pass a regular file to --thing"},
      {"dir", NULL, 64, LL_E_USAGE, "/dir is a directory, not a regular file"},
      {"sock", NULL, 64, LL_E_USAGE, "/sock is a socket, not a regular file"},
      {"link", NULL, 64, LL_E_USAGE,
       "/link is a symbolic link: pass the file it names (readlink -f) to "
       "--thing"},
      {"missing", NULL, 64, LL_E_USAGE,
       "cannot read thing file /"}, /* then the path, errno, the flag */
      {NULL, "/dev/null", 64, LL_E_USAGE,
       "thing file /dev/null is a character device, not a regular file"},
      {NULL, "", 64, LL_E_USAGE, "no thing file given: pass one with --thing"},
  };
  signal(SIGALRM, on_alarm);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *path = cases[i].name ? at(cases[i].name) : cases[i].path;
    ll_buf b = {0};
    ll_error err = {0};
    alarm(5);
    ll_status st =
        ll_input_read(path, "thing file", "--thing", cases[i].max, &b, &err);
    alarm(0);
    CHECK_INT(st, cases[i].code);
    if (cases[i].want && !strstr(err.message, cases[i].want))
      fprintf(stderr, "case %zu: %s\n", i, err.message);
    CHECK(!cases[i].want || strstr(err.message, cases[i].want) != NULL);
    CHECK(strchr(err.message, '\n') == NULL);
    if (st == LL_OK) {
      CHECK(b.p != NULL && b.p[b.n] == '\0');
      struct stat sb;
      CHECK(stat(path, &sb) == 0 && (size_t)sb.st_size == b.n);
    }
    free(b.p);
  }
  /* the descriptor is open, blocking, and at the start */
  int fd = -1;
  size_t size = 0;
  ll_error err = {0};
  CHECK_INT(ll_input_open(at("ok.json"), "x", "--x", 64, &fd, &size, &err),
            LL_OK);
  CHECK_INT(size, 7);
  CHECK(fd >= 0 && (fcntl(fd, F_GETFL) & O_NONBLOCK) == 0);
  CHECK(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
  char c = 0;
  CHECK(fd >= 0 && read(fd, &c, 1) == 1 && c == '{');
  if (fd >= 0)
    close(fd);
  CHECK_INT(ll_input_open(at("fifo"), "x", "--x", 64, &fd, &size, &err),
            LL_E_USAGE);
  CHECK_INT(fd, -1);
  if (s >= 0)
    close(s);
}

static void test_limits(void) {
  static const struct {
    size_t max;
    const char *want;
  } cases[] = {
      {LL_MANIFEST_FILE_MAX, "64 KiB"},
      {LL_FIXTURE_FILE_MAX, "64 MiB"},
      {LL_TOKEN_FILE_MAX, "64 KiB"},
      {LL_CA_FILE_MAX, "1 MiB"},
      {1000, "1000 bytes"},
      {1536, "1536 bytes"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char buf[32];
    ll_input_limit_str(cases[i].max, buf, sizeof buf);
    CHECK_STR(buf, cases[i].want);
  }
}

/* ll_input_read_into: the whole file into the caller's buffer, up to and
 * including the limit; one byte more is refused naming file and limit,
 * and the buffer then holds nothing. */
static void test_read_into(void) {
  char buf[11], big[12];
  size_t len = 99;
  ll_error err = {0};
  memset(big, 'x', sizeof big);
  put(at("ten"), big, 10);
  put(at("eleven"), big, 11);
  CHECK_INT(ll_input_read_into(at("ten"), "token file", "--token-file", buf, 10,
                               &len, &err),
            LL_OK);
  CHECK_INT(len, 10);
  CHECK_STR(buf, "xxxxxxxxxx");
  CHECK_INT(ll_input_read_into(at("eleven"), "token file", "--token-file", buf,
                               10, &len, &err),
            LL_E_USAGE);
  CHECK_INT(len, 0);
  CHECK_STR(buf, "");
  CHECK(strstr(err.message, "eleven") != NULL);
  CHECK(strstr(err.message, "10 bytes limit") != NULL);
  CHECK(strstr(err.message, "--token-file") != NULL);
  CHECK_INT(ll_input_read_into(at("fifo"), "token file", "--token-file", buf,
                               10, &len, &err),
            LL_E_USAGE);
  CHECK(strstr(err.message, "FIFO") != NULL);
  CHECK_INT(ll_input_read_into(at("absent"), "token file", "--token-file", buf,
                               10, &len, &err),
            LL_E_USAGE);
  put(at("empty2"), "", 0);
  CHECK_INT(ll_input_read_into(at("empty2"), "token file", "--token-file", buf,
                               10, &len, &err),
            LL_OK);
  CHECK_INT(len, 0);
}

/* ll_buf_printf appends the whole text however long it is: the two
 * printers it replaced cut at 1024 and 2048 bytes without a word. */
static void test_buf_printf(void) {
  ll_buf b = {0};
  char big[5000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  ll_buf_printf(&b, "<%s>", "a");
  ll_buf_printf(&b, "%s|%d", big, 42);
  CHECK(!b.oom);
  CHECK_INT(b.n, 3 + 4999 + 3);
  CHECK(b.p && strncmp(b.p, "<a>xxx", 6) == 0);
  CHECK(b.p && strcmp(b.p + b.n - 3, "|42") == 0);
  CHECK_INT(strlen(b.p), b.n);
  free(b.p);
  ll_buf dead = {.oom = 1};
  ll_buf_printf(&dead, "%s", "ignored");
  CHECK(dead.p == NULL && dead.n == 0);
}

/* ll_write_replace: all or nothing, a stale fixed temporary removed, no
 * temporary left behind, mode 0644, and a failure leaves the old file. */
static void test_write_replace(const char *dir) {
  char path[700], tmp[700], cmd[1400];
  snprintf(path, sizeof path, "%s/out.json", dir);
  snprintf(tmp, sizeof tmp, "%s/.out.json.tmp", dir);
  CHECK_INT(ll_write_replace(path, NULL, "one\n", 4), 0);
  ll_buf b = {0};
  CHECK_INT(ll_buf_read_file(&b, path, 100), LL_OK);
  CHECK_STR(b.p, "one\n");
  free(b.p);
  struct stat sb;
  CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0644);
  FILE *f = fopen(tmp, "w"); /* left by a killed writer */
  CHECK(f != NULL);
  if (f)
    fclose(f);
  CHECK_INT(ll_write_replace(path, tmp, "two", 3), 0);
  b = (ll_buf){0};
  CHECK_INT(ll_buf_read_file(&b, path, 100), LL_OK);
  CHECK_STR(b.p, "two");
  free(b.p);
  CHECK(access(tmp, F_OK) != 0);
  /* a link left at the temporary name is removed, never written through */
  char other[700];
  snprintf(other, sizeof other, "%s/other", dir);
  f = fopen(other, "w");
  CHECK(f != NULL);
  if (f)
    fclose(f);
  CHECK(symlink(other, tmp) == 0);
  CHECK_INT(ll_write_replace(path, tmp, "three", 5), 0);
  CHECK(stat(other, &sb) == 0 && sb.st_size == 0);
  CHECK(lstat(path, &sb) == 0 && S_ISREG(sb.st_mode));
  char sub[700];
  snprintf(sub, sizeof sub, "%s/missing/out.json", dir);
  CHECK_INT(ll_write_replace(sub, NULL, "x", 1), -1);
  CHECK_INT(errno, ENOENT);
  /* only out.json and other are in dir: nothing half-written left */
  snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 2", dir);
  CHECK(system(cmd) == 0);
  b = (ll_buf){0};
  CHECK_INT(ll_buf_read_file(&b, path, 100), LL_OK);
  CHECK_STR(b.p, "three");
  free(b.p);
}

int main(void) {
  test_buf_printf();
  char *d = ll_test_tmpdir();
  CHECK(d != NULL);
  if (!d)
    return ll_test_report("test_input");
  ll_strlcpy(root, d, sizeof root);
  char wdir[600];
  snprintf(wdir, sizeof wdir, "%.500s/replace", d);
  CHECK(mkdir(wdir, 0700) == 0);
  test_write_replace(wdir);
  test_refusals();
  test_limits();
  test_read_into();
  CHECK(ll_test_rmtree(root) == 0);
  free(d);
  return ll_test_report("test_input");
}
