/* The forms a secret comes back in, through the ledger's own API: a SAS
 * signature echoed in another encoding than the query's, or behind a sig=
 * key that is percent-encoded; a learnt lease ID echoed in another case,
 * with its hyphens elsewhere, or among other hex digits; and a bound lease
 * ID cut by a field's limit (error_message). Each is replaced before the
 * row is written, and the scan refuses a row that still holds one. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blob.h"
#include "ledger.h"
#include "sanitize.h"
#include "testlib.h"

#define SIG_RAW "k7Jm3Q%2BvX%2F9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM%3D"
#define SIG_CORE "9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM"

#define ID_A "0f8fad5b-d9cb-469f-a165-70867728950e"

static char root[512];

/* Whether s holds 8 or more consecutive hex digits of ID_A (any case,
 * hyphens skipped), as a prefix of it or anywhere in it. */
static int holds_id_part(const char *s) {
  static const char flat[] = "0f8fad5bd9cb469fa16570867728950e";
  for (size_t i = 0; s && s[i]; i++)
    for (size_t j = 0; j + 8 <= 32; j++) {
      size_t k = i, m = j;
      while (s[k] && m < 32) {
        if (s[k] == '-' && k > i) {
          k++;
          continue;
        }
        if (tolower((unsigned char)s[k]) != flat[m])
          break;
        k++;
        m++;
      }
      if (m - j >= 8)
        return 1;
    }
  return 0;
}

static ll_ledger *open_ledger(const char *name) {
  char dir[700];
  ll_error err = {0};
  snprintf(dir, sizeof dir, "%s/%s", root, name);
  ll_ledger *l = ll_ledger_open(dir, LL_LEDGER_CREATE, &err);
  CHECK(l != NULL);
  return l;
}

/* One row {"record":"outcome","error_message":text} redacted by l: the
 * value afterwards (malloc'd), and whether the unredacted row was
 * refused by the ledger's scan (*refused). */
static char *redacted(ll_ledger *l, const char *text, int *refused) {
  ll_error err = {0};
  cJSON *row = cJSON_CreateObject();
  cJSON_AddStringToObject(row, "record", "outcome");
  cJSON_AddStringToObject(row, "error_message", text);
  *refused = ll_ledger_append(l, row, NULL, &err) == LL_E_INTERNAL;
  CHECK_INT(ll_ledger_redact(l, row, &err), LL_OK);
  char *out =
      strdup(cJSON_GetStringValue(cJSON_GetObjectItem(row, "error_message")));
  cJSON_Delete(row);
  return out;
}

/* S1: the run registers its SAS signature as the query holds it; a
 * server may echo it decoded, with lowercase hex, double-encoded, as
 * base64url, or with '+' read as a space, and a sig= key encoded. */
