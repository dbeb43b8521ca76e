/* Blob operations: names and methods, target validation and request
 * building (URL, query, lease headers, refusals). Response parsing and lease
 * IDs are in test_blob_parse.c. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "blob.h"
#include "testlib.h"

#define AZURITE "https://127.0.0.1:10000/devstoreaccount1"
#define CONT "lease-handoff-lab"
#define BLOB "writer-handoff.json"
#define LA "0f8fad5b-d9cb-469f-a165-70867728950e"
#define LB "7C9E6679-7425-40DE-944B-E07FC1F90AE7"
#define SECRET "not-a-guid-secret-123"

/* ---- names and methods ---------------------------------------------- */

static const struct {
  ll_op op;
  const char *name, *method;
  int mutation;
} op_rows[] = {
    {LL_OP_CREATE_CONTAINER, "Create Container", "PUT", 1},
    {LL_OP_PUT_BLOB, "Put Blob", "PUT", 1},
    {LL_OP_GET_BLOB, "Get Blob", "GET", 0},
    {LL_OP_GET_PROPERTIES, "Get Blob Properties", "HEAD", 0},
    {LL_OP_LEASE_ACQUIRE, "Lease Acquire", "PUT", 1},
    {LL_OP_LEASE_BREAK, "Lease Break", "PUT", 1},
    {LL_OP_LEASE_RELEASE, "Lease Release", "PUT", 1},
    {LL_OP_LEASE_RENEW, "Lease Renew", "PUT", 1},
    {LL_OP_LEASE_CHANGE, "Lease Change", "PUT", 1},
    {LL_OP_DELETE_BLOB, "Delete Blob", "DELETE", 1},
};

static void test_ops(void) {
  CHECK_INT(sizeof op_rows / sizeof op_rows[0], LL_OP__COUNT);
  for (size_t i = 0; i < sizeof op_rows / sizeof op_rows[0]; i++) {
    CHECK_STR(ll_op_name(op_rows[i].op), op_rows[i].name);
    CHECK_INT(ll_op_from_name(op_rows[i].name), op_rows[i].op);
    CHECK_STR(ll_op_method(op_rows[i].op), op_rows[i].method);
    CHECK_INT(ll_op_is_mutation(op_rows[i].op), op_rows[i].mutation);
  }
  CHECK_INT(ll_op_from_name("Put Block"), -1);
  CHECK_INT(ll_op_from_name("Put Block List"), -1);
  CHECK_INT(ll_op_from_name("put blob"), -1);
  CHECK_INT(ll_op_from_name(NULL), -1);
  CHECK(ll_op_name(LL_OP__COUNT) == NULL);
  CHECK(ll_op_method((ll_op)-1) == NULL);
  CHECK_INT(ll_op_is_mutation(LL_OP__COUNT), 1);
}

/* ---- target ---------------------------------------------------------- */

/* Accepted targets: the stored account URL and the blob path, when given. */
static const struct {
  const char *url, *container, *blob, *account_url, *blob_path;
} targets[] = {
    {AZURITE, CONT, BLOB, AZURITE,
     "/devstoreaccount1/lease-handoff-lab/writer-handoff.json"},
    {AZURITE "/", CONT, BLOB, AZURITE,
     "/devstoreaccount1/lease-handoff-lab/writer-handoff.json"},
    {"https://acct.blob.core.windows.net", CONT, BLOB,
     "https://acct.blob.core.windows.net",
     "/lease-handoff-lab/writer-handoff.json"},
    {"https://acct.blob.core.windows.net/", CONT, BLOB,
     "https://acct.blob.core.windows.net",
     "/lease-handoff-lab/writer-handoff.json"},
    {"http://127.0.0.1:10000/devstoreaccount1", CONT, BLOB,
     "http://127.0.0.1:10000/devstoreaccount1",
     "/devstoreaccount1/lease-handoff-lab/writer-handoff.json"},
    {"http://127.9.8.7:1", "abc", "a/b/c.json", "http://127.9.8.7:1",
     "/abc/a/b/c.json"},
    {"http://localhost:10000/devstoreaccount1", CONT, BLOB,
     "http://localhost:10000/devstoreaccount1", NULL},
    {"http://LocalHost:10000/x", CONT, BLOB, "http://LocalHost:10000/x", NULL},
    {"http://[::1]:10000/devstoreaccount1", CONT, BLOB,
     "http://[::1]:10000/devstoreaccount1",
     "/devstoreaccount1/lease-handoff-lab/writer-handoff.json"},
    {"https://acct.blob.core.windows.net", "a-1", "x", NULL, NULL},
    {"https://acct.blob.core.windows.net",
     "a23456789012345678901234567890123456789012345678901234567890123", "x",
     NULL, NULL},
    {"https://h", CONT, "dir one/\xc3\xa9 file.json", NULL,
     "/lease-handoff-lab/dir one/\xc3\xa9 file.json"},
};

