/* Fixtures: the loader's errors on malformed files, strict replay (match,
 * diff, extra and skipped requests, lease placeholders, the virtual clock,
 * lost responses), and recording (sanitized, replayable, atomic). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "hash.h"
#include "testlib.h"

#define ACCT "https://replay.invalid/devstoreaccount1"
#define BLOB "/lease-handoff-lab/writer-handoff.json"
#define HEAD_OK "{\"format\":\"leaselua-fixture/1\",\"endpoint_kind\":"
#define TOP HEAD_OK "\"documented\",\"description\":\"d\",\"source\":\"s\","
#define PAYLOAD                                                                \
  "{\"purpose\":\"lease-handoff-lab\",\"revision\":1,\"writer\":\"A\"}"

/* ---------------------------------------------------------- the loader */

static const struct {
  const char *text;
  const char *want; /* a substring of the message */
} malformed[] = {
    {"{\"format\": ", "not valid JSON"},
    {"[1,2]", "not a JSON object"},
    {"{\"endpoint_kind\":\"azure\"}", "format is '(missing)'"},
    {"{\"format\":\"leaselua-fixture/2\"}", "format is 'leaselua-fixture/2'"},
    {HEAD_OK "\"cloud\",\"description\":\"d\",\"source\":\"s\","
             "\"exchanges\":[]}",
     "endpoint_kind 'cloud' must be emulator, azure or documented"},
    {HEAD_OK "\"azure\",\"source\":\"s\",\"exchanges\":[]}",
     "'description' is missing"},
    {HEAD_OK "\"azure\",\"description\":\"d\",\"exchanges\":[]}",
     "'source' is missing"},
    {HEAD_OK "\"azure\",\"description\":\"\",\"source\":\"s\"}",
     "'description' must be a non-empty string"},
    {TOP "\"exchanges\":{}}", "'exchanges' is missing or not an array"},
    {TOP "\"started_utc\":\"yesterday\",\"exchanges\":[]}",
     "started_utc must be a UTC time"},
    {TOP "\"exchanges\":[{\"request\":{\"method\":\"GET\",\"path\":\"/c/b\"},"
         "\"response\":{\"status\":200}}]}",
     "exchange 1: 't_ms' is missing"},
    {TOP "\"exchanges\":[{\"t_ms\":-1,\"request\":{\"method\":\"GET\","
         "\"path\":\"/c/b\"},\"response\":{\"status\":200}}]}",
     "exchange 1: 't_ms' must be a number of milliseconds >= 0"},
    {TOP "\"exchanges\":[{\"t_ms\":0,\"response\":{\"status\":200}}]}",
     "exchange 1: 'request' is missing"},
    {TOP "\"exchanges\":[{\"t_ms\":0,\"request\":{\"path\":\"/c/b\"},"
         "\"response\":{\"status\":200}}]}",
     "exchange 1: 'method' is missing"},
    {TOP "\"exchanges\":[{\"t_ms\":0,\"request\":{\"method\":\"GET\","
         "\"path\":\"c/b\"},\"response\":{\"status\":200}}]}",
     "request.path must start with '/'"},
    {TOP "\"exchanges\":[{\"t_ms\":0,\"request\":{\"method\":\"GET\","
         "\"path\":\"/c/b\"}}]}",
     "needs exactly one of 'response' and 'transport_error'"},
    {TOP "\"exchanges\":[{\"t_ms\":0,\"request\":{\"method\":\"GET\","
         "\"path\":\"/c/b\"},\"response\":{\"status\":200},"
         "\"transport_error\":\"lost\"}]}",
     "needs exactly one of"},
    {TOP "\"exchanges\":[{\"t_ms\":0,\"request\":{\"method\":\"GET\","
         "\"path\":\"/c/b\"},\"response\":{\"status\":2000}}]}",
     "response.status must be an HTTP status"},
    {TOP "\"exchanges\":[{\"t_ms\":5,\"request\":{\"method\":\"GET\","
         "\"path\":\"/c/b\"},\"response\":{\"status\":200}},{\"t_ms\":4,"
         "\"request\":{\"method\":\"GET\",\"path\":\"/c/b\"},\"response\":{"
         "\"status\":200}}]}",
     "exchange 2: t_ms 4.0 is earlier than the exchange before it (5.0)"},
    {TOP "\"exchanges\":[{\"t_ms\":0,\"request\":{\"method\":\"PUT\","
         "\"path\":\"/c/b\",\"headers\":{\"x-ms-lease-id\":"
         "\"0f8fad5b-d9cb-469f-a165-70867728950e\"}},\"response\":{"
         "\"status\":201}}]}",
     "x-ms-lease-id must be a {{lease:ALIAS}} placeholder"},
    {TOP "\"exchanges\":[{\"t_ms\":0,\"request\":{\"method\":\"PUT\","
         "\"path\":\"/c/b\",\"headers\":{\"x-ms-date\":\"today\"}},"
         "\"response\":{\"status\":201}}]}",
     "request header 'x-ms-date' is not one a fixture keeps"},
    {TOP "\"exchanges\":[{\"t_ms\":0,\"request\":{\"method\":\"PUT\","
         "\"path\":\"/c/b\",\"body\":\"x\",\"body_sha256\":"
         "\"0000000000000000000000000000000000000000000000000000000000000000\""
         "},\"response\":{\"status\":201}}]}",
     "request.body_sha256 is not the SHA-256 of request.body"},
    {TOP "\"exchanges\":[{\"t_ms\":0,\"request\":{\"method\":\"PUT\","
         "\"path\":\"/c\",\"query\":\"restype=container&sig=abc\"},"
         "\"response\":{\"status\":201}}]}",
     "holds a SAS signature"},
    {TOP "\"exchanges\":[{\"t_ms\":0,\"request\":{\"method\":\"PUT\","
         "\"path\":\"/c\",\"query\":\"restype=container&SIG=abc\"},"
         "\"response\":{\"status\":201}}]}",
     "holds a SAS signature"},
    {TOP "\"exchanges\":[{\"t_ms\":0,\"request\":{\"method\":\"GET\","
         "\"path\":\"/c/b\"},\"response\":{\"status\":200,"
         "\"body_base64\":\"***\"}}]}",
     "response.body_base64 is not base64"},
    {TOP "\"exchanges\":[{\"t_ms\":0,\"request\":{\"method\":\"GET\","
         "\"path\":\"/c/b\"},\"transport_error\":\"lost\",\"outcome\":"
         "\"MAYBE\"}]}",
     "outcome must be UNKNOWN or NOT_SENT"},
};

