/* The export scan (core/evidence/sanitize.c), through sanitize.h only,
 * against a reference that tries every pattern at every offset: texts
 * built from the pieces a match is made of must give the same count, the
 * same first hit, and the same answer to "would replace". Split from
 * test_sanitize.c, which tests the projections and the scan's cases. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "testlib.h"

#define ID_A "0f8fad5b-d9cb-469f-a165-70867728950e"
#define ID_A_FLAT_UPPER "0F8FAD5BD9CB469FA16570867728950E"
#define ID_B "7c9e6679-7425-40de-944b-e07fc1f90ae7"

static const char *const ids[] = {ID_A, ID_B};

static unsigned char ref_fold(char c) {
  return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a')
                              : (unsigned char)c;
}

/* A lease ID at s[i]: its digits in order, any case, hyphens skipped in
 * both between digits; never starting on a hyphen. */
static int ref_id_at(const char *s, size_t len, size_t i, const char *id) {
  char d[64];
  size_t n = 0;
  for (const char *p = id; *p && n < sizeof d; p++)
    if (*p != '-')
      d[n++] = (char)ref_fold(*p);
  if (n == 0 || s[i] == '-')
    return 0;
  size_t j = i;
  for (size_t t = 0; t < n; t++) {
    if (j >= len || ref_fold(s[j]) != (unsigned char)d[t])
      return 0;
    j++;
    while (t + 1 < n && j < len && s[j] == '-')
      j++;
  }
  return 1;
}

static int ref_sig_end(char c) {
  return strchr("& \t\r\n\"'#<>\\", c) != NULL && c != '\0';
}

/* Whether 16 hex digits (hyphens skipped, none other between) starting
 * at t[i], folded, stand somewhere in the 32 digits of id. */
static int ref_stretch_at(const char *t, size_t e, size_t i, const char *id) {
  char d[64], w[17];
  size_t n = 0, m = 0;
  for (const char *p = id; *p && n < sizeof d - 1; p++)
    if (*p != '-')
      d[n++] = (char)ref_fold(*p);
  d[n] = '\0';
  if (n != 32 || t[i] == '-')
    return 0;
  for (size_t j = i; j < e && m < 16; j++) {
    char c = (char)ref_fold(t[j]);
    if (c == '-')
      continue;
    if (!strchr("0123456789abcdef", c) || c == '\0')
      return 0;
    w[m++] = c;
  }
  w[m] = '\0';
  return m == 16 && strstr(d, w) != NULL;
}

/* The stretch rule: in a maximal run of bytes of the bound IDs (either
 * case) and hyphens that holds no ID from its first digit, the first 16
 * digits from inside a bound ID are one hit, at their first digit, for
 * the lowest ID holding them. stretch[i] is that ID + 1 at offset i. */
static void ref_stretches(const char *t, size_t len, const char *const *rid,
                          size_t nid, unsigned *stretch) {
  unsigned char in_id[256] = {0};
  in_id['-'] = 1;
  for (size_t k = 0; k < nid; k++)
    for (const char *p = rid[k]; *p; p++)
      in_id[(unsigned char)tolower((unsigned char)*p)] =
          in_id[(unsigned char)toupper((unsigned char)*p)] = 1;
  memset(stretch, 0, len * sizeof *stretch);
  for (size_t a = 0, e; a < len; a = e + 1) {
    for (e = a; e < len && in_id[(unsigned char)t[e]]; e++)
      ;
    int whole = 0, found = 0;
    for (size_t i = a; i < e && !whole; i++)
      for (size_t k = 0; k < nid; k++)
        whole |= ref_id_at(t, e, i, rid[k]);
    for (size_t i = a; !whole && !found && e - a >= 16 && i < e; i++)
      for (size_t k = 0; k < nid && !found; k++)
        if (ref_stretch_at(t, e, i, rid[k])) {
          stretch[i] = (unsigned)k + 1;
          found = 1;
        }
  }
}

/* Every offset, every pattern, in the documented order: the first hit by
 * offset wins; at one offset an ID (lowest index), a sig=, a secret. */
