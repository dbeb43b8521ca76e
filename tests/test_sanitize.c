/* The export projection (core/evidence/sanitize.c), through sanitize.h
 * only: lease IDs become their aliases whatever their case and hyphens,
 * the protected-only and credential keys are dropped, sig= values and
 * bearer tokens are redacted, an echoed secret is replaced where it was
 * found, and the scan finds whatever survived. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "testlib.h"

#define ID_A "0f8fad5b-d9cb-469f-a165-70867728950e"
#define ID_A_FLAT_UPPER "0F8FAD5BD9CB469FA16570867728950E"
#define ID_B "7c9e6679-7425-40de-944b-e07fc1f90ae7"

static const char *const ids[] = {ID_A, ID_B};
static const char *const aliases[] = {"A", "B"};

typedef struct {
  const char *in;
  int want_ok;
  const char *want; /* "" when refused */
} norm_case;

static const norm_case norm_cases[] = {
    {ID_A, 1, "0f8fad5bd9cb469fa16570867728950e"},
    {ID_A_FLAT_UPPER, 1, "0f8fad5bd9cb469fa16570867728950e"},
    {"0F8F-AD5B-D9CB-469F-A165-7086-7728-950E", 1,
     "0f8fad5bd9cb469fa16570867728950e"},
    {"0f8fad5b-d9cb-469f-a165-70867728950", 0, ""},   /* 31 digits */
    {"0f8fad5b-d9cb-469f-a165-70867728950e0", 0, ""}, /* 33 digits */
    {"0f8fad5b-d9cb-469f-a165-70867728950g", 0, ""},  /* not hex */
    {"", 0, ""},
};

static void test_norm_id(void) {
  for (size_t i = 0; i < sizeof norm_cases / sizeof norm_cases[0]; i++) {
    char out[LL_SANITIZE_ID_MAX] = "junk";
    CHECK_INT(ll_sanitize_norm_id(norm_cases[i].in, out),
              norm_cases[i].want_ok);
    CHECK_STR(out, norm_cases[i].want);
  }
  char out[LL_SANITIZE_ID_MAX] = "junk";
  CHECK_INT(ll_sanitize_norm_id(NULL, out), 0);
  CHECK_STR(out, "");
}

/* A protected row as the run writes it, with everything the export must
 * not keep: the real lease ID field (at the top and nested), credential
 * headers in any case, lease IDs in other spellings inside text, a SAS
 * signature and a bearer token inside text, and the protected chain. */
static const char protected_row[] =
    "{\"seq\":7,\"record\":\"outcome\",\"lease_real_id\":\"" ID_A "\","
    "\"lease_alias_supplied\":\"A\",\"http_status\":412,\"emitted_requests\":1,"
    "\"etag\":null,\"preflight\":true,\"mono_start_ns\":1346417642922,"
    "\"notes\":\"sent " ID_A_FLAT_UPPER " then " ID_B "\","
    "\"request_shape\":\"PUT <blob>?sv=2023-11-03&sig=abc%2Bdef&se=x\","
    "\"error_message\":\"header was Bearer eyJhbGciOi.payload.sig, sorry\","
    "\"request\":{\"headers\":{\"Authorization\":\"Bearer t0k\","
    "\"COOKIE\":\"c=1\",\"Set-Cookie\":\"d=2\",\"x-ms-lease-id\":\"" ID_A
    "\",\"lease_real_id\":\"" ID_B "\"},\"prev_hash\":\"kept-nested\"},"
    "\"discrepancy\":[{\"text\":\"lease " ID_B "\",\"explained_by\":null}],"
    "\"prev_hash\":\"aaaa\",\"row_hash\":\"bbbb\"}";

static void check_in_place(const cJSON *row, const char *const *idv,
                           const char *const *alv, size_t n);

