/* The Run's composite steps (reconcile, probe, poller, decision), its
 * declarations and lifecycles, read access to its rows, and its clock. */
#include "l_run_flow.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "l_common.h"
#include "l_hardstop.h"
#include "l_json.h"
#include "l_request.h"
#include "l_run.h"
#include "lease_table.h"
#include "ledger.h"

/* run:declare(revision, writer) -> {revision, writer, payload,
 * payload_sha256}. Raises on a bad writer or a conflicting declaration. */
static int l_declare(lua_State *L) {
  const char *fn = "run:declare";
  l_run *h = ll_lua_check_run(L, 1);
  lua_Integer rev =
      ll_lua_arg_int(L, 2, fn, "the revision", 0, LL_LUA_REVISION_MAX);
  char writer[LL_LUA_ALIAS_CAP];
  ll_lua_arg_str(L, 3, fn, "the writer (1 to 15 of [A-Za-z0-9_-])", writer,
                 sizeof writer, 1);
  ll_error err = {0};
  cJSON *row = NULL;
  ll_status st = ll_run_declare(h->run, (long)rev, writer, &row, &err);
  return ll_lua_finish_run(L, h->run, st, row, &err);
}

/* run:lifecycle{destructive=false, reason=""} -> epoch. Under the host a
 * destructive lifecycle needs the operator's --destructive --after DIR;
 * the embedding API passes after=DIR itself. */
static int l_lifecycle(lua_State *L) {
  const char *fn = "run:lifecycle";
  l_run *h = ll_lua_check_run(L, 1);
  int destructive = ll_lua_opt_bool(L, 2, fn, "destructive", 0);
  char reason[LL_LUA_REASON_CAP] = "", after[LL_LUA_PATH_CAP] = "";
  ll_lua_opt_str(L, 2, fn, "reason", reason, sizeof reason);
  int has_after = ll_lua_opt_str(L, 2, fn, "after", after, sizeof after);
  if (h->host && has_after)
    return ll_lua_raise(L, LL_E_USAGE,
                        "'after' is the operator's to set, not the script's "
                        "(invariant 14): pass --destructive --after DIR on the "
                        "command line");
  if (h->host && destructive && !h->host->op->destructive)
    return ll_lua_raise(L, LL_E_USAGE,
                        "a destructive lifecycle needs the operator's "
                        "--destructive --after DIR on the command line");
  if (h->host)
    ll_strlcpy(after, h->host->op->after, sizeof after);
  ll_error err = {0};
  ll_status st = ll_run_lifecycle(h->run, destructive, reason,
                                  after[0] ? after : NULL, &err);
  if (st != LL_OK)
    return ll_lua_raise(L, st, err.message);
  lua_pushinteger(L, ll_model_epoch(ll_run_model(h->run)));
  return 1;
}

/* run:step(label): labels the rows of the following requests */
static int l_step(lua_State *L) {
  l_run *h = ll_lua_check_run(L, 1);
  char label[LL_LUA_LABEL_CAP] = "";
  ll_lua_arg_str(L, 2, "run:step", "the step label", label, sizeof label, 0);
  ll_run_set_step(h->run, label);
  return 0;
}

/* run:note(step, text) */
static int l_note(lua_State *L) {
  const char *fn = "run:note";
  l_run *h = ll_lua_check_run(L, 1);
  char step[LL_LUA_LABEL_CAP], text[LL_LUA_TEXT_CAP];
  ll_lua_arg_str(L, 2, fn, "the step label", step, sizeof step, 1);
  ll_lua_arg_str(L, 3, fn, "the text", text, sizeof text, 1);
  ll_error err = {0};
  ll_status st = ll_run_note(h->run, step, text, &err);
  if (st != LL_OK)
    return ll_lua_raise(L, st, err.message);
  return 0;
}

/* run:stop(kind, reason): a deliberate stop, recorded as a stop row; no
 * request follows it. kind: "stop-after", "left-for-operator",
 * "out-of-reach", or another short word. */
static int l_stop(lua_State *L) {
  const char *fn = "run:stop";
  l_run *h = ll_lua_check_run(L, 1);
  char kind[33], reason[1001];
  ll_lua_arg_str(L, 2, fn, "the kind (a short word, e.g. stop-after)", kind,
                 sizeof kind, 1);
  if (!kind[0])
    return ll_lua_raisef(L, LL_E_USAGE,
                         "%s: the kind is empty: give a short word, e.g. "
                         "stop-after",
                         fn);
  ll_lua_arg_str(L, 3, fn, "the reason", reason, sizeof reason, 1);
  ll_error err = {0};
  ll_status st = ll_run_stop(h->run, kind, reason, &err);
  if (st != LL_OK)
    return ll_lua_raise(L, st, err.message);
  return 0;
}

/* run:reconcile([step]) -> reconcile row */
static int l_reconcile(lua_State *L) {
  l_run *h = ll_lua_check_run(L, 1);
  char step[LL_LUA_LABEL_CAP] = "reconcile";
  ll_lua_arg_str(L, 2, "run:reconcile", "the step label", step, sizeof step, 0);
  ll_error err = {0};
  cJSON *row = NULL;
  ll_status st = ll_run_reconcile(h->run, step, &row, &err);
  return ll_lua_finish_run(L, h->run, st, row, &err);
}