/* Refused account URLs: http off loopback is LL_E_INSECURE, any other
 * shape problem LL_E_BAD_URL. */
static const char *const insecure_urls[] = {"http://acct.blob.core.windows.net",
                                            "http://128.0.0.1:10000/a",
                                            "http://10.0.0.1/a",
                                            "http://localhost.evil.example/a",
                                            "http://127.0.0.1.evil.example/a",
                                            "http://[::2]:10000/a"};
static const char *const bad_urls[] = {
    "ftp://127.0.0.1/a",
    "https://user:pw@acct.blob.core.windows.net",
    "https://user@acct.blob.core.windows.net",
    "https://acct.blob.core.windows.net/?sv=1&sig=x",
    "https://acct.blob.core.windows.net/?",
    "https://acct.blob.core.windows.net/#frag",
    "https://acct.blob.core.windows.net#",
    "acct.blob.core.windows.net",
    "",
    "not a url",
    "https://",
    "https://h/a//",
    "https://h//",
    "https://h/a/../b",
    "https://h/./a"};
/* Azure naming rules; blob names that would not survive a URL path. */
static const char *const bad_containers[] = {
    "ab",
    "a234567890123456789012345678901234567890123456789012345678901234",
    "Lease-lab",
    "-lease",
    "lease-",
    "lease--lab",
    "lease_lab",
    "lease.lab",
    "$root"};
static const char *const bad_blobs[] = {
    "",     "/abs.json", "../up.json", "a/../b", "a?comp=lease", "a#b",  "a\\b",
    "a\nb", "a\tb",      "a\x7f",      "a//b",   "a/",           "a/./b"};

static void expect_refused(const char *url, const char *container,
                           const char *blob, ll_status want) {
  ll_target t;
  ll_error err = {0};
  ll_status st = ll_target_init(&t, url, container, blob, &err);
  if (st != want)
    fprintf(stderr, "target %s | %s | %s: %s\n", url, container, blob,
            err.message);
  CHECK_INT(st, want);
  CHECK_INT(err.code, want);
  CHECK(err.message[0] != '\0');
  CHECK(strchr(err.message, '\n') == NULL);
  CHECK_STR(t.account_url, ""); /* nothing half-initialised */
}

#define N(a) (sizeof(a) / sizeof(a)[0])

