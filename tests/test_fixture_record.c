/* The record file (fixture_record.c): an existing name is refused before
 * anything is sent; the file appears whole, never through a link, and a
 * later finish replaces only the file this recorder placed. A credential
 * the service echoes becomes {{secret:NAME}}, with a note, in headers and
 * in a body kept as text or as base64. Also the byte-level replacement
 * behind it (sanitize.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "sanitize.h"
#include "testlib.h"

#define TOKEN "eyJhbGciOiJub25lIn0.eyJzdWIiOiJzcGVjIn0.c2lnbmF0dXJl"
#define SIG "SIGVALUE123abc"

static char root[512];

static const char *at(const char *name) {
  static char buf[4][700];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", root, name);
  return buf[k];
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *buf = calloc(1, 1 << 16);
  size_t n = fread(buf, 1, (1 << 16) - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* A service that echoes the token: in a header, and in a body that is
 * text (binary = 0) or not UTF-8 (binary = 1, kept as base64). */
typedef struct {
  ll_transport t;
  int binary, sent;
  int twice; /* x-ms-version sent twice, with different values */
} echo;

static ll_status echo_exchange(ll_transport *t, const ll_http_request *q,
                               ll_http_response *resp, ll_error *err) {
  echo *e = t->impl;
  (void)q;
  (void)err;
  e->sent++;
  ll_http_response_cleanup(resp);
  resp->outcome = LL_OUTCOME_RESPONSE;
  resp->emitted_requests = 1;
  resp->status = 403;
  if (ll_headers_add(&resp->headers, "x-ms-request-id", TOKEN) != LL_OK ||
      ll_headers_add(&resp->headers, "Server", "echo/" TOKEN) != LL_OK)
    abort();
  if (e->twice &&
      (ll_headers_add(&resp->headers, "x-ms-version", "2023-11-03") != LL_OK ||
       ll_headers_add(&resp->headers, "x-ms-version", "2026-06-06") != LL_OK))
    abort();
  char body[256];
  int n = snprintf(body, sizeof body, "%s<Message>token %s sig=%s</Message>",
                   e->binary ? "\xff\xfe" : "", TOKEN, SIG);
  resp->body = malloc((size_t)n + 1);
  memcpy(resp->body, body, (size_t)n + 1);
  resp->body_len = (size_t)n;
  return LL_OK;
}

static void echo_free(ll_transport *t) {
  free(t->impl);
}

static const char *secret_of(void *ctx, int i, const char **name) {
  (void)ctx;
  if (i == 0) {
    *name = "token";
    return TOKEN;
  }
  if (i == 1) {
    *name = "sas";
    return ""; /* an empty slot is skipped, not the end */
  }
  return NULL;
}

static ll_transport *recorder(const char *path, ll_clock *clock, int binary,
                              echo **out, ll_error *err) {
  echo *e = calloc(1, sizeof *e);
  e->t.exchange = echo_exchange;
  e->t.free = echo_free;
  e->t.impl = e;
  e->binary = binary;
  if (out)
    *out = e;
  ll_transport *t = ll_fixture_record_new(
      &e->t, path, clock, "/devstoreaccount1", "emulator", "unit test", err);
  if (t)
    t->secret_of = secret_of;
  return t;
}

/* One GET of the blob through t, its answer in resp (the caller's). */
static ll_status get_into(ll_transport *t, ll_http_response *resp,
                          ll_error *err) {
  ll_http_request q;
  memset(&q, 0, sizeof q);
  ll_headers_init(&q.headers);
  q.method = "GET";
  q.url = "https://127.0.0.1:10000/devstoreaccount1/c/b.json";
  ll_status st = t->exchange(t, &q, resp, err);
  ll_headers_cleanup(&q.headers);
  return st;
}

static ll_status send_one(ll_transport *t, ll_error *err) {
  ll_http_response resp;
  ll_http_response_init(&resp);
  ll_status st = get_into(t, &resp, err);
  ll_http_response_cleanup(&resp);
  return st;
}