static void test_sig_forms(void) {
  static const char *const echoes[] = {
      "value k7Jm3Q+vX/9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM= refused",
      "value k7Jm3Q%2bvX%2f9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM%3d refused",
      "value k7Jm3Q%2BvX%2f9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM%3D refused",
      "value k7Jm3Q%252BvX%252F9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM refused",
      "value k7Jm3Q-vX_9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM refused",
      "value k7Jm3Q vX/9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM= refused",
  };
  static const char *const keys[] = {
      "url /c/b?sv=1%26sig%3DOTHERSIGNATURE&x=1",
      "url /c/b?sv=1%26SiG%3dOTHERSIGNATURE&x=1",
      "url /c/b?sv=1%2526sig%253DOTHERSIGNATURE&x=1",
  };
  ll_ledger *l = open_ledger("sig");
  if (!l)
    return;
  ll_error err = {0};
  CHECK_INT(ll_ledger_add_named_secret(l, SIG_RAW, "sas", &err), LL_OK);
  for (size_t i = 0; i < sizeof echoes / sizeof echoes[0]; i++) {
    int refused, before = ll_test_fail;
    char *out = redacted(l, echoes[i], &refused);
    CHECK(refused);
    CHECK(out && strstr(out, SIG_CORE) == NULL);
    CHECK(out && strstr(out, "{{secret:sas}}") != NULL);
    if (ll_test_fail > before)
      fprintf(stderr, "  in echo %zu: %s -> %s\n", i, echoes[i], out);
    free(out);
  }
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    int refused, before = ll_test_fail;
    char *out = redacted(l, keys[i], &refused);
    CHECK(refused);
    CHECK(out && strstr(out, "OTHERSIGNATURE") == NULL);
    CHECK(out && strstr(out, "REDACTED") != NULL);
    if (ll_test_fail > before)
      fprintf(stderr, "  in key %zu: %s -> %s\n", i, keys[i], out);
    free(out);
  }
  /* a mix of encodings (no registered form matches whole), and a value
   * after sig= whose '+' a form decoder read as a space: the whole
   * signature goes, not only its part up to the first odd byte */
  static const char *const mixed[][2] = {
      {"value k7Jm3Q%2BvX/9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM%3D refused",
       "value {{secret:sas}} refused"},
      {"value k7Jm3Q+vX%2f9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM= refused",
       "value {{secret:sas}} refused"},
      {"value k7Jm3Q+vX\\/9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM= refused",
       "value {{secret:sas}} refused"},
      {"value k7Jm3Q%252bvX%2F9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM refused",
       "value {{secret:sas}} refused"},
      {"value k7Jm3Q-vX/9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM refused",
       "value {{secret:sas}} refused"},
      {"url /c/b?sv=1&sig=k7Jm3Q vX/9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM= refused",
       "url /c/b?sv=1&sig=REDACTED refused"},
      {"url /c/b?sv=1&sig=k7Jm3Q vX%2F9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM%3D x",
       "url /c/b?sv=1&sig=REDACTED x"},
  };
  for (size_t i = 0; i < sizeof mixed / sizeof mixed[0]; i++) {
    int refused, before = ll_test_fail;
    char *out = redacted(l, mixed[i][0], &refused);
    CHECK(refused);
    CHECK_STR(out, mixed[i][1]);
    if (ll_test_fail > before)
      fprintf(stderr, "  in mixed %zu: %s -> %s\n", i, mixed[i][0], out);
    free(out);
  }
  /* the export projection redacts an encoded sig= key as well */
  cJSON *row = cJSON_CreateObject();
  cJSON_AddStringToObject(row, "u", keys[0]);
  cJSON *ex = ll_sanitize_row(row, NULL, NULL, 0);
  const char *u = cJSON_GetStringValue(cJSON_GetObjectItem(ex, "u"));
  CHECK(u && strstr(u, "OTHERSIGNATURE") == NULL);
  cJSON_Delete(ex);
  cJSON_Delete(row);
  ll_ledger_close(l);
}

/* S6/S7: a learnt lease ID (run_request.c's learn_guid registers it as it
 * came, and hyphenated and plain in lower and in upper case) echoed in a
 * form that is none of those five. */
static void test_learnt_id_forms(void) {
  static const char *const forms[] = {
      ID_A, "0f8fad5b-d9cb-469f-a165-70867728950e",
      "0F8FAD5B-D9CB-469F-A165-70867728950E",
      "0f8fad5bd9cb469fa16570867728950e", "0F8FAD5BD9CB469FA16570867728950E"};
  static const char *const echoes[] = {
      "lease 0F8fad5b-D9cb-469F-a165-70867728950E mixed case",
      "lease 0f8fad5bd9cb469fA16570867728950e mixed, no hyphens",
      "lease 0f8f-ad5b-d9cb-469f-a165-7086-7728-950e hyphens elsewhere",
      "lease abc0f8fad5bd9cb469fa16570867728950edef among hex digits",
      "lease 0xAB0F8FAD5B-D9CB-469F-A165-70867728950EFF among hex, upper",
  };
  ll_ledger *l = open_ledger("learnt");
  if (!l)
    return;
  ll_error err = {0};
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
    CHECK_INT(ll_ledger_add_named_secret(l, forms[i], "lease-id", &err), LL_OK);
  for (size_t i = 0; i < sizeof echoes / sizeof echoes[0]; i++) {
    int refused, before = ll_test_fail;
    char *out = redacted(l, echoes[i], &refused);
    CHECK(refused);
    CHECK(!holds_id_part(out));
    CHECK(out && strstr(out, "{{secret:lease-id}}") != NULL);
    if (ll_test_fail > before)
      fprintf(stderr, "  in echo %zu: %s -> %s\n", i, echoes[i], out);
    free(out);
  }
  ll_ledger_close(l);
}

