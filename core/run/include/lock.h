/* One run per blob (invariant 14: the guard's scope is the blob, so a
 * second run must not start beside a first one that still holds doubts).
 * An advisory flock per blob on this machine, and a check of the previous
 * runs on the blob in the same evidence root. */
#ifndef LL_LOCK_H
#define LL_LOCK_H

#include "ll.h"

/* Entries of an evidence root looked at, at most, by the previous-run
 * check; a larger root is refused rather than half-checked. */
#define LL_LOCK_SCAN_MAX 10000

typedef struct ll_lock ll_lock;

/* Takes the lock of the blob (host, blob_path as the manifest records
 * them) with flock(LOCK_EX|LOCK_NB), on a file named by the SHA-256 of
 * the lowercased host and the path, in dir, or, when dir is NULL, in
 * $XDG_RUNTIME_DIR/leaselua (else /tmp/leaselua-<euid>). The directory
 * is made 0700 and refused unless it is a real directory of this user
 * that no one else may write. The holder's pid and evidence directory
 * are written into the file, so a refused second run can name them.
 * LL_E_SCOPE when another run (in this process or another) holds it,
 * LL_E_IO when the directory or file cannot be used. */
ll_status ll_lock_take(const char *dir, const char *host, const char *blob_path,
                       const char *evidence_dir, ll_lock **out,
                       ll_error *err) LL_WARN_UNUSED;
/* Releases and frees; NULL is fine. The file is unlinked while still
 * held, so none is left behind (a taker that locked the unlinked file
 * sees the name point elsewhere and locks that instead). */
void ll_lock_release(ll_lock *l);

/* Before a fresh run on (host, blob_path): each sibling of evidence_dir
 * (a real directory holding a manifest.json of the same host and blob
 * path, not a replay) must have ended with a decision row whose
 * open_doubts is 0. Otherwise LL_E_SCOPE naming that directory and how to
 * recover it. Links are never followed; at most LL_LOCK_SCAN_MAX entries
 * are read (more: LL_E_SCOPE). A missing evidence root is LL_OK. An
 * evidence_dir whose last name is "." or ".." is LL_E_USAGE. Hosts are
 * compared as servers (ll_endpoint_same_host). */
ll_status ll_lock_check_previous(const char *evidence_dir, const char *host,
                                 const char *blob_path,
                                 ll_error *err) LL_WARN_UNUSED;

#endif
