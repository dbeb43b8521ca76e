/* The signed bundle: SHA256SUMS (coreutils format) over every regular file
 * of an evidence directory, signed by `ssh-keygen -Y sign` with the
 * operator's SSH key, and the check of both. ssh-keygen is started with an
 * argument vector (core/base/proc.h), never a shell; no signature format is
 * written here. A script never names the key or the directory. */
#ifndef LL_SIGN_H
#define LL_SIGN_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "ll.h"

#define LL_SIGN_NAMESPACE "leaselua-evidence"
#define LL_SIGN_SUMS "SHA256SUMS"
#define LL_SIGN_SIG "SHA256SUMS.sig"
#define LL_SIGN_HISTORY "signatures" /* signatures/1/, 2/ ... */

/* The public key's fingerprint, as `ssh-keygen -l` prints it. */
typedef struct {
  char fingerprint[96]; /* "SHA256:<base64>" */
  char type[24];        /* "ED25519", "RSA" ... */
} ll_sign_key;

/* The operator's --sign-key FILE, before the first request: a regular
 * file (not a link), which `ssh-keygen -y` reads as a private key without
 * a passphrase (never prompting: -P "", stdin /dev/null, no askpass, no
 * agent). LL_E_USAGE with one line naming what is wrong; LL_E_IO when
 * ssh-keygen cannot be started (install openssh-client). */
ll_status ll_sign_key_check(const char *key_path, ll_sign_key *out,
                            ll_error *err) LL_WARN_UNUSED;

/* Signs dir: an existing SHA256SUMS and SHA256SUMS.sig are first moved to
 * signatures/N/ (N the next free number), so that the new sums cover them;
 * then SHA256SUMS is written (every regular file but the two, sorted by
 * byte order, "<64 hex>  <relative path>") and `ssh-keygen -Y sign -n
 * leaselua-evidence` writes SHA256SUMS.sig beside it. A file that is not
 * regular nor a directory (a link, a FIFO), or a name sha256sum would
 * escape, is LL_E_IO and nothing is signed. */
ll_status ll_bundle_sign(const char *dir, const char *key_path,
                         ll_error *err) LL_WARN_UNUSED;

/* 1 when dir holds SHA256SUMS, SHA256SUMS.sig or signatures/: a recovery
 * of it must re-sign it. */
int ll_bundle_is_signed(const char *dir);

#define LL_SIGN_LIST_MAX 16 /* file names kept per list in a report */
#define LL_SIGN_HISTORY_MAX 16
#define LL_SIGN_NAME_MAX 256

typedef enum {
  LL_SIG_UNSIGNED = 0, /* no SHA256SUMS, no signature, no history */
  LL_SIG_GOOD,         /* sums match; signature good for principal */
  LL_SIG_UNCHECKED,    /* sums match and the signature is valid, but no
                          allowed-signers file named its signer */
  LL_SIG_BAD           /* anything else: problem says what */
} ll_sig_state;

typedef struct {
  char dir[32]; /* "signatures/1" */
  ll_sig_state state;
  char principal[LL_SIGN_NAME_MAX];
  ll_sign_key key;
} ll_sign_past;

typedef struct {
  ll_sig_state state;
  char principal[LL_SIGN_NAME_MAX]; /* GOOD: the allowed signer */
  ll_sign_key key;                  /* the signature's key */
  long listed;                      /* files SHA256SUMS lists */
  long matched;                     /* ...whose bytes match */
  /* files whose sum differs or that are gone, and files present but not
   * listed: the first LL_SIGN_LIST_MAX of each, all counted */
  char mismatched[LL_SIGN_LIST_MAX][LL_SIGN_NAME_MAX];
  long n_mismatched;
  char uncovered[LL_SIGN_LIST_MAX][LL_SIGN_NAME_MAX];
  long n_uncovered;
  /* what SHA256SUMS lists for export/ledger.jsonl and corroboration.json
   * (64 hex, or empty when it lists none): a reader that checked those
   * files' bytes itself compares its own sums with these, so that what it
   * shows is what the signature covers (ll_sign_covers) */
  char export_listed[65];
  char corroboration_listed[65];
  ll_sign_past history[LL_SIGN_HISTORY_MAX]; /* oldest first */
  int n_history;
  char problem[768]; /* the first problem, empty when none */
  char note[384];    /* set by the caller: a remark beside the state */
} ll_sign_report;

