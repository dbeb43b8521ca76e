/* The token command: the operator's program (az account get-access-token,
 * a helper script) run from an argument vector by core/proc.c, never
 * through a shell, and the splitter for the one-string form typed on a
 * command line. */
#include "auth_command.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "auth_impl.h"
#include "proc.h"
#include "secret.h"

static int is_blank(char c) {
  return c == ' ' || c == '\t';
}

ll_status ll_auth_split_command(const char *line, char ***out_argv,
                                ll_error *err) {
  if (out_argv)
    *out_argv = NULL;
  if (!line || !out_argv)
    return ll_fail(err, LL_E_USAGE, "ll_auth_split_command: NULL argument");
  size_t len = strlen(line), words = 0;
  if (len > LL_AUTH_COMMAND_MAX_LEN)
    return ll_fail(err, LL_E_USAGE,
                   "token command is longer than %d bytes: put it in a "
                   "script and give the script's path",
                   LL_AUTH_COMMAND_MAX_LEN);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)line[i];
    if (c == '\'' || c == '"' || c == '\\')
      return ll_fail(err, LL_E_USAGE,
                     "token command holds a quote or backslash: it runs "
                     "without a shell and is split on spaces only, so the "
                     "quotes would reach the program; drop them, or put the "
                     "command in a script and give the script's path");
    if ((c < 0x20 && c != '\t') || c == 0x7f)
      return ll_fail(err, LL_E_USAGE,
                     "token command holds a control character: give the "
                     "program and its arguments separated by spaces");
    if (!is_blank((char)c) && (i == 0 || is_blank(line[i - 1])))
      words++;
  }
  if (words == 0)
    return ll_fail(err, LL_E_USAGE,
                   "token command is empty: give the program and its "
                   "arguments, e.g. az account get-access-token ...");
  if (words > LL_AUTH_COMMAND_MAX_WORDS)
    return ll_fail(err, LL_E_USAGE,
                   "token command has more than %d words: put it in a "
                   "script and give the script's path",
                   LL_AUTH_COMMAND_MAX_WORDS);
  /* One block: the pointer array, then a copy of the text cut at blanks. */
  char **argv = malloc((words + 1) * sizeof *argv + len + 1);
  if (!argv)
    return ll_fail(err, LL_E_NOMEM, "out of memory splitting the command");
  char *text = (char *)(argv + words + 1);
  memcpy(text, line, len + 1);
  size_t n = 0;
  for (size_t i = 0; i < len; i++) {
    if (is_blank(text[i]))
      text[i] = '\0';
    else if (i == 0 || text[i - 1] == '\0')
      argv[n++] = text + i;
  }
  argv[n] = NULL;
  *out_argv = argv;
  return LL_OK;
}

/* JSON output: the accessToken (az) or access_token field replaces it. */
static ll_status token_from_json(char **tok, ll_error *err) {
  cJSON *root = cJSON_Parse(*tok);
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "accessToken");
  if (!cJSON_IsString(t))
    t = cJSON_GetObjectItemCaseSensitive(root, "access_token");
  char *inner =
      cJSON_IsString(t)
          ? ll_secret_dup_trimmed(t->valuestring, strlen(t->valuestring))
          : NULL;
  int had = cJSON_IsString(t);
  ll_secret_json_free(root);
  ll_secret_free(*tok);
  *tok = inner;
  if (had && !inner)
    return ll_fail(err, LL_E_NOMEM, "out of memory reading the token command");
  if (!inner || !*inner)
    return ll_fail(err, LL_E_AUTH,
                   "token command printed JSON without accessToken or "
                   "access_token");
  return LL_OK;
}

/* How the command ended, as one line; its stdout never reaches it. */
static ll_status judge(const ll_proc_result *r, long timeout_ms,
                       const char *prog, ll_error *err) {
  if (r->overflow) {
    char limit[32];
    ll_input_limit_str(SECRET_CAP, limit, sizeof limit);
    return ll_fail(err, LL_E_AUTH, "token command printed more than %s", limit);
  }
  if (r->timed_out)
    return ll_fail(err, LL_E_AUTH,
                   "token command %s did not finish within %ld ms and was "
                   "stopped: check that it runs without prompting (for az, "
                   "run az login first)",
                   prog, timeout_ms);
  if (r->term_signal)
    return ll_fail(err, LL_E_AUTH,
                   "token command failed (signal %d): check the command %s",
                   r->term_signal, prog);
  if (!r->exited)
    return ll_fail(err, LL_E_AUTH, "token command could not be waited for");
  if (r->exit_code != 0)
    return ll_fail(err, LL_E_AUTH,
                   "token command failed (exit %d): check the command %s "
                   "(its own messages are on stderr)",
                   r->exit_code, prog);
  return LL_OK;
}

ll_status ll_auth_token_from_command(const char *const *argv, const char *line,
                                     long timeout_ms, char **out,
                                     ll_error *err) {
  if (argv && line)
    return ll_fail(err, LL_E_USAGE,
                   "both token_argv and token_command are set: give one");
  char **split = NULL;
  ll_status st = LL_OK;
  if (!argv) {
    if (!line || !*line)
      return ll_fail(err, LL_E_USAGE, "no token command given");
    st = ll_auth_split_command(line, &split, err);
    if (st != LL_OK)
      return st;
    argv = (const char *const *)split;
  }
  if (!argv[0] || !*argv[0]) {
    free(split);
    return ll_fail(err, LL_E_USAGE, "no token command given");
  }
  char prog[72];
  size_t n = 0;
  for (const char *p = argv[0]; *p && n < 64; p++)
    prog[n++] = (*p > 0x20 && *p < 0x7f) ? *p : '?';
  prog[n] = '\0';
  long timeout = timeout_ms > 0 ? timeout_ms : LL_AUTH_COMMAND_TIMEOUT_MS;
  ll_proc_options so = {
      .argv = argv, .out_cap = SECRET_CAP, .timeout_ms = timeout};
  ll_proc_result r;
  ll_error se = {0};
  st = ll_proc_capture(&so, &r, &se);
  if (st == LL_E_IO)
    st = ll_fail(err, LL_E_AUTH,
                 "%s: the token command runs without a shell; give a "
                 "program on PATH or its full path",
                 se.message);
  else if (st != LL_OK && err)
    *err = se;
  else
    st = judge(&r, timeout, prog, err);
  if (st == LL_OK && !(*out = ll_secret_dup_trimmed(r.out, r.out_len)))
    st = ll_fail(err, LL_E_NOMEM, "out of memory reading the token command");
  else if (st == LL_OK && !**out)
    st = ll_fail(err, LL_E_AUTH,
                 "token command failed (exit 0, no output): check the "
                 "command %s",
                 prog);
  else if (st == LL_OK && **out == '{')
    st = token_from_json(out, err);
  ll_proc_result_cleanup(&r);
  free(split);
  return st;
}