static ll_transport *load(const char *text, ll_clock **clock, char *label,
                          ll_error *err) {
  return ll_fixture_replay_text(text, strlen(text), "t.json",
                                "/devstoreaccount1", clock, label, 16, err);
}

static void test_malformed(void) {
  for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
    ll_error err = {0};
    ll_clock *clock = (ll_clock *)1;
    ll_transport *t = load(malformed[i].text, &clock, NULL, &err);
    CHECK(t == NULL);
    CHECK(clock == NULL);
    CHECK_INT(err.code, LL_E_PARSE);
    CHECK(strstr(err.message, "fixture t.json: ") == err.message);
    if (!strstr(err.message, malformed[i].want))
      fprintf(stderr, "case %zu: message \"%s\" lacks \"%s\"\n", i, err.message,
              malformed[i].want);
    CHECK(strstr(err.message, malformed[i].want) != NULL);
    ll_transport_free(t);
  }
  ll_error err = {0};
  ll_clock *clock = NULL;
  CHECK(ll_fixture_replay_open("/nonexistent/x.json", "", &clock, NULL, 0,
                               &err) == NULL);
  CHECK_INT(err.code, LL_E_USAGE);
  CHECK(strstr(err.message, "cannot read fixture /nonexistent/x.json") != NULL);
}

/* ------------------------------------------------------------ replay */