/* run:probe(writer, revision) -> window finding row */
static int l_probe(lua_State *L) {
  const char *fn = "run:probe";
  l_run *h = ll_lua_check_run(L, 1);
  l_writer *w = ll_lua_check_handle(L, 2, LL_WRITER_MT, fn);
  lua_Integer rev =
      ll_lua_arg_int(L, 3, fn, "the revision", 0, LL_LUA_REVISION_MAX);
  if (!w->bound)
    return ll_lua_raisef(L, LL_E_USAGE,
                         "%s: the probe needs a lease-bound writer "
                         "(run:writer, not run:unbound)",
                         fn);
  ll_error err = {0};
  cJSON *row = NULL;
  ll_status st = ll_run_probe(h->run, w->alias, (long)rev, &row, &err);
  return ll_lua_finish_run(L, h->run, st, row, &err);
}

/* The wait's progress on stderr. On a terminal, one line redrawn in place,
 * cut to the terminal's width and erased to its end, so that no fragment of
 * a longer earlier line is left, and erased before anything else prints.
 * Without a terminal (a CI log), one plain heartbeat line about every
 * HEARTBEAT_MS, so that the log is never silent for a whole break. */
#define HEARTBEAT_MS 5000
typedef struct {
  int tty, width, drawn;
  long next_beat_ms;
} progress_view;

static int term_width(void) {
  struct winsize ws;
  if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return ws.ws_col;
  const char *c = getenv("COLUMNS");
  long n = c ? strtol(c, NULL, 10) : 0;
  return n >= 20 && n <= 1000 ? (int)n : 80;
}

static void progress(void *ctx, const char *state, long elapsed_ms, long hint_s,
                     long polls) {
  progress_view *v = ctx;
  char line[200];
  int n = snprintf(line, sizeof line,
                   "  waiting: %s, %.1f s elapsed, %ld polls, "
                   "x-ms-lease-time hint %ld s",
                   state, (double)elapsed_ms / 1000.0, polls, hint_s);
  if (n < 0)
    return;
  if (v->tty) {
    int w = v->width - 1; /* the last column would wrap on some terminals */
    if (w < (int)sizeof line && n > w)
      line[w > 0 ? w : 0] = '\0';
    fprintf(stderr, "\r%s\033[K", line);
    v->drawn = 1;
  } else if (elapsed_ms >= v->next_beat_ms) {
    fprintf(stderr, "%s\n", line);
    v->next_beat_ms = elapsed_ms + HEARTBEAT_MS;
  }
  fflush(stderr);
}

/* run:wait_for_broken{deadline_ms, floor_ms=50, budget=30, fixed_ms,
 * progress=bool} -> poll finding row (result BROKEN or HOLD) */
static int l_wait(lua_State *L) {
  const char *fn = "run:wait_for_broken";
  l_run *h = ll_lua_check_run(L, 1);
  ll_poll_options o = {0};
  /* deadline_ms 0: the core's default (the lease-time hint + 60 s) */
  o.deadline_ms = (long)ll_lua_opt_int(L, 2, fn, "deadline_ms", 0, 0, 3600000);
  o.floor_ms = (long)ll_lua_opt_int(L, 2, fn, "floor_ms", 50, 1, 60000);
  o.budget = (long)ll_lua_opt_int(L, 2, fn, "budget", 30, 1, 10000);
  o.fixed_ms = (long)ll_lua_opt_int(L, 2, fn, "fixed_ms", 0, 0, 60000);
  progress_view view = {.tty = isatty(2)};
  if (ll_lua_opt_bool(L, 2, fn, "progress", 0)) {
    view.width = view.tty ? term_width() : 0;
    o.progress = progress;
    o.progress_ctx = &view;
  }
  ll_error err = {0};
  cJSON *row = NULL;
  ll_status st = ll_run_wait_broken(h->run, &o, &row, NULL, &err);
  if (view.drawn)
    fputs("\r\033[K", stderr);
  return ll_lua_finish_run(L, h->run, st, row, &err);
}

/* run:decide() -> decision table, not recorded (a preview) */
static int l_decide(lua_State *L) {
  l_run *h = ll_lua_check_run(L, 1);
  ll_error err = {0};
  cJSON *row = NULL;
  ll_status st = ll_run_decide(h->run, 0, &row, &err);
  return ll_lua_finish_run(L, h->run, st, row, &err);
}

/* run:finish() -> decision row (recorded), exit code (an invariant-15 stop
 * gives its own: 64, or 2) */
