/* The export sanitizer and the secret scan behind ll_ledger_sanitize and
 * ll_secret_scan, kept apart from the ledger's file handling. */
#ifndef LL_SANITIZE_H
#define LL_SANITIZE_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "ll.h"
#include "sanitize_ids.h"

#define LL_SANITIZE_ID_MAX 33 /* 32 hex digits and NUL */

/* The identifiers of a principal that only the protected ledger keeps
 * (an identity record's tid, oid, appid, azp, and a user delegation SAS's
 * skoid and sktid): the export projection drops these keys at any depth,
 * the run strips them from manifest.json, and the run and verify bind
 * their values so that the export scan finds any stray copy. One list
 * for all four (tests/test_sanitize.c checks the projection drops each). */
#define LL_IDENTITY_PRIVATE_KEYS "tid", "oid", "appid", "azp", "skoid", "sktid"
#define LL_IDENTITY_PRIVATE_NKEYS 6

/* The comparable form of a lease ID: hyphens dropped, lowercase. Returns 1
 * if id is a GUID (32 hex digits once hyphens are dropped), else 0. */
int ll_sanitize_norm_id(const char *id, char out[LL_SANITIZE_ID_MAX]);

/* A new deep copy of row in its export form (see ll_ledger_sanitize);
 * ids[i] (any case, any hyphens) becomes aliases[i]. Caller deletes. NULL
 * when out of memory or row is NULL. */
cJSON *ll_sanitize_row(const cJSON *row, const char *const *ids,
                       const char *const *aliases, size_t n);
/* The same export form, but the strings and keys it would copy unchanged
 * are borrowed from row (string references, constant keys): valid only
 * while row lives and is not changed. The ledger keeps both rows until it
 * closes, and deletes neither's borrowed text. */
cJSON *ll_sanitize_row_shared(const cJSON *row, const char *const *ids,
                              const char *const *aliases, size_t n);
/* The same export form made of row itself, for a row that is not kept in
 * its protected form: dropped members leave it and replaced values take
 * their place, and each member they replace is moved, unchanged, to the
 * *dead chain (linked by next, newest first) for the caller to
 * cJSON_Delete once nothing reads it (the ledger's export line compares
 * against the protected line's members). A borrowed subtree (an object
 * or array reference) is replaced by its copy. 1 on success; 0 when out of
 * memory (row is then partly sanitized and must not be written) or when
 * row is not an object or array of its own. */
int ll_sanitize_row_in_place(cJSON *row, const char *const *ids,
                             const char *const *aliases, size_t n,
                             cJSON **dead);

/* ll_sanitize_row_in_place with the table made for ids (t->n of them). */
int ll_sanitize_row_in_place_ids(cJSON *row, const char *const *ids,
                                 const char *const *aliases,
                                 const ll_san_ids *t, cJSON **dead);

/* What the service handed back that must not be kept: every occurrence of
 * a secret (exact bytes, but for the hex digits of its percent escapes,
 * in either case; a GUID in any case, with its hyphens anywhere or none),
 * and every "sig=" value that is not REDACTED (its key also as "sig%3D"
 * or "sig%253D", any case).
 * ll_sanitize_replace appends s[0..len) to out (bytes, not only text) with
 * secrets[i] replaced by placeholders[i] and such sig= values by
 * "sig=REDACTED", and returns which were found: bit i for secrets[i]
 * (i < 30), LL_REDACT_MORE for any secret from the 31st on (each is
 * replaced all the same), LL_REDACT_SIG for a sig= value; 0 when nothing
 * was. out->oom says the copy is incomplete. */
#define LL_REDACT_MORE (1u << 30)
#define LL_REDACT_SIG (1u << 31)
/* 1 when ll_sanitize_replace would replace something in s[0..len). */
int ll_sanitize_needs_replace(const char *s, size_t len,
                              const char *const *secrets, size_t n);
unsigned ll_sanitize_replace(const char *s, size_t len,
                             const char *const *secrets,
                             const char *const *placeholders, size_t n,
                             ll_buf *out);