static void test_row_projection(void) {
  cJSON *row = cJSON_Parse(protected_row);
  CHECK(row != NULL);
  if (!row)
    return;
  char *before = cJSON_PrintUnformatted(row);
  cJSON *ex = ll_sanitize_row(row, ids, aliases, 2);
  CHECK(ex != NULL);
  if (!ex) {
    free(before);
    cJSON_Delete(row);
    return;
  }
  /* dropped: the protected-only field, credentials, the protected chain */
  CHECK(!cJSON_HasObjectItem(ex, "lease_real_id"));
  CHECK(!cJSON_HasObjectItem(ex, "prev_hash"));
  CHECK(!cJSON_HasObjectItem(ex, "row_hash"));
  const cJSON *req = cJSON_GetObjectItemCaseSensitive(ex, "request");
  const cJSON *h = cJSON_GetObjectItemCaseSensitive(req, "headers");
  CHECK(h != NULL);
  CHECK(!cJSON_HasObjectItem(h, "Authorization"));
  CHECK(!cJSON_HasObjectItem(h, "COOKIE"));
  CHECK(!cJSON_HasObjectItem(h, "Set-Cookie"));
  CHECK(!cJSON_HasObjectItem(h, "lease_real_id"));
  /* the chain fields are dropped at the top only: nested, they are data */
  CHECK_STR(
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "prev_hash")),
      "kept-nested");
  /* lease IDs become aliases, whatever their spelling and depth */
  CHECK_STR(cJSON_GetStringValue(
                cJSON_GetObjectItemCaseSensitive(h, "x-ms-lease-id")),
            "A");
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ex, "notes")),
            "sent A then B");
  const cJSON *d0 = cJSON_GetArrayItem(
      cJSON_GetObjectItemCaseSensitive(ex, "discrepancy"), 0);
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d0, "text")),
            "lease B");
  CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(d0, "explained_by")));
  /* sig= and bearer tokens inside text are redacted, the rest kept */
  CHECK_STR(cJSON_GetStringValue(
                cJSON_GetObjectItemCaseSensitive(ex, "request_shape")),
            "PUT <blob>?sv=2023-11-03&sig=REDACTED&se=x");
  CHECK_STR(cJSON_GetStringValue(
                cJSON_GetObjectItemCaseSensitive(ex, "error_message")),
            "header was Bearer REDACTED, sorry");
  /* everything else is carried as it was: observed values are not changed */
  CHECK_INT(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ex, "seq")),
            7);
  CHECK_INT(
      cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ex, "http_status")),
      412);
  CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(
            ex, "mono_start_ns")) == 1346417642922.0);
  CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(ex, "etag")));
  CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ex, "preflight")));
  CHECK_STR(cJSON_GetStringValue(
                cJSON_GetObjectItemCaseSensitive(ex, "lease_alias_supplied")),
            "A");
  /* key order is kept (the export line is hashed as printed) */
  CHECK_STR(ex->child ? ex->child->string : NULL, "seq");
  CHECK_STR(ex->child && ex->child->next ? ex->child->next->string : NULL,
            "record");
  /* the printed export holds no lease ID, no token, no live sig= value */
  char *text = cJSON_PrintUnformatted(ex);
  CHECK(text != NULL);
  if (text) {
    const char *secrets[] = {"t0k", "eyJhbGciOi"};
    ll_scan_result r;
    ll_sanitize_scan(text, strlen(text), ids, 2, secrets, 2, &r);
    CHECK_INT(r.hits, 0);
    CHECK_INT(r.kind, LL_SCAN_NONE);
    CHECK(strstr(text, "c=1") == NULL);
  }
  free(text);
  /* the ledger's form (borrowing unchanged strings and keys from the row)
   * prints the same bytes, borrows at least one string, and leaves the
   * row as it was */
  cJSON *sh = ll_sanitize_row_shared(row, ids, aliases, 2);
  char *shared = sh ? cJSON_PrintUnformatted(sh) : NULL;
  char *deep = cJSON_PrintUnformatted(ex);
  CHECK(shared && deep && strcmp(shared, deep) == 0);
  int borrowed = 0;
  for (const cJSON *c = sh ? sh->child : NULL; c; c = c->next)
    borrowed +=
        cJSON_IsString(c) && (c->type & cJSON_IsReference) &&
        c->valuestring == cJSON_GetStringValue(
                              cJSON_GetObjectItemCaseSensitive(row, c->string));
  CHECK(borrowed > 0);
  /* a replaced string is the export's own, never the row's */
  const cJSON *rs = cJSON_GetObjectItemCaseSensitive(sh, "request_shape");
  CHECK(rs && !(rs->type & cJSON_IsReference));
  free(shared);
  free(deep);
  cJSON_Delete(sh);
  /* the protected row is untouched: the export is a copy */
  char *after = cJSON_PrintUnformatted(row);
  CHECK(before && after && strcmp(before, after) == 0);
  free(before);
  free(after);
  check_in_place(row, ids, aliases, 2);
  cJSON_Delete(ex);
  cJSON_Delete(row);
  CHECK(ll_sanitize_row(NULL, ids, aliases, 2) == NULL);
  CHECK(ll_sanitize_row_shared(NULL, ids, aliases, 2) == NULL);
  cJSON *dead = NULL;
  CHECK(!ll_sanitize_row_in_place(NULL, ids, aliases, 2, &dead));
  CHECK(dead == NULL);
}