/* S2: a bound lease ID at the end of an error message longer than the
 * field keeps: the parser cuts the message before the ID, never inside
 * it. A value cut inside an ID elsewhere keeps none of it in the export
 * either, and the scan finds the part that is left. */
static void test_cut_id(void) {
  char xml[1200], pad[491];
  memset(pad, 'x', sizeof pad - 1);
  pad[sizeof pad - 1] = '\0';
  snprintf(xml, sizeof xml,
           "<?xml version=\"1.0\"?><Error><Code>LeaseIdMismatchWithLeaseOperat"
           "ion</Code><Message>%s %s and more text after the lease ID"
           "</Message></Error>",
           pad, ID_A);
  ll_http_response resp;
  ll_http_response_init(&resp);
  resp.outcome = LL_OUTCOME_RESPONSE;
  resp.status = 409;
  resp.body = (unsigned char *)strdup(xml);
  resp.body_len = strlen(xml);
  ll_blob_result br;
  CHECK_INT(ll_blob_parse(&resp, &br), LL_OK);
  ll_http_response_cleanup(&resp);
  CHECK(strncmp(br.error_message, pad, sizeof pad - 1) == 0);
  CHECK(!holds_id_part(br.error_message));
  /* a value cut inside the ID by another limit: 17 of its digits left */
  static const char cut[] = "lease 0f8fad5b-d9cb-469f-a";
  static const char *const ids[] = {ID_A};
  static const char *const aliases[] = {"A"};
  cJSON *row = cJSON_CreateObject();
  cJSON_AddStringToObject(row, "error_message", cut);
  cJSON *ex = ll_sanitize_row(row, ids, aliases, 1);
  const char *m =
      cJSON_GetStringValue(cJSON_GetObjectItem(ex, "error_message"));
  CHECK(m && !holds_id_part(m));
  CHECK_STR(m, "lease A");
  char *line = ex ? cJSON_PrintUnformatted(ex) : NULL;
  CHECK(line &&
        ll_secret_scan(line, strlen(line), ids, 1, NULL, 0, NULL, 0) == 0);
  free(line);
  cJSON_Delete(ex);
  /* the row as it was cut: the scan finds the part of the ID */
  line = cJSON_PrintUnformatted(row);
  CHECK(line &&
        ll_secret_scan(line, strlen(line), ids, 1, NULL, 0, NULL, 0) == 1);
  free(line);
  /* fewer than 16 of its first digits at a value's end are not the ID */
  cJSON_Delete(row);
  row = cJSON_CreateObject();
  cJSON_AddStringToObject(row, "etag", "0x0f8fad5bd9cb469");
  line = cJSON_PrintUnformatted(row);
  CHECK_INT(ll_secret_scan(line, strlen(line), ids, 1, NULL, 0, NULL, 0), 0);
  ex = ll_sanitize_row(row, ids, aliases, 1);
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(ex, "etag")),
            "0x0f8fad5bd9cb469");
  cJSON_Delete(ex);
  free(line);
  cJSON_Delete(row);
}

/* A signature matched by its characters: any spelling of each '+', '/'
 * and '=', mixed freely, and any 8 or more consecutive characters of it
 * (a cut); what is around it is kept as it was. From a review of the
 * first fix, which registered runs of 12 and widened over neighbours. */