static void ref_scan(const char *t, size_t len, const char *const *rid,
                     size_t nid, const char *const *sec, size_t nsec,
                     int stretches, ll_scan_result *r) {
  unsigned stretch[512];
  memset(r, 0, sizeof *r);
  if (len > sizeof stretch / sizeof stretch[0])
    return;
  ref_stretches(t, len, rid, stretches ? nid : 0, stretch);
  for (size_t i = 0; i < len; i++) {
    size_t before = r->hits;
    for (size_t k = 0; k < nid; k++)
      if (ref_id_at(t, len, i, rid[k]) && r->hits++ == 0)
        *r = (ll_scan_result){1, LL_SCAN_ID, k, i};
    if (stretch[i] && r->hits++ == 0)
      *r = (ll_scan_result){1, LL_SCAN_ID, stretch[i] - 1, i};
    if (i + 4 <= len && ref_fold(t[i]) == 's' && ref_fold(t[i + 1]) == 'i' &&
        ref_fold(t[i + 2]) == 'g' && t[i + 3] == '=') {
      size_t v = i + 4;
      int red = len - v >= 8 && memcmp(t + v, "REDACTED", 8) == 0 &&
                (v + 8 == len || ref_sig_end(t[v + 8]));
      if (!red && r->hits++ == 0)
        *r = (ll_scan_result){1, LL_SCAN_SIG, 0, i};
    }
    for (size_t k = 0; k < nsec; k++) {
      size_t sl = strlen(sec[k]);
      if (sl && sl <= len - i && memcmp(t + i, sec[k], sl) == 0 &&
          r->hits++ == 0)
        *r = (ll_scan_result){1, LL_SCAN_SECRET, k, i};
    }
    (void)before;
  }
}

/* Texts made of the pieces a match is made of (IDs in other spellings,
 * sig= in any case, REDACTED and its terminators, secrets and their
 * prefixes, hex, hyphens, escapes): the scan must agree with the
 * reference on the count and on the first hit, every time. */
static void test_scan_against_reference(void) {
  static const char *const pieces[] = {ID_A,
                                       ID_A_FLAT_UPPER,
                                       ID_B,
                                       "7C9E-6679",
                                       "-7425-40de-944b-e07fc1f90ae7",
                                       "9cb-469F-a16570867728",
                                       "944b-e07fc1f90ae7",
                                       "sig=",
                                       "SIG=",
                                       "sIg=",
                                       "si",
                                       "g=",
                                       "REDACTED",
                                       "REDACTE",
                                       "\\\"",
                                       "&",
                                       "\"",
                                       "s3cr3t-token",
                                       "s3cr3t",
                                       "SIGKEY",
                                       "SIG",
                                       "KEY",
                                       "eyJhbG",
                                       "0f8f",
                                       "ad5b",
                                       "-",
                                       "=",
                                       "a",
                                       "S",
                                       "e",
                                       " ",
                                       "x",
                                       "\\"};
  static const char *const sec[] = {"s3cr3t-token", "SIGKEY", "eyJhbGciOi",
                                    "=="};
  unsigned long x = 12345;
  char text[512];
  int bad = 0;
  for (int n = 0; n < 40000 && !bad; n++) {
    size_t len = 0, parts = 1 + n % 12;
    for (size_t p = 0; p < parts; p++) {
      x = x * 6364136223846793005ul + 1442695040888963407ul;
      const char *pc = pieces[(x >> 33) % (sizeof pieces / sizeof pieces[0])];
      size_t pl = strlen(pc);
      if (len + pl >= sizeof text)
        break;
      memcpy(text + len, pc, pl);
      len += pl;
    }
    text[len] = '\0';
    size_t nid = (size_t)(n % 3), nsec = (size_t)(n % 5);
    /* both scans: the ledger's (with stretches) and the plain one */
    int stretches = n % 2;
    ll_scan_result got, want;
    ll_san_ids tab;
    if (stretches) {
      ll_san_ids_make(&tab, ids, nid);
      ll_sanitize_scan_ids(text, len, ids, nid ? &tab : NULL, sec, nsec, &got);
    } else {
      ll_sanitize_scan(text, len, ids, nid, sec, nsec, &got);
    }
    ref_scan(text, len, ids, nid, sec, nsec, stretches, &want);
    int same =
        got.hits == want.hits && got.kind == want.kind &&
        (!want.hits || (got.index == want.index && got.offset == want.offset));
    /* the redaction's quick test agrees with the redaction itself */
    static const char *const ph[] = {"{{1}}", "{{2}}", "{{3}}", "{{4}}"};
    ll_buf b = {0};
    int would = ll_sanitize_replace(text, len, sec, ph, nsec, &b) != 0;
    free(b.p);
    CHECK_INT(ll_sanitize_needs_replace(text, len, sec, nsec), would);
    CHECK(same);
    if (!same) {
      fprintf(stderr,
              "  scan of \"%s\" (%zu IDs, %zu secrets): %zu hits, "
              "kind %d at %zu; reference %zu hits, kind %d at %zu\n",
              text, nid, nsec, got.hits, (int)got.kind, got.offset, want.hits,
              (int)want.kind, want.offset);
      bad = 1;
    }
  }
}

