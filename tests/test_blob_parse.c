/* Blob responses: error codes and messages from headers and XML bodies,
 * headers copied verbatim and whole or not at all, and lease ID
 * validation and comparison. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blob.h"
#include "testlib.h"

#define LA "0f8fad5b-d9cb-469f-a165-70867728950e"
#define LB "7C9E6679-7425-40DE-944B-E07FC1F90AE7"
#define SECRET "not-a-guid-secret-123"

/* ---- response parsing ------------------------------------------------ */

#define BOM "\xEF\xBB\xBF"
#define XML_ERR(code, msg)                                                     \
  BOM "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>" code           \
      "</Code><Message>" msg "</Message></Error>"
#define MISSING_MSG                                                            \
  "There is currently a lease on the blob and no lease ID was specified in "   \
  "the request.\nRequestId:abc\nTime:2026-11-30T06:48:16.0000000Z"

/* h: response headers, "Name: value" lines. */
static const struct {
  const char *name;
  long status;
  const char *h, *body, *code, *message;
  int malformed;
} parses[] = {
    {"412 BOM'd body, header agrees", 412,
     "x-ms-error-code: LeaseIdMissing\nx-ms-request-id: r-1",
     XML_ERR("LeaseIdMissing", MISSING_MSG), "LeaseIdMissing", MISSING_MSG, 0},
    {"header code preferred over XML", 412,
     "x-ms-error-code: LeaseIdMismatchWithBlobOperation",
     XML_ERR("LeaseIdMissing", "m"), "LeaseIdMismatchWithBlobOperation", "m",
     0},
    {"XML code when no header", 409, "x-ms-request-id: r-2",
     XML_ERR("LeaseAlreadyPresent", "There is already a lease present."),
     "LeaseAlreadyPresent", "There is already a lease present.", 0},
    {"HEAD 404 without body", 404, "x-ms-error-code: BlobNotFound", "",
     "BlobNotFound", "", 0},
    {"malformed error body", 503, "x-ms-error-code: ServerBusy",
     "<html>Service Unavailable", "ServerBusy", "", 1},
    {"plain text error body", 500, "", "oops", "", "", 1},
    {"success body is content, not XML", 200, "ETag: \"0x1\"",
     "{\"purpose\":\"lease-handoff-lab\",\"revision\":1,\"writer\":\"A\"}", "",
     "", 0},
    {"success body that looks like an error is ignored", 200, "",
     XML_ERR("LeaseIdMissing", "m"), "", "", 0},
};

static void add_headers(ll_headers *h, const char *spec) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", spec);
  char *save = NULL;
  for (char *line = strtok_r(buf, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    char *sep = strstr(line, ": ");
    CHECK(sep != NULL);
    if (!sep)
      continue;
    *sep = '\0';
    CHECK_INT(ll_headers_add(h, line, sep + 2), LL_OK);
  }
}

static void test_parse_table(void) {
  for (size_t i = 0; i < sizeof parses / sizeof parses[0]; i++) {
    ll_http_response r;
    ll_http_response_init(&r);
    r.outcome = LL_OUTCOME_RESPONSE;
    r.status = parses[i].status;
    add_headers(&r.headers, parses[i].h);
    r.body = (unsigned char *)strdup(parses[i].body);
    r.body_len = strlen(parses[i].body);
    ll_blob_result res;
    CHECK_INT(ll_blob_parse(&r, &res), LL_OK);
    if (strcmp(res.error_code, parses[i].code) != 0)
      fprintf(stderr, "parse: %s\n", parses[i].name);
    CHECK_INT(res.status, parses[i].status);
    CHECK_STR(res.error_code, parses[i].code);
    CHECK_STR(res.error_message, parses[i].message);
    CHECK_INT(res.error_body_malformed, parses[i].malformed);
    ll_http_response_cleanup(&r);
  }
}

/* Every header is copied exactly as received: quotes, case, spacing. */
#define F(field) offsetof(ll_blob_result, field)
static const struct {
  const char *header; /* "Name: value" */
  size_t field;
  const char *want;
} verbatim[] = {
    {"etag: \"0x8DC5D1C2F3A4B5C\"", F(etag), "\"0x8DC5D1C2F3A4B5C\""},
    {"Last-Modified: Mon, 30 Nov 2026 06:48:16 GMT", F(last_modified),
     "Mon, 30 Nov 2026 06:48:16 GMT"},
    {"Content-Length: 57", F(content_length), "57"},
    {"x-ms-request-id: 0a1b2c3d-0001", F(request_id), "0a1b2c3d-0001"},
    {"x-ms-version: 2026-06-06", F(returned_version), "2026-06-06"},
    {"x-ms-lease-state: Breaking", F(lease_state), "Breaking"},
    {"x-ms-lease-status: locked", F(lease_status), "locked"},
    {"x-ms-lease-duration: infinite", F(lease_duration), "infinite"},
    {"X-MS-LEASE-ID: " LB, F(lease_id), LB},
    {"x-ms-lease-time: 30", F(lease_time), "30"},
    {"x-ms-error-code:  Odd Case ", F(error_code), " Odd Case "},
    {"Server: Azurite-Blob/3.37.0", F(server), "Azurite-Blob/3.37.0"},
};

