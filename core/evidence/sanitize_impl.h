/* Private to the sanitizer (sanitize.c, sanitize_row.c): the byte tests
 * the export projection and the scan share, so that a lease ID, a sig=
 * value and a case fold mean the same in both. */
#ifndef LL_SANITIZE_IMPL_H
#define LL_SANITIZE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "sanitize_ids.h"

/* ASCII case folding: the words and lease IDs matched here are ASCII, and
 * the locale must not change what matches (tolower() would; it also costs
 * a call per byte on paths that run at every offset of every row). */
static inline unsigned char fold(char c) {
  unsigned char x = (unsigned char)c;
  return x >= 'A' && x <= 'Z' ? (unsigned char)(x - 'A' + 'a') : x;
}

/* The other case of an ASCII letter; any other byte as it is. */
static inline unsigned char other_case(char c) {
  unsigned char x = (unsigned char)c;
  return x >= 'a' && x <= 'z'   ? (unsigned char)(x - 'a' + 'A')
         : x >= 'A' && x <= 'Z' ? (unsigned char)(x - 'A' + 'a')
                                : x;
}

static inline int lower_eq(char a, char b) {
  return fold(a) == fold(b);
}

/* The first byte of id that a match must start with (hyphens skipped), so
 * that the per-offset loops below call match_id only where it can match. */
static inline unsigned char id_first(const char *id) {
  while (*id == '-')
    id++;
  return fold(*id);
}

/* The second byte of id that a match must hold (hyphens skipped), 0 when
 * id has one byte; id_second_at tells whether s[i + 1..] holds it after
 * any hyphens, as match_id would read it. A quick test only: match_id
 * still compares the whole ID. */
static inline unsigned char id_second(const char *id) {
  while (*id == '-')
    id++;
  if (!*id)
    return 0;
  id++;
  while (*id == '-')
    id++;
  return fold(*id);
}

static inline int id_second_at(const char *s, size_t len, size_t i,
                               unsigned char second) {
  size_t j = i + 1;
  if (!second)
    return 1;
  while (j < len && s[j] == '-')
    j++;
  return j < len && fold(s[j]) == second;
}

/* Stops at the first byte that differs: at most offsets that is the
 * second (the callers look at s[i] only where the first byte matched). */
static inline int ci_prefix(const char *s, size_t len, size_t i,
                            const char *word) {
  for (size_t k = 0; word[k]; k++)
    if (i + k >= len || !lower_eq(s[i + k], word[k]))
      return 0;
  return 1;
}

/* The IDs among t's first LL_SAN_KNOWN_IDS whose first two bytes are at
 * s[i] (the second after any hyphens, as id_second_at reads it), a bit
 * each: only they can match there (match_id, match_id_cut). */
static inline unsigned ids_at(const ll_san_ids *t, const char *s, size_t len,
                              size_t i) {
  unsigned m = t->start_ids[(unsigned char)s[i]];
  size_t j = i + 1;
  if (!m)
    return 0;
  while (j < len && s[j] == '-')
    j++;
  return m &
         (t->any_second | (j < len ? t->second_ids[(unsigned char)s[j]] : 0u));
}

/* Matches id at s[i] ignoring case and hyphens on both sides; the service
 * may hand a lease ID back in another case or without hyphens. Returns the
 * end of the match (exclusive), or 0. s[i] must not be a hyphen, so a match
 * neither starts nor ends on one. */
static inline size_t match_id(const char *s, size_t len, size_t i,
                              const char *id) {
  const char *p = id;
  size_t k = i;
  while (*p == '-')
    p++;
  if (!*p)
    return 0;
  for (;;) {
    if (k >= len || !lower_eq(s[k], *p))
      return 0;
    k++;
    p++;
    while (*p == '-')
      p++;
    if (!*p)
      return k;
    while (k < len && s[k] == '-')
      k++;
  }
}

