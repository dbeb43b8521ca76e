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
} ll_san_ids;

void ll_san_ids_make(ll_san_ids *t, const char *const *ids, size_t n);
/* t when it is made; otherwise one made now in own for ids (t->n of
 * them), so that a table not made is never read. */
const ll_san_ids *ll_san_ids_ready(const ll_san_ids *t, const char *const *ids,
                                   ll_san_ids *own);

#endif
