/* The evidence ledger (invariants 2, 9, 11): write-ahead, hash-chained,
 * fsync'd JSONL in evidence/<run_id>/, a protected copy holding real lease
 * IDs and a sanitized, separately chained export.
 *
 * Layout of an evidence directory:
 *   protected/            0700
 *   protected/ledger.jsonl 0600, real lease IDs
 *   export/ledger.jsonl   sanitized for readers
 *   manifest.json, expected.json, environment.json (written by the caller
 *   through ll_ledger_write_json)
 *
 * Line format: one compact JSON object per line whose last key is
 * "row_hash". The hashed bytes are the line up to (not including)
 * ',"row_hash":' followed by '}', so any byte change is caught:
 *   row_hash = hex(SHA-256(prev_hash_hex || hashed_bytes))
 * prev_hash of the first row is 64 zeros. seq starts at 1. Each file has
 * its own chain; seq is the same in both. */
#ifndef LL_LEDGER_H
#define LL_LEDGER_H

#include <cjson/cJSON.h>

#include "ll.h"
#include "sanitize.h" /* the export form and the scan it applies */

#define LL_GENESIS_HASH                                                        \
  "0000000000000000000000000000000000000000000000000000000000000000"

typedef enum {
  LL_LEDGER_CREATE = 0, /* dir must not hold evidence: LL_E_EVIDENCE_EXISTS */
  LL_LEDGER_RECOVER     /* append only, never rewrite */
} ll_ledger_mode;

typedef struct ll_ledger ll_ledger;

#include "ledger_secrets.h" /* its bindings, secrets and export form */

/* CREATE makes dir (mkdir -p: parents 0755, dir and protected/ 0700), or
 * accepts an existing dir only empty, owned by the user and not writable
 * by group or others (LL_E_USAGE otherwise, LL_E_EVIDENCE_EXISTS when not
 * empty; a symbolic link is refused). RECOVER checks the same of dir, its
 * folders and ledger files, refuses any symbolic link in them, checks
 * both chains (LL_E_TAMPER naming the first bad row), re-derives any
 * export rows missing after a crash between the two writes, and loads the
 * rows. Either way dir stays open until close, and every file is made
 * relative to it without following a link (docs/EVIDENCE.md, "Files"). */
ll_ledger *ll_ledger_open(const char *dir, ll_ledger_mode mode, ll_error *err);
void ll_ledger_close(ll_ledger *l);

/* Appends a copy of row: sets "seq" first and "prev_hash"/"row_hash" last,
 * writes and fsyncs protected then export (ll_ledger_append_sync with
 * LL_SYNC_BOTH). On any failure nothing is
 * considered recorded and LL_E_DURABILITY is returned; the caller must not
 * send the request the row announces. *out_seq gets the seq. */
ll_status ll_ledger_append(ll_ledger *l, const cJSON *row, long *out_seq,
                           ll_error *err) LL_WARN_UNUSED;

/* How much of an append must be on disk before it returns. A request that
 * can change the service needs its intent durable in the protected ledger
 * before it leaves (PROTECTED); the export can always be rebuilt from the
 * protected ledger, so it is synced only at decisions and close. Rows
 * appended with NONE are on disk by the next sync or the close, and survive
 * a killed process either way (the page cache keeps them).
 *
 * DEFER is NONE whose export line may wait in memory: the protected line,
 * the write-ahead record, is written before the append returns, as ever;
 * the export line is written with the others waiting in one write(), at
 * ll_ledger_flush_export, the next append that does not defer, or the
 * close. A crash loses no evidence: a recovery re-derives every export
 * line the protected ledger holds and the export lacks. Any other value is
 * refused (LL_E_USAGE) before anything is written. */
typedef enum {
  LL_SYNC_BOTH = 0, /* fsync protected, then export */
  LL_SYNC_PROTECTED,
  LL_SYNC_NONE,
  LL_SYNC_DEFER
} ll_sync;

ll_status ll_ledger_append_sync(ll_ledger *l, const cJSON *row, ll_sync sync,
                                long *out_seq, ll_error *err) LL_WARN_UNUSED;

