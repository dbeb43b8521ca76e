/* Shared vocabulary of the leaselua core: status codes, the caller-owned
 * error, and a small header list. Never includes lua.h. */
#ifndef LL_H
#define LL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LL_VERSION "0.1.0"
#define LL_API_VERSION "2023-11-03"
#define LL_MAX_SINGLE_PUT (1024u * 1024u)
/* A writer alias (A, B, a fixture placeholder's name): 1 to
 * LL_ALIAS_MAX - 1 bytes, and its NUL. */
#define LL_ALIAS_MAX 16
/* The one character rule of an alias: [A-Za-z0-9_-]. */
static inline int ll_alias_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* a and b are both strings, and the same one (NULL equals nothing). */
static inline int ll_streq(const char *a, const char *b) {
  return a && b && strcmp(a, b) == 0;
}
/* The same, where two absent strings also agree (NULL equals NULL). */
static inline int ll_strsame(const char *a, const char *b) {
  return a == b || ll_streq(a, b);
}

/* A request row's lease_alias_supplied when the request carried no lease
 * ID (core/run/run_row.c writes it). The baseline, the fold and verify ask
 * ll_lease_none where they ask "did it carry a lease", so that an absent
 * or empty alias is no lease for all of them: an empty alias names
 * nobody (a run's aliases are 1 to 15 bytes). */
#define LL_LEASE_OMITTED "omitted"
/* A request that writes no declared payload revision (every request but
 * Put Blob). */
#define LL_NO_REVISION (-1)
static inline int ll_lease_none(const char *alias) {
  return !alias || !*alias || strcmp(alias, LL_LEASE_OMITTED) == 0;
}

#if defined(__GNUC__)
#define LL_WARN_UNUSED __attribute__((warn_unused_result))
#define LL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define LL_WARN_UNUSED
#define LL_PRINTF(a, b)
#endif

/* Every code has a stable name (ll_code_name) that reaches Lua and the
 * ledger. */
typedef enum {
  LL_OK = 0,
  LL_E_USAGE, /* bad argument or configuration: exit 64 */
  LL_E_IO,    /* local file system */
  LL_E_NOMEM,
  LL_E_TRANSPORT,    /* network failure, see ll_outcome for what it means */
  LL_E_PARSE,        /* malformed input (XML, JSON, header, JWT) */
  LL_E_AUTH,         /* no usable credential */
  LL_E_INSECURE,     /* http to a host outside loopback */
  LL_E_TOO_LARGE,    /* payload over max_single_put_size */
  LL_E_BAD_LEASE_ID, /* not a GUID */
  LL_E_BAD_URL,
  LL_E_EVIDENCE_EXISTS,    /* evidence dir already holds evidence */
  LL_E_MANIFEST,           /* manifest missing or incomplete */
  LL_E_DURABILITY,         /* intent row could not be made durable */
  LL_E_HOLD,               /* HOLD latch: a request's outcome is unknown */
  LL_E_UNRECONCILED,       /* accepted write not yet read back */
  LL_E_LEASE_PRECONDITION, /* write without the writer's lease, or gap write */
  LL_E_UNDECLARED,         /* payload not declared before execution */
  LL_E_CLOSED,             /* handle used after close */
  LL_E_REPLAY,             /* strict replay mismatch */
  LL_E_TAMPER,             /* ledger chain broken */
  LL_E_ORDER,              /* a step out of the seed's order */
  LL_E_SCOPE,         /* the guard's scope is the blob: lifecycle, second run */
  LL_E_TARGET_EXISTS, /* the blob existed before the run: not ours */
  LL_E_PREFLIGHT,     /* the preflight read got no usable answer */
  LL_E_DELETE_UNCONFIRMED, /* delete without a read-back ETag of ours */
  LL_E_NOT_CREATED, /* a lease operation before the lifecycle's own create
                       was accepted and read back, or after its delete */
  LL_E_INTERNAL,
  LL_E__COUNT
} ll_code;

typedef ll_code ll_status;