/* The forms a server may echo a secret in, each registered as a secret
 * of its own (the ledger, a recording): secret itself first; for a SAS
 * signature (name "sas": the sig= value as the query holds it) also its
 * decoded characters after LL_SANITIZE_SIG_MARK. Such a form is matched by
 * character, not by byte: any stretch of LL_SANITIZE_SIG_MIN or more
 * consecutive characters of it, each as it is or spelled as a server may
 * spell it ('+' as %2B, %252B, %20, a space, '-', \u002B or &#x2B;; '/'
 * as %2F, '_', \/ ...; hex in either case; mixed freely), so that a mix
 * of encodings or a cut value is found too (sanitize_sig.c, 8 or more). Each
 * forms[i] is malloc'd, for ll_secret_free. Returns the count; 0 when out
 * of memory (nothing to free). A GUID secret needs no forms: it is matched
 * in any case and hyphenation (ll_sanitize_replace). */
#define LL_SANITIZE_FORMS_MAX 2
#define LL_SANITIZE_SIG_MARK '\x01'
size_t ll_sanitize_secret_forms(const char *secret, const char *name,
                                char *forms[LL_SANITIZE_FORMS_MAX]);

/* The same on every string value of item, in place and at any depth (keys
 * are not values: they are never changed). *found gets the bits as above;
 * where (which may be NULL) gets the path of each changed value, once,
 * ", "-separated ("error_message, response.headers.server"). LL_E_NOMEM
 * leaves item partly replaced: the caller's secret scan then refuses it. */
ll_status ll_sanitize_redact(cJSON *item, const char *const *secrets,
                             const char *const *placeholders, size_t n,
                             unsigned *found, ll_buf *where) LL_WARN_UNUSED;

/* Appends to note "the service echoed a secret in WHERE; replaced by
 * P, ..." naming the placeholders of the bits in found (as above). */
void ll_sanitize_note(ll_buf *note, const char *where, unsigned found,
                      const char *const *placeholders, size_t n);

typedef enum {
  LL_SCAN_NONE = 0,
  LL_SCAN_ID,     /* index: which of ids */
  LL_SCAN_SECRET, /* index: which of secrets */
  LL_SCAN_SIG     /* a "sig=" value that is not REDACTED */
} ll_scan_kind;

typedef struct {
  size_t hits;       /* every match of every pattern */
  ll_scan_kind kind; /* the match with the lowest offset */
  size_t index;
  size_t offset;
} ll_scan_result;

/* The search behind ll_secret_scan, reporting the first hit as data. */
void ll_sanitize_scan(const char *text, size_t len, const char *const *ids,
                      size_t n_ids, const char *const *secrets,
                      size_t n_secrets, ll_scan_result *out);
/* The same with the table made for ids (t->n of them); t NULL: no IDs.
 * This is the ledger's scan of its export lines, and it also refuses a
 * stretch from inside a bound GUID: 16 consecutive digits of it, in a run
 * of hex digits that holds no whole ID (a value cut at its front, or a
 * secret replaced over the ID's first digits). ll_sanitize_scan (verify,
 * corroboration, recordings) finds whole and cut IDs only. */
void ll_sanitize_scan_ids(const char *text, size_t len, const char *const *ids,
                          const ll_san_ids *t, const char *const *secrets,
                          size_t n_secrets, ll_scan_result *out);

/* Case/hyphen-insensitive search of text for any GUID in ids, any of the
 * secrets, and any "sig=" value that is not REDACTED. Returns the count of
 * hits; describes the first in what (never quoting the secret). */
size_t ll_secret_scan(const char *text, size_t len, const char *const *ids,
                      size_t n_ids, const char *const *secrets,
                      size_t n_secrets, char *what, size_t what_cap);

/* A message that quotes values read from a ledger, made safe to print
 * (sanitize_message.c), in place within cap: every run of hex digits and
 * hyphens holding 16 or more digits (a lease ID or an identity's GUID,
 * whole or cut, in any case: the cut rule's 64 bits) becomes
 * "<withheld>", and every sig= value "sig=REDACTED". A run of exactly 16
 * digits and no hyphen is kept unless it is a stretch of one of the n ids
 * (the lease GUIDs bound so far; a stretch as the ledger's export scan
 * finds one): that is a principal's fingerprint, which the export holds
 * too. For text that goes where the export goes
 * (verify's problems: stderr, --json, JUnit). */
void ll_sanitize_message(char *msg, size_t cap, const char *const *ids,
                         size_t n);

#endif
