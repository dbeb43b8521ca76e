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

#include "hash.h"

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

/* Splits a JWT into its payload object (header checked too). */
static ll_status jwt_payload(const char *jwt, cJSON **payload, ll_error *err) {
  *payload = NULL;
  const char *d1 = strchr(jwt, '.');
  const char *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
  if (!d1 || !d2 || strchr(d2 + 1, '.') || d1 == jwt || d2 == d1 + 1)
    return ll_fail(err, LL_E_PARSE,
                   "not a JWT: expected three dot-separated segments");
  cJSON *header = NULL;
  ll_status st =
      segment_object(jwt, (size_t)(d1 - jwt), "header", &header, err);
  cJSON_Delete(header);
  if (st == LL_OK)
    st = segment_object(d1 + 1, (size_t)(d2 - d1 - 1), "payload", payload, err);
  return st;
}

ll_status ll_jwt_exp(const char *jwt, int64_t *out_exp, ll_error *err) {
  if (!jwt || !out_exp)
    return ll_fail(err, LL_E_USAGE, "ll_jwt_exp: NULL argument");
  cJSON *payload = NULL;
  ll_status st = jwt_payload(jwt, &payload, err);
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
  cJSON_Delete(payload);
  return st;
}

static void claim(const cJSON *payload, const char *k, char *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(payload, k);
  out[0] = '\0';
  if (!cJSON_IsString(v) || strlen(v->valuestring) >= LL_JWT_CLAIM_MAX)
    return;
  for (const char *p = v->valuestring; *p; p++)
    if (*p <= 0x20 || *p >= 0x7f)
      return;
  strcpy(out, v->valuestring);
}

ll_status ll_jwt_ids_read(const char *jwt, ll_jwt_ids *out, ll_error *err) {
  if (!jwt || !out)
    return ll_fail(err, LL_E_USAGE, "ll_jwt_ids_read: NULL argument");
  memset(out, 0, sizeof *out);
  cJSON *payload = NULL;
  ll_status st = jwt_payload(jwt, &payload, err);
  if (st == LL_OK) {
    claim(payload, "tid", out->tid);
    claim(payload, "oid", out->oid);
    claim(payload, "appid", out->appid);
    claim(payload, "azp", out->azp);
    claim(payload, "idtyp", out->idtyp);
  }
  cJSON_Delete(payload);
  return st;
}

ll_status ll_principal_fingerprint(const char *tid, const char *oid,
                                   char out[LL_FINGERPRINT_LEN]) {
  out[0] = '\0';
  if (!tid || !oid || !*tid || !*oid || strlen(tid) >= 256 ||
      strlen(oid) >= 256)
    return LL_E_USAGE;
  char text[600];
  int n = snprintf(text, sizeof text, "leaselua-principal-v1:%s:%s", tid, oid);
  if (n < 0 || (size_t)n >= sizeof text)
    return LL_E_USAGE;
  return ll_fingerprint_text(text, (size_t)n, out);
}

ll_status ll_fingerprint_text(char *text, size_t n,
                              char out[LL_FINGERPRINT_LEN]) {
  out[0] = '\0';
  for (size_t i = 0; i < n; i++)
    if (text[i] >= 'A' && text[i] <= 'Z')
      text[i] = (char)(text[i] - 'A' + 'a');
  char hex[LL_SHA256_HEX];
  ll_status st = ll_sha256_hex(text, n, hex);
  if (st != LL_OK)
    return st;
  memcpy(out, hex, LL_FINGERPRINT_LEN - 1);
  out[LL_FINGERPRINT_LEN - 1] = '\0';
  return LL_OK;
}

static int actor_ok(const char *a) {
  size_t n = strlen(a);
  if (n == 0 || n > 15)
    return 0;
  for (size_t i = 0; i < n; i++)
    if (!((a[i] >= 'a' && a[i] <= 'z') || (a[i] >= 'A' && a[i] <= 'Z') ||
          (a[i] >= '0' && a[i] <= '9') || a[i] == '-' || a[i] == '_'))
      return 0;
  return 1;
}

int ll_auth_dev_oid(const char *actor, char out[37]) {
  if (!actor || !actor_ok(actor))
    return 0;
  char text[64], hex[LL_SHA256_HEX];
  int n = snprintf(text, sizeof text, "leaselua-dev-oid:%s", actor);
  if (ll_sha256_hex(text, (size_t)n, hex) != LL_OK)
    return 0;
  hex[12] = '4';                         /* version 4 */
  hex[16] = "89ab"[(hex[16] - '0') & 3]; /* the RFC 4122 variant */
  snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12,
           hex + 16, hex + 20);
  return 1;
}

static char *dev_token(int64_t now_s, int64_t lifetime_s, const char *oid);

char *ll_auth_dev_token(int64_t now_s, int64_t lifetime_s) {
  return dev_token(now_s, lifetime_s, "5c6a1a1e-7d3b-4f43-9b8e-1e0c2d6f4a17");
}

char *ll_auth_dev_token_for(int64_t now_s, int64_t lifetime_s,
                            const char *actor) {
  char oid[37];
  if (!actor)
    return ll_auth_dev_token(now_s, lifetime_s);
  if (!ll_auth_dev_oid(actor, oid))
    return NULL;
  return dev_token(now_s, lifetime_s, oid);
}

static char *dev_token(int64_t now_s, int64_t lifetime_s, const char *oid) {
  static const char tenant[] = "ab1f708d-50f6-404c-a006-d71b2ac7a606";
  static const char header[] = "{\"alg\":\"RS256\",\"typ\":\"JWT\"}";
  static const char signature[] = "leaselua-dev-unsigned";
  char payload[512];
  int n = snprintf(payload, sizeof payload,
                   "{\"aud\":\"https://storage.azure.com\","
                   "\"iss\":\"https://sts.windows.net/%s/\",\"nbf\":%" PRId64
                   ",\"iat\":%" PRId64 ",\"exp\":%" PRId64 ","
                   "\"oid\":\"%s\",\"tid\":\"%s\"}",
                   tenant, now_s - 300, now_s - 300, now_s + lifetime_s, oid,
                   tenant);
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
