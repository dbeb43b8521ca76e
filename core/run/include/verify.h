/* A reviewer's check of an evidence directory from the files alone: it
 * reports whether the evidence is consistent, not what the run decided.
 * The `leaselua verify` command that prints it is the host's
 * (bindings/l_verify.c). */
#ifndef LL_VERIFY_H
#define LL_VERIFY_H

#include <cjson/cJSON.h>

#include "ll.h"

typedef enum {
  LL_VERIFY_FULL = 0,   /* the protected ledger must be there and match */
  LL_VERIFY_EXPORT_ONLY /* asked for explicitly: it is not checked */
} ll_verify_mode;

/* The reasons of the standing decision row kept in a report, and the longest
 * one (decide.c writes them in 512 bytes). */
#define LL_VERIFY_REASONS_MAX 24
#define LL_VERIFY_REASON_LEN 512

typedef struct {
  int protected_read; /* protected ledger read and compared */
  int export_only;    /* LL_VERIFY_EXPORT_ONLY: the protected ledger was not
                         checked */
  long rows;          /* export rows */
  long bad_row;       /* first bad row (1-based), 0 when none */
  char problem[1100]; /* first problem, empty when consistent */
  char decision[16];  /* recomputed decision of the last decision row, when
                         it stands (no request row after it); else empty */
  char window[32];
  long decision_row;         /* seq of the last decision row, 0: none; the
                                run ended once, whether it stands or not */
  long decision_followed_by; /* seq of the first request (or recovery) row
                                after it, 0: none, the decision stands */
  /* the reasons of that decision row, in order: the first n_reasons of
     reasons_total (more are counted, not kept) */
  char reasons[LL_VERIFY_REASONS_MAX][LL_VERIFY_REASON_LEN];
  int n_reasons;
  long reasons_total;
  /* from the manifest row, checked against each other */
  char endpoint_kind[16];
  char fixture_label[16];
  char account_host[256];
  char container[256];
  char blob_path[512];
  int host_declared;     /* azure by the manifest's declared_azure_host */
  long lease_bindings;   /* lease_bind rows */
  char identity[400];    /* identity.h's statement about the principals */
  int shared_identity;   /* the manifest's shared_identity; -1: absent */
  int cleanup_confirmed; /* last lifecycle: its blob deleted (accepted) */
  int absent_confirmed;  /* ...and a later read of it answered 404 */
  int destructive;       /* last lifecycle was declared destructive */
  /* the key fingerprint ("SHA256:...") of the last host signing note
   * (sign.h, ll_sign_note_key): the host said it signs the bundle with
   * that key; a signing note without the host's sign_key field is a
   * problem (LL_E_TAMPER) */
  char sign_declared[96];
  /* SHA-256 (hex) of the bytes checked: the export ledger's, and
   * corroboration.json's (empty when there is none). A reader that also
   * checks the signature requires the same sums in SHA256SUMS
   * (ll_sign_covers), so what it shows is what was signed, even if a file
   * changed between the two checks. */
  char export_sha256[65];
  char corroboration_sha256[65];
} ll_verify_report;

/* LL_OK when consistent; LL_E_TAMPER otherwise, with the report naming the
 * first problem; LL_E_IO when a file is missing (the export, or, in FULL
 * mode, the protected ledger); LL_E_NOMEM when memory ran out (never a
 * verdict). Checks: both chains; the protected ledger is a regular file,
 * not a link, not the export itself, and holds the real lease IDs that the
 * export replaced; the export is exactly its sanitized form; no secret in
 * the export; the endpoint kind agrees with the account host (endpoint.h)
 * in the manifest and every row; every lease alias used was bound; every
 * classification, reconcile, finding and decision re-derived from the
 * export alone equals what the run recorded; every outcome row pairs with
 * the intent of its own request. A decision row that an intent, outcome or
 * recovery row follows does not stand: the report then holds no decision
 * (decision_followed_by says why), and that alone is no problem (a
 * recovery killed midway leaves it). */
ll_status ll_verify_dir_mode(const char *dir, ll_verify_mode mode,
                             ll_verify_report *rep,
                             ll_error *err) LL_WARN_UNUSED;
/* ll_verify_dir_mode that also hands back, in *rows (the caller's to
 * cJSON_Delete), the export rows it checked, only when it returns LL_OK:
 * compare, qualify and the JUnit report read these and nothing else. *rows
 * is left untouched otherwise. */
ll_status ll_verify_dir_rows(const char *dir, ll_verify_mode mode,
                             ll_verify_report *rep, cJSON **rows,
                             ll_error *err) LL_WARN_UNUSED;
/* ll_verify_dir_rows that also hands back, in *corroboration (the
 * caller's), corroboration.json as it was checked, or NULL when the
 * bundle has none: the report draws that object and never reads the file
 * again, so a file swapped in after the check is never shown. Only when
 * it returns LL_OK; left untouched otherwise. */
ll_status ll_verify_dir_checked(const char *dir, ll_verify_mode mode,
                                ll_verify_report *rep, cJSON **rows,
                                cJSON **corroboration,
                                ll_error *err) LL_WARN_UNUSED;
/* ll_verify_dir_mode(dir, LL_VERIFY_FULL, ...). */
ll_status ll_verify_dir(const char *dir, ll_verify_report *rep,
                        ll_error *err) LL_WARN_UNUSED;

#endif