static const char three[] =
    TOP "\"started_utc\":\"2026-11-30T07:09:39.100Z\",\"exchanges\":["
        "{\"t_ms\":10,\"elapsed_ms\":2.5,\"request\":{\"method\":\"PUT\","
        "\"path\":\"" BLOB "\",\"query\":\"comp=lease\",\"headers\":{"
        "\"x-ms-version\":\"2023-11-03\",\"x-ms-lease-action\":\"acquire\","
        "\"x-ms-lease-duration\":\"-1\",\"x-ms-proposed-lease-id\":"
        "\"{{lease:A}}\"}},\"response\":{\"status\":201,\"headers\":{"
        "\"x-ms-lease-id\":\"{{lease:A}}\",\"x-ms-request-id\":\"r1\"},"
        "\"body\":\"\"}},"
        "{\"t_ms\":20,\"elapsed_ms\":1,\"request\":{\"method\":\"PUT\","
        "\"path\":\"" BLOB "\",\"headers\":{\"x-ms-version\":\"2023-11-03\","
        "\"x-ms-blob-type\":\"BlockBlob\",\"x-ms-lease-id\":\"{{lease:A}}\"},"
        "\"body\":"
        "\"{\\\"purpose\\\":\\\"lease-handoff-lab\\\",\\\"revision"
        "\\\":1,\\\"writer\\\":\\\"A\\\"}\"},\"transport_error\":\"response "
        "lost after request was sent\"},"
        "{\"t_ms\":30,\"elapsed_ms\":1,\"request\":{\"method\":\"GET\","
        "\"path\":\"" BLOB "\",\"headers\":{\"x-ms-version\":\"2023-11-03\"}},"
        "\"response\":{\"status\":200,\"headers\":{},\"body\":\"hello\"}}]}";

typedef struct {
  ll_http_request q;
  char url[512];
} req;

static void mk(req *r, const char *method, const char *url_tail,
               const char *body) {
  memset(r, 0, sizeof *r);
  ll_headers_init(&r->q.headers);
  snprintf(r->url, sizeof r->url, "%s%s", ACCT, url_tail);
  r->q.method = method;
  r->q.url = r->url;
  r->q.body = (const unsigned char *)body;
  r->q.body_len = body ? strlen(body) : 0;
  if (ll_headers_add(&r->q.headers, "x-ms-version", "2023-11-03") != LL_OK)
    abort();
  /* never recorded, never matched */
  if (ll_headers_add(&r->q.headers, "x-ms-date", "Mon") != LL_OK ||
      ll_headers_add(&r->q.headers, "Authorization", "Bearer eyJ.x.y") != LL_OK)
    abort();
}

static void hdr(req *r, const char *n, const char *v) {
  if (ll_headers_add(&r->q.headers, n, v) != LL_OK)
    abort();
}

static void acquire(req *r, const char *id) {
  mk(r, "PUT", BLOB "?comp=lease&sv=2023-11-03&sig=c2VjcmV0", NULL);
  hdr(r, "x-ms-lease-action", "acquire");
  hdr(r, "x-ms-lease-duration", "-1");
  hdr(r, "x-ms-proposed-lease-id", id);
}

static void put(req *r, const char *id, const char *body) {
  mk(r, "PUT", BLOB, body);
  hdr(r, "x-ms-blob-type", "BlockBlob");
  hdr(r, "x-ms-lease-id", id);
}

static ll_status send(ll_transport *t, req *r, ll_http_response *resp,
                      ll_error *err) {
  ll_http_response_init(resp);
  ll_status st = t->exchange(t, &r->q, resp, err);
  ll_headers_cleanup(&r->q.headers);
  return st;
}

static const char ID_A[] = "0f8fad5b-d9cb-469f-a165-70867728950e";
static const char ID_X[] = "7c9e6679-7425-40de-944b-e07fc1f90ae7";

