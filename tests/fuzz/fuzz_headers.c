/* libFuzzer target: reading a response (core/blob ll_blob_parse) from a
 * synthetic ll_http_response. Input: two bytes of status, then header
 * lines "name:value" up to an empty line, then the body. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blob.h"
#include "http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int terminated(const char *s, size_t cap) {
  return strnlen(s, cap) < cap;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2)
    return 0;
  ll_http_response r;
  ll_http_response_init(&r);
  r.outcome = LL_OUTCOME_RESPONSE;
  r.status = 100 + ((data[0] << 8 | data[1]) % 500);
  r.emitted_requests = 1;
  size_t i = 2;
  /* header block */
  while (i < size) {
    const uint8_t *nl = memchr(data + i, '\n', size - i);
    size_t end = nl ? (size_t)(nl - data) : size;
    if (end == i) { /* empty line: the body follows */
      i++;
      break;
    }
    char *line = malloc(end - i + 1);
    if (!line)
      goto done;
    memcpy(line, data + i, end - i);
    line[end - i] = '\0';
    char *colon = strchr(line, ':');
    if (colon) {
      *colon = '\0';
      if (ll_headers_add(&r.headers, line, colon + 1) != LL_OK) {
        free(line);
        goto done;
      }
    }
    free(line);
    i = end + 1;
  }
  if (i < size) {
    r.body_len = size - i;
    r.body = malloc(r.body_len + 1);
    if (!r.body)
      goto done;
    memcpy(r.body, data + i, r.body_len);
    r.body[r.body_len] = '\0';
  }
  ll_blob_result b;
  if (ll_blob_parse(&r, &b) == LL_OK) {
    if (!terminated(b.error_code, sizeof b.error_code) ||
        !terminated(b.error_message, sizeof b.error_message) ||
        !terminated(b.request_id, sizeof b.request_id) ||
        !terminated(b.returned_version, sizeof b.returned_version) ||
        !terminated(b.lease_state, sizeof b.lease_state) ||
        !terminated(b.lease_status, sizeof b.lease_status) ||
        !terminated(b.lease_duration, sizeof b.lease_duration) ||
        !terminated(b.lease_id, sizeof b.lease_id) ||
        !terminated(b.lease_time, sizeof b.lease_time) ||
        !terminated(b.etag, sizeof b.etag) ||
        !terminated(b.last_modified, sizeof b.last_modified) ||
        !terminated(b.content_length, sizeof b.content_length) ||
        !terminated(b.header_problems, sizeof b.header_problems))
      __builtin_trap();
  }
done:
  ll_http_response_cleanup(&r);
  return 0;
}
