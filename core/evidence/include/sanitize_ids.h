/* The tables the export scan and the export projection derive from a set
 * of bound lease IDs (sanitize_ids.c). */
#ifndef LL_SANITIZE_IDS_H
#define LL_SANITIZE_IDS_H

#include <stddef.h>
#include <stdint.h>

/* Bound IDs whose first two bytes an ll_san_ids keeps, a bit each (the
 * others' are worked out where they are needed). */
#define LL_SAN_KNOWN_IDS 16
_Static_assert(LL_SAN_KNOWN_IDS <= 16, "start_ids holds one bit per ID");

/* A stretch from inside a GUID, as the ledger's export scan looks for
 * it (sanitize_stretch.c): each window of 16 of its 32 digits, packed. */
#define LL_SAN_WINDOWS 17
typedef struct {
  uint64_t v; /* 16 digits of an ID, 4 bits each */
  size_t k;   /* which ID */
} ll_san_win;
/* A filter over every GUID's windows: a window whose bit is clear is no
 * ID's. One probe of 8192 bits: a few percent of the text's windows
 * are looked up in vain with a handful of GUIDs bound. */
#define LL_SAN_BLOOM_BITS 8192
static inline unsigned ll_san_win_bit(uint64_t v) {
  return (unsigned)((v * 0x9E3779B97F4A7C15ull) >> 51); /* 13 bits */
}

/* What the export scan and the export projection derive from a set of
 * bound lease IDs: made once when the set changes (the ledger's binds),
 * not once per row. made is 0 until ll_san_ids_make has run: a table not
 * made is never used (the scan and the projection make their own), nor
 * is the ledger's when it was made for another count of IDs. */
typedef struct {
  int made;
  size_t n;      /* the count of IDs it was made for */
  size_t id_min; /* the fewest non-hyphen bytes of an ID; (size_t)-1: none */
  unsigned char in_id[256];  /* a byte of some ID in either case, or '-' */
  unsigned char starts[256]; /* an ID's first byte, in either case */
  /* bit k: the first byte of ID k (k < LL_SAN_KNOWN_IDS), in either case;
   * and its second (after any hyphens), or in any_second when it has none */
  uint16_t start_ids[256], second_ids[256], any_second;
  /* bytes one of which a value must hold to hold anything replaced: '=',
   * '%' (sig=), space, tab (bearer), then each ID's first byte in both
   * cases; "" when there are too many to list (every value is walked) */
  char needed[64];
  /* where the projection looks in a value, by what the value holds: bit 0
   * of the index a '=' or '%' (then s/S, a sig= key), bit 1 a space or a
   * tab (then b/B, a bearer token); and the IDs' first bytes always */
  unsigned char walk[4][256];
  /* the windows of every GUID among the IDs: their bits in bloom; and
   * themselves, sorted (by v, then k), when they fit (wins_all) */
  uint64_t bloom[LL_SAN_BLOOM_BITS / 64];
  ll_san_win wins[LL_SAN_KNOWN_IDS * LL_SAN_WINDOWS];
  size_t nwins;
  int wins_all;
} ll_san_ids;

void ll_san_ids_make(ll_san_ids *t, const char *const *ids, size_t n);
/* The same with the stretch windows for the lease IDs alone: an ID whose
 * alias is a placeholder ("{{identity}}": an identifier bound so that the
 * scan finds a whole copy) gets none. The ledger's tables. */
void ll_san_ids_make_lease(ll_san_ids *t, const char *const *ids, size_t n,
                           const char *const *aliases);
/* The windows of id when it is a GUID (32 hex digits, hyphens anywhere,
 * either case): 1; else 0. */
int ll_san_guid_windows(const char *id, uint64_t w[LL_SAN_WINDOWS]);
void ll_san_wins_sort(ll_san_win *w, size_t n);
/* The lowest k of a window v among w (sorted), or none: returns 0. */
int ll_san_wins_find(const ll_san_win *w, size_t n, uint64_t v, size_t *k);
/* t when it is made; otherwise one made now in own for ids (t->n of
 * them), so that a table not made is never read. */
const ll_san_ids *ll_san_ids_ready(const ll_san_ids *t, const char *const *ids,
                                   ll_san_ids *own);

#endif