static void test_replay_in_order(void) {
  ll_error err = {0};
  ll_clock *clock = NULL;
  char label[16] = "";
  ll_transport *t = load(three, &clock, label, &err);
  CHECK(t != NULL);
  if (!t)
    return;
  CHECK_STR(label, "documented");
  CHECK(ll_clock_is_virtual(clock));
  CHECK_INT(ll_clock_utc_ms(clock), 1796022579100LL);
  req r;
  ll_http_response resp;
  acquire(&r, ID_A); /* the SAS in the query is dropped before matching */
  CHECK_INT(send(t, &r, &resp, &err), LL_OK);
  CHECK_INT(resp.outcome, LL_OUTCOME_RESPONSE);
  CHECK_INT(resp.status, 201);
  CHECK_STR(ll_headers_get(&resp.headers, "x-ms-lease-id"), ID_A);
  CHECK_INT(resp.emitted_requests, 1);
  CHECK_INT(resp.mono_start_ns, 10000000);
  CHECK_INT(resp.mono_end_ns, 12500000);
  CHECK_INT(resp.utc_start_ms, 1796022579110LL);
  ll_http_response_cleanup(&resp);
  ll_clock_sleep_ms(clock, 100); /* a sleep only moves the virtual clock */
  put(&r, "0F8FAD5BD9CB469FA16570867728950E", PAYLOAD); /* same ID */
  CHECK_INT(send(t, &r, &resp, &err), LL_OK);
  CHECK_INT(resp.outcome, LL_OUTCOME_UNKNOWN);
  CHECK_INT(resp.emitted_requests, 1);
  CHECK_STR(resp.transport_error, "response lost after request was sent");
  CHECK_INT(resp.mono_start_ns, 112500000); /* later than t_ms: kept */
  ll_http_response_cleanup(&resp);
  mk(&r, "GET", BLOB, NULL);
  CHECK_INT(send(t, &r, &resp, &err), LL_OK);
  CHECK_INT(resp.body_len, 5);
  CHECK(resp.body && memcmp(resp.body, "hello", 5) == 0);
  ll_http_response_cleanup(&resp);
  CHECK_INT(t->finish(t, &err), LL_OK);
  CHECK(t->detail(t) == NULL);
  /* one request more than the recording made */
  mk(&r, "GET", BLOB, NULL);
  CHECK_INT(send(t, &r, &resp, &err), LL_E_REPLAY);
  CHECK(strstr(err.message,
               "request #4 (GET " BLOB
               ") comes after the last of the 3 exchanges") != NULL);
  CHECK(strstr(t->detail(t), "\n  + GET " BLOB) != NULL);
  CHECK_INT(t->finish(t, &err), LL_E_REPLAY);
  ll_http_response_cleanup(&resp);
  ll_transport_free(t);
  ll_clock_free(clock);
}

static void test_replay_diff(void) {
  ll_error err = {0};
  ll_clock *clock = NULL;
  ll_transport *t = load(three, &clock, NULL, &err);
  req r;
  ll_http_response resp;
  acquire(&r, ID_A);
  CHECK_INT(send(t, &r, &resp, &err), LL_OK);
  ll_http_response_cleanup(&resp);
  /* another writer's lease, another body */
  put(&r, ID_X, "{\"revision\":2}");
  CHECK_INT(send(t, &r, &resp, &err), LL_E_REPLAY);
  CHECK_INT(resp.outcome, LL_OUTCOME_NOT_SENT); /* nothing was served */
  CHECK(strstr(err.message,
               "request #2 (PUT " BLOB ") does not match exchange #2") != NULL);
  const char *d = t->detail(t);
  CHECK(d != NULL);
  if (!d)
    d = "";
  char sha[LL_SHA256_HEX], want[200];
  CHECK_INT(ll_sha256_hex(PAYLOAD, strlen(PAYLOAD), sha), LL_OK);
  snprintf(want, sizeof want, "\n  - body sha256: %s\n  + body sha256: ", sha);
  CHECK(strstr(d, want) != NULL);
  CHECK(strstr(d, "\n    PUT " BLOB "\n") != NULL);
  CHECK(strstr(d, "\n    x-ms-version: 2023-11-03") != NULL);
  CHECK(strstr(d, "\n  - x-ms-lease-id: {{lease:A}}\n  + x-ms-lease-id: "
                  "{{lease:?}}") != NULL);
  /* no real lease ID, no SAS, no token in any message */
  CHECK(strstr(d, "7c9e6679") == NULL && strstr(d, "0f8fad5b") == NULL);
  CHECK(strstr(d, "sig=") == NULL && strstr(d, "eyJ") == NULL);
  /* from now on every call fails, with the same first difference */
  mk(&r, "GET", BLOB, NULL);
  CHECK_INT(send(t, &r, &resp, &err), LL_E_REPLAY);
  CHECK(strstr(err.message, "request #2") != NULL);
  CHECK_INT(t->finish(t, &err), LL_E_REPLAY);
  ll_http_response_cleanup(&resp);
  ll_transport_free(t);
  ll_clock_free(clock);
}

