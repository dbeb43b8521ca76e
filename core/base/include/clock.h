/* Real or virtual time. Scripts get time only from here; during replay the
 * clock is virtual and driven by the fixture's t_ms. */
#ifndef LL_CLOCK_H
#define LL_CLOCK_H

#include <stddef.h>
#include <stdint.h>

typedef struct ll_clock ll_clock;

ll_clock *ll_clock_new_real(void);
/* Virtual clock: starts at the given UTC epoch (ms), monotonic 0. */
ll_clock *ll_clock_new_virtual(int64_t utc_epoch_ms);
void ll_clock_free(ll_clock *c);
int ll_clock_is_virtual(const ll_clock *c);

int64_t ll_clock_mono_ns(ll_clock *c);
int64_t ll_clock_utc_ms(ll_clock *c);
/* RFC 3339 UTC with milliseconds, e.g. 2026-11-30T06:48:16.123Z; buf >= 32. */
void ll_clock_utc_str(ll_clock *c, char *buf, unsigned cap);
void ll_clock_format_utc(int64_t utc_ms, char *buf, unsigned cap);
/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil), for parsing UTC stamps without timegm. */
int64_t ll_days_from_civil(int64_t y, int m, int d);

/* The one reader of a UTC stamp that comes from outside (a fixture, a
 * storage log, a SAS): YYYY-MM-DD, a real day from 1970 on, then
 * THH:MM:SS (23:59:59 at most: no leap second), an optional fraction of
 * 1 to 7 digits (milliseconds kept, the rest dropped, as Azure writes
 * seven), and Z. A year before 1970 is refused, as are 31 February and a
 * leap second. What one source adds is a flag of allow. 0 with *out_ms
 * set, or -1 when s[0..len) is not such a stamp (s may be NULL). */
enum {
  LL_UTC_BARE = 1,    /* no Z: UTC all the same (storage logs, a SAS) */
  LL_UTC_SPACE = 2,   /* ' ' for 'T' (storage logs) */
  LL_UTC_SLASH = 4,   /* YYYY/MM/DD (classic storage logs) */
  LL_UTC_SHORT = 8,   /* a date alone (midnight) or THH:MM (a SAS) */
  LL_UTC_OFFSET = 16, /* +HH:MM or -HH:MM for Z (a SAS) */
  LL_UTC_NANO = 32    /* a fraction of up to 9 digits (storage logs) */
};
int ll_utc_parse(const char *s, size_t len, unsigned allow, int64_t *out_ms);
/* Real: nanosleep. Virtual: advances the clock at once. */
void ll_clock_sleep_ms(ll_clock *c, int64_t ms);
/* Virtual only: move to at least mono_ns (never backwards). */
void ll_clock_advance_to(ll_clock *c, int64_t mono_ns);

#endif