/* The windows a GUID is looked up by: 16 digits each, in any case and
 * hyphenation; anything but 32 hex digits has none (a 'g' read as a
 * digit would give a made-up ID windows). */
static void test_guid_windows(void) {
  uint64_t w[LL_SAN_WINDOWS];
  CHECK_INT(ll_san_guid_windows(ID_A, w), 1);
  CHECK(w[0] == 0x0f8fad5bd9cb469full);
  CHECK(w[16] == 0xa16570867728950eull);
  CHECK_INT(ll_san_guid_windows(ID_A_FLAT_UPPER, w), 1);
  CHECK(w[1] == 0xf8fad5bd9cb469fall);
  CHECK_INT(ll_san_guid_windows("0f8fad5b-d9cb-469f-a165-70867728950g", w), 0);
  CHECK_INT(ll_san_guid_windows("0f8fad5b-d9cb-469f-a165-7086772895 e", w), 0);
  CHECK_INT(ll_san_guid_windows(ID_A "0", w), 0);
  CHECK_INT(ll_san_guid_windows("0f8fad5b", w), 0);
}

/* More GUIDs than the table keeps the windows of (16): the rest are made
 * at the scan that needs them, and a stretch of the last is found. */
static void test_many_stretches(void) {
  enum { N = 20 };
  char idbuf[N][37];
  const char *idv[N];
  unsigned long x = 99;
  for (int i = 0; i < N; i++) {
    char *p = idbuf[i];
    for (int j = 0; j < 32; j++) {
      x = x * 6364136223846793005ul + 1442695040888963407ul;
      *p++ = "0123456789abcdef"[(x >> 40) & 15];
      if (j == 7 || j == 11 || j == 15 || j == 19)
        *p++ = '-';
    }
    *p = '\0';
    idv[i] = idbuf[i];
  }
  ll_san_ids t;
  ll_san_ids_make(&t, idv, N);
  CHECK_INT(t.wins_all, 0);
  char text[80];
  snprintf(text, sizeof text, "[%s]", idbuf[N - 1] + 9); /* its last 28 */
  ll_scan_result r;
  ll_sanitize_scan_ids(text, strlen(text), idv, &t, NULL, 0, &r);
  CHECK_INT(r.hits, 1);
  CHECK_INT(r.index, N - 1);
  CHECK_INT(r.offset, 1);
  snprintf(text, sizeof text, "[%.15s]", idbuf[N - 1] + 20); /* 15 digits */
  ll_sanitize_scan_ids(text, strlen(text), idv, &t, NULL, 0, &r);
  CHECK_INT(r.hits, 0);
}

int main(void) {
  test_guid_windows();
  test_many_stretches();
  test_scan_against_reference();
  return ll_test_report("test_sanitize_scan");
}
