/* The tables the export scan (sanitize.c) and the export projection
 * (sanitize_row.c) derive from a set of bound lease IDs, made once when
 * the set changes rather than for every row and line. */
#include <string.h>

#include "sanitize_ids.h"
#include "sanitize_impl.h"

void ll_san_ids_make(ll_san_ids *t, const char *const *ids, size_t n) {
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
  t->made = 1;
}

const ll_san_ids *ll_san_ids_ready(const ll_san_ids *t, const char *const *ids,
                                   ll_san_ids *own) {
  if (t->made)
    return t;
  ll_san_ids_make(own, ids, t->n);
  return own;
}