static void test_existing(ll_clock *clock) {
  CHECK(symlink("victim", at("link")) == 0);
  CHECK(symlink("nowhere", at("dangling")) == 0);
  FILE *f = fopen(at("victim"), "w");
  CHECK(f && fputs("an export ledger\n", f) >= 0);
  if (f)
    fclose(f);
  CHECK(mkdir(at("adir"), 0700) == 0);
  static const char *const names[] = {"victim", "link", "dangling", "adir"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    ll_error err = {0};
    echo *e = NULL;
    ll_transport *t = recorder(at(names[i]), clock, 0, &e, &err);
    CHECK(t == NULL);
    CHECK_INT(err.code, LL_E_USAGE);
    CHECK(strstr(err.message, "already exists: --record writes a new file") !=
          NULL);
    ll_transport_free(t);
  }
  char *text = slurp(at("victim"));
  CHECK(text && strcmp(text, "an export ledger\n") == 0);
  free(text);
  CHECK(access(at("nowhere"), F_OK) != 0);
  ll_error err = {0};
  CHECK(recorder(at("adir/"), clock, 0, NULL, &err) == NULL);
  CHECK(strstr(err.message, "names a directory") != NULL);
}

static void test_echo(ll_clock *clock, int binary) {
  const char *path = at(binary ? "echo-bin.json" : "echo.json");
  ll_error err = {0};
  echo *e = NULL;
  ll_transport *t = recorder(path, clock, binary, &e, &err);
  CHECK(t != NULL);
  if (!t)
    return;
  CHECK(access(path, F_OK) != 0); /* nothing yet, not even empty */
  CHECK_INT(send_one(t, &err), LL_OK);
  CHECK_INT(t->finish(t, &err), LL_OK);
  char *text = slurp(path);
  CHECK(text != NULL);
  if (text) {
    CHECK(strstr(text, TOKEN) == NULL);
    CHECK(strstr(text, "eyJ") == NULL); /* not even a prefix */
    CHECK(strstr(text, "(server echo/{{secret:token}})") != NULL);
    CHECK(strstr(text, SIG) == NULL);
    CHECK(strstr(text, "\"x-ms-request-id\": \"{{secret:token}}\"") != NULL);
    CHECK(strstr(text, "\"server\": \"echo/{{secret:token}}\"") != NULL);
    CHECK(strstr(text, "the service echoed a secret in "
                       "response.headers.x-ms-request-id, "
                       "response.headers.server, response.body; replaced by "
                       "{{secret:token}}, sig=REDACTED") != NULL);
    if (!binary)
      CHECK(strstr(text, "token {{secret:token}} sig=REDACTED") != NULL);
    else
      CHECK(strstr(text, "\"body_base64\"") != NULL);
  }
  free(text);
  /* a later finish rewrites the file it placed, in place of that file */
  struct stat before, after;
  CHECK(stat(path, &before) == 0);
  CHECK_INT(send_one(t, &err), LL_OK);
  CHECK_INT(t->finish(t, &err), LL_OK);
  CHECK(lstat(path, &after) == 0 && S_ISREG(after.st_mode));
  CHECK(after.st_ino != before.st_ino); /* renamed over, not rewritten */
  text = slurp(path);
  const char *second = text ? strstr(text, "\"t_ms\"") : NULL;
  CHECK(second && strstr(second + 1, "\"t_ms\"") != NULL); /* both kept */
  free(text);
  /* but a file someone else put there is not replaced */
  CHECK(unlink(path) == 0 && symlink("victim", path) == 0);
  CHECK_INT(send_one(t, &err), LL_OK);
  CHECK_INT(t->finish(t, &err), LL_E_IO);
  CHECK(strstr(err.message, "was replaced or removed during the run: it is "
                            "not replaced; this recording is in .") != NULL);
  text = slurp(at("victim"));
  CHECK(text && strcmp(text, "an export ledger\n") == 0);
  free(text);
  CHECK(unlink(path) == 0);
  ll_transport_free(t);
}

/* A header the service sent twice, with different values, is recorded
 * with both copies, and the replay answers with both (helper-30: the
 * first alone was kept, and a replay of a recorded HOLD could ACCEPT). */
static void test_twice(ll_clock *clock) {
  const char *path = at("twice.json");
  ll_error err = {0};
  echo *e = NULL;
  ll_transport *t = recorder(path, clock, 0, &e, &err);
  CHECK(t != NULL);
  if (!t)
    return;
  e->twice = 1;
  CHECK_INT(send_one(t, &err), LL_OK);
  CHECK_INT(t->finish(t, &err), LL_OK);
  ll_transport_free(t);
  char *text = slurp(path);
  const char *copies = text ? strstr(text, "\"x-ms-version\": [") : NULL;
  CHECK(copies && strstr(copies, "\"2023-11-03\",") &&
        strstr(copies, "\"2026-06-06\"\n"));
  free(text);
  ll_clock *rclock = NULL;
  char label[16];
  t = ll_fixture_replay_open(path, "/devstoreaccount1", &rclock, label,
                             sizeof label, &err);
  CHECK(t != NULL);
  if (!t)
    return;
  ll_http_response resp;
  ll_http_response_init(&resp);
  CHECK_INT(get_into(t, &resp, &err), LL_OK);
  int differ = 0, n = 0;
  for (size_t i = 0; i < resp.headers.n; i++)
    n += strcasecmp(resp.headers.v[i].name, "x-ms-version") == 0;
  CHECK_INT(n, 2);
  CHECK(ll_headers_get_agreed(&resp.headers, "x-ms-version", &differ) == NULL &&
        differ);
  ll_http_response_cleanup(&resp);
  ll_transport_free(t);
  ll_clock_free(rclock);
  CHECK(unlink(path) == 0);
}