static void test_sig_by_character(void) {
  static const struct {
    const char *sig, *echo, *want;
  } cases[] = {
      /* '+' as a space, '/' JSON-escaped; then a cut (26 characters) */
      {"Xq7Rt2Lm9P%2BZk4Vb8Nw3Hy6Jc1Df5Gs0%2Fa2Qe7Ru4Wi%3D",
       "Value: Xq7Rt2Lm9P Zk4Vb8Nw3Hy6Jc1Df5Gs0\\/a2Qe7Ru4Wi= rejected",
       "Value: {{secret:sas}} rejected"},
      {"Xq7Rt2Lm9P%2BZk4Vb8Nw3Hy6Jc1Df5Gs0%2Fa2Qe7Ru4Wi%3D",
       "Value: Xq7Rt2Lm9P Zk4Vb8Nw3Hy6Jc1Df5 (truncated)",
       "Value: {{secret:sas}} (truncated)"},
      /* .NET's JSON writes '+' as \u002B; XML as &#x2B; or &#43; */
      {"Xq7Rt2Lm9P%2BZk4Vb8Nw3Hy6Jc1Df5Gs0%2Fa2Qe7Ru4Wi%3D",
       "{\"v\":\"Xq7Rt2Lm9P\\u002BZk4Vb8Nw3Hy6Jc1Df5Gs0/a2Qe7Ru4Wi=\"}",
       "{\"v\":\"{{secret:sas}}\"}"},
      {"Xq7Rt2Lm9P%2BZk4Vb8Nw3Hy6Jc1Df5Gs0%2Fa2Qe7Ru4Wi%3D",
       "<V>Xq7Rt2Lm9P&#x2B;Zk4Vb8Nw3Hy6Jc1Df5Gs0&#47;a2Qe7Ru4Wi&#61;</V>",
       "<V>{{secret:sas}}</V>"},
      {"Xq7Rt2Lm9P%2BZk4Vb8Nw3Hy6Jc1Df5Gs0%2Fa2Qe7Ru4Wi%3D",
       "msg=Signature%20Xq7Rt2Lm9P%20Zk4Vb8Nw3Hy6Jc1Df5Gs0%2fa2Qe7Ru4Wi%20x",
       "msg=Signature%20{{secret:sas}}%20x"},
      /* after sig=, the part past a space is taken too */
      {"Zk4Vb8Nw3Hy6Jc1Df5Gs0%2Fa2Qe7Ru4Wi%2BXq7Rt2Lm9P%3D",
       "&sig=Zk4Vb8Nw3Hy6Jc1Df5Gs0%2Fa2Qe7Ru4Wi Xq7Rt2Lm9P%3D&se=x",
       "&sig=REDACTED&se=x"},
      /* no run of 12 letters and digits, encodings mixed */
      {"Xq7Rt2Lm9P%2BZk4Vb8Nw3Hy%2F6Jc1Df5Gs0T%2Ba2Qe7Ru4%3D",
       "value Xq7Rt2Lm9P%2BZk4Vb8Nw3Hy/6Jc1Df5Gs0T%2Ba2Qe7Ru4%3D",
       "value {{secret:sas}}"},
      /* no '+' or '/' at all, cut */
      {"Xq7Rt2Lm9PZk4Vb8Nw3Hy6Jc1Df5Gs0Ta2Qe7Ru4Wi%3D",
       "value Xq7Rt2Lm9PZk4Vb8Nw3Hy6Jc1D...", "value {{secret:sas}}..."},
      /* the neighbours stay: an escape, a lease ID, an error code */
      {"k7Jm3Q%2BvX%2F9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM%3D",
       "{\"m\":\"mismatch:\\nk7Jm3Q%2BvX/9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM\"}",
       "{\"m\":\"mismatch:\\n{{secret:sas}}\"}"},
      {"k7Jm3Q%2BvX%2F9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM%3D",
       "k7Jm3Q%2BvX/9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM " ID_A
       " AuthenticationFailed",
       "{{secret:sas}} " ID_A " AuthenticationFailed"},
      {"k7Jm3Q%2BvX%2F9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM%3D",
       "PUT /container/blob-name?sig=k7Jm3Q+vX%2F9aZ0pL2bR8sT4uW6yC1dE5fG7hI9j",
       "PUT /container/blob-name?sig=REDACTED"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0] + 6; i++) {
    /* from a third review: an echo in another case (a WAF's lowercase
     * transform), every character escaped, HTML's names, leading zeros */
    static const char *const more[][2] = {
        {"ARGS:sig: k7jm3q+vx/9az0pl2br8st4uw6yc1de5fg7hi9jk0lm= x",
         "ARGS:sig: {{secret:sas}} x"},
        {"K7JM3Q%2BVX%2F9AZ0PL2BR8ST4UW6YC1DE5FG7HI9JK0LM", "{{secret:sas}}"},
        {"%6B%37%4A%6D%33%51%2B%76%58%2F%39%61%5A%30%70%4C%32%62%52%38%73%54%"
         "34%75%57%36%79%43%31%64%45%35%66%47%37%68%49%39%6A%4B%30%6C%4D%3D",
         "{{secret:sas}}"},
        {"{\"v\":"
         "\"\\u006b\\u0037\\u004a\\u006d\\u0033\\u0051\\u002b\\u0076\\u0058\\u0"
         "02f\\u0039\\u0061\\u005a\\u0030\\u0070\\u004c\\u0032\\u0062\\u0052\\u"
         "0038\\u0073\\u0054\\u0034\\u0075\\u0057\\u0036\\u0079\\u0043\\u0031\\"
         "u0064\\u0045\\u0035\\u0066\\u0047\\u0037\\u0068\\u0049\\u0039\\u006a"
         "\\u004b\\u0030\\u006c\\u004d\\u003d\"}",
         "{\"v\":\"{{secret:sas}}\"}"},
        {"k7Jm3Q&plus;vX&sol;9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM&equals;.",
         "{{secret:sas}}."},
        {"k7Jm3Q&#x0002B;vX&#0047;9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM",
         "{{secret:sas}}"},
    };
    size_t m = sizeof cases / sizeof cases[0];
    const char *sig =
        i < m ? cases[i].sig
              : "k7Jm3Q%2BvX%2F9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM%3D";
    const char *echo = i < m ? cases[i].echo : more[i - m][0];
    const char *want = i < m ? cases[i].want : more[i - m][1];
    char name[32];
    snprintf(name, sizeof name, "bychar%zu", i);
    ll_ledger *l = open_ledger(name);
    if (!l)
      continue;
    ll_error err = {0};
    CHECK_INT(ll_ledger_add_named_secret(l, sig, "sas", &err), LL_OK);
    int refused, before = ll_test_fail;
    char *out = redacted(l, echo, &refused);
    CHECK(refused);
    CHECK_STR(out, want);
    if (ll_test_fail > before)
      fprintf(stderr, "  in case %zu: %s -> %s\n", i, echo, out);
    free(out);
    ll_ledger_close(l);
  }
  /* in another case, 11 characters in a row are not enough (12 are) */
  ll_ledger *l = open_ledger("folded");
  if (l) {
    ll_error err = {0};
    CHECK_INT(ll_ledger_add_named_secret(
                  l, "k7Jm3Q%2BvX%2F9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM%3D",
                  "sas", &err),
              LL_OK);
    int refused;
    char *out = redacted(l, "id k7jm3q+vx/9 ok", &refused);
    CHECK(!refused);
    CHECK_STR(out, "id k7jm3q+vx/9 ok");
    free(out);
    out = redacted(l, "id k7jm3q+vx/9a ok", &refused);
    CHECK(refused);
    CHECK_STR(out, "id {{secret:sas}} ok");
    free(out);
    ll_ledger_close(l);
  }
  /* a value given by length, with no NUL after it: a sig= at its very end
   * with a lease ID registered reads nothing past it (ASan) */
  static const char *const secrets[] = {ID_A};
  static const char *const ph[] = {"{{secret:lease-id}}"};
  char *v = malloc(6);
  if (v) {
    memcpy(v, "x sig=", 6);
    ll_buf out = {0};
    CHECK(ll_sanitize_replace(v, 6, secrets, ph, 1, &out) == LL_REDACT_SIG);
    CHECK(out.p && strcmp(out.p, "x sig=REDACTED") == 0);
    free(out.p);
    free(v);
  }
}

