/* What a recording must never keep in clear, whatever the count or the
 * form: every lease ID it learnt (however many), every credential secret
 * of the run (however many), a SAS signature in each form a server may
 * echo it, and a lease ID inside a body kept as base64. A recording that
 * cannot keep one out is refused, never written with it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "hash.h"
#include "testlib.h"

/* A SAS signature as the SAS query holds it (percent-encoded) and the
 * forms a server may hand back: decoded, lowercase hex, double-encoded,
 * base64url, with '+' read as a space. */
#define SIG_RAW "k7Jm3Q%2BvX%2F9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM%3D"
#define SIG_DECODED "k7Jm3Q+vX/9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM="
#define SIG_LOWER "k7Jm3Q%2bvX%2f9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM%3d"
#define SIG_DOUBLE "k7Jm3Q%252BvX%252F9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM%253D"
#define SIG_URL "k7Jm3Q-vX_9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM"
#define SIG_SPACE "k7Jm3Q vX/9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM="
#define SIG_CORE "9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM" /* in every form */

#define ID_A "0f8fad5b-d9cb-469f-a165-70867728950e"
#define ID_A_MIXED "0F8fad5bD9CB469fa165-7086-7728950E"

static char root[512];

static const char *at(const char *name) {
  static char buf[700];
  snprintf(buf, sizeof buf, "%s/%s", root, name);
  return buf;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *buf = calloc(1, 1 << 20);
  size_t n = fread(buf, 1, (1 << 20) - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* The service: answers 409 with the request's lease ID echoed in the
 * x-ms-lease-id header and with body (body_len bytes) as it is. */
typedef struct {
  ll_transport t;
  const char *body;
  size_t body_len;
  const char *second_id; /* a second x-ms-lease-id header, if any */
  const char *encoding;  /* a Content-Encoding header, if any */
  const char *encoding2; /* a second one */
} svc;

static ll_status svc_exchange(ll_transport *t, const ll_http_request *q,
                              ll_http_response *resp, ll_error *err) {
  svc *s = t->impl;
  (void)err;
  ll_http_response_cleanup(resp);
  resp->outcome = LL_OUTCOME_RESPONSE;
  resp->emitted_requests = 1;
  resp->status = 409;
  const char *id = ll_headers_get(&q->headers, "x-ms-lease-id");
  if (id && ll_headers_add(&resp->headers, "x-ms-lease-id", id) != LL_OK)
    abort();
  if (s->second_id &&
      ll_headers_add(&resp->headers, "x-ms-lease-id", s->second_id) != LL_OK)
    abort();
  if (s->encoding &&
      ll_headers_add(&resp->headers, "Content-Encoding", s->encoding) != LL_OK)
    abort();
  if (s->encoding2 &&
      ll_headers_add(&resp->headers, "Content-Encoding", s->encoding2) != LL_OK)
    abort();
  resp->body = malloc(s->body_len + 1);
  memcpy(resp->body, s->body, s->body_len);
  resp->body[s->body_len] = '\0';
  resp->body_len = s->body_len;
  return LL_OK;
}

static void svc_free(ll_transport *t) {
  free(t->impl);
}

/* secrets[i] by name names[i], up to a NULL. */
static const char *const *run_secrets;
static const char *const *run_names;

static const char *secret_of(void *ctx, int i, const char **name) {
  (void)ctx;
  if (!run_secrets || !run_secrets[i])
    return NULL;
  *name = run_names[i];
  return run_secrets[i];
}

static ll_transport *recorder(const char *name, svc **out, ll_error *err,
                              ll_clock *clock) {
  svc *s = calloc(1, sizeof *s);
  s->t.exchange = svc_exchange;
  s->t.free = svc_free;
  s->t.impl = s;
  *out = s;
  ll_transport *t =
      ll_fixture_record_new(&s->t, at(name), clock, "/devstoreaccount1",
                            "emulator", "unit test", err);
  if (t)
    t->secret_of = secret_of;
  return t;
}

/* Base64 decoded (no OpenSSL in the test): 0 on success. */
static int unbase64(const char *s, unsigned char **out, size_t *n) {
  static const char abc[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t len = strlen(s), k = 0;
  unsigned acc = 0;
  int bits = 0;
  *out = malloc(len + 1);
  for (size_t i = 0; i < len && s[i] != '='; i++) {
    const char *c = strchr(abc, s[i]);
    if (!c || !s[i])
      return -1;
    acc = (acc << 6) | (unsigned)(c - abc);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      (*out)[k++] = (unsigned char)(acc >> bits);
    }
  }
  *n = k;
  return 0;
}

static ll_status send_with(ll_transport *t, const char *lease_id,
                           const char *body, size_t body_len, ll_error *err) {
  ll_http_request q;
  memset(&q, 0, sizeof q);
  ll_headers_init(&q.headers);
  q.method = "PUT";
  q.url = "https://127.0.0.1:10000/devstoreaccount1/c/b.json";
  if (lease_id &&
      ll_headers_add(&q.headers, "x-ms-lease-id", lease_id) != LL_OK)
    abort();
  q.body = (const unsigned char *)body;
  q.body_len = body_len;
  ll_http_response resp;
  ll_http_response_init(&resp);
  ll_status st = t->exchange(t, &q, &resp, err);
  ll_http_response_cleanup(&resp);
  ll_headers_cleanup(&q.headers);
  return st;
}

/* S3: past the recorder's table of lease IDs, each further ID is still
 * replaced (the table grows); none reaches the file. */
static void test_many_ids(ll_clock *clock) {
  enum { N = 70 };
  char ids[N][LL_GUID_LEN];
  char body[128 + LL_GUID_LEN];
  ll_error err = {0};
  svc *s;
  ll_transport *t = recorder("many-ids.json", &s, &err, clock);
  CHECK(t != NULL);
  if (!t)
    return;
  for (int i = 0; i < N; i++) {
    CHECK_INT(ll_guid_v4(ids[i]), LL_OK);
    snprintf(body, sizeof body, "<Message>lease %.36s is not it</Message>",
             ids[i]);
    s->body = body;
    s->body_len = strlen(body);
    CHECK_INT(send_with(t, ids[i], NULL, 0, &err), LL_OK);
  }
  CHECK_INT(t->finish(t, &err), LL_OK);
  ll_transport_free(t);
  char *text = slurp(at("many-ids.json"));
  CHECK(text != NULL);
  int clear = 0;
  for (int i = 0; i < N && text; i++)
    clear += strstr(text, ids[i]) != NULL;
  CHECK_INT(clear, 0);
  CHECK(text && strstr(text, "{{lease:unknown70}}") != NULL);
  free(text);
}

/* S4: the run's credential secrets past the fourth are replaced too. */
static void test_many_secrets(ll_clock *clock) {
  static const char *const secs[] = {
      "tok-aaaaaaaaaaaa-0001", "tok-bbbbbbbbbbbb-0002", "tok-cccccccccccc-0003",
      "tok-dddddddddddd-0004", "tok-eeeeeeeeeeee-0005", "tok-ffffffffffff-0006",
      "tok-gggggggggggg-0007", "tok-hhhhhhhhhhhh-0008", NULL};
  static const char *const names[] = {"token", "token", "token", "token",
                                      "token", "token", "token", "token"};
  run_secrets = secs;
  run_names = names;
  ll_error err = {0};
  svc *s;
  ll_transport *t = recorder("many-secrets.json", &s, &err, clock);
  CHECK(t != NULL);
  if (!t)
    return;
  char body[512] = "<Message>";
  for (int i = 0; secs[i]; i++) {
    strcat(body, secs[i]);
    strcat(body, " ");
  }
  strcat(body, "</Message>");
  s->body = body;
  s->body_len = strlen(body);
  CHECK_INT(send_with(t, NULL, NULL, 0, &err), LL_OK);
  CHECK_INT(t->finish(t, &err), LL_OK);
  ll_transport_free(t);
  char *text = slurp(at("many-secrets.json"));
  CHECK(text != NULL);
  for (int i = 0; secs[i] && text; i++)
    if (strstr(text, secs[i]) != NULL) {
      CHECK(!"a secret of the run reached the fixture");
      fprintf(stderr, "  secret #%d\n", i + 1);
    }
  free(text);
  run_secrets = NULL;
}

/* S1: the run's SAS signature, echoed in another encoding than the one it
 * was sent in, and a sig= key echoed percent-encoded. */
static void test_sig_forms(ll_clock *clock) {
  static const char *const secs[] = {"", SIG_RAW, NULL};
  static const char *const names[] = {"token", "sas"};
  static const char *const forms[] = {SIG_RAW,    SIG_DECODED, SIG_LOWER,
                                      SIG_DOUBLE, SIG_URL,     SIG_SPACE};
  static const char *const keys[] = {
      "https://a/c/b?sv=1%26sig%3Dsomething-else",
      "https://a/c/b?sv=1%26SIG%3dsomething-else",
      "https://a/c/b?sv=1%2526sig%253Dsomething-else"};
  run_secrets = secs;
  run_names = names;
  for (size_t i = 0; i < sizeof forms / sizeof forms[0] + 3; i++) {
    char name[64], body[256];
    snprintf(name, sizeof name, "sig-%zu.json", i);
    if (i < sizeof forms / sizeof forms[0])
      snprintf(body, sizeof body,
               "<Error><QueryParameterValue>%s</QueryParameterValue></Error>",
               forms[i]);
    else
      snprintf(body, sizeof body, "<Error><Url>%s</Url></Error>",
               keys[i - sizeof forms / sizeof forms[0]]);
    ll_error err = {0};
    svc *s;
    ll_transport *t = recorder(name, &s, &err, clock);
    CHECK(t != NULL);
    if (!t)
      continue;
    s->body = body;
    s->body_len = strlen(body);
    CHECK_INT(send_with(t, NULL, NULL, 0, &err), LL_OK);
    CHECK_INT(t->finish(t, &err), LL_OK);
    ll_transport_free(t);
    char *text = slurp(at(name));
    int before = ll_test_fail;
    CHECK(text != NULL);
    CHECK(text && strstr(text, SIG_CORE) == NULL);
    CHECK(text && strstr(text, "something-else") == NULL);
    if (ll_test_fail > before)
      fprintf(stderr, "  in sig form %zu: %s\n", i, body);
    free(text);
  }
  run_secrets = NULL;
}

/* S5 (and S6/S7 in a base64 body): a response or request body that is
 * not UTF-8 holding the lease ID, as sent or in another case and without
 * its hyphens, next to other hex digits. */
static void test_base64_body(ll_clock *clock) {
  static const char *const shapes[] = {ID_A, ID_A_MIXED};
  for (size_t k = 0; k < 2; k++) {
    char name[64], body[256];
    int n = snprintf(body, sizeof body, "\xff\xfe<Message>0xff%sabc</Message>",
                     shapes[k]);
    snprintf(name, sizeof name, "b64-%zu.json", k);
    ll_error err = {0};
    svc *s;
    ll_transport *t = recorder(name, &s, &err, clock);
    CHECK(t != NULL);
    if (!t)
      continue;
    s->body = body;
    s->body_len = (size_t)n;
    CHECK_INT(send_with(t, ID_A, body, (size_t)n, &err), LL_OK);
    CHECK_INT(t->finish(t, &err), LL_OK);
    ll_transport_free(t);
    char *text = slurp(at(name));
    CHECK(text && strstr(text, "\"body_base64\"") != NULL);
    /* every base64 value, decoded, holds no form of the ID */
    int clear = 0, bodies = 0;
    for (const char *p = text; p && (p = strstr(p, "\"body_base64\": \""));) {
      p += 16;
      const char *e = strchr(p, '"');
      char *b64 = e ? strndup(p, (size_t)(e - p)) : NULL;
      unsigned char *raw = NULL;
      size_t rn = 0;
      if (b64 && unbase64(b64, &raw, &rn) == 0) {
        bodies++;
        char *z = strndup((const char *)raw, rn);
        clear += z && (strstr(z, "0f8fad5b") || strstr(z, "0F8fad5b") ||
                       strstr(z, "70867728950e") || strstr(z, "7728950E"));
        CHECK(z && strstr(z, "0xff{{lease:unknown}}abc") != NULL);
        free(z);
      }
      free(raw);
      free(b64);
    }
    CHECK_INT(bodies, 2);
    CHECK_INT(clear, 0);
    free(text);
  }
}

#define ID_B "7c9e6679-7425-40de-944b-e07fc1f90ae7"

/* Whether the recording at name was refused (finish failed, no file) or,
 * when written, holds no part of ID_B nor of ID_A in any form once its
 * base64 bodies are decoded and their NUL bytes dropped. */
static int kept_out(const char *name, ll_status finished) {
  char *text = slurp(at(name));
  if (finished != LL_OK) {
    free(text);
    return text == NULL;
  }
  int clear = !text || strstr(text, "7c9e6679") || strstr(text, "e07fc1f90ae7");
  for (const char *p = text; p && (p = strstr(p, "\"body_base64\": \""));) {
    p += 16;
    const char *e = strchr(p, '"');
    char *b64 = e ? strndup(p, (size_t)(e - p)) : NULL;
    unsigned char *raw = NULL;
    size_t rn = 0, m = 0;
    if (b64 && unbase64(b64, &raw, &rn) == 0) {
      for (size_t i = 0; i < rn; i++)
        if (raw[i])
          raw[m++] = raw[i];
      raw[m] = '\0';
      clear +=
          strstr((char *)raw, "0f8fad5b") || strstr((char *)raw, "7c9e6679");
    }
    free(raw);
    free(b64);
  }
  free(text);
  return !clear;
}

/* R4/R5: an answer with a second x-ms-lease-id the body then quotes; a
 * body in UTF-16 quoting the request's ID; a compressed body, which no
 * scan can read. Each is kept out, or the recording is refused. */
static void test_hidden_ids(ll_clock *clock) {
  /* "<M>" ID_A "</M>" in UTF-16LE, after its byte order mark */
  char utf16[128] = "\xff\xfe";
  size_t ul = 2;
  for (const char *c = "<M>" ID_A "</M>"; *c; c++) {
    utf16[ul++] = *c;
    utf16[ul++] = '\0';
  }
  static const char gz[] = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03";
  static const char zl[] = "\x58\xc3\x0b\xc9\xc8\x2c\x56\x00"; /* CINFO 5 */
  static const char quote[] =
      "<Error><Message>lease " ID_B "</Message></Error>";
  struct {
    const char *name, *body, *second, *enc, *enc2;
    size_t len;
  } cases[] = {
      {"second-id.json", quote, ID_B, NULL, NULL, sizeof quote - 1},
      {"utf16.json", utf16, NULL, NULL, NULL, ul},
      {"gzip.json", gz, NULL, "gzip", NULL, sizeof gz - 1},
      /* the label may lie or be missing: the bytes tell */
      {"gzip-unlabelled.json", gz, NULL, NULL, NULL, sizeof gz - 1},
      {"gzip-second.json", gz, NULL, "identity", "gzip", sizeof gz - 1},
      {"zlib-small-window.json", zl, NULL, NULL, NULL, sizeof zl - 1},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    ll_error err = {0};
    svc *s;
    ll_transport *t = recorder(cases[k].name, &s, &err, clock);
    CHECK(t != NULL);
    if (!t)
      continue;
    s->body = cases[k].body;
    s->body_len = cases[k].len;
    s->second_id = cases[k].second;
    s->encoding = cases[k].enc;
    s->encoding2 = cases[k].enc2;
    int before = ll_test_fail;
    CHECK_INT(send_with(t, ID_A, "x", 1, &err), LL_OK);
    ll_status fin = t->finish(t, &err);
    ll_transport_free(t);
    CHECK(kept_out(cases[k].name, fin));
    if (k >= 2) /* nothing can vouch for a body it cannot read */
      CHECK(fin != LL_OK);
    if (ll_test_fail > before)
      fprintf(stderr, "  in case %s\n", cases[k].name);
  }
  /* a Latin-1 body that only looks like a zlib header with a preset
   * dictionary ('x' then '?') is text, kept as base64 */
  {
    static const char latin1[] = "x?caf\xe9 ok";
    ll_error err = {0};
    svc *s;
    ll_transport *t = recorder("latin1.json", &s, &err, clock);
    CHECK(t != NULL);
    if (t) {
      s->body = latin1;
      s->body_len = sizeof latin1 - 1;
      CHECK_INT(send_with(t, ID_A, "x", 1, &err), LL_OK);
      CHECK_INT(t->finish(t, &err), LL_OK);
      ll_transport_free(t);
    }
  }
}

int main(void) {
  char *d = ll_test_tmpdir();
  CHECK(d != NULL);
  if (!d)
    return ll_test_report("test_fixture_leaks");
  ll_strlcpy(root, d, sizeof root);
  ll_clock *clock = ll_clock_new_virtual(1796022579100LL);
  test_many_ids(clock);
  test_many_secrets(clock);
  test_sig_forms(clock);
  test_base64_body(clock);
  test_hidden_ids(clock);
  ll_clock_free(clock);
  CHECK(ll_test_rmtree(root) == 0);
  free(d);
  return ll_test_report("test_fixture_leaks");
}