static void test_parse_verbatim(void) {
  ll_http_response r;
  ll_http_response_init(&r);
  r.status = 202;
  for (size_t i = 0; i < sizeof verbatim / sizeof verbatim[0]; i++)
    add_headers(&r.headers, verbatim[i].header);
  ll_blob_result res;
  CHECK_INT(ll_blob_parse(&r, &res), LL_OK);
  CHECK_INT(res.status, 202);
  CHECK_INT(res.error_body_malformed, 0);
  for (size_t i = 0; i < sizeof verbatim / sizeof verbatim[0]; i++)
    CHECK_STR((const char *)&res + verbatim[i].field, verbatim[i].want);
  ll_http_response_cleanup(&r);

  /* Absent headers are empty strings. */
  ll_http_response_init(&r);
  r.status = 201;
  CHECK_INT(ll_blob_parse(&r, &res), LL_OK);
  for (size_t i = 0; i < sizeof verbatim / sizeof verbatim[0]; i++)
    CHECK_STR((const char *)&res + verbatim[i].field, "");
  ll_http_response_cleanup(&r);
  CHECK_INT(ll_blob_parse(NULL, &res), LL_E_USAGE);
}

/* A header is kept whole or not at all: a value longer than its field,
 * or a name (in any case) sent with two different values, leaves the
 * field empty and names the header in header_problems. */
#define LONG_ID LB "---------------------------" LA /* 99 bytes */
static const struct {
  const char *h; /* "Name: value" lines */
  size_t field;
  const char *want, *problems;
} whole[] = {
    {"x-ms-lease-id: " LB "\nX-MS-LEASE-ID: " LB, F(lease_id), LB, ""},
    {"x-ms-lease-id: " LB "\nx-ms-lease-id: " LA, F(lease_id), "",
     "x-ms-lease-id: different values in 2 headers"},
    {"x-ms-lease-id: " LB "\nX-Ms-Lease-Id: " LA, F(lease_id), "",
     "x-ms-lease-id: different values in 2 headers"},
    {"x-ms-lease-id: " LONG_ID, F(lease_id), "",
     "x-ms-lease-id: longer than 63 bytes"},
    {"x-ms-lease-state: leased\nx-ms-lease-state: available", F(lease_state),
     "", "x-ms-lease-state: different values in 2 headers"},
    {"x-ms-lease-status: locked\nx-ms-lease-status: unlocked", F(lease_status),
     "", "x-ms-lease-status: different values in 2 headers"},
    {"x-ms-lease-duration: infinite\nx-ms-lease-duration: fixed",
     F(lease_duration), "",
     "x-ms-lease-duration: different values in 2 headers"},
    {"x-ms-version: 2023-11-03\nx-ms-version: 2026-06-06", F(returned_version),
     "", "x-ms-version: different values in 2 headers"},
    {"ETag: \"0x1\"\netag: \"0x2\"\nETAG: \"0x1\"", F(etag), "",
     "ETag: different values in 3 headers"},
    {"Content-Length: 57\ncontent-length: 58", F(content_length), "",
     "Content-Length: different values in 2 headers"},
    {"x-ms-error-code: LeaseLost\nx-ms-error-code: LeaseIdMissing",
     F(error_code), "", "x-ms-error-code: different values in 2 headers"},
    {"x-ms-lease-state: leasedddddddddddddddddddddddddddd", F(lease_state), "",
     "x-ms-lease-state: longer than 31 bytes"},
    /* the known deviations are matched on Server: a second, differing
     * one is not dropped in silence */
    {"Server: Azurite-Blob/3.37.0\nserver: Windows-Azure-Blob/1.0", F(server),
     "", "Server: different values in 2 headers"},
    {"Server: Azurite-Blob/3.37.0\nSERVER: Azurite-Blob/3.37.0", F(server),
     "Azurite-Blob/3.37.0", ""},
    {"Server: " LONG_ID LONG_ID LONG_ID, F(server), "",
     "Server: longer than 255 bytes"},
    /* two problems, in the parser's order; the other fields kept */
    {"ETag: \"0x1\"\nx-ms-lease-id: " LONG_ID "\nEtag: \"0x2\"\n"
     "x-ms-lease-state: leased",
     F(lease_state), "leased",
     "x-ms-lease-id: longer than 63 bytes; ETag: different values in 2 "
     "headers"},
};

