/* A stretch from inside a bound lease ID: LL_SAN_CUT_MIN consecutive
 * digits of a GUID (either case, hyphens anywhere or none), which no
 * match from the ID's first digit finds (a value cut at its front, or a
 * secret replaced over the ID's first digits). Sixteen hex digits are 64
 * bits, as for a cut ID; fewer are not told from other hex text. Every
 * 16-digit window of every GUID is made once per scan, sorted, and each
 * window of the text is looked up: linear in the text, logarithmic in the
 * IDs. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "sanitize_impl.h"

/* windows of one GUID: 32 digits, 16 at a time */
#define DIGITS 32
#define WINDOWS (DIGITS - LL_SAN_CUT_MIN + 1)

static int hex_value(char c, unsigned *d) {
  if (c >= '0' && c <= '9')
    *d = (unsigned)(c - '0');
  else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
    *d = (unsigned)((c | 0x20) - 'a' + 10);
  else
    return 0;
  return 1;
}

/* The 32 digits of a GUID, hyphens dropped (any case: hex_value folds);
 * 0 when id is not one. */
static int guid_digits(const char *id, char out[DIGITS]) {
  size_t n = 0;
  unsigned d;
  for (const char *p = id; *p; p++) {
    if (*p == '-')
      continue;
    if (n == DIGITS || !hex_value(*p, &d))
      return 0;
    out[n++] = *p;
  }
  return n == DIGITS;
}

static int win_cmp(const void *pa, const void *pb) {
  const ll_san_win *a = pa, *b = pb;
  if (a->v != b->v)
    return a->v < b->v ? -1 : 1;
  return a->k < b->k ? -1 : a->k > b->k;
}

void ll_san_stretch_init(ll_san_stretch *s) {
  s->w = NULL;
  s->n = 0;
  s->made = 0;
}

void ll_san_stretch_free(ll_san_stretch *s) {
  if (s->w != s->stack)
    free(s->w);
  ll_san_stretch_init(s);
}

/* The windows of the GUIDs among ids, sorted; 0 when out of memory (then
 * each window of the text is compared with each ID's: slower, the same
 * answer; ll_malloc counts the failure, so a ledger append refuses the
 * row all the same). */
static int make(ll_san_stretch *s, const char *const *ids, size_t n_ids) {
  size_t guids = 0;
  char norm[DIGITS];
  for (size_t k = 0; k < n_ids; k++)
    guids += ids[k] && guid_digits(ids[k], norm);
  s->made = 1;
  s->w = guids * WINDOWS <= LL_SAN_STRETCH_STACK
             ? s->stack
             : ll_malloc(guids * WINDOWS * sizeof *s->w);
  if (!s->w)
    return 0;
  for (size_t k = 0; k < n_ids; k++) {
    if (!ids[k] || !guid_digits(ids[k], norm))
      continue;
    for (size_t o = 0; o < WINDOWS; o++) {
      uint64_t v = 0;
      for (size_t j = 0; j < LL_SAN_CUT_MIN; j++) {
        unsigned d = 0;
        (void)hex_value(norm[o + j], &d);
        v = v << 4 | d;
      }
      s->w[s->n++] = (ll_san_win){v, k};
    }
  }
  qsort(s->w, s->n, sizeof *s->w, win_cmp);
  return 1;
}

/* The lowest index of an ID with window v, or n_ids. */
static size_t lookup(const ll_san_stretch *s, const char *const *ids,
                     size_t n_ids, uint64_t v) {
  if (s->w) {
    size_t lo = 0, hi = s->n; /* the first window >= v */
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (s->w[mid].v < v)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo < s->n && s->w[lo].v == v ? s->w[lo].k : n_ids;
  }
  char norm[DIGITS];
  for (size_t k = 0; k < n_ids; k++) {
    if (!ids[k] || !guid_digits(ids[k], norm))
      continue;
    for (size_t o = 0; o < WINDOWS; o++) {
      uint64_t w = 0;
      for (size_t j = 0; j < LL_SAN_CUT_MIN; j++) {
        unsigned d = 0;
        (void)hex_value(norm[o + j], &d);
        w = w << 4 | d;
      }
      if (w == v)
        return k;
    }
  }
  return n_ids;
}

size_t ll_san_stretch_find(ll_san_stretch *s, const char *const *ids,
                           size_t n_ids, const char *text, size_t a, size_t e,
                           size_t *k) {
  uint64_t v = 0;
  size_t pos[LL_SAN_CUT_MIN], got = 0;
  if (!s->made)
    (void)make(s, ids, n_ids);
  if (s->w && s->n == 0)
    return e; /* no GUID among the IDs */
  for (size_t j = a; j < e; j++) {
    unsigned d;
    if (text[j] == '-')
      continue;
    if (!hex_value(text[j], &d)) {
      got = 0;
      continue;
    }
    v = v << 4 | d; /* the last 16 digits */
    pos[got++ % LL_SAN_CUT_MIN] = j;
    if (got >= LL_SAN_CUT_MIN && (*k = lookup(s, ids, n_ids, v)) < n_ids)
      return pos[got % LL_SAN_CUT_MIN]; /* the window's first digit */
  }
  return e;
}
