/* Azure error bodies: BOM or not, only Error/Code and Error/Message taken,
 * malformed input and DTD tricks refused. */
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "xmlerr.h"

#define BOM "\xEF\xBB\xBF"
#define DECL "<?xml version=\"1.0\" encoding=\"utf-8\"?>"
#define AZ_MSG                                                                 \
  "There is currently a lease on the blob and no lease ID was specified in "   \
  "the request.\nRequestId:1b2c3d4e-0001-0002-0003-000000000000\n"             \
  "Time:2026-11-30T06:48:16.1234567Z"
#define AZ_BODY                                                                \
  DECL "<Error><Code>LeaseIdMissing</Code>"                                    \
       "<Message>" AZ_MSG "</Message></Error>"

#define LOL_DTD                                                                \
  "<!DOCTYPE Error [<!ENTITY lol \"lol\">"                                     \
  "<!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">"      \
  "<!ENTITY lol2 \"&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;\">"  \
  "<!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">"  \
  "<!ENTITY lol4 \"&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;\">"  \
  "<!ENTITY lol5 \"&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;\">"  \
  "<!ENTITY lol6 \"&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;\">"  \
  "<!ENTITY lol7 \"&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;\">"  \
  "<!ENTITY lol8 \"&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;\">"  \
  "<!ENTITY lol9 "                                                             \
  "\"&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;\">]>"

#define NUL_BODY "<Error><Code>A\0B</Code></Error>"

static const struct {
  const char *name;
  const char *body;
  size_t len; /* 0: strlen(body) */
  ll_status want;
  const char *code, *message;
} cases[] = {
    {"azure, no BOM", AZ_BODY, 0, LL_OK, "LeaseIdMissing", AZ_MSG},
    {"azure, BOM", BOM AZ_BODY, 0, LL_OK, "LeaseIdMissing", AZ_MSG},
    {"no declaration", "<Error><Code>C</Code><Message>M</Message></Error>", 0,
     LL_OK, "C", "M"},
    {"BOM, no declaration",
     BOM "<Error><Code>C</Code><Message>M</Message></Error>", 0, LL_OK, "C",
     "M"},
    {"empty", "", 0, LL_OK, "", ""},
    {"whitespace", " \r\n\t", 0, LL_OK, "", ""},
    {"BOM only", BOM, 0, LL_OK, "", ""},
    {"message only", DECL "<Error><Message>M</Message></Error>", 0, LL_OK, "",
     "M"},
    {"nested unknown elements ignored",
     DECL "<Error><Code>Outer</Code><Details><Code>Inner</Code><Message>"
          "inner</Message><X><Y/></X></Details><Message>Outer message"
          "</Message><AuthenticationErrorDetail>d</AuthenticationErrorDetail>"
          "</Error>",
     0, LL_OK, "Outer", "Outer message"},
    {"child inside Code not taken", "<Error><Code>A<b>zz</b>B</Code></Error>",
     0, LL_OK, "AB", ""},
    {"first Code wins", "<Error><Code>A</Code><Code>B</Code></Error>", 0, LL_OK,
     "A", ""},
    {"root is not Error", "<Other><Code>X</Code><Message>Y</Message></Other>",
     0, LL_OK, "", ""},
    {"entities and CDATA",
     "<Error><Code><![CDATA[Lease<Id>]]></Code><Message>a &lt; b &amp; "
     "c &#x263A;</Message></Error>",
     0, LL_OK, "Lease<Id>", "a < b & c \xE2\x98\xBA"},
    {"whitespace kept verbatim", "<Error><Code> C </Code></Error>", 0, LL_OK,
     " C ", ""},
    {"unclosed", DECL "<Error><Code>LeaseIdMissing</Code>", 0, LL_E_PARSE, "",
     ""},
    {"mismatched tags", "<Error><Code>X</Message></Error>", 0, LL_E_PARSE, "",
     ""},
    {"not XML", "Service Unavailable", 0, LL_E_PARSE, "", ""},
    {"HTML", "<html><body><p>bad gateway</body></html>", 0, LL_E_PARSE, "", ""},
    {"undefined entity", "<Error><Code>&bogus;</Code></Error>", 0, LL_E_PARSE,
     "", ""},
    {"embedded NUL", NUL_BODY, sizeof NUL_BODY - 1, LL_E_PARSE, "", ""},
    {"billion laughs", DECL LOL_DTD "<Error><Code>&lol9;</Code></Error>", 0,
     LL_E_PARSE, "", ""},
    {"external entity",
     DECL "<!DOCTYPE Error [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]>"
          "<Error><Code>&xxe;</Code></Error>",
     0, LL_E_PARSE, "", ""},
    {"external DTD",
     DECL "<!DOCTYPE Error SYSTEM \"http://example.invalid/e.dtd\">"
          "<Error><Code>C</Code></Error>",
     0, LL_E_PARSE, "", ""},
};