/* The ledger's in-place form (the row itself becomes the export row)
 * prints the same bytes as the copy; every member it dropped or replaced
 * is on the dead chain, unchanged (the protected line's spans point at
 * them): the keys and values the copy left out or changed. */
static void check_in_place(const cJSON *row, const char *const *idv,
                           const char *const *alv, size_t n) {
  cJSON *ex = ll_sanitize_row(row, idv, alv, n);
  cJSON *own = cJSON_Duplicate(row, 1), *dead = NULL;
  CHECK(ex && own);
  if (!ex || !own)
    goto cleanup;
  const cJSON *top_before = own->child;
  CHECK(ll_sanitize_row_in_place(own, idv, alv, n, &dead));
  char *want = cJSON_PrintUnformatted(ex), *got = cJSON_PrintUnformatted(own);
  CHECK(want && got && strcmp(want, got) == 0);
  if (want && got && strcmp(want, got) != 0)
    fprintf(stderr, "  in place: %s\n  copy:     %s\n", got, want);
  free(want);
  free(got);
  /* a top member kept is the same node (its line bytes are reused) */
  int kept = 0;
  for (const cJSON *c = own->child; c; c = c->next)
    kept += c == top_before;
  const cJSON *e0 =
      top_before && top_before->string
          ? cJSON_GetObjectItemCaseSensitive(ex, top_before->string)
          : NULL;
  if (e0 && cJSON_IsString(e0) && cJSON_IsString(top_before) &&
      strcmp(e0->valuestring, top_before->valuestring) == 0)
    CHECK_INT(kept, 1);
  /* something left the row exactly when the export differs from it */
  char *orig = cJSON_PrintUnformatted(row), *exp = cJSON_PrintUnformatted(ex);
  CHECK(orig && exp && (dead != NULL) == (strcmp(orig, exp) != 0));
  free(orig);
  free(exp);
cleanup:
  cJSON_Delete(dead);
  cJSON_Delete(own);
  cJSON_Delete(ex);
}

/* Without bound IDs nothing is replaced by an alias, and a GUID that is
 * not bound stays (it is not a lease ID of this run). */
static void test_unbound_ids_kept(void) {
  cJSON *row = cJSON_Parse("{\"notes\":\"" ID_A "\"}");
  cJSON *ex = ll_sanitize_row(row, ids + 1, aliases + 1, 1);
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ex, "notes")),
            ID_A);
  cJSON_Delete(ex);
  cJSON_Delete(row);
}

typedef struct {
  const char *name;
  const char *in;
  size_t len; /* 0: strlen(in) */
  const char *want;
  size_t want_len; /* 0: strlen(want) */
  unsigned found;
} replace_case;

static const char *const secrets[] = {"s3cr3t-token", "SIGKEY"};
static const char *const placeholders[] = {"{{secret:token}}",
                                           "{{secret:sas}}"};