static void test_targets(void) {
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
    ll_target t;
    ll_error err = {0};
    CHECK_INT(ll_target_init(&t, targets[i].url, targets[i].container,
                             targets[i].blob, &err),
              LL_OK);
    CHECK_STR(t.container, targets[i].container);
    CHECK_STR(t.blob, targets[i].blob);
    if (targets[i].account_url)
      CHECK_STR(t.account_url, targets[i].account_url);
    if (targets[i].blob_path) {
      char path[512];
      ll_target_blob_path(&t, path, sizeof path);
      CHECK_STR(path, targets[i].blob_path);
    }
  }
  for (size_t i = 0; i < N(insecure_urls); i++)
    expect_refused(insecure_urls[i], CONT, BLOB, LL_E_INSECURE);
  for (size_t i = 0; i < N(bad_urls); i++)
    expect_refused(bad_urls[i], CONT, BLOB, LL_E_BAD_URL);
  for (size_t i = 0; i < N(bad_containers); i++)
    expect_refused(AZURITE, bad_containers[i], BLOB, LL_E_USAGE);
  for (size_t i = 0; i < N(bad_blobs); i++)
    expect_refused(AZURITE, CONT, bad_blobs[i], LL_E_USAGE);
  ll_target t;
  CHECK_INT(ll_target_init(&t, NULL, CONT, BLOB, NULL), LL_E_USAGE);
  /* A long blob: 255 is the limit. */
  char name[300];
  memset(name, 'b', sizeof name);
  name[255] = '\0';
  CHECK_INT(ll_target_init(&t, AZURITE, CONT, name, NULL), LL_OK);
  name[255] = 'b';
  name[256] = '\0';
  CHECK_INT(ll_target_init(&t, AZURITE, CONT, name, NULL), LL_E_USAGE);
}