static int l_finish(lua_State *L) {
  l_run *h = ll_lua_check_run(L, 1);
  ll_error err = {0};
  cJSON *row = NULL;
  /* a lease table's cells without a row get theirs first (lease_table.h) */
  ll_status st = ll_lease_table_close(h->run, &err);
  if (st == LL_OK)
    st = ll_run_decide(h->run, 1, &row, &err);
  if (st != LL_OK) {
    const char *detail =
        st == LL_E_REPLAY ? ll_run_replay_detail(h->run) : NULL;
    cJSON_Delete(row);
    return ll_lua_raise(L, st, detail ? detail : err.message);
  }
  /* the host's exit code for this decision, computed as the host does:
   * invariant 15's stop (the row's target_stop) gives 64 or 2 */
  int code = ll_lua_host_exit(ll_run_decision(h->run),
                              ll_model_stop_exit(ll_run_model(h->run)));
  if (h->host) /* a hard stop from here on says the decision stands */
    ll_hard_stop_decided(ll_decision_name(ll_run_decision(h->run)));
  ll_lua_finish(L, LL_OK, row, &err);
  lua_pushinteger(L, code);
  return 2;
}

/* run:rows() -> array of export rows so far; raises when the export
 * ledger cannot be read back as the run wrote it */
static int l_rows(lua_State *L) {
  l_run *h = ll_lua_check_run(L, 1);
  const cJSON *rows = NULL;
  ll_error err = {0};
  ll_status st = ll_ledger_read_back(ll_run_ledger(h->run), &rows, &err);
  if (st != LL_OK)
    return ll_lua_raise(L, st, err.message);
  ll_lua_push_json(L, rows);
  return 1;
}

/* run:state() -> {epoch, phase, holder, doubts, doubt_events, reconciled,
 * unreconciled, observed_state, observed_status, last_accepted,
 * endpoint_kind} */
static int l_state(lua_State *L) {
  l_run *h = ll_lua_check_run(L, 1);
  const ll_model *m = ll_run_model(h->run);
  lua_createtable(L, 0, 14);
  lua_pushinteger(L, ll_model_epoch(m));
  lua_setfield(L, -2, "epoch");
  lua_pushstring(L, ll_phase_name(ll_model_phase(m)));
  lua_setfield(L, -2, "phase");
  lua_pushstring(L, ll_model_holder(m));
  lua_setfield(L, -2, "holder");
  lua_pushinteger(L, ll_model_doubts(m));
  lua_setfield(L, -2, "doubts");
  lua_createtable(L, ll_model_doubts(m), 0);
  for (int i = 0; i < ll_model_doubts(m); i++) {
    lua_pushstring(L, ll_model_doubt_event(m, i));
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "doubt_events");
  lua_pushboolean(L, ll_model_reconciled(m));
  lua_setfield(L, -2, "reconciled");
  lua_pushinteger(L, ll_model_unreconciled(m));
  lua_setfield(L, -2, "unreconciled");
  lua_pushstring(L, ll_model_observed_state(m));
  lua_setfield(L, -2, "observed_state");
  lua_pushstring(L, ll_model_observed_status(m));
  lua_setfield(L, -2, "observed_status");
  lua_pushinteger(L, ll_model_last_accepted(m));
  lua_setfield(L, -2, "last_accepted");
  lua_pushstring(L, ll_model_endpoint_kind(m));
  lua_setfield(L, -2, "endpoint_kind");
  lua_pushstring(L, ll_ledger_dir(ll_run_ledger(h->run)));
  lua_setfield(L, -2, "evidence");
  lua_pushstring(L, ll_run_id(h->run));
  lua_setfield(L, -2, "run_id");
  return 1;
}

/* run:now_ms() / run:utc() / run:sleep(ms): the run's clock (virtual during
 * replay). */
static int l_now_ms(lua_State *L) {
  l_run *h = ll_lua_check_run(L, 1);
  lua_pushinteger(L, ll_clock_mono_ns(ll_run_clock(h->run)) / 1000000);
  return 1;
}

static int l_utc(lua_State *L) {
  l_run *h = ll_lua_check_run(L, 1);
  char buf[40];
  ll_clock_utc_str(ll_run_clock(h->run), buf, sizeof buf);
  lua_pushstring(L, buf);
  return 1;
}

static int l_sleep(lua_State *L) {
  l_run *h = ll_lua_check_run(L, 1);
  lua_Integer ms =
      ll_lua_arg_int(L, 2, "run:sleep", "the time in ms", 0, 600000);
  /* never past the deadline's grace: the script is stopped there */
  int64_t left = ll_lua_host_deadline_left_ms(L);
  if (left >= 0 && ms > left + 1)
    ms = left + 1;
  ll_clock_sleep_ms(ll_run_clock(h->run), ms);
  ll_lua_host_deadline_now(L);
  return 0;
}

static const luaL_Reg flow[] = {
    {"declare", l_declare}, {"lifecycle", l_lifecycle},
    {"note", l_note},       {"stop", l_stop},
    {"step", l_step},       {"reconcile", l_reconcile},
    {"probe", l_probe},     {"wait_for_broken", l_wait},
    {"decide", l_decide},   {"finish", l_finish},
    {"rows", l_rows},       {"state", l_state},
    {"now_ms", l_now_ms},   {"utc", l_utc},
    {"sleep", l_sleep},     {NULL, NULL}};

void ll_lua_run_flow_methods(lua_State *L) {
  luaL_setfuncs(L, flow, 0);
}