static void test_parse_whole(void) {
  for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++) {
    ll_http_response r;
    ll_http_response_init(&r);
    r.outcome = LL_OUTCOME_RESPONSE;
    r.status = 412;
    add_headers(&r.headers, whole[i].h);
    /* an XML code never stands in for a header that was not kept */
    const char *body = XML_ERR("LeaseIdMismatchWithBlobOperation", "m");
    r.body = (unsigned char *)strdup(body);
    r.body_len = strlen(body);
    ll_blob_result res;
    CHECK_INT(ll_blob_parse(&r, &res), LL_OK);
    if (strcmp((const char *)&res + whole[i].field, whole[i].want) != 0 ||
        strcmp(res.header_problems, whole[i].problems) != 0)
      fprintf(stderr, "whole: case %zu\n", i);
    CHECK_STR((const char *)&res + whole[i].field, whole[i].want);
    CHECK_STR(res.header_problems, whole[i].problems);
    if (whole[i].field != F(error_code))
      CHECK_STR(res.error_code, "LeaseIdMismatchWithBlobOperation");
    ll_http_response_cleanup(&r);
  }

  /* a list too long for its field ends in "..." */
  ll_http_response r;
  ll_http_response_init(&r);
  char name[32];
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 11; k++) {
      static const char *const names[] = {
          "x-ms-request-id",     "x-ms-version",
          "x-ms-lease-state",    "x-ms-lease-status",
          "x-ms-lease-duration", "x-ms-lease-id",
          "x-ms-lease-time",     "ETag",
          "Last-Modified",       "Content-Length",
          "x-ms-error-code"};
      snprintf(name, sizeof name, "%d", i);
      CHECK_INT(ll_headers_add(&r.headers, names[k], name), LL_OK);
    }
  ll_blob_result res;
  CHECK_INT(ll_blob_parse(&r, &res), LL_OK);
  size_t n = strlen(res.header_problems);
  CHECK(n == sizeof res.header_problems - 1);
  CHECK(n > 3 && strcmp(res.header_problems + n - 3, "...") == 0);
  ll_http_response_cleanup(&r);
}

/* ---- lease IDs ------------------------------------------------------- */

static void test_lease_ids(void) {
  static const struct {
    const char *id;
    int valid;
  } ids[] = {{LA, 1},
             {LB, 1},
             {"0F8fAD5B-d9cb-469F-a165-70867728950e", 1},
             {"00000000-0000-0000-0000-000000000000", 1},
             {"", 0},
             {SECRET, 0},
             {"{" LA "}", 0},
             {"0f8fad5bd9cb469fa16570867728950e", 0},
             {"0f8fad5b-d9cb-469f-a165-70867728950", 0},
             {"0f8fad5b-d9cb-469f-a165-70867728950e0", 0},
             {"0f8fad5b-d9cb-469f-a165-70867728950g", 0},
             {"0f8fad5b-d9cb-469f-a16570867728950e-", 0},
             {" 0f8fad5b-d9cb-469f-a165-70867728950e", 0},
             {NULL, 0}};
  for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
    CHECK_INT(ll_lease_id_valid(ids[i].id), ids[i].valid);

  static const struct {
    const char *a, *b;
    int equal;
  } eq[] = {{LA, LA, 1},
            {LA, "0F8FAD5B-D9CB-469F-A165-70867728950E", 1},
            {LA, "0f8fad5bd9cb469fa16570867728950e", 1},
            {LA, LB, 0},
            {LA, "0f8fad5b-d9cb-469f-a165-70867728950f", 0},
            {LA, "0f8fad5b-d9cb-469f-a165-70867728950", 0},
            {LA, NULL, 0},
            {NULL, NULL, 0},
            {"", "", 0},
            {"--", "-", 0}};
  for (size_t i = 0; i < sizeof eq / sizeof eq[0]; i++)
    CHECK_INT(ll_lease_id_equal(eq[i].a, eq[i].b), eq[i].equal);

  /* A returned ID matches the proposed one only as one exact GUID. */
  static const struct {
    const char *returned, *proposed;
    int same;
  } ret[] = {{LA, LA, 1},
             {"0F8FAD5B-D9CB-469F-A165-70867728950E", LA, 1},
             {LA, "0F8FAD5B-D9CB-469F-A165-70867728950E", 1},
             {"0f8fad5bd9cb469fa16570867728950e", LA, 0},
             {LA "---------------------------", LA, 0},
             {LA "---------------------------" LB, LA, 0},
             {"-" LA, LA, 0},
             {LA "-", LA, 0},
             {"0f8fad5b-d9cb-469f-a165-70867728950", LA, 0},
             {"", LA, 0},
             {LA, "", 0},
             {LB, LA, 0},
             {NULL, LA, 0},
             {LA, NULL, 0}};
  for (size_t i = 0; i < sizeof ret / sizeof ret[0]; i++)
    CHECK_INT(ll_lease_id_returned(ret[i].returned, ret[i].proposed),
              ret[i].same);
}

int main(void) {
  test_parse_table();
  test_parse_verbatim();
  test_parse_whole();
  test_lease_ids();
  return ll_test_report("test_blob_parse");
}