static void test_replay_skipped(void) {
  ll_error err = {0};
  ll_clock *clock = NULL;
  ll_transport *t = load(three, &clock, NULL, &err);
  req r;
  ll_http_response resp;
  acquire(&r, ID_A);
  CHECK_INT(send(t, &r, &resp, &err), LL_OK);
  ll_http_response_cleanup(&resp);
  CHECK_INT(t->finish(t, &err), LL_E_REPLAY);
  CHECK(strstr(err.message,
               "2 of the 3 exchanges of t.json were never "
               "requested (a skipped step?), from #2 (PUT") != NULL);
  CHECK(strstr(t->detail(t), "\n  - #3 GET " BLOB) != NULL);
  /* a skipped step in the middle: the next request meets the wrong one */
  ll_transport_free(t);
  ll_clock_free(clock);
  t = load(three, &clock, NULL, &err);
  acquire(&r, ID_A);
  CHECK_INT(send(t, &r, &resp, &err), LL_OK);
  ll_http_response_cleanup(&resp);
  mk(&r, "GET", BLOB, NULL);
  CHECK_INT(send(t, &r, &resp, &err), LL_E_REPLAY);
  CHECK(strstr(t->detail(t), "\n  - PUT " BLOB "\n  + GET " BLOB) != NULL);
  CHECK(strstr(t->detail(t), "\n  - x-ms-blob-type: BlockBlob") != NULL);
  ll_transport_free(t);
  ll_clock_free(clock);
  /* the first ID binds A; a second ID cannot take A too */
  t = load(three, &clock, NULL, &err);
  acquire(&r, ID_X);
  CHECK_INT(send(t, &r, &resp, &err), LL_OK);
  CHECK_STR(ll_headers_get(&resp.headers, "x-ms-lease-id"), ID_X);
  ll_http_response_cleanup(&resp);
  put(&r, ID_A, PAYLOAD);
  CHECK_INT(send(t, &r, &resp, &err), LL_E_REPLAY);
  ll_transport_free(t);
  ll_clock_free(clock);
}

/* ----------------------------------------------------------- recording */

typedef struct {
  ll_transport t;
  int n;
} fake;

static ll_status fake_exchange(ll_transport *t, const ll_http_request *q,
                               ll_http_response *resp, ll_error *err) {
  fake *f = t->impl;
  (void)err;
  ll_http_response_cleanup(resp);
  resp->mono_start_ns = 1000000LL * (10 + 10 * f->n);
  resp->mono_end_ns = resp->mono_start_ns + 3000000;
  f->n++;
  if (strcmp(q->method, "GET") == 0) {
    resp->outcome = LL_OUTCOME_UNKNOWN;
    resp->emitted_requests = 2; /* a silent re-send */
    snprintf(resp->transport_error, sizeof resp->transport_error, "reset");
    return LL_OK;
  }
  resp->outcome = LL_OUTCOME_RESPONSE;
  resp->emitted_requests = 1;
  resp->status = 201;
  const char *id = ll_headers_get(&q->headers, "x-ms-proposed-lease-id");
  if ((id && ll_headers_add(&resp->headers, "X-Ms-Lease-Id", id) != LL_OK) ||
      ll_headers_add(&resp->headers, "x-ms-request-id",
                     "11111111-2222-3333-4444-555555555555") != LL_OK ||
      ll_headers_add(&resp->headers, "Set-Cookie", "s=1") != LL_OK ||
      ll_headers_add(&resp->headers, "Server", "Fake/1") != LL_OK)
    abort();
  static const char body[] = "\xef\xbb\xbf<Error>Bearer eyJabc.def lease "
                             "0f8fad5b-d9cb-469f-a165-70867728950e</Error>";
  resp->body = malloc(sizeof body);
  memcpy(resp->body, body, sizeof body);
  resp->body_len = sizeof body - 1;
  return LL_OK;
}