static const replace_case replace_cases[] = {
    {"nothing to replace", "x-ms-request-id: 42", 0, "x-ms-request-id: 42", 0,
     0},
    {"an echoed token", "got s3cr3t-token back", 0, "got {{secret:token}} back",
     0, 1u},
    {"both secrets, twice", "SIGKEY/s3cr3t-token/SIGKEY", 0,
     "{{secret:sas}}/{{secret:token}}/{{secret:sas}}", 0, 3u},
    {"a sig= value, any case", "u?SIG=abc%2F&sv=1", 0, "u?SIG=REDACTED&sv=1", 0,
     LL_REDACT_SIG},
    {"an already redacted sig= is left", "u?sig=REDACTED&sv=1", 0,
     "u?sig=REDACTED&sv=1", 0, 0},
    {"REDACTED as a prefix is not redacted", "sig=REDACTEDX", 0, "sig=REDACTED",
     0, LL_REDACT_SIG},
    {"bytes, not only text", "a\0s3cr3t-token", 14, "a\0{{secret:token}}", 18,
     1u},
    {"exact bytes: case matters for a secret", "S3CR3T-TOKEN", 0,
     "S3CR3T-TOKEN", 0, 0},
};

static void test_replace(void) {
  for (size_t i = 0; i < sizeof replace_cases / sizeof replace_cases[0]; i++) {
    const replace_case *c = &replace_cases[i];
    int before = ll_test_fail;
    size_t len = c->len ? c->len : strlen(c->in);
    size_t want_len = c->want_len ? c->want_len : strlen(c->want);
    ll_buf out = {0};
    unsigned found =
        ll_sanitize_replace(c->in, len, secrets, placeholders, 2, &out);
    CHECK_INT(found, c->found);
    CHECK_INT(out.oom, 0);
    CHECK_INT(out.n, want_len);
    CHECK(out.p && out.n == want_len && memcmp(out.p, c->want, want_len) == 0);
    if (ll_test_fail > before)
      fprintf(stderr, "  in replace case \"%s\"\n", c->name);
    free(out.p);
  }
}

static void test_redact_in_place(void) {
  cJSON *row = cJSON_Parse(
      "{\"error_message\":\"bad s3cr3t-token\",\"status\":403,"
      "\"s3cr3t-token\":\"key stays\","
      "\"response\":{\"headers\":{\"server\":\"x s3cr3t-token y\","
      "\"location\":\"/b?sig=zzz\"}},\"list\":[\"ok\",\"SIGKEY\"]}");
  CHECK(row != NULL);
  unsigned found = 0;
  ll_buf where = {0};
  CHECK_INT(ll_sanitize_redact(row, secrets, placeholders, 2, &found, &where),
            LL_OK);
  CHECK_INT(found, 3u | LL_REDACT_SIG);
  CHECK_STR(where.p, "error_message, response.headers.server, "
                     "response.headers.location, list[1]");
  CHECK_STR(cJSON_GetStringValue(
                cJSON_GetObjectItemCaseSensitive(row, "error_message")),
            "bad {{secret:token}}");
  /* keys are not values: never changed */
  CHECK_STR(cJSON_GetStringValue(
                cJSON_GetObjectItemCaseSensitive(row, "s3cr3t-token")),
            "key stays");
  const cJSON *hd = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(row, "response"), "headers");
  CHECK_STR(
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(hd, "server")),
      "x {{secret:token}} y");
  CHECK_STR(
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(hd, "location")),
      "/b?sig=REDACTED");
  CHECK_STR(cJSON_GetStringValue(cJSON_GetArrayItem(
                cJSON_GetObjectItemCaseSensitive(row, "list"), 1)),
            "{{secret:sas}}");
  CHECK_INT(
      cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(row, "status")),
      403);
  free(where.p);
  /* a clean row: nothing found, nowhere */
  cJSON *clean = cJSON_Parse("{\"a\":\"b\",\"n\":[1,2]}");
  ll_buf w2 = {0};
  found = 99;
  CHECK_INT(ll_sanitize_redact(clean, secrets, placeholders, 2, &found, &w2),
            LL_OK);
  CHECK_INT(found, 0);
  CHECK_STR(w2.p, "");
  free(w2.p);
  cJSON_Delete(clean);
  cJSON_Delete(row);
}

