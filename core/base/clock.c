/* Real or virtual time. The virtual clock lets replay run a 30 s break in
 * milliseconds while rows still carry the recorded timings. */
#include "clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ll_clock {
  int is_virtual;
  int64_t mono_ns;      /* virtual: current monotonic time */
  int64_t utc_epoch_ms; /* virtual: UTC at mono 0 */
};

ll_clock *ll_clock_new_real(void) {
  return calloc(1, sizeof(ll_clock));
}

ll_clock *ll_clock_new_virtual(int64_t utc_epoch_ms) {
  ll_clock *c = calloc(1, sizeof *c);
  if (c) {
    c->is_virtual = 1;
    c->utc_epoch_ms = utc_epoch_ms;
  }
  return c;
}

void ll_clock_free(ll_clock *c) {
  free(c);
}

int ll_clock_is_virtual(const ll_clock *c) {
  return c->is_virtual;
}

int64_t ll_clock_mono_ns(ll_clock *c) {
  if (c->is_virtual)
    return c->mono_ns;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t ll_clock_utc_ms(ll_clock *c) {
  if (c->is_virtual)
    return c->utc_epoch_ms + c->mono_ns / 1000000;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t ll_days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static int take_digits(const char **p, const char *end, int n, int *out) {
  int v = 0;
  for (int i = 0; i < n; i++, (*p)++) {
    if (*p >= end || **p < '0' || **p > '9')
      return 0;
    v = v * 10 + (**p - '0');
  }
  *out = v;
  return 1;
}

static int take(const char **p, const char *end, char c) {
  if (*p < end && **p == c) {
    (*p)++;
    return 1;
  }
  return 0;
}

static int days_in_month(int y, int m) {
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
    return 29;
  return days[m - 1];
}

int ll_utc_parse(const char *s, size_t len, unsigned allow, int64_t *out_ms) {
  if (!s)
    return -1;
  const char *p = s, *end = s + len;
  int y, mo, d, h = 0, mi = 0, sec = 0, ms = 0, off = 0;
  char sep = (allow & LL_UTC_SLASH) && len > 4 && s[4] == '/' ? '/' : '-';
  if (!take_digits(&p, end, 4, &y) || !take(&p, end, sep) ||
      !take_digits(&p, end, 2, &mo) || !take(&p, end, sep) ||
      !take_digits(&p, end, 2, &d))
    return -1;
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
    return -1;
  if (p == end) {
    if (!(allow & LL_UTC_SHORT))
      return -1;
  } else {
    if ((!take(&p, end, 'T') &&
         !((allow & LL_UTC_SPACE) && take(&p, end, ' '))) ||
        !take_digits(&p, end, 2, &h) || !take(&p, end, ':') ||
        !take_digits(&p, end, 2, &mi))
      return -1;
    if (take(&p, end, ':')) {
      if (!take_digits(&p, end, 2, &sec))
        return -1;
      if (take(&p, end, '.')) {
        int nd = 0;
        for (; p < end && *p >= '0' && *p <= '9'; p++, nd++)
          if (nd < 3)
            ms = ms * 10 + (*p - '0');
        if (nd == 0 || nd > ((allow & LL_UTC_NANO) ? 9 : 7))
          return -1;
        for (int i = nd; i < 3; i++)
          ms *= 10;
      }
    } else if (!(allow & LL_UTC_SHORT)) {
      return -1;
    }
    if (h > 23 || mi > 59 || sec > 59)
      return -1;
    if ((allow & LL_UTC_OFFSET) && p < end && (*p == '+' || *p == '-')) {
      int sign = *p++ == '-' ? -1 : 1, oh, om;
      if (!take_digits(&p, end, 2, &oh) || !take(&p, end, ':') ||
          !take_digits(&p, end, 2, &om) || oh > 23 || om > 59)
        return -1;
      off = sign * (oh * 60 + om);
    } else if (!take(&p, end, 'Z') && !(allow & LL_UTC_BARE)) {
      return -1;
    }
  }
  if (p != end)
    return -1;
  int64_t t =
      ((ll_days_from_civil(y, mo, d) * 24 + h) * 60 + mi - off) * 60 + sec;
  *out_ms = t * 1000 + ms;
  return 0;
}

/* n as exactly w digits at p (n in 0 .. 10^w - 1). */
static void put_digits(char *p, int n, int w) {
  for (int i = w - 1; i >= 0; i--, n /= 10)
    p[i] = (char)('0' + n % 10);
}

/* Every request writes two stamps: digits put in place, not through
 * snprintf's format parser; what falls outside the usual range (a year
 * not of four digits, a time before 1970) goes through snprintf as it
 * always did, so the bytes are the same for every input. */
void ll_clock_format_utc(int64_t utc_ms, char *buf, unsigned cap) {
  time_t s = (time_t)(utc_ms / 1000);
  struct tm tm;
  gmtime_r(&s, &tm);
  int year = tm.tm_year + 1900, ms = (int)(utc_ms % 1000);
  if (cap >= 25 && utc_ms >= 0 && year >= 1000 && year <= 9999) {
    memcpy(buf, "0000-00-00T00:00:00.000Z", 25);
    put_digits(buf, year, 4);
    put_digits(buf + 5, tm.tm_mon + 1, 2);
    put_digits(buf + 8, tm.tm_mday, 2);
    put_digits(buf + 11, tm.tm_hour, 2);
    put_digits(buf + 14, tm.tm_min, 2);
    put_digits(buf + 17, tm.tm_sec, 2);
    put_digits(buf + 20, ms, 3);
    return;
  }
  snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", year, tm.tm_mon + 1,
           tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

void ll_clock_utc_str(ll_clock *c, char *buf, unsigned cap) {
  ll_clock_format_utc(ll_clock_utc_ms(c), buf, cap);
}

void ll_clock_sleep_ms(ll_clock *c, int64_t ms) {
  if (ms <= 0)
    return;
  if (c->is_virtual) {
    c->mono_ns += ms * 1000000;
    return;
  }
  struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

void ll_clock_advance_to(ll_clock *c, int64_t mono_ns) {
  if (c->is_virtual && mono_ns > c->mono_ns)
    c->mono_ns = mono_ns;
}
