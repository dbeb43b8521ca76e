/* libFuzzer target: the fixture loader (core/fixture
 * ll_fixture_replay_text), then one request replayed against whatever it
 * loaded, so matching and the virtual clock see the parsed exchanges. */
#include <stdint.h>
#include <string.h>

#include "clock.h"
#include "fixture.h"
#include "http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ll_error err = {0};
  ll_clock *clock = NULL;
  char label[32];
  ll_transport *t = ll_fixture_replay_text((const char *)data, size, "fuzz",
                                           "/devstoreaccount1", &clock, label,
                                           sizeof label, &err);
  if (!t) {
    ll_clock_free(clock);
    return 0;
  }
  if (strnlen(label, sizeof label) == sizeof label)
    __builtin_trap();
  ll_http_request q;
  memset(&q, 0, sizeof q);
  ll_headers_init(&q.headers);
  q.method = "HEAD";
  q.url = "https://127.0.0.1:10000/devstoreaccount1/lease-handoff-lab/"
          "writer-handoff.json";
  if (ll_headers_add(&q.headers, "x-ms-version", "2023-11-03") == LL_OK) {
    ll_http_response r;
    ll_http_response_init(&r);
    (void)t->exchange(t, &q, &r, &err);
    ll_http_response_cleanup(&r);
  }
  ll_headers_cleanup(&q.headers);
  ll_transport_free(t);
  ll_clock_free(clock);
  return 0;
}