/* Checks dir's signature. allowed_signers NULL: the sums and the
 * signature's own validity are checked (UNCHECKED: nobody vouched for the
 * key). Else the signer is found in that file (`ssh-keygen -Y
 * find-principals`) and the signature verified for it (`-Y verify`); an
 * unsigned bundle is then BAD too. Earlier signatures (signatures/N/) are
 * checked against their own SHA256SUMS the same way. LL_OK with
 * rep->state UNSIGNED, GOOD or UNCHECKED; LL_E_TAMPER with BAD;
 * LL_E_USAGE when allowed_signers cannot be read; LL_E_IO when ssh-keygen
 * cannot be started; LL_E_NOMEM. */
ll_status ll_bundle_check(const char *dir, const char *allowed_signers,
                          ll_sign_report *rep, ll_error *err) LL_WARN_UNUSED;

/* The host's signing declaration: at open, before any script row, the
 * host writes a note row of step "signing" whose sign_key field holds
 * the key's fingerprint ("SHA256:..."); a recovery with --sign-key
 * writes another. A script cannot write a note of that step
 * (ll_sign_step_reserved), nor a note with that field. */
#define LL_SIGN_NOTE_STEP "signing"
#define LL_SIGN_NOTE_KEY "sign_key"
#define LL_SIGN_FP_MAX 96

/* 1 when a note of this step is the host's alone: "signing", in any
 * case, with any surrounding blanks (so that no look-alike can be read as
 * the host's). */
int ll_sign_step_reserved(const char *step);

/* One ledger row: 0 when it is not a note of step "signing"; 1 when it
 * is the host's (its sign_key a "SHA256:" fingerprint, copied into key);
 * -1 when it is a signing note the host did not write (no sign_key, or
 * not a fingerprint): an edited ledger, or a script of an older leaselua. */
int ll_sign_note_key(const cJSON *row, char key[LL_SIGN_FP_MAX]);

/* Over a run's rows: key is the last host declaration ("" when none),
 * *ended 1 when a decision row was recorded. Returns 0, or -1 at the first
 * signing note the host did not write (*bad_row its seq, 1-based). */
int ll_sign_declared(const cJSON *rows, char key[LL_SIGN_FP_MAX], int *ended,
                     long *bad_row);

/* The declaration against a signature check's report (ll_bundle_check),
 * when the report holds no problem yet: a run that declared key K and
 * ended must be signed by K; unsigned, it is BAD (the signature was
 * removed); a run that has not ended (killed before the host could sign)
 * gets a note instead. declared "" or NULL: nothing changes. */
void ll_sign_check_declared(ll_sign_report *rep, const char *declared,
                            int ended);

/* The files a reader checked itself against what SHA256SUMS lists for
 * them, when the report holds no problem yet and the bundle is signed:
 * export_sha256 (the export ledger's bytes the reader parsed) and
 * corroboration_sha256 (corroboration.json's, "" when it found none),
 * each NULL when not to be compared. A difference makes the report BAD:
 * the file changed between the reader's check and the signature's, and
 * what the reader shows is not what was signed. */
void ll_sign_check_bytes(ll_sign_report *rep, const char *export_sha256,
                         const char *corroboration_sha256);

/* ll_bundle_check, then ll_sign_check_declared and ll_sign_check_bytes:
 * LL_E_TAMPER when either made the report BAD. The one check verify, the
 * report, qualify and a gap control's --after use. */
ll_status ll_bundle_check_declared(const char *dir, const char *allowed_signers,
                                   const char *declared, int ended,
                                   const char *export_sha256,
                                   const char *corroboration_sha256,
                                   ll_sign_report *rep,
                                   ll_error *err) LL_WARN_UNUSED;

/* "unsigned", "good", "unchecked", "bad". */
const char *ll_sig_state_name(ll_sig_state s);

#endif
