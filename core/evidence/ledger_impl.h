/* Internal to the ledger: the line format shared by the writer (ledger.c)
 * and the reader (ledger_read.c). */
#ifndef LL_LEDGER_IMPL_H
#define LL_LEDGER_IMPL_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "hash.h"
#include "ledger.h"
#include "ll.h"
#include "sanitize.h"

/* The reader refuses longer lines, so the writer refuses to produce them. */
#define LL_LEDGER_MAX_LINE (1024u * 1024u)

#define ROW_HASH_KEY ",\"row_hash\":\""
#define ROW_HASH_KEY_LEN 13
#define HASH_HEX_LEN 64

/* The protected line's members as printed (the item, and where its
 * ',"key":value' lies in the line), so that the export line printed next,
 * from the same tree sanitized in place (ll_sanitize_row_in_place: a
 * member it keeps is the same node, one it replaces is a new node under
 * the same key), copies the bytes of every member the two share instead
 * of printing it again. Members past LL_SEAL_SPANS are printed. */
#define LL_SEAL_SPANS 96
typedef struct {
  const cJSON *item[LL_SEAL_SPANS];
  size_t from[LL_SEAL_SPANS], to[LL_SEAL_SPANS];
  size_t n;
  const ll_buf *line;
} ll_seal_spans;

/* The ledger handle, shared by ledger.c (append) and ledger_open.c. */
struct ll_ledger {
  char *dir;
  /* The evidence directory itself, opened O_DIRECTORY | O_NOFOLLOW once it
   * was checked to be the user's own: every file of the bundle is made
   * relative to it (openat, O_NOFOLLOW), so a path swapped under the run
   * or a link planted in it is never followed. */
  int dirfd;
  int fd_prot, fd_exp;
  cJSON *rows; /* the protected rows read at open (appends: file only) */
  /* The export rows (ll_ledger_export_rows): the rows read at open; the
   * ones appended before a reader first asks, read back then from the
   * export stream (the file, then the lines waiting) and checked against
   * the chain this handle wrote; from then on (keep), each appended row
   * itself (ledger_back.c). A run that never asks keeps no row. */
  cJSON *export_rows;
  long exp_parsed;              /* how many rows export_rows holds */
  size_t exp_off;               /* where the next one starts in the stream */
  char exp_prev[LL_SHA256_HEX]; /* the row_hash of the last one */
  int keep;                     /* a reader asked: appended rows are kept */
  /* The export row of the last append, sealed, until taken or the next
   * append: the tree itself, or a reference to it when it is kept (then
   * read-only: its members are the kept row's). */
  cJSON *last;
  long count;
  size_t bytes; /* of the protected file: at open, then each line appended */
  char prev_prot[LL_SHA256_HEX], prev_exp[LL_SHA256_HEX];
  char **ids, **aliases; /* bindings, in registration order */
  size_t n_binds, cap_ids, cap_aliases;
  ll_san_ids idtab; /* what the scan and the projection derive from ids,
                       made again at each bind (ll_ledger_bound_ids) */
  char **secrets, **secret_ph; /* the secret, its "{{secret:NAME}}" */
  size_t n_secrets, cap_secrets, cap_secret_ph;
  int broken;   /* a durability failure: every later append fails */
  int tampered; /* broken because the export did not read back as written */
  ll_buf line_prot, line_exp; /* the lines being appended, reused */
  ll_sha256 *hasher;   /* the chain hash's context, reused; NULL: one per row */
  ll_seal_spans spans; /* the protected line being appended, by member */
  /* Export lines sealed and scanned, their protected lines written, not
   * yet in the export file (appended with LL_SYNC_DEFER). */
  ll_buf exp_pend;
  char broken_why[200]; /* a failed flush's reason, reported at the next
                           append */
};

/* Helpers shared by the ledger's files. ll_ledger_seal (ledger_line.c)
 * prints row as its line for this chain into line (with '\n'), its hash
 * into hash, and seals row in place as a reader parses that line: "seq"
 * first, "prev_hash" and "row_hash" last, numbers as printed. On failure
 * row may be half sealed: the caller deletes it. */
ll_status ll_ledger_seal(cJSON *row, long seq, const char *prev, ll_buf *line,
                         ll_sha256 *hasher, char hash[LL_SHA256_HEX],
                         ll_error *err);
/* The same, recording row's members in record (the protected line), or
 * copying from reuse the bytes of each member that prints the same: the
 * same key and value pointers, or the same null, boolean or number. Every
 * member reuse records must still be alive and unchanged (it may have
 * left its row), and reuse's line must still hold its printing. Either may
 * be NULL. */
ll_status ll_ledger_seal_spans(cJSON *row, long seq, const char *prev,
                               ll_buf *line, ll_sha256 *hasher,
                               ll_seal_spans *record,
                               const ll_seal_spans *reuse,
                               char hash[LL_SHA256_HEX], ll_error *err);
/* The line and hash ll_ledger_seal_spans makes (with no reuse), but row
 * is not sealed: it keeps its members (numbers as printed) and gains no
 * seq, prev_hash or row_hash. For the protected line, whose tree becomes
 * the export row and is sealed with the export line. */
ll_status ll_ledger_print_spans(cJSON *row, long seq, const char *prev,
                                ll_buf *line, ll_sha256 *hasher,
                                ll_seal_spans *record, char hash[LL_SHA256_HEX],
                                ll_error *err);
ll_status ll_ledger_write_durable(int fd, const char *buf, size_t len,
                                  ll_error *err);
ll_status ll_ledger_fsync_dir(const char *path, ll_error *err);
/* fsync of an open directory; name is for the message. */
ll_status ll_ledger_fsync_dirfd(int fd, const char *name, ll_error *err);
/* ll_ledger_read_file on an open descriptor, which it closes; path names
 * the file in messages. */
ll_status ll_ledger_read_fd(int fd, const char *path, cJSON **out_rows,
                            long *bad_seq, ll_error *err);
ll_status ll_ledger_join(char *out, const char *a, const char *b,
                         ll_error *err);
ll_status ll_ledger_scan_line(const ll_ledger *l, const char *line, size_t len,
                              int with_ids, const char *which, ll_error *err);
int ll_ledger_is_lease_bind(const cJSON *row);
ll_status ll_ledger_bind_from_row(ll_ledger *l, const cJSON *row,
                                  ll_error *err);

/* Checks one line (without its '\n') against the chain (ledger_read.c):
 * NULL when good, else the reason. *out_row gets the parsed row when good.
 * A line that could not be checked for want of memory is never called
 * tampered: the reason is then "out of memory" and *nomem is set. */
const char *ll_ledger_check_line(const char *buf, size_t len, long n,
                                 const char *prev, cJSON **out_row,
                                 char hash[LL_SHA256_HEX], int *nomem);
/* The export rows up to the last appended, read back (ledger_back.c). */
ll_status ll_ledger_catch_up(ll_ledger *l, ll_error *err) LL_WARN_UNUSED;

/* The table of the bound IDs made at the last bind, or (never expected:
 * a table that does not match the bindings is not used) one made now in
 * own. */
const ll_san_ids *ll_ledger_bound_ids(const ll_ledger *l, ll_san_ids *own);

/* SHA-256 of prev_hash_hex || a || b, as lowercase hex (ledger_line.c),
 * through h (reset first) or, when h is NULL, a context of its own. */
ll_status ll_ledger_chain_hash(ll_sha256 *h, const char *prev, const char *a,
                               size_t alen, const char *b, size_t blen,
                               char out[LL_SHA256_HEX]) LL_WARN_UNUSED;

#endif
