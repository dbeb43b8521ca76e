/* Managed identity: one GET to IMDS or to App Service's IDENTITY_ENDPOINT
 * for a storage token, and the transport rule for those endpoints. */
#include "auth_identity.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth_impl.h"
#include "secret.h"
#include "url.h"

#define IMDS_DEFAULT "http://169.254.169.254/metadata/identity/oauth2/token"
#define RESOURCE_DEFAULT "https://storage.azure.com/"

ll_status ll_auth_check_identity_url(const char *url, ll_error *err) {
  if (!url)
    return ll_fail(err, LL_E_BAD_URL, "no managed identity endpoint");
  ll_error inner = {0};
  ll_status st = ll_url_check(url, LL_URL_HTTP_LOOPBACK_OR_IMDS, &inner);
  if (st != LL_OK)
    return ll_fail(err, st, "managed identity endpoint: %s", inner.message);
  return LL_OK;
}

typedef struct {
  char *buf;
  size_t len;
  int overflow;
} body_sink;

static size_t sink_write(char *data, size_t size, size_t nmemb, void *ud) {
  body_sink *s = ud;
  size_t n = size * nmemb;
  if (n > SECRET_CAP - s->len) {
    s->overflow = 1;
    return 0; /* aborts the transfer */
  }
  memcpy(s->buf + s->len, data, n);
  s->len += n;
  s->buf[s->len] = '\0';
  return n;
}

/* Seconds since the epoch from a number or a digit string, or 0. */
static int64_t json_epoch(const cJSON *v) {
  if (cJSON_IsNumber(v) && v->valuedouble > 0 &&
      v->valuedouble < 253402300800.0)
    return (int64_t)v->valuedouble;
  if (!cJSON_IsString(v) || !*v->valuestring || strlen(v->valuestring) > 12)
    return 0;
  int64_t r = 0;
  for (const char *p = v->valuestring; *p; p++) {
    if (*p < '0' || *p > '9')
      return 0;
    r = r * 10 + (*p - '0');
  }
  return r;
}

/* The IMDS "error" field, when it is a short plain code safe to repeat. */
static const char *safe_error_code(const cJSON *root) {
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
  if (!cJSON_IsString(e) || strlen(e->valuestring) > 64)
    return NULL;
  for (const char *p = e->valuestring; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
          *p == '-'))
      return NULL;
  return e->valuestring;
}

/* One GET to App Service's IDENTITY_ENDPOINT or to IMDS, on a private
 * handle: one attempt, no proxy, no redirects, short timeouts. */
ll_status ll_auth_token_from_identity(const char *imds_endpoint,
                                      const char *client_id,
                                      const char *resource, char **out,
                                      int64_t *expires_on, ll_error *err) {
  const char *ep = getenv("IDENTITY_ENDPOINT");
  const char *hdr = getenv("IDENTITY_HEADER");
  int app_service = ep && *ep && hdr && *hdr;
  const char *base =
      app_service ? ep : (imds_endpoint ? imds_endpoint : IMDS_DEFAULT);
  ll_status st = ll_auth_check_identity_url(base, err);
  if (st != LL_OK)
    return st;

  CURL *h = curl_easy_init();
  char *res = NULL, *cid = NULL, *url = NULL, *hline = NULL;
  struct curl_slist *headers = NULL;
  body_sink sink = {.buf = malloc(SECRET_CAP + 1)};
  cJSON *root = NULL;
  char errbuf[CURL_ERROR_SIZE] = "";
  if (!h || !sink.buf) {
    st = ll_fail(err, LL_E_NOMEM, "out of memory setting up managed identity");
    goto cleanup;
  }
  res = curl_easy_escape(h, resource ? resource : RESOURCE_DEFAULT, 0);
  cid = client_id ? curl_easy_escape(h, client_id, 0) : NULL;
  size_t ulen =
      strlen(base) + strlen(res ? res : "") + strlen(cid ? cid : "") + 80;
  url = malloc(ulen);
  if (!res || (client_id && !cid) || !url) {
    st = ll_fail(err, LL_E_NOMEM, "out of memory setting up managed identity");
    goto cleanup;
  }
  snprintf(url, ulen, "%s%sapi-version=%s&resource=%s%s%s", base,
           strchr(base, '?') ? "&" : "?",
           app_service ? "2019-08-01" : "2018-02-01", res,
           cid ? "&client_id=" : "", cid ? cid : "");
  if (app_service) {
    size_t hlen = strlen(hdr) + sizeof "X-IDENTITY-HEADER: ";
    hline = malloc(hlen);
    if (hline)
      snprintf(hline, hlen, "X-IDENTITY-HEADER: %s", hdr);
  } else {
    hline = strdup("Metadata: true");
  }
  struct curl_slist *hl = hline ? curl_slist_append(NULL, hline) : NULL;
  if (!hl) {
    st = ll_fail(err, LL_E_NOMEM, "out of memory setting up managed identity");
    goto cleanup;
  }
  headers = hl;
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  /* never through a proxy, whatever the environment says */
  curl_easy_setopt(h, CURLOPT_PROXY, "");
  curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink_write);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
  CURLcode rc = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  if (sink.overflow) {
    char limit[32];
    ll_input_limit_str(SECRET_CAP, limit, sizeof limit);
    st = ll_fail(err, LL_E_AUTH, "managed identity response exceeds %s", limit);
    goto cleanup;
  }
  if (rc != CURLE_OK) {
    st = ll_fail(err, LL_E_AUTH, "managed identity endpoint unreachable: %s",
                 *errbuf ? errbuf : curl_easy_strerror(rc));
    goto cleanup;
  }
  root = cJSON_ParseWithLength(sink.buf, sink.len);
  if (status != 200) {
    const char *code = safe_error_code(root);
    st = ll_fail(err, LL_E_AUTH,
                 "managed identity endpoint answered HTTP %ld%s%s: check "
                 "the identity is assigned and the resource is right",
                 status, code ? " " : "", code ? code : "");
    goto cleanup;
  }
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "access_token");
  if (!cJSON_IsString(t) || !*t->valuestring) {
    st = ll_fail(err, LL_E_AUTH,
                 "managed identity response has no "
                 "access_token");
    goto cleanup;
  }
  *expires_on =
      json_epoch(cJSON_GetObjectItemCaseSensitive(root, "expires_on"));
  if (!(*out = strdup(t->valuestring)))
    st = ll_fail(err, LL_E_NOMEM, "out of memory copying the token");
cleanup:
  ll_secret_json_free(root);
  if (sink.buf) {
    OPENSSL_cleanse(sink.buf, SECRET_CAP + 1);
    free(sink.buf);
  }
  curl_slist_free_all(headers);
  ll_secret_free(hline);
  free(url);
  curl_free(res);
  curl_free(cid);
  if (h)
    curl_easy_cleanup(h);
  return st;
}