/* Messages name the rule that was broken. */
static void test_target_messages(void) {
  static const struct {
    const char *container, *blob, *says;
  } rows[] = {
      {"ab", BLOB, "3 to 63"},      {"lease--lab", BLOB, "consecutive hyphens"},
      {"Lease", BLOB, "lowercase"}, {CONT, "a/../b", "'..'"},
      {CONT, "a?b", "'?'"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    ll_target t;
    ll_error err = {0};
    CHECK_INT(
        ll_target_init(&t, AZURITE, rows[i].container, rows[i].blob, &err),
        LL_E_USAGE);
    CHECK(strstr(err.message, rows[i].says) != NULL);
  }
  ll_target t;
  ll_error err = {0};
  CHECK_INT(ll_target_init(&t, "http://example.com/a", CONT, BLOB, &err),
            LL_E_INSECURE);
  CHECK(strstr(err.message, "https") != NULL);
}

/* ---- request building ------------------------------------------------ */

#define BP "/lease-handoff-lab/writer-handoff.json"
#define LQ BP "?comp=lease"
#define REFUSE(name, op, lease, proposed, duration, brk, code)                 \
  { name, op, lease, proposed, duration, brk, code, NULL, NULL }

/* hdrs: space-separated "name=value" (must be sent as is) and "!name" (must
 * be absent). */
static const struct {
  const char *name;
  ll_op op;
  const char *lease_id, *proposed_id;
  long duration, brk;
  ll_status want;
  const char *url; /* relative to AZURITE */
  const char *hdrs;
} builds[] = {
    {"create container", LL_OP_CREATE_CONTAINER, NULL, NULL, 0, -1, LL_OK,
     "/lease-handoff-lab?restype=container",
     "!x-ms-lease-action !x-ms-lease-id !x-ms-blob-type"},
    {"put blob with A", LL_OP_PUT_BLOB, LA, NULL, 0, -1, LL_OK, BP,
     "x-ms-blob-type=BlockBlob Content-Type=application/json "
     "x-ms-lease-id=" LA " !x-ms-lease-action !x-ms-proposed-lease-id"},
    {"put blob without lease", LL_OP_PUT_BLOB, NULL, NULL, 0, -1, LL_OK, BP,
     "x-ms-blob-type=BlockBlob !x-ms-lease-id"},
    {"get blob with lease (case kept)", LL_OP_GET_BLOB, LB, NULL, 0, -1, LL_OK,
     BP, "x-ms-lease-id=" LB " !x-ms-blob-type !Content-Type"},
    {"get blob", LL_OP_GET_BLOB, NULL, NULL, 0, -1, LL_OK, BP,
     "!x-ms-lease-id"},
    {"properties", LL_OP_GET_PROPERTIES, LA, NULL, 0, -1, LL_OK, BP,
     "x-ms-lease-id=" LA " !x-ms-lease-action"},
    {"delete", LL_OP_DELETE_BLOB, LA, NULL, 0, -1, LL_OK, BP,
     "x-ms-lease-id=" LA " !x-ms-lease-action"},
    {"acquire infinite, proposed B", LL_OP_LEASE_ACQUIRE, NULL, LB, -1, -1,
     LL_OK, LQ,
     "x-ms-lease-action=acquire x-ms-lease-duration=-1 "
     "x-ms-proposed-lease-id=" LB " !x-ms-lease-id"},
    {"acquire 15, no proposal", LL_OP_LEASE_ACQUIRE, NULL, NULL, 15, -1, LL_OK,
     LQ,
     "x-ms-lease-action=acquire x-ms-lease-duration=15 "
     "!x-ms-proposed-lease-id"},
    {"acquire 60", LL_OP_LEASE_ACQUIRE, NULL, LA, 60, -1, LL_OK, LQ,
     "x-ms-lease-duration=60"},
    REFUSE("acquire 14", LL_OP_LEASE_ACQUIRE, NULL, LA, 14, -1, LL_E_USAGE),
    REFUSE("acquire 61", LL_OP_LEASE_ACQUIRE, NULL, LA, 61, -1, LL_E_USAGE),
    REFUSE("acquire 0", LL_OP_LEASE_ACQUIRE, NULL, LA, 0, -1, LL_E_USAGE),
    REFUSE("acquire with lease_id", LL_OP_LEASE_ACQUIRE, LA, LB, -1, -1,
           LL_E_USAGE),
    {"break 30", LL_OP_LEASE_BREAK, NULL, NULL, 0, 30, LL_OK, LQ,
     "x-ms-lease-action=break x-ms-lease-break-period=30 !x-ms-lease-id "
     "!x-ms-lease-duration"},
    {"break 0", LL_OP_LEASE_BREAK, NULL, NULL, 0, 0, LL_OK, LQ,
     "x-ms-lease-break-period=0"},
    {"break, period omitted", LL_OP_LEASE_BREAK, NULL, NULL, 0, -1, LL_OK, LQ,
     "x-ms-lease-action=break !x-ms-lease-break-period"},
    REFUSE("break 61", LL_OP_LEASE_BREAK, NULL, NULL, 0, 61, LL_E_USAGE),
    REFUSE("break -2", LL_OP_LEASE_BREAK, NULL, NULL, 0, -2, LL_E_USAGE),
    {"release", LL_OP_LEASE_RELEASE, LA, NULL, 0, -1, LL_OK, LQ,
     "x-ms-lease-action=release x-ms-lease-id=" LA},
    REFUSE("release without lease", LL_OP_LEASE_RELEASE, NULL, NULL, 0, -1,
           LL_E_USAGE),
    {"renew", LL_OP_LEASE_RENEW, LA, NULL, 0, -1, LL_OK, LQ,
     "x-ms-lease-action=renew x-ms-lease-id=" LA},
    REFUSE("renew without lease", LL_OP_LEASE_RENEW, NULL, NULL, 0, -1,
           LL_E_USAGE),
    {"change", LL_OP_LEASE_CHANGE, LA, LB, 0, -1, LL_OK, LQ,
     "x-ms-lease-action=change x-ms-lease-id=" LA
     " x-ms-proposed-lease-id=" LB},
    REFUSE("change without proposal", LL_OP_LEASE_CHANGE, LA, NULL, 0, -1,
           LL_E_USAGE),
    REFUSE("change without lease", LL_OP_LEASE_CHANGE, NULL, LB, 0, -1,
           LL_E_USAGE),
    REFUSE("proposal on put", LL_OP_PUT_BLOB, NULL, LB, 0, -1, LL_E_USAGE),
    REFUSE("lease on create", LL_OP_CREATE_CONTAINER, LA, NULL, 0, -1,
           LL_E_USAGE),
    /* non-GUID lease IDs, checked before anything is built */
    REFUSE("bad lease on put", LL_OP_PUT_BLOB, SECRET, NULL, 0, -1,
           LL_E_BAD_LEASE_ID),
    REFUSE("bad lease on get", LL_OP_GET_BLOB, SECRET, NULL, 0, -1,
           LL_E_BAD_LEASE_ID),
    REFUSE("bad proposal on acquire", LL_OP_LEASE_ACQUIRE, NULL, SECRET, -1, -1,
           LL_E_BAD_LEASE_ID),
    REFUSE("bad new ID on change", LL_OP_LEASE_CHANGE, LA, SECRET, 0, -1,
           LL_E_BAD_LEASE_ID),
    REFUSE("bad lease on release", LL_OP_LEASE_RELEASE, SECRET, NULL, 0, -1,
           LL_E_BAD_LEASE_ID),
};

/* Checks every token of a hdrs string against the built headers. */
static void check_headers(const ll_headers *h, const char *spec) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", spec);
  char *save = NULL;
  for (char *tok = strtok_r(buf, " ", &save); tok;
       tok = strtok_r(NULL, " ", &save)) {
    if (tok[0] == '!') {
      if (ll_headers_get(h, tok + 1) != NULL)
        fprintf(stderr, "header %s should be absent\n", tok + 1);
      CHECK(ll_headers_get(h, tok + 1) == NULL);
      continue;
    }
    char *eq = strchr(tok, '=');
    CHECK(eq != NULL);
    if (!eq)
      continue;
    *eq = '\0';
    CHECK_STR(ll_headers_get(h, tok), eq + 1);
  }
}

