/* What sign.c (making a signed bundle) and sign_check.c (checking one)
 * share: the walk over the bundle's files, a file's SHA-256, and
 * ssh-keygen started without a shell, a prompt, an askpass or an agent. */
#ifndef LL_SIGN_IMPL_H
#define LL_SIGN_IMPL_H

#include <stddef.h>

#include "ll.h"
#include "proc.h"
#include "sign.h"

/* Most files and depth of a bundle walked: a run writes about ten. */
#define LL_SIGN_FILES_MAX 100000
#define LL_SIGN_DEPTH_MAX 8

typedef struct {
  char **paths; /* relative, sorted by byte order (LC_ALL=C sort) */
  size_t n, cap;
} ll_sign_files;

/* Every regular file under dir, except the top-level SHA256SUMS and
 * SHA256SUMS.sig. An entry that is neither a regular file nor a
 * directory, or a name that sha256sum would escape (a backslash, a
 * newline, a byte below 0x20 or 0x7f), is LL_E_IO naming it. */
ll_status ll_sign_walk(const char *dir, ll_sign_files *out,
                       ll_error *err) LL_WARN_UNUSED;
void ll_sign_files_free(ll_sign_files *f);

/* SHA-256 of the regular file dir/rel, read without following a link at
 * its last component, as lowercase hex. */
ll_status ll_sign_file_sha256(const char *dir, const char *rel, char hex[65],
                              ll_error *err) LL_WARN_UNUSED;

/* Runs ssh-keygen with args (NULL-terminated, without argv[0]): stdin
 * *stdin_fd (from its offset) or /dev/null, stderr into the captured output,
 * the environment without SSH_ASKPASS, SSH_ASKPASS_REQUIRE, DISPLAY,
 * SSH_AUTH_SOCK and LD_PRELOAD, 30 s at most. LL_OK when it ran (r says how it
 * ended; the caller cleans r up); LL_E_IO when it could not be started. */
ll_status ll_sign_keygen(const char *const *args, const int *stdin_fd,
                         ll_proc_result *r, ll_error *err) LL_WARN_UNUSED;

/* snprintf into a path buffer: 1, or 0 when it did not fit (buf then
 * holds an empty string, never a cut path). */
int ll_sign_path(char *buf, size_t cap, const char *fmt, ...) LL_PRINTF(3, 4);

/* "./" before a relative path that ssh-keygen would read as an option
 * ("-Yx"), else "": every path handed to it is printed as
 * "%s%s", LL_SIGN_DASH(p), p. */
#define LL_SIGN_DASH(p) ((p)[0] == '-' ? "./" : "")

/* The last line of ssh-keygen's output that says something (its reason
 * comes last), printable ASCII only, for a message; "(no output)" when
 * there is none. */
void ll_sign_last_line(const ll_proc_result *r, char *buf, size_t cap);

/* From a line holding "<TYPE> key SHA256:..." (-Y verify,
 * check-novalidate) or "<bits> SHA256:... comment (TYPE)" (-l): the
 * fingerprint and the type. 1 when a fingerprint was found. */
int ll_sign_parse_key(const char *text, ll_sign_key *key);

#endif
