/* core/base/clock.c: the UTC stamps every row carries, put in place digit
 * by digit, are the bytes snprintf printed before, for every instant from
 * 1970 to 9999 and for the ones outside it; the virtual clock advances
 * only forward. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "testlib.h"

/* The stamp as it was printed before the digits were put in place. */
static void reference(int64_t utc_ms, char *buf, unsigned cap) {
  time_t s = (time_t)(utc_ms / 1000);
  struct tm tm;
  gmtime_r(&s, &tm);
  snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
           tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
           (int)(utc_ms % 1000));
}

static void test_stamps(void) {
  static const int64_t fixed[] = {0,
                                  1,
                                  999,
                                  1000,
                                  951782400000,    /* 2000-02-29 */
                                  1796021296123,   /* 2026-11-30 */
                                  253402300799999, /* 9999-12-31 23:59:59.999 */
                                  253402300800000, /* year 10000 */
                                  -1,              /* before 1970 */
                                  -62135596800000}; /* year 1 */
  char got[64], want[64];
  long wrong = 0;
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
    ll_clock_format_utc(fixed[i], got, sizeof got);
    reference(fixed[i], want, sizeof want);
    CHECK_STR(got, want);
  }
  /* a sweep from 1970 to 9999, about ten days and 7 ms apart */
  for (int64_t ms = 0; ms < 253402300799999; ms += 864010007) {
    ll_clock_format_utc(ms, got, sizeof got);
    reference(ms, want, sizeof want);
    wrong += strcmp(got, want) != 0;
  }
  CHECK_INT(wrong, 0);
  /* a buffer too short for the stamp is cut as snprintf cuts it */
  ll_clock_format_utc(1796021296123, got, 11);
  CHECK_STR(got, "2026-11-30");
  CHECK_INT(strlen("2026-11-30T06:48:16.123Z"), 24);
  ll_clock_format_utc(1796021296123, got, 25);
  CHECK_STR(got, "2026-11-30T06:48:16.123Z");
}

static void test_virtual(void) {
  ll_clock *c = ll_clock_new_virtual(1796021296000);
  CHECK(c != NULL);
  if (!c)
    return;
  int64_t t0 = ll_clock_mono_ns(c);
  ll_clock_sleep_ms(c, 30000);
  CHECK_INT(ll_clock_mono_ns(c) - t0, 30000LL * 1000000);
  ll_clock_advance_to(c, t0); /* never backwards */
  CHECK_INT(ll_clock_mono_ns(c) - t0, 30000LL * 1000000);
  char stamp[40];
  ll_clock_utc_str(c, stamp, sizeof stamp);
  CHECK_STR(stamp, "2026-11-30T06:48:46.000Z");
  ll_clock_free(c);
}

/* ll_utc_parse: one grammar, each source's flags. The storage logs' and
 * the fixtures' readers took 31 February and a leap second before they
 * shared it; the SAS reader's own cases are in test_auth_sas. */
static void test_parse(void) {
  enum { LOGS = LL_UTC_BARE | LL_UTC_SPACE | LL_UTC_SLASH | LL_UTC_NANO };
  static const struct {
    const char *in;
    unsigned allow;
    int ok;
    int64_t ms;
  } rows[] = {
      {"2026-12-01T10:00:00Z", 0, 1, 1796119200000LL},
      {"2026-12-01T10:00:00.123Z", 0, 1, 1796119200123LL},
      {"2026-12-01T10:00:00.1234567Z", 0, 1, 1796119200123LL},
      {"2028-02-29T00:00:00Z", 0, 1, 1835395200000LL},
      {"2018/11/08 21:09:36.6900118", LOGS, 1, 1541711376690LL},
      {"2026-12-01 10:00:00", LOGS, 1, 1796119200000LL},
      {"2026-12-01T10:00:00", 0, 0, 0},    /* a fixture's needs Z */
      {"2026/12/01T10:00:00Z", 0, 0, 0},   /* slashes: logs only */
      {"2026/12-01 10:00:00", LOGS, 0, 0}, /* one separator */
      {"2026-12-01 10:00:00Z", 0, 0, 0},   /* a space: logs only */
      {"2026-02-31T10:00:00Z", 0, 0, 0},   /* no such day */
      {"2026-02-31 10:00:00", LOGS, 0, 0},
      {"2027-02-29T00:00:00Z", 0, 0, 0},
      {"2026-12-01T10:00:60Z", 0, 0, 0}, /* no leap second */
      {"2026-12-01T10:00:60", LOGS, 0, 0},
      {"2026-12-01T10:00:00.Z", 0, 0, 0},
      {"2026-12-01T10:00:00.12345678Z", 0, 0, 0},
      {"2026-12-01T10:00:00.123456789Z", LOGS, 1, 1796119200123LL},
      {"2026-12-01T10:00:00.1234567890Z", LOGS, 0, 0},
      {" 2026-12-01T10:00:00Z", 0, 0, 0}, /* sscanf took this */
      {"2026-12-01T+1:00:00Z", 0, 0, 0},
      {"1969-12-31T23:59:59Z", LOGS, 0, 0},
      {"2026-12-01", LOGS, 0, 0}, /* a date alone: SAS only */
      {"2026-12-01T10:00:00+01:00", LOGS, 0, 0},
      {"2026-12-01T10:00:00Z ", 0, 0, 0},
      {"", 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    int64_t ms = -1;
    int got = ll_utc_parse(rows[i].in, strlen(rows[i].in), rows[i].allow, &ms);
    if ((got == 0) != rows[i].ok)
      fprintf(stderr, "parse row %zu (%s): %d\n", i, rows[i].in, got);
    CHECK_INT(got == 0, rows[i].ok);
    if (rows[i].ok)
      CHECK_INT(ms, rows[i].ms);
  }
  int64_t ms = 7;
  CHECK_INT(ll_utc_parse(NULL, 0, 0, &ms), -1);
  CHECK_INT(ms, 7);
}

int main(void) {
  test_stamps();
  test_virtual();
  test_parse();
  return ll_test_report("test_clock");
}