/* One built request and what it owns. */
typedef struct {
  ll_http_request req;
  char *url;
  ll_error err;
  ll_status st;
} built;

static void build(const ll_target *t, ll_op op, const ll_op_params *p,
                  built *b) {
  memset(b, 0, sizeof *b);
  ll_headers_init(&b->req.headers);
  b->st = ll_blob_build(t, op, p, &b->req, &b->url, &b->err);
}

static void unbuild(built *b) {
  free(b->url);
  ll_headers_cleanup(&b->req.headers);
}

static int date_shape_ok(const char *d) {
  /* "Mon, 30 Nov 2026 06:48:16 GMT" */
  return d && strlen(d) == 29 && d[3] == ',' && d[4] == ' ' &&
         strcmp(d + 25, " GMT") == 0 && d[19] == ':' && d[22] == ':';
}

static void test_builds(void) {
  ll_target t;
  CHECK_INT(ll_target_init(&t, AZURITE, CONT, BLOB, NULL), LL_OK);
  static const unsigned char body[] = "{}";
  for (size_t i = 0; i < sizeof builds / sizeof builds[0]; i++) {
    ll_op_params p = {.lease_id = builds[i].lease_id,
                      .proposed_id = builds[i].proposed_id,
                      .lease_duration = builds[i].duration,
                      .break_period = builds[i].brk};
    if (builds[i].op == LL_OP_PUT_BLOB) {
      p.body = body;
      p.body_len = 2;
    }
    built b;
    build(&t, builds[i].op, &p, &b);
    const ll_headers *h = &b.req.headers;
    if (b.st != builds[i].want)
      fprintf(stderr, "build: %s: %s\n", builds[i].name, b.err.message);
    CHECK_INT(b.st, builds[i].want);
    if (b.st != LL_OK) {
      CHECK_INT(b.err.code, builds[i].want);
      CHECK(b.url == NULL);
      CHECK_INT(h->n, 0);
      /* The value is a secret: never echoed. */
      CHECK(strstr(b.err.message, SECRET) == NULL);
      if (builds[i].want == LL_E_BAD_LEASE_ID)
        CHECK(strstr(b.err.message, "not a GUID (8-4-4-4-12 hex)") != NULL);
    } else {
      char want_url[512];
      snprintf(want_url, sizeof want_url, "%s%s", AZURITE, builds[i].url);
      CHECK_STR(b.url, want_url);
      CHECK(b.req.url == b.url);
      CHECK_STR(b.req.method, ll_op_method(builds[i].op));
      CHECK_INT(b.req.mutation, ll_op_is_mutation(builds[i].op));
      CHECK_STR(ll_headers_get(h, "x-ms-version"), "2023-11-03");
      CHECK(ll_lease_id_valid(ll_headers_get(h, "x-ms-client-request-id")));
      CHECK(date_shape_ok(ll_headers_get(h, "x-ms-date")));
      CHECK(ll_headers_get(h, "Content-Length") == NULL);
      int put = builds[i].op == LL_OP_PUT_BLOB;
      CHECK(b.req.body == (put ? body : NULL));
      CHECK_INT(b.req.body_len, put ? 2 : 0);
      check_headers(h, builds[i].hdrs);
    }
    unbuild(&b);
  }
}

