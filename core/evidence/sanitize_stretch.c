/* A stretch from inside a bound lease ID: LL_SAN_CUT_MIN consecutive
 * digits of a GUID (either case, hyphens anywhere or none), which no
 * match from the ID's first digit finds (a value cut at its front, or a
 * secret replaced over the ID's first digits). Sixteen hex digits are 64
 * bits, as for a cut ID; fewer are not told from other hex text. The
 * ledger's table (sanitize_ids.c) holds every GUID's 16-digit windows, a
 * filter over them and, while they fit, the windows themselves, sorted:
 * each window of the text costs a shift, a multiply and a bit test, and
 * a lookup only where its bit is set. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "sanitize_impl.h"

void ll_san_stretch_init(ll_san_stretch *s) {
  s->w = NULL;
  s->n = 0;
  s->made = 0;
}

void ll_san_stretch_free(ll_san_stretch *s) {
  free(s->w);
  ll_san_stretch_init(s);
}

/* Every GUID's windows, when the table could not keep them all. Out of
 * memory, none: ll_malloc counts the failure, and a ledger append that
 * saw one refuses its row. */
static void make(ll_san_stretch *s, const char *const *ids, size_t n_ids) {
  uint64_t w[LL_SAN_WINDOWS];
  size_t guids = 0;
  s->made = 1;
  for (size_t k = 0; k < n_ids; k++)
    guids += ids[k] && ll_san_guid_windows(ids[k], w);
  if (!guids || !(s->w = ll_malloc(guids * LL_SAN_WINDOWS * sizeof *s->w)))
    return;
  for (size_t k = 0; k < n_ids; k++)
    if (ids[k] && ll_san_guid_windows(ids[k], w))
      for (size_t o = 0; o < LL_SAN_WINDOWS; o++)
        s->w[s->n++] = (ll_san_win){w[o], k};
  ll_san_wins_sort(s->w, s->n);
}

size_t ll_san_stretch_find(ll_san_stretch *s, const ll_san_ids *t,
                           const char *const *ids, const char *text, size_t a,
                           size_t e, size_t *k) {
  uint64_t v = 0;
  size_t pos[LL_SAN_CUT_MIN], got = 0;
  for (size_t j = a; j < e; j++) {
    /* ll_hexval inline: this loop reads every byte of a hex run */
    unsigned c = (unsigned char)text[j], d = c - '0';
    if (d > 9) {
      d = (c | 0x20) - 'a';
      if (d > 5) {
        if (c != '-')
          got = 0;
        continue;
      }
      d += 10;
    }
    v = v << 4 | d; /* the last 16 digits */
    pos[got++ % LL_SAN_CUT_MIN] = j;
    unsigned b = ll_san_win_bit(v);
    if (got < LL_SAN_CUT_MIN || !(t->bloom[b / 64] >> (b % 64) & 1))
      continue;
    if (!t->wins_all && !s->made)
      make(s, ids, t->n);
    if (t->wins_all ? ll_san_wins_find(t->wins, t->nwins, v, k)
                    : ll_san_wins_find(s->w, s->n, v, k))
      return pos[got % LL_SAN_CUT_MIN]; /* the window's first digit */
  }
  return e;
}