static void test_table(void) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t len = cases[i].len ? cases[i].len : strlen(cases[i].body);
    ll_xml_error x;
    memset(&x, 'Z', sizeof x); /* stale content must not survive */
    ll_status st = ll_xmlerr_parse(cases[i].body, len, &x);
    if (st != cases[i].want)
      fprintf(stderr, "case: %s\n", cases[i].name);
    CHECK_INT(st, cases[i].want);
    CHECK_STR(x.code, cases[i].code);
    CHECK_STR(x.message, cases[i].message);
  }
}

/* Values longer than the fields are cut, terminated, and never end in half
 * a UTF-8 sequence. */
static void test_truncation(void) {
  static const size_t fill[] = {0, 1, 2, 3};
  for (size_t k = 0; k < sizeof fill / sizeof fill[0]; k++) {
    char body[4096];
    char msg[1024];
    memset(msg, 'm', sizeof msg);
    /* 507 and 508 fit the 3-byte char; 509 and 510 would split it. */
    size_t m = 507 + fill[k];
    memcpy(msg + m, "\xE2\x98\xBA", 3);
    msg[m + 3] = '\0';
    char code[300];
    memset(code, 'c', 299);
    code[126] = ' '; /* the cut at 127 falls after a word */
    code[299] = '\0';
    snprintf(body, sizeof body,
             "<Error><Code>%s</Code><Message>%s</Message>"
             "</Error>",
             code, msg);
    ll_xml_error x;
    CHECK_INT(ll_xmlerr_parse(body, strlen(body), &x), LL_OK);
    CHECK_INT(strlen(x.code), sizeof x.code - 1);
    CHECK(strspn(x.code, "c") == sizeof x.code - 2);
    size_t want = m + 3 <= sizeof x.message - 1 ? m + 3 : m;
    CHECK_INT(strlen(x.message), want);
    CHECK_INT(strspn(x.message, "m"), m);
    if (want > m)
      CHECK(memcmp(x.message + m, "\xE2\x98\xBA", 3) == 0);
  }
}

/* A cut inside a token drops what was kept of it, in the code as in the
 * message: a lease ID or a SAS signature (in any encoding) a hostile
 * body quotes at the limit is never kept as its first bytes. */
static void test_cut_token(void) {
  static const char *const tokens[] = {
      "0f8fad5b-d9cb-469f-a165-70867728950e",
      "k7Jm3Q%2BvX%2F9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM%3D",
      "k7Jm3Q+vX/9aZ0pL2bR8sT4uW6yC1dE5fG7hI9jK0lM=",
  };
  for (size_t t = 0; t < sizeof tokens / sizeof tokens[0]; t++)
    for (size_t at = 100; at < 128; at++) {
      char code[300], msg[700], body[1200];
      memset(code, 'x', at);
      code[at - 1] = ' ';
      snprintf(code + at, sizeof code - at, "%s", tokens[t]);
      memset(msg, 'y', at + 384);
      msg[at + 383] = ' ';
      snprintf(msg + at + 384, sizeof msg - at - 384, "%s", tokens[t]);
      snprintf(body, sizeof body,
               "<Error><Code>%s</Code><Message>%s</Message></Error>", code,
               msg);
      ll_xml_error x;
      CHECK_INT(ll_xmlerr_parse(body, strlen(body), &x), LL_OK);
      size_t cl = strlen(x.code), ml = strlen(x.message);
      /* either the whole token fits or none of it is kept */
      CHECK(cl == at || strstr(x.code, tokens[t]) != NULL);
      CHECK(ml == at + 384 || strstr(x.message, tokens[t]) != NULL);
    }
}

static void test_limits(void) {
  ll_xml_error x;
  size_t big = 1024u * 1024u + 1;
  char *body = malloc(big);
  CHECK(body != NULL);
  if (body) {
    memset(body, ' ', big);
    memcpy(body, "<Error>", 7);
    memcpy(body + big - 8, "</Error>", 8);
    CHECK_INT(ll_xmlerr_parse(body, big, &x), LL_E_TOO_LARGE);
    /* Exactly at the cap is still read. */
    memcpy(body + big - 9, "</Error>", 8);
    CHECK_INT(ll_xmlerr_parse(body, big - 1, &x), LL_OK);
    free(body);
  }
  CHECK_INT(ll_xmlerr_parse(NULL, 0, &x), LL_OK);
  CHECK_INT(ll_xmlerr_parse(NULL, 5, &x), LL_E_USAGE);
  CHECK_INT(ll_xmlerr_parse("<a/>", 4, NULL), LL_E_USAGE);
}

int main(void) {
  test_table();
  test_truncation();
  test_cut_token();
  test_limits();
  return ll_test_report("test_xmlerr");
}
