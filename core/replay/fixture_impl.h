/* Internal to fixture.c (the request view, loading), fixture_text.c
 * (small formats, printing), fixture_replay.c, fixture_record.c and
 * fixture_place.c (the record file). */
#ifndef LL_FIXTURE_IMPL_H
#define LL_FIXTURE_IMPL_H

#include <sys/stat.h>
#include <time.h>

#include "fixture.h"
#include "hash.h"

#define FX_NAME_MAX LL_ALIAS_MAX /* a placeholder's name is an alias */

/* Request headers a fixture keeps and replay matches (lowercase, in this
 * order), and response headers a recording keeps. NULL-terminated. */
extern const char *const fx_request_headers[];
extern const char *const fx_response_headers[];
/* x-ms-lease-id or x-ms-proposed-lease-id: values are {{lease:ALIAS}}. */
int fx_is_lease_header(const char *name);

/* What replay matches and recording keeps of a request. */
typedef struct {
  char method[8];
  char *path;         /* relative to the account, as sent (escaped) */
  char *query;        /* comp= and restype= only, in order; "" if none */
  ll_headers headers; /* fx_request_headers present, in that order */
  int has_body;
  char body_sha[LL_SHA256_HEX];
} fx_req;

ll_status fx_req_from_http(const ll_http_request *q, const char *account_path,
                           fx_req *out, ll_error *err) LL_WARN_UNUSED;
void fx_req_cleanup(fx_req *r);
/* "PUT /c/b?comp=lease" for messages. */
void fx_req_line(const fx_req *r, char *buf, size_t cap);

typedef struct {
  double t_ms, elapsed_ms;
  fx_req req;
  char *transport_error; /* non-NULL: no response */
  ll_outcome outcome;    /* RESPONSE, or UNKNOWN / NOT_SENT */
  int emitted;           /* request heads that left (default 1) */
  long status;
  ll_headers headers;
  unsigned char *body;
  size_t body_len;
} fx_exchange;

typedef struct {
  char label[16]; /* endpoint_kind: emulator | azure | documented */
  int64_t started_utc_ms;
  fx_exchange *x;
  size_t n;
} fx_fixture;

ll_status fx_load(const char *text, size_t len, const char *name,
                  fx_fixture *out, ll_error *err) LL_WARN_UNUSED;
void fx_fixture_free(fx_fixture *f);

/* s is exactly "{{lease:NAME}}": copies NAME, returns 1. */
int fx_placeholder(const char *s, char name[FX_NAME_MAX]);

char *fx_base64(const unsigned char *s, size_t n);
ll_status fx_unbase64(const char *s, unsigned char **out,
                      size_t *n) LL_WARN_UNUSED;
/* RFC 3339 UTC with optional milliseconds, e.g. 2026-11-30T07:09:39.123Z. */
int fx_parse_utc(const char *s, int64_t *ms);

/* What a recording replaces (fixture_known.c): values and their
 * placeholders, as many as there are (a table that stopped taking them
 * would leave the next in clear). */
typedef struct {
  char **v, **ph;
  size_t n, cap;
  /* the alias last numbered and its number: the next ID under it starts
   * there, not at 1 (a server handing out a new ID on every answer) */
  char last_alias[FX_NAME_MAX];
  int last_n;
} fx_known;

/* Wipes the values and frees all; k is empty after. */
void fx_known_free(fx_known *k);
/* The placeholder of lease ID id (any case and hyphens), or NULL. */
const char *fx_known_placeholder(const fx_known *k, const char *id);
/* Adds lease ID id as {{lease:ALIAS}}, numbered when the alias already
 * names another ID (a changed lease: A, then A2). An ID that cannot be
 * named (out of memory, every number taken) fills *broken: the recording
 * is refused, never written with the ID in clear. */
ll_status fx_known_learn(fx_known *k, const char *id, const char *alias,
                         ll_error *broken) LL_WARN_UNUSED;
/* The run's credential secrets (t->secret_of), each in every form a
 * server may echo it (ll_sanitize_secret_forms), as {{secret:NAME}}; asked
 * each time, as a token may be refreshed during the run. 0 when out of
 * memory (s is then empty). */
int fx_known_secrets(const ll_transport *t, fx_known *s);
/* s[0..n) into out, as bytes, with the lease IDs of ids and the secrets
 * of sec replaced by their placeholders, and sig= values redacted;
 * returns what ll_sanitize_replace found of sec (and LL_REDACT_SIG): an
 * ID is not noted, its placeholder is expected. out->oom: incomplete. */
unsigned fx_scrub_bytes(const fx_known *ids, const fx_known *sec, const char *s,
                        size_t n, ll_buf *out);

/* Growing text buffer for diffs and printing. */
typedef ll_buf fx_buf;
void fx_puts(fx_buf *b, const char *s);

/* The record file's place (fixture_place.c). The directory is held open
 * and the file made there with O_EXCL, then linked or renamed into place
 * under its name, so no link at the name is ever followed. dev, ino,
 * size, ctime: the file placed, the only one a later write may replace.
 * dirfd -1: not open. */
typedef struct {
  const char *path; /* as the operator gave it (borrowed), for messages */
  int dirfd;
  char *base;
  int placed;
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec ctime;
} fx_place;
/* Opens path's directory and checks, before anything is sent, that the
 * name is free (an existing file, or a link, is never replaced) and that
 * a file can be made there: LL_E_USAGE naming --record otherwise. */
ll_status fx_place_open(fx_place *p, const char *path,
                        ll_error *err) LL_WARN_UNUSED;
/* Puts text at the name whole (a temporary file, fsync): the first time
 * by linkat, which never replaces what appeared meanwhile; later by
 * renameat, only over the file placed before. LL_E_IO otherwise, the
 * text then kept in the temporary file beside it when it was written. */
ll_status fx_place_write(fx_place *p, const char *text,
                         ll_error *err) LL_WARN_UNUSED;
void fx_place_close(fx_place *p);

#endif
