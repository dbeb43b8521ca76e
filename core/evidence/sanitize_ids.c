/* The tables the export scan (sanitize.c) and the export projection
 * (sanitize_row.c) derive from a set of bound lease IDs, made once when
 * the set changes rather than for every row and line. */
#include <stdlib.h>
#include <string.h>

#include "sanitize_ids.h"
#include "sanitize_impl.h"
#include "text.h"

int ll_san_guid_windows(const char *id, uint64_t w[LL_SAN_WINDOWS]) {
  unsigned char d[32];
  size_t n = 0;
  for (const char *p = id; *p; p++) {
    if (*p == '-')
      continue;
    int v = ll_hexval(*p);
    if (v < 0 || n == sizeof d)
      return 0; /* not a hex digit, or more than 32 */
    d[n++] = (unsigned char)v;
  }
  if (n != sizeof d)
    return 0;
  for (size_t o = 0; o < LL_SAN_WINDOWS; o++) {
    w[o] = 0;
    for (size_t j = 0; j < 16; j++)
      w[o] = w[o] << 4 | d[o + j];
  }
  return 1;
}

static int win_cmp(const void *pa, const void *pb) {
  const ll_san_win *a = pa, *b = pb;
  if (a->v != b->v)
    return a->v < b->v ? -1 : 1;
  return a->k < b->k ? -1 : a->k > b->k;
}

void ll_san_wins_sort(ll_san_win *w, size_t n) {
  qsort(w, n, sizeof *w, win_cmp);
}

int ll_san_wins_find(const ll_san_win *w, size_t n, uint64_t v, size_t *k) {
  size_t lo = 0, hi = n; /* the first window >= v */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (w[mid].v < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == n || w[lo].v != v)
    return 0;
  *k = w[lo].k;
  return 1;
}

/* Every GUID's windows (but those whose alias is a placeholder): in the
 * filter, and kept while they fit. */
static void make_windows(ll_san_ids *t, const char *const *ids, size_t n,
                         const char *const *aliases) {
  uint64_t w[LL_SAN_WINDOWS];
  size_t cap = sizeof t->wins / sizeof t->wins[0];
  memset(t->bloom, 0, sizeof t->bloom);
  t->nwins = 0;
  t->wins_all = 1;
  for (size_t k = 0; k < n; k++) {
    if (aliases && aliases[k] && strncmp(aliases[k], "{{", 2) == 0)
      continue;
    if (!ids[k] || !ll_san_guid_windows(ids[k], w))
      continue;
    for (size_t o = 0; o < LL_SAN_WINDOWS; o++) {
      unsigned b = ll_san_win_bit(w[o]);
      t->bloom[b / 64] |= 1ull << (b % 64);
      if (t->nwins < cap)
        t->wins[t->nwins++] = (ll_san_win){w[o], k};
      else
        t->wins_all = 0;
    }
  }
  ll_san_wins_sort(t->wins, t->nwins);
}

void ll_san_ids_make(ll_san_ids *t, const char *const *ids, size_t n) {
  ll_san_ids_make_lease(t, ids, n, NULL);
}

void ll_san_ids_make_lease(ll_san_ids *t, const char *const *ids, size_t n,
                           const char *const *aliases) {
  size_t m = 4;
  int quick = 1;
  memset(t, 0, sizeof *t);
  t->n = n;
  t->id_min = (size_t)-1;
  memcpy(t->needed, "= \t%", 4);
  for (size_t k = 0; k < n; k++) {
    const char *id = ids[k];
    size_t d = 0;
    if (!id)
      continue; /* never matched: no bit, no byte marked */
    unsigned char f = id_first(id), u = other_case((char)f);
    t->starts[f] = t->starts[u] = 1;
    if (k < LL_SAN_KNOWN_IDS) {
      uint16_t bit = (uint16_t)(1u << k);
      unsigned char sec = id_second(id), su = other_case((char)sec);
      t->start_ids[f] = t->start_ids[u] = (uint16_t)(t->start_ids[f] | bit);
      if (!sec)
        t->any_second = (uint16_t)(t->any_second | bit);
      else
        t->second_ids[sec] = t->second_ids[su] =
            (uint16_t)(t->second_ids[sec] | bit);
    }
    for (const unsigned char *p = (const unsigned char *)id; *p; p++) {
      t->in_id[*p] = t->in_id[other_case((char)*p)] = 1;
      d += *p != '-';
    }
    if (d && d < t->id_min)
      t->id_min = d;
    /* every ID marks its first bytes above, even once needed is given up:
     * a byte left unmarked is an ID never replaced */
    if (!quick || (f && memchr(t->needed, f, m)))
      continue; /* listed already (IDs share first bytes) */
    if (m + 2 < sizeof t->needed && f) {
      t->needed[m++] = (char)f;
      t->needed[m++] = (char)u;
    } else {
      quick = 0; /* a NUL first byte or too many IDs: no quick test */
    }
  }
  t->in_id['-'] = 1;
  t->needed[quick ? m : 0] = '\0';
  for (int v = 0; v < 4; v++) {
    memcpy(t->walk[v], t->starts, 256);
    /* an ID that starts with one of needed's own four bytes is left to the
     * scan, as the strpbrk walk on needed did (it never stopped there):
     * matched here, it could take the first byte of a GUID that follows */
    for (const char *c = quick ? "= \t%" : ""; *c; c++)
      t->walk[v][(unsigned char)*c] = 0;
    if (v & 1)
      t->walk[v]['s'] = t->walk[v]['S'] = 1;
    if (v & 2)
      t->walk[v]['b'] = t->walk[v]['B'] = 1;
  }
  make_windows(t, ids, n, aliases);
  t->made = 1;
}

const ll_san_ids *ll_san_ids_ready(const ll_san_ids *t, const char *const *ids,
                                   ll_san_ids *own) {
  if (t->made)
    return t;
  ll_san_ids_make(own, ids, t->n);
  return own;
}
