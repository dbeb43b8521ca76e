/* What the host takes from a replayed fixture before the script starts
 * (l_replay_args.h): the target's container and blob when the operator
 * did not set them, and the flow arguments the recording was given. A
 * value the operator set that contradicts the fixture is a usage error. */
#include "l_replay_args.h"

#include <stdio.h>
#include <string.h>

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

void ll_host_flow_context(const char *script, int nargs, char **args,
                          ll_fixture_context *out) {
  memset(out, 0, sizeof *out);
  /* more arguments than a fixture holds, or a longer one: the recording
   * names no flow (a replay then needs them typed) rather than a part */
  if (nargs > LL_FIXTURE_MAX_ARGS ||
      !ll_strlcpy(out->script, base_name(script), sizeof out->script))
    return;
  for (int i = 0; i < nargs; i++)
    if (!ll_strlcpy(out->args[i], args[i], sizeof out->args[0]))
      return;
  out->nargs = nargs;
  out->has_flow = 1;
}

static ll_status take(char *dst, size_t cap, const char *recorded,
                      const char *var, const char *what, const char *file,
                      const char *(*get)(const char *), ll_error *err) {
  const char *given = get ? get(var) : NULL;
  if (given && *given) {
    if (strcmp(given, recorded) != 0)
      return ll_fail(err, LL_E_USAGE,
                     "%s=%.200s contradicts the %s the fixture %.200s "
                     "recorded (%.200s): unset %s, or replay a fixture "
                     "recorded on that %s",
                     var, given, what, file, recorded, var, what);
    return LL_OK;
  }
  if (!ll_strlcpy(dst, recorded, cap))
    return ll_fail(err, LL_E_USAGE,
                   "the %s the fixture %.200s recorded is "
                   "too long",
                   what, file);
  return LL_OK;
}

ll_status ll_host_replay_context(ll_operator *op, const char *script,
                                 const char *(*get)(const char *),
                                 ll_fixture_context *out, ll_error *err) {
  ll_status st = ll_fixture_context_read(op->replay, out, err);
  if (st != LL_OK) {
    memset(out, 0, sizeof *out);
    /* a file that cannot be read is named by the strict loader at open */
    return st == LL_E_PARSE || st == LL_E_NOMEM ? st : LL_OK;
  }
  if (out->has_target) {
    st = take(op->container, sizeof op->container, out->container,
              "AZURE_STORAGE_CONTAINER", "container", op->replay, get, err);
    if (st == LL_OK)
      st = take(op->blob, sizeof op->blob, out->blob, "AZURE_STORAGE_BLOB",
                "blob", op->replay, get, err);
  }
  /* another script's arguments are not this one's: a recovery replayed
   * with the main handoff's fixture gets none */
  if (out->has_flow && strcmp(out->script, base_name(script)) != 0)
    out->has_flow = 0;
  return st;
}
