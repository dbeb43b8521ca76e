/* Input files the operator names: the manifest, a replay fixture, a token
 * file, a CA file. Each is opened the same careful way and must be a
 * regular file under its stated limit; anything else is one line naming
 * the file, what it is, and what to pass instead. Never includes lua.h. */
#ifndef LL_INPUT_H
#define LL_INPUT_H

#include <stddef.h>

#include "ll.h"

/* The stated limits (docs/EVIDENCE.md, "Files"). A manifest is a few
 * hundred bytes; a token is a JWT of a few KiB; a CA bundle (Debian's
 * ca-certificates.crt) about 200 KiB; a fixture holds whole response
 * bodies, each up to LL_BODY_CAP_DEFAULT (4 MiB) before base64. */
#define LL_MANIFEST_FILE_MAX (64u * 1024u)
#define LL_FIXTURE_FILE_MAX (64u * 1024u * 1024u)
#define LL_TOKEN_FILE_MAX (64u * 1024u)
#define LL_CA_FILE_MAX (1024u * 1024u)

/* Opens path with O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, so that
 * neither a FIFO (whose open would wait for a writer) nor a symbolic link
 * is ever waited on or followed, then checks with fstat, before any read,
 * that it is a regular file of at most max bytes. what names the file in
 * messages ("manifest", "token file"), flag the option that gives it
 * ("--manifest"). On success *out_fd is the open descriptor (blocking
 * again; the caller closes it) and *out_size the size fstat saw.
 *
 * Errors, each one line: LL_E_USAGE (exit 64) for a missing or unreadable
 * file, a symbolic link, a FIFO, a directory, a device or a socket, and a
 * file over max (the limit in the message). */
ll_status ll_input_open(const char *path, const char *what, const char *flag,
                        size_t max, int *out_fd, size_t *out_size,
                        ll_error *err) LL_WARN_UNUSED;

/* The whole file, through ll_input_open: b->p is then allocated and
 * NUL-terminated (even for an empty file), b->n its length; the caller
 * frees b->p, also on failure. A file that grows past max while it is read
 * is refused like one that was too large. LL_E_IO for a failed read,
 * LL_E_NOMEM. */
ll_status ll_input_read(const char *path, const char *what, const char *flag,
                        size_t max, ll_buf *b, ll_error *err) LL_WARN_UNUSED;

/* The same read into the caller's buffer of max + 1 bytes, for a file
 * that holds a secret: nothing is reallocated, so the caller can wipe the
 * one copy. buf is NUL-terminated, *out_len its length. Errors as
 * ll_input_read, never LL_E_NOMEM. */
ll_status ll_input_read_into(const char *path, const char *what,
                             const char *flag, char *buf, size_t max,
                             size_t *out_len, ll_error *err) LL_WARN_UNUSED;

/* "64 KiB", "1 MiB", "100 bytes": a limit as the messages state it. */
void ll_input_limit_str(size_t max, char *buf, size_t cap);

#endif