/* A lease ID cut by a field's limit leaves its first digits at the end of
 * the value, which no alias replaces. The message parser never cuts inside
 * a run of hex digits (xmlerr.c); against any other cut, a prefix of a
 * bound ID of this many non-hyphen digits or more (64 bits) at the end of
 * a value is the ID all the same: the export replaces it by the alias and
 * the scan refuses it. A shorter one is not told from other hex text. */
#define LL_SAN_CUT_MIN 16

/* Matches a prefix of id at s[i] that s ends inside (s[len] is where the
 * value was cut), as match_id would read it, of LL_SAN_CUT_MIN non-hyphen
 * bytes or more. Returns len, or 0. */
static inline size_t match_id_cut(const char *s, size_t len, size_t i,
                                  const char *id) {
  const char *p = id;
  size_t k = i, got = 0;
  while (*p == '-')
    p++;
  while (*p) {
    if (k >= len)
      return got >= LL_SAN_CUT_MIN ? len : 0;
    if (!lower_eq(s[k], *p))
      return 0;
    k++;
    p++;
    got++;
    while (*p == '-')
      p++;
    while (*p && k < len && s[k] == '-')
      k++;
  }
  return 0; /* the whole ID: match_id's */
}

/* The length of a SAS signature's key at s[i], in any case: "sig=" as
 * sent, "sig%3d" percent-encoded (a URL quoted inside another), or
 * "sig%253d" encoded twice; 0 when there is none. */
static inline size_t sig_key_at(const char *s, size_t len, size_t i) {
  if (ci_prefix(s, len, i, "sig="))
    return 4;
  if (ci_prefix(s, len, i, "sig%3d"))
    return 6;
  return ci_prefix(s, len, i, "sig%253d") ? 8 : 0;
}

/* Where a SAS "sig=" value stops inside a string value. */
static inline int is_sig_end(char c) {
  return c == '&' || c == ' ' || c == '\t' || c == '\r' || c == '\n' ||
         c == '"' || c == '\'' || c == '#' || c == '<' || c == '>';
}

/* The fewest consecutive characters of a signature that are a match. */
#define LL_SANITIZE_SIG_MIN 8
/* The same in another case than the signature's own (each says less). */
#define LL_SANITIZE_SIG_FOLDED 12

/* A signature form's characters d (after LL_SANITIZE_SIG_MARK) spelled
 * at s[i]: the end of the longest stretch of LL_SANITIZE_SIG_MIN or more
 * of them (all of d when shorter), or 0 (sanitize_sig.c). */
size_t ll_san_sig_at(const char *s, size_t len, size_t i, const char *d);
/* Marks in first[] every byte a spelling of one of d's characters may
 * start with: d's letters and digits in either case, and the first bytes
 * of each spelling of '+', '/' and '='. */
void ll_san_sig_starts(const char *d, unsigned char first[256]);
/* The first offset where ll_san_sig_at matches, or len; its end in *end. */
size_t ll_san_sig_find(const char *s, size_t len, const char *d, size_t *end);

/* ---- a stretch from inside a lease ID (sanitize_stretch.c) ------------ */

/* Every GUID's windows, made at the first call that needs them when
 * the table could not keep them all (more IDs than it holds). */
typedef struct {
  ll_san_win *w; /* sorted by v, then k; NULL: not made, or no memory */
  size_t n;
  int made;
} ll_san_stretch;
void ll_san_stretch_init(ll_san_stretch *s);
void ll_san_stretch_free(ll_san_stretch *s);
/* The first offset in text[a..e) where LL_SAN_CUT_MIN consecutive digits
 * of a GUID among ids (t made for them) stand, either case, hyphens
 * skipped anywhere, or e; in *k the lowest index of an ID holding them. */
size_t ll_san_stretch_find(ll_san_stretch *s, const ll_san_ids *t,
                           const char *const *ids, const char *text, size_t a,
                           size_t e, size_t *k);

#endif
