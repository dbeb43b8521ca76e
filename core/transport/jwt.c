/* JWT claims without verification, base64url, and the unsigned dev token
 * Azurite's --oauth basic accepts (it checks only the payload). */
#include "jwt.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char b64url_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

char *ll_b64url_encode(const unsigned char *data, size_t len) {
  char *out = malloc((len + 2) / 3 * 4 + 1);
  if (!out)
    return NULL;
  size_t o = 0;
  for (size_t i = 0; i < len; i += 3) {
    uint32_t v = (uint32_t)data[i] << 16;
    if (i + 1 < len)
      v |= (uint32_t)data[i + 1] << 8;
    if (i + 2 < len)
      v |= data[i + 2];
    out[o++] = b64url_alphabet[(v >> 18) & 63];
    out[o++] = b64url_alphabet[(v >> 12) & 63];
    if (i + 1 < len)
      out[o++] = b64url_alphabet[(v >> 6) & 63];
    if (i + 2 < len)
      out[o++] = b64url_alphabet[v & 63];
  }
  out[o] = '\0';
  return out;
}

static int b64url_value(unsigned char c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '-')
    return 62;
  if (c == '_')
    return 63;
  return -1;
}

ll_status ll_b64url_decode(const char *s, size_t len, unsigned char **out,
                           size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  for (int pad = 0; pad < 2 && len > 0 && s[len - 1] == '='; pad++)
    len--;
  if (len % 4 == 1)
    return LL_E_PARSE; /* one leftover character cannot encode a byte */
  unsigned char *buf = malloc(len / 4 * 3 + 3);
  if (!buf)
    return LL_E_NOMEM;
  size_t o = 0;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < len; i++) {
    int v = b64url_value((unsigned char)s[i]);
    if (v < 0) {
      free(buf);
      return LL_E_PARSE;
    }
    acc = (acc << 6) | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      buf[o++] = (unsigned char)(acc >> bits);
      acc &= (1u << bits) - 1;
    }
  }
  buf[o] = '\0';
  *out = buf;
  *out_len = o;
  return LL_OK;
}

/* Decodes one segment and parses it as a JSON object. */
static ll_status segment_object(const char *seg, size_t len, const char *what,
                                cJSON **out, ll_error *err) {
  unsigned char *raw;
  size_t raw_len;
  *out = NULL;
  ll_status st = ll_b64url_decode(seg, len, &raw, &raw_len);
  if (st == LL_E_NOMEM)
    return ll_fail(err, st, "out of memory decoding a JWT");
  if (st != LL_OK)
    return ll_fail(err, LL_E_PARSE, "not a JWT: the %s is not base64url", what);
  cJSON *obj = cJSON_ParseWithLength((const char *)raw, raw_len);
  OPENSSL_cleanse(raw, raw_len);
  free(raw);
  if (!cJSON_IsObject(obj)) {
    cJSON_Delete(obj);
    return ll_fail(err, LL_E_PARSE, "not a JWT: the %s is not a JSON object",
                   what);
  }
  *out = obj;
  return LL_OK;
}

ll_status ll_jwt_exp(const char *jwt, int64_t *out_exp, ll_error *err) {
  if (!jwt || !out_exp)
    return ll_fail(err, LL_E_USAGE, "ll_jwt_exp: NULL argument");
  const char *d1 = strchr(jwt, '.');
  const char *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
  if (!d1 || !d2 || strchr(d2 + 1, '.') || d1 == jwt || d2 == d1 + 1)
    return ll_fail(err, LL_E_PARSE,
                   "not a JWT: expected three dot-separated segments");
  cJSON *header = NULL, *payload = NULL;
  ll_status st =
      segment_object(jwt, (size_t)(d1 - jwt), "header", &header, err);
  if (st != LL_OK)
    goto cleanup;
  st = segment_object(d1 + 1, (size_t)(d2 - d1 - 1), "payload", &payload, err);
  if (st != LL_OK)
    goto cleanup;
  const cJSON *exp = cJSON_GetObjectItemCaseSensitive(payload, "exp");
  if (!cJSON_IsNumber(exp)) {
    st = ll_fail(err, LL_E_PARSE, "JWT has no numeric exp claim");
    goto cleanup;
  }
  /* NumericDate seconds; beyond year 9999 is not a real expiry. */
  if (!isfinite(exp->valuedouble) || exp->valuedouble <= 0 ||
      exp->valuedouble >= 253402300800.0) {
    st = ll_fail(err, LL_E_PARSE, "JWT exp claim is out of range");
    goto cleanup;
  }
  *out_exp = (int64_t)exp->valuedouble;
cleanup:
  cJSON_Delete(header);
  cJSON_Delete(payload);
  return st;
}

char *ll_auth_dev_token(int64_t now_s, int64_t lifetime_s) {
  static const char tenant[] = "ab1f708d-50f6-404c-a006-d71b2ac7a606";
  static const char header[] = "{\"alg\":\"RS256\",\"typ\":\"JWT\"}";
  static const char signature[] = "leaselua-dev-unsigned";
  char payload[512];
  int n = snprintf(
      payload, sizeof payload,
      "{\"aud\":\"https://storage.azure.com\","
      "\"iss\":\"https://sts.windows.net/%s/\",\"nbf\":%" PRId64
      ",\"iat\":%" PRId64 ",\"exp\":%" PRId64 ","
      "\"oid\":\"5c6a1a1e-7d3b-4f43-9b8e-1e0c2d6f4a17\",\"tid\":\"%s\"}",
      tenant, now_s - 300, now_s - 300, now_s + lifetime_s, tenant);
  if (n < 0 || (size_t)n >= sizeof payload)
    return NULL;
  char *h = ll_b64url_encode((const unsigned char *)header, strlen(header));
  char *p = ll_b64url_encode((const unsigned char *)payload, (size_t)n);
  char *s =
      ll_b64url_encode((const unsigned char *)signature, strlen(signature));
  char *out = NULL;
  if (h && p && s) {
    size_t len = strlen(h) + strlen(p) + strlen(s) + 3;
    out = malloc(len);
    if (out)
      snprintf(out, len, "%s.%s.%s", h, p, s);
  }
  free(h);
  free(p);
  free(s);
  return out;
}