/* The name taken between the check and the first write: kept, not
 * replaced, and the recording is not lost. */
static void test_race(ll_clock *clock) {
  const char *path = at("race.json");
  ll_error err = {0};
  ll_transport *t = recorder(path, clock, 0, NULL, &err);
  CHECK(t != NULL);
  if (!t)
    return;
  CHECK_INT(send_one(t, &err), LL_OK);
  FILE *f = fopen(path, "w");
  CHECK(f && fputs("theirs\n", f) >= 0);
  if (f)
    fclose(f);
  CHECK_INT(t->finish(t, &err), LL_E_IO);
  CHECK(strstr(err.message, "appeared during the run") != NULL);
  char *text = slurp(path);
  CHECK(text && strcmp(text, "theirs\n") == 0);
  free(text);
  const char *tmp = strstr(err.message, "this recording is in ");
  CHECK(tmp != NULL);
  if (tmp) {
    char name[300];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(tmp + 21, " "), tmp + 21);
    text = slurp(at(name));
    CHECK(text && strstr(text, "{{secret:token}}") != NULL);
    free(text);
  }
  ll_transport_free(t);
}

static void test_replace(void) {
  static const char *const sec[] = {TOKEN, "tok2"};
  static const char *const ph[] = {"{{secret:token}}", "{{secret:sas}}"};
  static const struct {
    const char *in, *want;
    unsigned found;
  } cases[] = {
      {"nothing here", "nothing here", 0},
      {"x " TOKEN " y", "x {{secret:token}} y", 1},
      {TOKEN TOKEN, "{{secret:token}}{{secret:token}}", 1},
      {"a tok2 b", "a {{secret:sas}} b", 2},
      {"q?sv=1&sig=abc%2B&x=1", "q?sv=1&sig=REDACTED&x=1", LL_REDACT_SIG},
      {"SIG=abc", "SIG=REDACTED", LL_REDACT_SIG},
      {"sig=REDACTED&a", "sig=REDACTED&a", 0},
      {"sig=REDACTEDX", "sig=REDACTED", LL_REDACT_SIG},
      {"eyJhbGciOiJub25lIn0", "eyJhbGciOiJub25lIn0", 0}, /* a prefix alone */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ll_buf b = {0};
    unsigned found =
        ll_sanitize_replace(cases[i].in, strlen(cases[i].in), sec, ph, 2, &b);
    CHECK_INT(found, cases[i].found);
    CHECK_STR(b.p, cases[i].want);
    free(b.p);
  }
  /* bytes, not only text: a NUL before the secret does not hide it */
  static const char bin[] = "\0\xff" TOKEN;
  ll_buf b = {0};
  CHECK_INT(ll_sanitize_replace(bin, sizeof bin - 1, sec, ph, 2, &b), 1);
  CHECK_INT(b.n, 2 + strlen("{{secret:token}}"));
  free(b.p);
  /* in JSON: values at any depth, each path named once, keys untouched */
  cJSON *row =
      cJSON_Parse("{\"a\":\"x " TOKEN "\",\"n\":{\"b\":[\"" TOKEN
                  "\",\"ok\"]},\"" TOKEN "\":1,\"c\":\"" TOKEN " " TOKEN "\"}");
  unsigned found = 0;
  ll_buf where = {0};
  CHECK_INT(ll_sanitize_redact(row, sec, ph, 2, &found, &where), LL_OK);
  CHECK_INT(found, 1);
  CHECK_STR(where.p, "a, n.b[0], c");
  char *text = cJSON_PrintUnformatted(row);
  CHECK_STR(text, "{\"a\":\"x {{secret:token}}\",\"n\":{\"b\":[\"{{secret:"
                  "token}}\",\"ok\"]},\"" TOKEN "\":1,\"c\":\"{{secret:token}}"
                  " {{secret:token}}\"}");
  free(text);
  free(where.p);
  cJSON_Delete(row);
}

