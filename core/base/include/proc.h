/* Runs an operator's program without a shell, ever: an argument vector
 * goes to posix_spawnp, stdin is /dev/null (or a file named by the
 * caller), stdout comes back through a pipe with a size cap and a
 * timeout, stderr passes through to ours (or joins stdout). */
#ifndef LL_PROC_H
#define LL_PROC_H

#include <stddef.h>

#include "ll.h"

typedef struct {
  /* NULL-terminated; argv[0] is looked up in PATH when it holds no '/'.
   * Every element reaches the program exactly as given. */
  const char *const *argv;
  size_t out_cap;  /* most stdout bytes kept; one more is an overflow */
  long timeout_ms; /* > 0: the child is killed (SIGKILL) after this */
  /* NULL: /dev/null. Else a regular file opened read-only, without
   * following a link, as the child's stdin (ssh-keygen -Y verify reads
   * the signed message there). */
  const char *stdin_path;
  /* NULL: as stdin_path says. Else a descriptor of ours the child gets as
   * its stdin, from its current offset (the signature check hands
   * ssh-keygen the very bytes it checked, not a file read again). */
  const int *stdin_fd;
  int merge_stderr; /* 1: the child's stderr goes into the captured stdout */
  /* NULL: our environment. Else the child's whole environment. */
  const char *const *envp;
} ll_proc_options;

typedef struct {
  char *out; /* stdout, NUL-terminated; NULL after an overflow or timeout.
                Wiped and freed by ll_proc_result_cleanup */
  size_t out_len;
  int exited;      /* 1: exit_code holds the exit status */
  int exit_code;   /* WEXITSTATUS, when exited */
  int term_signal; /* the signal that ended it (0: none) */
  int timed_out;   /* killed because timeout_ms passed */
  int overflow;    /* printed more than out_cap bytes: killed */
  long pid;        /* the child's process ID; it has been reaped */
} ll_proc_result;

/* Starts argv, collects stdout, and always reaps the child before it
 * returns (on timeout or overflow it is killed by its own PID first; it
 * stays in our process group, so a Ctrl-C reaches it too, and programs it
 * started itself are not tracked).
 * LL_OK: the child ran; r says how it ended. LL_E_IO: it could not be
 * started (a missing program, no permission; errno's text in the
 * message, which names argv[0] only), nothing ran. LL_E_USAGE for an
 * empty argv, LL_E_NOMEM. No descriptor of ours other than stderr
 * reaches the child: every one from 3 up is closed in it. */
ll_status ll_proc_capture(const ll_proc_options *o, ll_proc_result *r,
                          ll_error *err) LL_WARN_UNUSED;

/* Wipes and frees r->out; r may be reused afterwards. */
void ll_proc_result_cleanup(ll_proc_result *r);

#endif
