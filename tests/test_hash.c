/* SHA-256 against published vectors, the incremental form against the
 * one-shot, and the shape of version-4 GUIDs. */
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "testlib.h"

static const struct {
  const char *in;
  const char *hex;
} vectors[] = {
    {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    /* printf '%s' '<payload>' | sha256sum */
    {"{\"purpose\":\"lease-handoff-lab\",\"revision\":3,\"writer\":\"A\"}",
     "b37d76330288835ac843365a9fe38e5500927a1a4677b0709b9b2f28a2075ef0"},
};

static void test_vectors(void) {
  for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
    char out[LL_SHA256_HEX];
    CHECK_INT(ll_sha256_hex(vectors[i].in, strlen(vectors[i].in), out), LL_OK);
    CHECK_STR(out, vectors[i].hex);

    /* Incremental, fed in uneven pieces, must agree with the vector. */
    static const size_t steps[] = {1, 3, 7, 64};
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
      ll_sha256 *h = ll_sha256_new();
      CHECK(h != NULL);
      if (!h)
        continue;
      const char *p = vectors[i].in;
      size_t left = strlen(p);
      while (left > 0) {
        size_t n = left < steps[s] ? left : steps[s];
        CHECK_INT(ll_sha256_update(h, p, n), LL_OK);
        p += n;
        left -= n;
      }
      char inc[LL_SHA256_HEX];
      CHECK_INT(ll_sha256_final(h, inc), LL_OK);
      CHECK_STR(inc, vectors[i].hex);
      /* Used up: further updates are misuse, not silent garbage. */
      CHECK_INT(ll_sha256_update(h, "x", 1), LL_E_USAGE);
      /* Reset starts over: the same context gives the vector again, after
       * a final and after a half-fed digest alike. */
      CHECK_INT(ll_sha256_reset(h), LL_OK);
      CHECK_INT(ll_sha256_update(h, "junk", 4), LL_OK);
      CHECK_INT(ll_sha256_reset(h), LL_OK);
      CHECK_INT(ll_sha256_update(h, vectors[i].in, strlen(vectors[i].in)),
                LL_OK);
      CHECK_INT(ll_sha256_final(h, inc), LL_OK);
      CHECK_STR(inc, vectors[i].hex);
      ll_sha256_free(h);
    }
  }
}

static void test_million_a(void) {
  size_t n = 1000000;
  char *buf = malloc(n);
  CHECK(buf != NULL);
  if (!buf)
    return;
  memset(buf, 'a', n);
  char out[LL_SHA256_HEX];
  CHECK_INT(ll_sha256_hex(buf, n, out), LL_OK);
  CHECK_STR(out,
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  free(buf);
}

static void test_misuse(void) {
  char out[LL_SHA256_HEX];
  CHECK_INT(ll_sha256_hex(NULL, 3, out), LL_E_USAGE);
  CHECK_INT(ll_sha256_hex(NULL, 0, out), LL_OK);
  CHECK_STR(out,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK_INT(ll_sha256_update(NULL, "x", 1), LL_E_USAGE);
  CHECK_INT(ll_sha256_final(NULL, out), LL_E_USAGE);
  CHECK_INT(ll_sha256_reset(NULL), LL_E_USAGE);
  ll_sha256_free(NULL); /* must be harmless */
}

static int guid_shape_ok(const char *g) {
  if (strlen(g) != 36)
    return 0;
  for (int i = 0; i < 36; i++) {
    char c = g[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-')
        return 0;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return 0; /* lowercase hex only */
    }
  }
  return 1;
}

static void test_guid(void) {
  char seen[32][LL_GUID_LEN];
  for (int i = 0; i < 32; i++) {
    CHECK_INT(ll_guid_v4(seen[i]), LL_OK);
    CHECK(guid_shape_ok(seen[i]));
    CHECK(seen[i][14] == '4');          /* version */
    CHECK(strchr("89ab", seen[i][19])); /* RFC 4122 variant */
    for (int j = 0; j < i; j++)
      CHECK(strcmp(seen[i], seen[j]) != 0);
  }
}

int main(void) {
  test_vectors();
  test_million_a();
  test_misuse();
  test_guid();
  return ll_test_report("test_hash");
}