static void test_note(void) {
  ll_buf note = {0};
  ll_sanitize_note(&note, "x-ms-request-id, response body", 1u | LL_REDACT_SIG,
                   placeholders, 2);
  CHECK_STR(note.p, "the service echoed a secret in x-ms-request-id, response "
                    "body; replaced by {{secret:token}}, sig=REDACTED");
  free(note.p);
  ll_buf n2 = {0};
  ll_sanitize_note(&n2, "server", 2u, placeholders, 2);
  CHECK_STR(
      n2.p,
      "the service echoed a secret in server; replaced by {{secret:sas}}");
  free(n2.p);
}

typedef struct {
  const char *name;
  const char *text;
  size_t hits;
  ll_scan_kind kind;
  size_t index, offset;
  int stretch; /* found by the ledger's scan only (ll_sanitize_scan_ids) */
} scan_case;

static const scan_case scan_cases[] = {
    {"clean", "{\"lease_alias_supplied\":\"A\",\"sig\":\"sig=REDACTED\"}", 0,
     LL_SCAN_NONE, 0, 0, 0},
    {"an ID in another spelling", "0123456789" ID_A_FLAT_UPPER, 1, LL_SCAN_ID,
     0, 10, 0},
    {"the second ID", "xx" ID_B, 1, LL_SCAN_ID, 1, 2, 0},
    {"the first hit by offset wins", "..." ID_B " sig=live s3cr3t-token", 3,
     LL_SCAN_ID, 1, 3, 0},
    {"a secret before an ID", "SIGKEY " ID_A, 2, LL_SCAN_SECRET, 1, 0, 0},
    {"a live sig=", "q=1&sig=abc", 1, LL_SCAN_SIG, 0, 4, 0},
    /* a stretch from inside an ID: 16 digits or more, hyphens anywhere */
    {"an ID's last 28 digits", "x ad5b-d9cb-469f-a165-70867728950e", 1,
     LL_SCAN_ID, 0, 2, 1},
    {"a token replaced over an ID's first digits",
     "x {{secret:token}}ad5b-d9cb-469f-a165-70867728950e y", 1, LL_SCAN_ID, 0,
     18, 1},
    {"16 digits from its middle, flat, in upper case", "[D9CB469FA1657086]", 1,
     LL_SCAN_ID, 0, 1, 1},
    {"15 are not told from other hex", "[D9CB469FA165708]", 0, LL_SCAN_NONE, 0,
     0, 0},
    {"B's middle, hyphens moved", "7425-40DE944Be07f-c1f9", 1, LL_SCAN_ID, 1, 0,
     1},
    {"sig=REDACTED escaped in printed JSON", "\"sig=REDACTED\\\"\"", 0,
     LL_SCAN_NONE, 0, 0, 0},
};

static void test_scan(void) {
  for (size_t i = 0; i < sizeof scan_cases / sizeof scan_cases[0]; i++) {
    const scan_case *c = &scan_cases[i];
    int before = ll_test_fail;
    ll_scan_result r, plain;
    ll_san_ids t;
    ll_san_ids_make(&t, ids, 2);
    memset(&r, 0xff, sizeof r);
    ll_sanitize_scan_ids(c->text, strlen(c->text), ids, &t, secrets, 2, &r);
    CHECK_INT(r.hits, c->hits);
    CHECK_INT(r.kind, c->kind);
    if (c->hits) {
      CHECK_INT(r.index, c->index);
      CHECK_INT(r.offset, c->offset);
    }
    /* the scan verify and corroboration use: the same, but a stretch */
    ll_sanitize_scan(c->text, strlen(c->text), ids, 2, secrets, 2, &plain);
    CHECK_INT(plain.hits, c->stretch ? 0 : c->hits);
    CHECK_INT(plain.offset, c->stretch ? 0 : r.offset);
    if (ll_test_fail > before)
      fprintf(stderr, "  in scan case \"%s\"\n", c->name);
  }
  ll_scan_result r;
  ll_sanitize_scan(NULL, 0, ids, 2, secrets, 2, &r);
  CHECK_INT(r.hits, 0);
}