/* The same without the copy: takes row, whatever the result. The row is
 * sealed in place with its seq, prev_hash and row_hash and printed as the
 * protected line, then sanitized in place and sealed again as the export
 * line; the hash, the secret scan and the file read those lines. On
 * success the sealed export row is the ledger's until it is taken
 * (ll_ledger_take_last) or the next append drops it: none is kept. */
ll_status ll_ledger_append_row(ll_ledger *l, cJSON *row, ll_sync sync,
                               long *out_seq, ll_error *err) LL_WARN_UNUSED;

/* Writes the waiting export lines. A failure takes back what part of them
 * reached the file and makes the ledger unusable (LL_E_DURABILITY), the
 * next append reporting why. */
ll_status ll_ledger_flush_export(ll_ledger *l, ll_error *err) LL_WARN_UNUSED;
/* ll_ledger_flush_export for a transport's "the request is on its way"
 * hook (ll_http_request.on_wire), which takes no error: 0, or -1 with the
 * reason kept for the next append to report. */
int ll_ledger_flush_hook(void *ledger);

/* Borrowed arrays of rows (parsed, with seq/prev_hash/row_hash): the
 * protected rows read when the ledger was opened (a reopened ledger; the
 * rows appended since are in the file only), and every export row up to
 * the last appended, the ones appended since the last ask read back from
 * the export file and the lines waiting, each checked against the chain
 * this handle wrote (a run that never asks keeps no row). NULL when they
 * cannot be read back as written (an edited or shrunk file, a failed
 * write, out of memory): a caller that needs them fails. */
const cJSON *ll_ledger_rows(const ll_ledger *l);        /* protected */
const cJSON *ll_ledger_export_rows(const ll_ledger *l); /* export */
/* The same, with why they cannot be read back (LL_E_TAMPER, LL_E_IO,
 * LL_E_DURABILITY, LL_E_NOMEM); *out is NULL then. */
ll_status ll_ledger_read_back(const ll_ledger *l, const cJSON **out,
                              ll_error *err) LL_WARN_UNUSED;
/* The export row of the last successful append (sealed: seq, prev_hash,
 * row_hash), the caller's to delete; NULL once taken, or when none. Once
 * the rows are kept (a reader asked) it is a reference to the kept row:
 * read it or duplicate it, never change it. */
cJSON *ll_ledger_take_last(ll_ledger *l);
/* Nonzero once a reader has asked for the export rows: from then on every
 * appended row is kept in memory. */
int ll_ledger_keeps_rows(const ll_ledger *l);
long ll_ledger_count(const ll_ledger *l);
/* The protected file's size: what it held at open and every line since. */
size_t ll_ledger_bytes(const ll_ledger *l);
const char *ll_ledger_dir(const ll_ledger *l);

/* mkdir -p: every missing parent 0755, the directory itself 0700 (the
 * protected ledger lives in it; a reviewer gets the bundle by copy, or the
 * operator widens it). Each new entry is made durable in its parent. Used
 * for a bundle and for the parent of a version series (run_index.c). */
ll_status ll_ledger_mkdir_p(const char *dir, ll_error *err) LL_WARN_UNUSED;

/* Writes dir/name atomically (.name.tmp made O_EXCL | O_NOFOLLOW in the
 * open directory, fsync, renameat over name: a link at name is replaced,
 * never followed), pretty-printed, 0644. */
ll_status ll_ledger_write_json(ll_ledger *l, const char *name,
                               const cJSON *value,
                               ll_error *err) LL_WARN_UNUSED;

/* Reads a ledger file and checks its chain. On a break, returns LL_E_TAMPER
 * with *bad_seq set to the first bad line's number (1-based). *out_rows gets
 * the parsed rows (caller deletes) even when the chain is broken, up to the
 * first bad row. */
ll_status ll_ledger_read_file(const char *path, cJSON **out_rows, long *bad_seq,
                              ll_error *err) LL_WARN_UNUSED;
/* ll_ledger_read_file of a ledger's bytes already in memory (p, n), for a
 * reader that checks other things on the very same bytes (verify's secret
 * scan): path only names the ledger in messages. */
ll_status ll_ledger_read_mem(const char *p, size_t n, const char *path,
                             cJSON **out_rows, long *bad_seq,
                             ll_error *err) LL_WARN_UNUSED;

#endif