static void fake_free(ll_transport *t) {
  free(t->impl);
}

static const char *alias_of(void *ctx, const char *id) {
  (void)ctx;
  return strcmp(id, ID_A) == 0 ? "A" : NULL;
}

static const char *kind_of(void *ctx) {
  (void)ctx;
  return "emulator";
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

static void test_record(void) {
  char *dir = ll_test_tmpdir();
  char path[600];
  snprintf(path, sizeof path, "%s/rec.json", dir);
  ll_error err = {0};
  ll_clock *clock = ll_clock_new_virtual(1796022579100LL);
  fake *f = calloc(1, sizeof *f);
  f->t.exchange = fake_exchange;
  f->t.free = fake_free;
  f->t.impl = f;
  CHECK(ll_fixture_record_new(&f->t, "/nonexistent/dir/x.json", clock, "", NULL,
                              NULL, &err) == NULL);
  CHECK(strstr(err.message, "cannot write fixture /nonexistent/dir/x.json") !=
        NULL);
  f = calloc(1, sizeof *f);
  f->t.exchange = fake_exchange;
  f->t.free = fake_free;
  f->t.impl = f;
  ll_transport *t = ll_fixture_record_new(
      &f->t, path, clock, "/devstoreaccount1", NULL, "unit test", &err);
  CHECK(t != NULL);
  if (!t)
    return;
  t->alias_of = alias_of;
  t->endpoint_kind = kind_of;
  CHECK_INT(t->finish(t, &err), LL_OK);
  CHECK(access(path, F_OK) != 0); /* nothing sent, no file */
  req r;
  ll_http_response resp;
  acquire(&r, ID_A);
  CHECK_INT(send(t, &r, &resp, &err), LL_OK);
  CHECK_STR(ll_headers_get(&resp.headers, "x-ms-lease-id"), ID_A);
  ll_http_response_cleanup(&resp);
  /* a second, unknown ID in a change is numbered after the writer */
  mk(&r, "PUT", BLOB "?comp=lease", NULL);
  hdr(&r, "x-ms-lease-action", "change");
  hdr(&r, "x-ms-lease-id", ID_A);
  hdr(&r, "x-ms-proposed-lease-id", ID_X);
  CHECK_INT(send(t, &r, &resp, &err), LL_OK);
  ll_http_response_cleanup(&resp);
  mk(&r, "GET", BLOB, NULL);
  CHECK_INT(send(t, &r, &resp, &err), LL_OK);
  ll_http_response_cleanup(&resp);
  CHECK_INT(t->finish(t, &err), LL_OK);
  char *text = slurp(path);
  CHECK(text != NULL);
  if (!text)
    text = strdup("");
  CHECK(strstr(text,
               "\"format\": \"leaselua-fixture/1\",\n  \"endpoint_kind\": "
               "\"emulator\",\n  \"description\": \"unit test\"") != NULL);
  CHECK(strstr(text, "\"x-ms-proposed-lease-id\": \"{{lease:A}}\"") != NULL);
  CHECK(strstr(text, "\"x-ms-lease-id\": \"{{lease:A}}\"") != NULL);
  CHECK(strstr(text, "\"x-ms-proposed-lease-id\": \"{{lease:A2}}\"") != NULL);
  CHECK(strstr(text, "\"path\": \"" BLOB "\"") != NULL);
  CHECK(strstr(text, "\"query\": \"comp=lease\"") != NULL);
  CHECK(strstr(text, "\"t_ms\": 10,\n      \"elapsed_ms\": 3,") != NULL);
  CHECK(strstr(text, "\"emitted_requests\": 2") != NULL);
  CHECK(strstr(text, "\"transport_error\": \"reset\"") != NULL);
  CHECK(strstr(text, "Bearer REDACTED") != NULL);
  CHECK(strstr(text, "lease {{lease:A}}</Error>") != NULL);
  CHECK(strstr(text, "11111111-2222-3333-4444-555555555555") != NULL);
  /* never: a lease ID, a token, a SAS, cookies, the date header */
  CHECK(strstr(text, "0f8fad5b") == NULL && strstr(text, "7c9e6679") == NULL);
  CHECK(strstr(text, "eyJ") == NULL && strstr(text, "sig=") == NULL);
  CHECK(strstr(text, "c2VjcmV0") == NULL && strstr(text, "sv=") == NULL);
  CHECK(strstr(text, "uthorization") == NULL && strstr(text, "ookie") == NULL);
  CHECK(strstr(text, "x-ms-date") == NULL);
  char tmp[700];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  CHECK(access(tmp, F_OK) != 0);
  /* what was recorded replays */
  ll_clock *vc = NULL;
  char label[16];
  ll_transport *rt = ll_fixture_replay_text(text, strlen(text), "rec.json",
                                            "/other", &vc, label, 16, &err);
  CHECK(rt != NULL);
  if (rt) {
    CHECK_STR(label, "emulator");
    snprintf(r.url, sizeof r.url, "x"); /* unused */
    req q;
    acquire(&q, ID_X);
    snprintf(q.url, sizeof q.url, "https://h/other%s?comp=lease", BLOB);
    CHECK_INT(send(rt, &q, &resp, &err), LL_OK);
    CHECK_STR(ll_headers_get(&resp.headers, "x-ms-lease-id"), ID_X);
    CHECK(resp.body_len > 3 && memcmp(resp.body, "\xef\xbb\xbf", 3) == 0);
    ll_http_response_cleanup(&resp);
    mk(&q, "PUT", BLOB "?comp=lease", NULL);
    snprintf(q.url, sizeof q.url, "https://h/other%s?comp=lease", BLOB);
    hdr(&q, "x-ms-lease-action", "change");
    hdr(&q, "x-ms-lease-id", ID_X);
    hdr(&q, "x-ms-proposed-lease-id", ID_A);
    CHECK_INT(send(rt, &q, &resp, &err), LL_OK);
    ll_http_response_cleanup(&resp);
    mk(&q, "GET", BLOB, NULL);
    snprintf(q.url, sizeof q.url, "https://h/other%s", BLOB);
    CHECK_INT(send(rt, &q, &resp, &err), LL_OK);
    CHECK_INT(resp.outcome, LL_OUTCOME_UNKNOWN);
    CHECK_INT(resp.emitted_requests, 2);
    ll_http_response_cleanup(&resp);
    CHECK_INT(rt->finish(rt, &err), LL_OK);
    ll_transport_free(rt);
    ll_clock_free(vc);
  }
  free(text);
  ll_transport_free(t);
  ll_clock_free(clock);
  unlink(path);
  rmdir(dir);
  free(dir);
}

/* -------------------------------------------------------- printing etc */

static void test_print(void) {
  cJSON *v = cJSON_Parse("{\"a\":[1,2.5,{}],\"b\":{\"c\":\"x\\\"\\n\\u0001\"},"
                         "\"d\":[],\"e\":null,\"f\":true}");
  char *t = ll_fixture_print(v);
  CHECK_STR(t, "{\n  \"a\": [\n    1,\n    2.5,\n    {}\n  ],\n  \"b\": {\n"
               "    \"c\": \"x\\\"\\n\\u0001\"\n  },\n  \"d\": [],\n  \"e\": "
               "null,\n  \"f\": true\n}\n");
  free(t);
  cJSON_Delete(v);
  char p[64];
  ll_fixture_account_path("https://127.0.0.1:1/devstoreaccount1/", p, sizeof p);
  CHECK_STR(p, "/devstoreaccount1");
  ll_fixture_account_path("https://acct.blob.core.windows.net", p, sizeof p);
  CHECK_STR(p, "");
}

int main(void) {
  test_malformed();
  test_replay_in_order();
  test_replay_diff();
  test_replay_skipped();
  test_record();
  test_print();
  return ll_test_report("test_fixture");
}