/* Many bound IDs (a run binding 32+ writers, or a long recovery history):
 * every one of them is replaced by its alias wherever it sits, in both
 * projections, whatever its first byte, and the scan finds none left. */
static void test_many_ids(void) {
  enum { N = 40 };
  static const char hex[] = "0123456789abcdef";
  char idbuf[N][37], alias[N][8];
  const char *idv[N], *alv[N];
  cJSON *row = cJSON_CreateObject();
  for (int i = 0; i < N; i++) {
    /* the first 32 start with 0-3, the last 8 with digits and letters
     * none of those had (upper case for some): a table filled only for
     * the first IDs misses them */
    char c = i < 32 ? hex[i % 4] : hex[4 + (i - 32) * 3 / 2];
    if (i % 3 == 0 && c >= 'a')
      c = (char)(c - 'a' + 'A');
    snprintf(idbuf[i], sizeof idbuf[i], "%c%07x-d9cb-469f-a165-%012x", c,
             (unsigned)i * 2654435u, (unsigned)i + 0x1000u);
    snprintf(alias[i], sizeof alias[i], "W%d", i);
    idv[i] = idbuf[i];
    alv[i] = alias[i];
    char key[16], val[64];
    snprintf(key, sizeof key, "k%d", i);
    snprintf(val, sizeof val, "lease %.36s held", idbuf[i]);
    cJSON_AddStringToObject(row, key, val);
  }
  cJSON *ex = ll_sanitize_row(row, idv, alv, N);
  cJSON *sh = ll_sanitize_row_shared(row, idv, alv, N);
  CHECK(ex != NULL && sh != NULL);
  for (int i = 0; ex && sh && i < N; i++) {
    char key[16], want[32];
    snprintf(key, sizeof key, "k%d", i);
    snprintf(want, sizeof want, "lease %.7s held", alias[i]);
    const char *got = cJSON_GetStringValue(cJSON_GetObjectItem(ex, key));
    const char *gs = cJSON_GetStringValue(cJSON_GetObjectItem(sh, key));
    CHECK_STR(got ? got : "(none)", want);
    CHECK(got && gs && strcmp(got, gs) == 0);
  }
  char *text = ex ? cJSON_PrintUnformatted(ex) : NULL;
  ll_scan_result r;
  if (text) {
    ll_sanitize_scan(text, strlen(text), idv, N, NULL, 0, &r);
    CHECK_INT((int)r.hits, 0);
  }
  free(text);
  check_in_place(row, idv, alv, N);
  cJSON_Delete(ex);
  cJSON_Delete(sh);
  cJSON_Delete(row);
}

/* A borrowed subtree (an object reference) is not the row's to change:
 * the in-place form replaces it by its sanitized copy and leaves the
 * referenced object as it was; a row that is itself a reference is
 * refused. */
static void test_in_place_reference(void) {
  cJSON *other = cJSON_Parse("{\"lease\":\"" ID_A "\",\"oid\":\"x\"}");
  cJSON *row = cJSON_Parse("{\"record\":\"outcome\",\"n\":1.5,"
                           "\"t\":true,\"z\":null,\"oid\":\"o\","
                           "\"a\":[\"" ID_B "\",2,{\"tid\":\"t\"}]}");
  CHECK(other && row);
  if (!other || !row)
    goto cleanup;
  char *other_before = cJSON_PrintUnformatted(other);
  CHECK(cJSON_AddItemReferenceToObject(row, "borrowed", other));
  check_in_place(row, ids, aliases, 2);
  cJSON *dead = NULL;
  CHECK(ll_sanitize_row_in_place(row, ids, aliases, 2, &dead));
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(row, "borrowed");
  CHECK(b && !(b->type & cJSON_IsReference));
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "lease")),
            "A");
  CHECK(!cJSON_HasObjectItem(b, "oid"));
  char *other_after = cJSON_PrintUnformatted(other);
  CHECK(other_before && other_after && strcmp(other_before, other_after) == 0);
  free(other_before);
  free(other_after);
  cJSON_Delete(dead);
  cJSON *ref = cJSON_CreateObjectReference(other->child);
  dead = NULL;
  CHECK(ref && !ll_sanitize_row_in_place(ref, ids, aliases, 2, &dead));
  CHECK(dead == NULL);
  cJSON_Delete(ref);