/* Invariant 7: the size check comes before everything, and the limit is
 * inclusive. */
static void test_too_large(void) {
  ll_target t;
  CHECK_INT(ll_target_init(&t, AZURITE, CONT, BLOB, NULL), LL_OK);
  size_t mib = 1024u * 1024u;
  unsigned char *big = calloc(1, mib + 1);
  CHECK(big != NULL);
  if (!big)
    return;
  static const struct {
    size_t len, max;
    const char *lease;
    ll_status want;
    const char *says;
  } rows[] = {
      {1024u * 1024u + 1, 0, NULL, LL_E_TOO_LARGE,
       "payload of 1048577 bytes exceeds max_single_put_size 1048576: this lab "
       "only sends a single Put Blob"},
      /* before the lease check, too */
      {1024u * 1024u + 1, 0, SECRET, LL_E_TOO_LARGE, "1048577"},
      {1024u * 1024u, 0, LA, LL_OK, NULL},
      {11, 10, NULL, LL_E_TOO_LARGE, "max_single_put_size 10"},
      {10, 10, NULL, LL_OK, NULL},
      {0, 0, NULL, LL_OK, NULL},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    ll_op_params p = {.body = big,
                      .body_len = rows[i].len,
                      .max_single_put = rows[i].max,
                      .lease_id = rows[i].lease};
    built b;
    build(&t, LL_OP_PUT_BLOB, &p, &b);
    CHECK_INT(b.st, rows[i].want);
    if (rows[i].want == LL_OK) {
      CHECK_INT(b.req.body_len, rows[i].len);
      CHECK(b.url != NULL);
    } else {
      CHECK(strstr(b.err.message, rows[i].says) != NULL);
      CHECK(b.url == NULL);
      CHECK_INT(b.req.headers.n, 0);
    }
    unbuild(&b);
  }
  free(big);
}