/* Two secrets that share bytes in a value: the first found ends inside
 * the second, or both start at one offset and the shorter is found
 * first. Each is replaced whole; none leaves a tail of its bytes. Found
 * leftmost-first alone, "xx{{a}}CCCC-tail" kept the second token's last
 * bytes. */
static void test_overlapping_secrets(void) {
  static const char *const sec[] = {"tokAAAA1111", "1111BBBB2222",
                                    "2222CCCC3333", "tokAAAA", "zzsig=98"};
  static const char *const ph[] = {"{{a}}", "{{b}}", "{{c}}", "{{d}}", "{{e}}"};
  static const struct {
    const char *in, *out;
    unsigned hit;
  } cases[] = {
      /* the first ends inside the second */
      {"x tokAAAA1111BBBB2222 y", "x {{a}}{{b}} y", 3u},
      /* a chain of three */
      {"x tokAAAA1111BBBB2222CCCC3333 y", "x {{a}}{{b}}{{c}} y", 7u},
      /* the shorter (d) listed after the longer one that starts with it */
      {"tokAAAA1111", "{{a}}", 1u},
      /* alone, each as before */
      {"1111BBBB2222", "{{b}}", 2u},
      {"p tokAAAA q", "p {{d}} q", 8u},
      /* a sig= value right after a token */
      {"tokAAAA1111sig=abcdef&x=1", "{{a}}sig=REDACTED&x=1",
       1u | LL_REDACT_SIG},
      /* a sig= value that starts inside a secret and runs past it */
      {"zzsig=987654&k", "{{e}}sig=REDACTED&k", 16u | LL_REDACT_SIG},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ll_buf out = {0};
    unsigned hit =
        ll_sanitize_replace(cases[i].in, strlen(cases[i].in), sec, ph, 5, &out);
    CHECK_INT(hit, cases[i].hit);
    CHECK_STR(out.p, cases[i].out);
    free(out.p);
  }
  /* A body the size of the response cap made of sig= keys, one value
   * holding them all: each value is read once. Read again at every key
   * inside it, this took minutes (quadratic) and ctest's timeout fails
   * it; linear, milliseconds. */
  enum { BIG = 4 << 20 };
  char *big = malloc(BIG);
  if (big) {
    for (size_t i = 0; i < BIG; i++)
      big[i] = "sig="[i % 4];
    ll_buf b = {0};
    CHECK_INT(ll_sanitize_replace(big, BIG, sec, ph, 5, &b), LL_REDACT_SIG);
    CHECK_STR(b.p, "sig=REDACTED");
    free(b.p);
    free(big);
  }
  /* the shorter listed first: replaced, and the longer's tail with it */
  static const char *const rev[] = {"tokAAAA", "tokAAAA1111"};
  ll_buf out = {0};
  unsigned hit = ll_sanitize_replace("x tokAAAA1111 y", 15, rev, ph, 2, &out);
  CHECK_INT(hit, 3u);
  CHECK_STR(out.p, "x {{a}}{{b}} y");
  free(out.p);
}

int main(void) {
  char *d = ll_test_tmpdir();
  CHECK(d != NULL);
  if (!d)
    return ll_test_report("test_sanitize_forms");
  ll_strlcpy(root, d, sizeof root);
  test_sig_forms();
  test_sig_by_character();
  test_learnt_id_forms();
  test_cut_id();
  test_overlapping_secrets();
  CHECK(ll_test_rmtree(root) == 0);
  free(d);
  return ll_test_report("test_sanitize_forms");
}
