/* Lease ID syntax and comparison. A lease ID is a secret: these never
 * print one. Below blob.h (which includes this header for its callers). */
#ifndef LL_LEASE_ID_H
#define LL_LEASE_ID_H

/* GUID syntax check: 8-4-4-4-12 hex, optional braces not accepted. */
int ll_lease_id_valid(const char *id);
/* Equal ignoring case and hyphens (the service normalises lease IDs); 0 if
 * either is NULL or has nothing but hyphens. */
int ll_lease_id_equal(const char *a, const char *b);
/* Whether a lease ID the service returned is the one proposed: both in
 * the exact GUID form (ll_lease_id_valid) and equal ignoring case. Lease
 * Blob returns the ID as a GUID; anything else (padded, with a second ID
 * after it, cut, empty) is not a match, whatever ll_lease_id_equal says. */
int ll_lease_id_returned(const char *returned, const char *proposed);

#endif