static void test_encoding_and_overrides(void) {
  static const struct {
    const char *account, *blob, *url;
  } rows[] = {
      {"https://acct.blob.core.windows.net", "file name.json",
       "https://acct.blob.core.windows.net/lease-handoff-lab/file%20name.json"},
      {AZURITE, "dir one/a+b&c=d%.json",
       AZURITE "/lease-handoff-lab/dir%20one/a%2Bb%26c%3Dd%25.json"},
      {AZURITE, "\xc3\xa9t\xc3\xa9/x~y_z-1.json",
       AZURITE "/lease-handoff-lab/%C3%A9t%C3%A9/x~y_z-1.json"},
  };
  built b;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    ll_target t;
    CHECK_INT(ll_target_init(&t, rows[i].account, CONT, rows[i].blob, NULL),
              LL_OK);
    build(&t, LL_OP_GET_BLOB, &(ll_op_params){0}, &b);
    CHECK_STR(b.url, rows[i].url);
    unbuild(&b);
  }

  /* Explicit version and request ID are sent as given; otherwise each
   * request gets a fresh ID. */
  ll_target t;
  CHECK_INT(ll_target_init(&t, AZURITE, CONT, BLOB, NULL), LL_OK);
  build(&t, LL_OP_GET_PROPERTIES,
        &(ll_op_params){.api_version = "2025-01-05",
                        .client_request_id = "run-7-event-3"},
        &b);
  CHECK_STR(ll_headers_get(&b.req.headers, "x-ms-version"), "2025-01-05");
  CHECK_STR(ll_headers_get(&b.req.headers, "x-ms-client-request-id"),
            "run-7-event-3");
  unbuild(&b);
  char ids[2][64];
  for (int i = 0; i < 2; i++) {
    build(&t, LL_OP_GET_BLOB, &(ll_op_params){0}, &b);
    snprintf(ids[i], sizeof ids[i], "%s",
             ll_headers_get(&b.req.headers, "x-ms-client-request-id"));
    unbuild(&b);
  }
  CHECK(strcmp(ids[0], ids[1]) != 0);
  /* Header injection through a configured value is refused. */
  build(&t, LL_OP_GET_BLOB,
        &(ll_op_params){.api_version = "2023-11-03\r\nX-Evil: 1"}, &b);
  CHECK_INT(b.st, LL_E_USAGE);
  unbuild(&b);
}

/* Invariant 15's conditions: If-None-Match only as "*" on Put Blob,
 * If-Match (an ETag, sent as given) only on Put Blob and Delete Blob. */