cleanup:
  cJSON_Delete(row);
  cJSON_Delete(other);
}

/* Every identifier the protected ledger alone keeps is dropped from the
 * export, at the top, nested, and in another case; the keys the run and
 * verify bind come from the same list (LL_IDENTITY_PRIVATE_KEYS). */
static void test_identity_keys_dropped(void) {
  static const char *const keys[] = {LL_IDENTITY_PRIVATE_KEYS};
  CHECK_INT((int)(sizeof keys / sizeof keys[0]), LL_IDENTITY_PRIVATE_NKEYS);
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    char upper[16];
    snprintf(upper, sizeof upper, "%s", keys[i]);
    for (char *c = upper; *c; c++)
      if (*c >= 'a' && *c <= 'z')
        *c = (char)(*c - 'a' + 'A');
    cJSON *row = cJSON_CreateObject(), *inner = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "record", "manifest");
    cJSON_AddStringToObject(row, keys[i], "top");
    cJSON_AddStringToObject(inner, keys[i], "nested");
    cJSON_AddStringToObject(inner, upper, "upper");
    cJSON_AddStringToObject(inner, "kept", "yes");
    cJSON_AddItemToObject(row, "identities", inner);
    cJSON *ex = ll_sanitize_row(row, NULL, NULL, 0);
    CHECK(ex != NULL);
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(ex, "identities");
    CHECK(!cJSON_HasObjectItem(ex, keys[i]));
    CHECK(in && !cJSON_HasObjectItem(in, keys[i]));
    CHECK(in && !cJSON_HasObjectItem(in, upper));
    CHECK(in && cJSON_HasObjectItem(in, "kept"));
    cJSON_Delete(ex);
    cJSON_Delete(row);
  }
}

/* Past the 30th secret, a match is still replaced, and said (the run
 * learns four forms of each lease ID it did not bind, so a long table
 * can pass 31): before, the 31st on were left in place, and the scan
 * then refused the whole row. */
static void test_many_secrets(void) {
  enum { N = 40 };
  char sec[N][24], ph[N][32];
  const char *secs[N], *phs[N];
  for (int i = 0; i < N; i++) {
    snprintf(sec[i], sizeof sec[i], "secret-%02d-value", i);
    snprintf(ph[i], sizeof ph[i], "{{secret:%s}}",
             i < 2 ? "token" : "lease-id");
    secs[i] = sec[i];
    phs[i] = ph[i];
  }
  const char *in = "id=secret-37-value; other=secret-01-value";
  ll_buf out = {0};
  unsigned hit = ll_sanitize_replace(in, strlen(in), secs, phs, N, &out);
  CHECK(hit & LL_REDACT_MORE);
  CHECK(hit & (1u << 1));
  CHECK_STR(out.p, "id={{secret:lease-id}}; other={{secret:token}}");
  ll_buf note = {0};
  ll_sanitize_note(&note, "x-ms-request-id", hit, phs, N);
  CHECK_STR(note.p, "the service echoed a secret in x-ms-request-id; replaced "
                    "by {{secret:token}}, {{secret:lease-id}}");
  free(out.p);
  free(note.p);
}

int main(void) {
  test_identity_keys_dropped();
  test_many_secrets();
  test_norm_id();
  test_row_projection();
  test_unbound_ids_kept();
  test_replace();
  test_redact_in_place();
  test_note();
  test_scan();
  test_many_ids();
  test_in_place_reference();
  return ll_test_report("test_sanitize");
}