/* One line naming what was wrong and what to do. Long enough for a full
 * path plus the explanation; a message that still does not fit ends in
 * "..." (cut on a UTF-8 boundary), so a cut is never silent. */
typedef struct {
  ll_code code;
  char message[1024];
} ll_error;

const char *ll_code_name(ll_code code);
/* Fills err (which may be NULL) and returns code, so callers can write
 * `return ll_fail(err, LL_E_IO, "...")`. */
ll_status ll_fail(ll_error *err, ll_code code, const char *fmt, ...)
    LL_PRINTF(3, 4);
/* Exit code for a failure class, as documented in README: 64 for usage and
 * configuration, 70 for internal errors. */
int ll_code_exit(ll_code code);
/* The DESIGN.md section 2 invariant a code names (2 durability, 3 the HOLD
 * latch, 4 read-back, 5 lease precondition, 6 declared payload, 7 size, 10
 * transport security, 11 manifest, 14 scope, 15 do no harm), or 0. */
int ll_code_invariant(ll_code code);

/* Header list: names compared case-insensitively, insertion order kept. */
typedef struct {
  char *name;
  char *value;
} ll_header;

typedef struct {
  ll_header *v;
  size_t n;
  size_t cap;
} ll_headers;

void ll_headers_init(ll_headers *h);
void ll_headers_cleanup(ll_headers *h);
void ll_headers_clear(ll_headers *h);
ll_status ll_headers_add(ll_headers *h, const char *name,
                         const char *value) LL_WARN_UNUSED;
/* The same from a name and a value given by length (not NUL-terminated:
 * a response's header line as it came). */
ll_status ll_headers_add_n(ll_headers *h, const char *name, size_t name_n,
                           const char *value, size_t value_n) LL_WARN_UNUSED;
/* Adds or replaces. */
ll_status ll_headers_set(ll_headers *h, const char *name,
                         const char *value) LL_WARN_UNUSED;
/* The first header named name (case-insensitive), or NULL. */
const char *ll_headers_get(const ll_headers *h, const char *name);
/* name's value when every header of that name (case-insensitive, as HTTP
 * compares names) carries the same bytes; NULL when there is none, and
 * NULL with *differ set when two differ: a response that says two things
 * says neither. */
const char *ll_headers_get_agreed(const ll_headers *h, const char *name,
                                  int *differ);
ll_status ll_headers_copy(ll_headers *dst,
                          const ll_headers *src) LL_WARN_UNUSED;

/* Growing, always NUL-terminated text buffer. A failed allocation sets oom
 * and makes every later put a no-op, so callers check once at the end. */
typedef struct {
  char *p;
  size_t n, cap;
  int oom;
} ll_buf;
/* Room for n more bytes and the NUL: 1, or 0 with oom set once and for all. */
int ll_buf_reserve(ll_buf *b, size_t n);
void ll_buf_put(ll_buf *b, const char *s, size_t n);
/* Where n more bytes go (the NUL's room too): inline while b is big
 * enough, ll_buf_reserve when it must grow; NULL once oom. The caller
 * adds what it wrote to b->n and terminates. */
static inline char *ll_buf_room(ll_buf *b, size_t n) {
  if (!b->oom && b->n + n + 1 <= b->cap)
    return b->p + b->n;
  return ll_buf_reserve(b, n) ? b->p + b->n : NULL;
}
/* Appends the formatted text whole, however long; a format error sets oom
 * as a failed allocation does, so nothing is ever silently cut. */
void ll_buf_printf(ll_buf *b, const char *fmt, ...) LL_PRINTF(2, 3);
/* Appends the whole file at path to b (b->p is then allocated, even for an
 * empty file). LL_E_IO when it cannot be opened or read, LL_E_TOO_LARGE
 * once b would pass max bytes, LL_E_NOMEM. err is not filled: each caller
 * names the file in its own words. The caller frees b->p. */
ll_status ll_buf_read_file(ll_buf *b, const char *path, size_t max);

/* Bounded string copy that always terminates; returns 0 if it truncated. */
int ll_strlcpy(char *dst, const char *src, size_t cap);

#endif