static void test_conditions(void) {
  ll_target t;
  CHECK_INT(ll_target_init(&t, AZURITE, CONT, BLOB, NULL), LL_OK);
  static const unsigned char body[] = "{}";
  static const char etag[] = "\"0x8DE1A2B3C4D5E6F\"";
  static const struct {
    const char *name;
    ll_op op;
    const char *inm, *im, *lease;
    ll_status want;
    const char *hdrs; /* check_headers tokens on success, message part else */
  } rows[] = {
      {"create", LL_OP_PUT_BLOB, "*", NULL, NULL, LL_OK,
       "If-None-Match=* !If-Match x-ms-blob-type=BlockBlob"},
      {"plain put", LL_OP_PUT_BLOB, NULL, NULL, LA, LL_OK,
       "!If-None-Match !If-Match"},
      {"delete on the read-back ETag", LL_OP_DELETE_BLOB, NULL, etag, NULL,
       LL_OK, "If-Match=\"0x8DE1A2B3C4D5E6F\" !If-None-Match !x-ms-lease-id"},
      {"delete with B's lease and the ETag", LL_OP_DELETE_BLOB, NULL, etag, LA,
       LL_OK, "If-Match=\"0x8DE1A2B3C4D5E6F\" x-ms-lease-id=" LA},
      {"If-None-Match with an ETag", LL_OP_PUT_BLOB, etag, NULL, NULL,
       LL_E_USAGE, "only as \"*\""},
      {"If-None-Match on a delete", LL_OP_DELETE_BLOB, "*", NULL, NULL,
       LL_E_USAGE, "only as \"*\""},
      {"a break on the run's ETag", LL_OP_LEASE_BREAK, NULL, etag, NULL, LL_OK,
       "If-Match=\"0x8DE1A2B3C4D5E6F\" !If-None-Match"},
      {"an acquire on the run's ETag", LL_OP_LEASE_ACQUIRE, NULL, etag, NULL,
       LL_OK, "If-Match=\"0x8DE1A2B3C4D5E6F\" !x-ms-lease-id"},
      {"If-Match on a renew", LL_OP_LEASE_RENEW, NULL, etag, LA, LL_E_USAGE,
       "Lease Renew takes no If-Match"},
      {"If-Match on a release", LL_OP_LEASE_RELEASE, NULL, etag, LA, LL_E_USAGE,
       "Lease Release takes no If-Match"},
      {"If-Match on a read", LL_OP_GET_BLOB, NULL, etag, NULL, LL_E_USAGE,
       "Get Blob takes no If-Match"},
      {"empty If-Match", LL_OP_DELETE_BLOB, NULL, "", NULL, LL_E_USAGE,
       "If-Match must be an ETag"},
      {"If-Match with a newline", LL_OP_DELETE_BLOB, NULL, "\"0x1\"\r\nX: y",
       NULL, LL_E_USAGE, "If-Match must be an ETag"},
      {"both conditions", LL_OP_PUT_BLOB, "*", etag, NULL, LL_E_USAGE,
       "never sent together"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    ll_op_params p = {.lease_id = rows[i].lease,
                      .if_none_match = rows[i].inm,
                      .if_match = rows[i].im,
                      .break_period = -1,
                      .lease_duration = 15};
    if (rows[i].op == LL_OP_PUT_BLOB) {
      p.body = body;
      p.body_len = 2;
    }
    built b;
    build(&t, rows[i].op, &p, &b);
    if (b.st != rows[i].want)
      fprintf(stderr, "conditions: %s: %s\n", rows[i].name, b.err.message);
    CHECK_INT(b.st, rows[i].want);
    if (b.st == LL_OK) {
      check_headers(&b.req.headers, rows[i].hdrs);
    } else {
      CHECK(strstr(b.err.message, rows[i].hdrs) != NULL);
      CHECK_INT(b.req.headers.n, 0);
      CHECK(b.url == NULL);
    }
    unbuild(&b);
  }
}

static void test_date(void) {
  static const struct {
    time_t when;
    const char *want;
  } rows[] = {{0, "Thu, 01 Jan 1970 00:00:00 GMT"},
              {1796021296, "Mon, 30 Nov 2026 06:48:16 GMT"},
              {951782400, "Tue, 29 Feb 2000 00:00:00 GMT"}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    char buf[40];
    ll_blob_format_date(rows[i].when, buf, sizeof buf);
    CHECK_STR(buf, rows[i].want);
  }
}

/* The date put in place digit by digit is what snprintf printed before,
 * from 1970 to 9999 (about ten days apart), and a short buffer is cut as
 * snprintf cuts it. */
static void test_date_sweep(void) {
  static const char *const days[] = {"Sun", "Mon", "Tue", "Wed",
                                     "Thu", "Fri", "Sat"};
  static const char *const months[] = {"Jan", "Feb", "Mar", "Apr",
                                       "May", "Jun", "Jul", "Aug",
                                       "Sep", "Oct", "Nov", "Dec"};
  char got[40], want[40];
  long wrong = 0;
  for (time_t t = 0; t < (time_t)253402300799; t += 864013) {
    struct tm tm;
    gmtime_r(&t, &tm);
    snprintf(want, sizeof want, "%s, %02d %s %04d %02d:%02d:%02d GMT",
             days[tm.tm_wday], tm.tm_mday, months[tm.tm_mon], tm.tm_year + 1900,
             tm.tm_hour, tm.tm_min, tm.tm_sec);
    ll_blob_format_date(t, got, sizeof got);
    wrong += strcmp(got, want) != 0;
  }
  CHECK_INT(wrong, 0);
  ll_blob_format_date(1796021296, got, 12);
  CHECK_STR(got, "Mon, 30 Nov");
  ll_blob_format_date(253402300800, got, sizeof got); /* year 10000 */
  CHECK_STR(got, "Sat, 01 Jan 10000 00:00:00 GMT");
}

int main(void) {
  test_ops();
  test_date_sweep();
  test_targets();
  test_target_messages();
  test_builds();
  test_too_large();
  test_encoding_and_overrides();
  test_conditions();
  test_date();
  return ll_test_report("test_blob");
}