/* The header names the target and the flow's arguments; they read back
 * through ll_fixture_context_read; a credential given as a flow argument
 * keeps the file from being written at all. */
static void test_context(ll_clock *clock) {
  static ll_fixture_context c, back;
  memset(&c, 0, sizeof c);
  c.has_target = c.has_flow = 1;
  ll_strlcpy(c.container, "lab", sizeof c.container);
  ll_strlcpy(c.blob, "mine.json", sizeof c.blob);
  ll_strlcpy(c.script, "main_handoff.lua", sizeof c.script);
  ll_strlcpy(c.args[0], "--break-period", sizeof c.args[0]);
  ll_strlcpy(c.args[1], "5", sizeof c.args[1]);
  c.nargs = 2;
  const char *path = at("context.json");
  ll_error err = {0};
  ll_transport *t = recorder(path, clock, 0, NULL, &err);
  CHECK(t != NULL);
  if (!t)
    return;
  CHECK_INT(ll_fixture_record_context(t, &c, &err), LL_OK);
  CHECK_INT(send_one(t, &err), LL_OK);
  CHECK_INT(t->finish(t, &err), LL_OK);
  ll_transport_free(t);
  char *text = slurp(path);
  CHECK(text && strstr(text, "\"target\": {\n    \"container\": \"lab\",\n"
                             "    \"blob\": \"mine.json\"\n  }") != NULL);
  CHECK(text && strstr(text, "\"args\": [\n      \"--break-period\",\n"
                             "      \"5\"\n    ]") != NULL);
  free(text);
  CHECK_INT(ll_fixture_context_read(path, &back, &err), LL_OK);
  CHECK(back.has_target && back.has_flow && back.nargs == 2);
  CHECK_STR(back.blob, "mine.json");
  CHECK_STR(back.script, "main_handoff.lua");
  CHECK_STR(back.args[1], "5");
  /* the run's token as a flow argument: no file */
  path = at("context-secret.json");
  t = recorder(path, clock, 0, NULL, &err);
  CHECK(t != NULL);
  if (!t)
    return;
  ll_strlcpy(c.args[1], TOKEN, sizeof c.args[1]);
  CHECK_INT(ll_fixture_record_context(t, &c, &err), LL_OK);
  CHECK_INT(send_one(t, &err), LL_OK);
  CHECK_INT(t->finish(t, &err), LL_E_INTERNAL);
  CHECK(strstr(err.message, "survived sanitizing") != NULL);
  CHECK(access(path, F_OK) != 0);
  ll_transport_free(t);
  /* a transport that is not a recorder is left alone */
  CHECK_INT(ll_fixture_record_context(NULL, &c, &err), LL_OK);
  /* no arguments: [] as recorded, or {} as lua-cjson writes an empty
   * table back; anything else is refused */
  static const struct {
    const char *flow;
    ll_status want;
  } forms[] = {
      {"{\"script\":\"main_handoff.lua\",\"args\":[]}", LL_OK},
      {"{\"script\":\"main_handoff.lua\",\"args\":{}}", LL_OK},
      {"{\"script\":\"main_handoff.lua\",\"args\":{\"a\":\"b\"}}", LL_E_PARSE},
      {"{\"script\":\"main_handoff.lua\",\"args\":\"--x\"}", LL_E_PARSE},
      {"{\"script\":\"main_handoff.lua\"}", LL_E_PARSE},
  };
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
    char doc[256];
    snprintf(doc, sizeof doc, "{\"flow\":%s}", forms[i].flow);
    CHECK_INT(ll_fixture_context_parse(doc, strlen(doc), "f.json", &back, &err),
              forms[i].want);
    CHECK_INT(back.has_flow, forms[i].want == LL_OK);
    CHECK_INT(back.nargs, 0);
  }
}

int main(void) {
  char *d = ll_test_tmpdir();
  CHECK(d != NULL);
  if (!d)
    return ll_test_report("test_fixture_record");
  ll_strlcpy(root, d, sizeof root);
  ll_clock *clock = ll_clock_new_virtual(1796022579100LL);
  test_existing(clock);
  test_echo(clock, 0);
  test_echo(clock, 1);
  test_twice(clock);
  test_race(clock);
  test_replace();
  test_context(clock);
  ll_clock_free(clock);
  CHECK(ll_test_rmtree(root) == 0);
  free(d);
  return ll_test_report("test_fixture_record");
}
