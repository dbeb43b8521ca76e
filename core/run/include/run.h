/* One evidence run: the ledger, the model, the guard and the transport tied
 * together so that no request can leave without its manifest, its guard
 * check and its durable intent row, and no response can be seen without
 * its outcome row. Lua only ever receives export (sanitized) rows. */
#ifndef LL_RUN_H
#define LL_RUN_H

#include <cjson/cJSON.h>

#include "auth.h"
#include "blob.h"
#include "clock.h"
#include "credentials.h"
#include "http.h"
#include "ledger.h"
#include "model.h"

typedef struct ll_run ll_run;

typedef struct {
  const char *evidence_dir;
  int recover;             /* reopen an existing directory, append only */
  const cJSON *manifest;   /* user manifest (see manifest.h), borrowed */
  const char *account_url; /* target */
  const char *container;
  const char *blob;
  const char *lua_version; /* for environment.json */
  ll_transport *transport; /* ownership moves to the run (even on failure) */
  ll_clock *clock;         /* ownership moves to the run */
  ll_auth *auth;           /* ownership moves to the run; NULL in replay */
  /* Actors' own credentials (credentials.h; NULL: the default auth), and
   * every credential's source name, for the identity record. Ownership
   * moves to the run, even on failure. */
  ll_auth *actor_auth[LL_ACTOR__COUNT];
  const char *auth_source;
  const char *actor_source[LL_ACTOR__COUNT];
  /* The flow's declared actors: the identity record has one entry each,
   * and one for the observer. */
  const char (*actors)[16];
  int nactors;
  size_t max_single_put; /* 0: LL_MAX_SINGLE_PUT */
  /* --deadline-s: once this many seconds of the run's clock have passed
   * since open, no request leaves (invariant 14); 0: no deadline */
  long deadline_s;
  const char *fixture_label;      /* replay: the fixture's endpoint kind */
  const char *api_version;        /* --api-version; NULL: the manifest's */
  int allow_unlisted_api_version; /* --allow-api-version (manifest.h) */
  const char *lock_dir;           /* NULL: the per-user default (core/lock.h) */
  const char *proxy;           /* scheme://host:port, no userinfo; NULL: none */
  const char *proxy_source;    /* "--proxy", "https_proxy", ...; NULL: none */
  const char *no_proxy;        /* CURLOPT_NOPROXY as set; NULL: none */
  const char *no_proxy_source; /* "--no-proxy", "no_proxy", ...; NULL */
} ll_run_config;

ll_run *ll_run_open(ll_run_config *cfg, ll_error *err);
void ll_run_close(ll_run *r);

typedef struct {
  ll_op op;
  const char *step;     /* label written into the row */
  const char *actor;    /* writer alias, "operator" or "observer" */
  const char *lease;    /* alias whose lease ID is sent, NULL: omitted */
  int bound;            /* the actor is a lease-bound writer */
  const char *proposed; /* acquire: alias whose ID is proposed */
  long revision;        /* Put Blob: declared revision, else LL_NO_REVISION */
  long lease_duration;  /* acquire: LL_LEASE_INFINITE or 15..60 */
  long break_period;    /* break: 0..60, or LL_BREAK_PERIOD_OMIT */
  int control;          /* unconditioned write expecting rejection */
  int preflight;        /* set by the run only: the preflight read */
  /* The lease table's (lease_table.c) only: the cell this request attempts
   * ("<state>/<op>", written into its outcome row), and for a change the
   * alias of the bound writer whose ID is proposed (NULL: a fresh ID). */
  const char *cell;
  const char *change_to;
} ll_req_spec;

/* Sends one request under every rule. Returns LL_OK with *out_row (export
 * row, caller deletes) for any response; LL_E_TRANSPORT with *out_row for a
 * request whose outcome is NOT_SENT or UNKNOWN; a refusal code (recorded as
 * a refusal row) when the guard refused; LL_E_DURABILITY when the intent
 * could not be made durable (nothing was sent; the run is then dead).
 * Invariant 15, whatever the script asks: the run's first mutation is
 * preceded by one unconditioned Get Blob Properties (the preflight: 404 is
 * a fresh target, anything else stops every mutation); a lifecycle's first
 * Put Blob carries If-None-Match: *, and a create refused because the blob
 * exists is followed by one properties read that records it; a Delete
 * carries If-Match with the ETag of the lifecycle's last accepted write that
 * was read back, and is refused when there is none. */
/* A request spec with nothing optional: no declared revision
 * (LL_NO_REVISION), an infinite lease should it acquire, no break period
 * header (LL_BREAK_PERIOD_OMIT), no lease sent. The one place these
 * defaults are written; a caller sets what its step needs. */
ll_req_spec ll_req_spec_for(ll_op op, const char *step, const char *actor);
ll_status ll_run_request(ll_run *r, const ll_req_spec *s, cJSON **out_row,
                         ll_error *err) LL_WARN_UNUSED;

/* Declares (revision, writer) before execution (invariant 6). */
ll_status ll_run_declare(ll_run *r, long revision, const char *writer,
                         cJSON **out_row, ll_error *err) LL_WARN_UNUSED;
/* Binds alias to a fresh client-generated lease ID (or the one recorded,
 * on recovery). */
ll_status ll_run_bind(ll_run *r, const char *alias,
                      ll_error *err) LL_WARN_UNUSED;
int ll_run_is_bound(const ll_run *r, const char *alias);
/* Whether alias may act in this run: a well-formed alias and, once the
 * flow declared its actors at open, one of them. Every request is checked
 * so (run_request.c), a bound writer's and an unbound one's alike. */
ll_status ll_run_actor_ok(const ll_run *r, const char *alias,
                          ll_error *err) LL_WARN_UNUSED;
/* Whether alias is a role, not a writer: the operator (its credential
 * breaks and creates the container) or the observer (every read). */
int ll_run_role(const char *alias);
/* Starts a fresh object lifecycle (fixture_epoch + 1). A destructive one
 * (the unlocked-gap control) is allowed only after an accepted main run on
 * the same blob whose cleanup was confirmed: after_dir names that run's
 * evidence, which must verify. */
ll_status ll_run_lifecycle(ll_run *r, int destructive, const char *reason,
                           const char *after_dir, ll_error *err) LL_WARN_UNUSED;
/* Appends a free-form note row (a step's label, an operator message).
 * A step only the host writes ("signing", sign.h) is LL_E_USAGE. */
ll_status ll_run_note(ll_run *r, const char *step, const char *text,
                      ll_error *err) LL_WARN_UNUSED;
/* The host's signing declaration (sign.h): a note of step "signing"
 * with text and the sign_key field holding fingerprint ("SHA256:...").
 * Only the host calls it, at open, before the script's first row. */
ll_status ll_run_note_signing(ll_run *r, const char *text,
                              const char *fingerprint,
                              ll_error *err) LL_WARN_UNUSED;

/* Properties then content read, then the reconcile row. */
ll_status ll_run_reconcile(ll_run *r, const char *step, cJSON **out_row,
                           ll_error *err) LL_WARN_UNUSED;

/* properties -> Put with the writer's lease -> properties, then the window
 * finding. The Put is skipped when the first read is not breaking/locked
 * (a late probe proves nothing about breaking). */
ll_status ll_run_probe(ll_run *r, const char *writer, long revision,
                       cJSON **out_finding, ll_error *err) LL_WARN_UNUSED;

typedef struct {
  long deadline_ms; /* from now; default hint + 60 s, or 120 s */
  long floor_ms;    /* minimum spacing, default 50 */
  long budget;      /* maximum properties requests, default 30 */
  long fixed_ms;    /* > 0: fixed cadence (for comparison benches) */
  void (*progress)(void *ctx, const char *state, long elapsed_ms, long hint_s,
                   long polls);
  void *progress_ctx;
} ll_poll_options;

/* Polls until broken/unlocked; records a poll finding (BROKEN or HOLD).
 * The hint comes from the fold (ll_model_break_hint), not the rows. With
 * last_read, *last_read is the export row of the last poll recorded (the
 * finding's last_event), or NULL; NULL whenever the call does not return
 * LL_OK. The caller deletes it; once the rows are kept (a reader asked) it
 * is a reference to a kept row, as ll_ledger_take_last says: read it or
 * copy it, never change it or keep it past the run. */
ll_status ll_run_wait_broken(ll_run *r, const ll_poll_options *o,
                             cJSON **out_finding, cJSON **last_read,
                             ll_error *err) LL_WARN_UNUSED;

/* Folds the decision; with record, appends the decision row. */
ll_status ll_run_decide(ll_run *r, int record, cJSON **out_row,
                        ll_error *err) LL_WARN_UNUSED;

/* The bound of what one session (a run, or an operator's --recover) adds
 * to its protected ledger: past it, no row that starts something (an
 * intent, a note, a refusal, a lifecycle, a declaration, a script's stop)
 * is written, so no script can fill the operator's disk; what completes a
 * start already admitted (its outcome, binding, finding, cell, a
 * reconcile, a recovery's rows, the host's own stop) has
 * LL_RUN_CLOSING_ROOM more, and the decision is always written
 * (ll_run_append_take). A main handoff writes about 100 kB; 20,000
 * back-to-back reads about 60 MB. */
#define LL_RUN_EVIDENCE_MAX ((size_t)128 << 20)
#define LL_RUN_CLOSING_ROOM ((size_t)8 << 20)

/* What a flow declares about itself at open, before anything is sent: a
 * label, the actors it will use, its break periods and its window
 * attempts. C checks each against the manifest and its range, records it
 * in a "flow" row, and later refuses a writer, a break period or a
 * lifecycle outside it. Zero counts mean "not declared". */
#define LL_PLAN_MAX_ACTORS 8
#define LL_PLAN_MAX_BREAKS 4
#define LL_PLAN_MAX_ATTEMPTS 10
typedef struct {
  char name[33]; /* [a-z0-9-], the default evidence directory's prefix */
  char actors[LL_PLAN_MAX_ACTORS][16];
  int nactors;
  long break_periods[LL_PLAN_MAX_BREAKS]; /* each 0..60 s */
  int nbreaks;
  long window_attempts; /* 1..LL_PLAN_MAX_ATTEMPTS, 0: not declared */
  int destructive;      /* the flow needs a destructive lifecycle */
  int recover;          /* the flow recovers an interrupted run */
  int lease_table;      /* the lease table: its lifecycles are its plan's */
} ll_flow_plan;

/* The plan's own ranges and, when permitted is given (the manifest's
 * permitted_actors array), that every actor is permitted. */
ll_status ll_flow_plan_check(const ll_flow_plan *p, const cJSON *permitted,
                             ll_error *err) LL_WARN_UNUSED;
/* Checks the plan against the recorded manifest and appends the flow row;
 * a destructive plan's authorising run (after_dir) is checked now, before
 * any request. Call once, right after ll_run_open. */
ll_status ll_run_plan(ll_run *r, const ll_flow_plan *p, const char *after_dir,
                      ll_error *err) LL_WARN_UNUSED;

/* A deliberate stop, as a ledger row with its reason: no request follows
 * it. kind is "stop-after", "left-for-operator", "out-of-reach" ... */
ll_status ll_run_stop(ll_run *r, const char *kind, const char *reason,
                      ll_error *err) LL_WARN_UNUSED;
/* The recorded decision (an ll_decision), or -1 while none is recorded. */
int ll_run_decision(const ll_run *r);
/* 1 when the operator's deadline (--deadline-s) passed more than grace_ms
 * ago on the run's clock; 0 without a deadline. */
int ll_run_past_deadline(ll_run *r, int64_t grace_ms);
/* The whole ms left until the deadline and grace_ms more; -1: no deadline. */
int64_t ll_run_deadline_left_ms(ll_run *r, int64_t grace_ms);
/* The script ended (why: normally, or by an error) without recording a
 * decision: a stop row of kind "no-decision", whose reason makes the fold
 * HOLD, then the decision row, then the transport's end. Nothing when a
 * decision is already recorded. */
ll_status ll_run_abandon(ll_run *r, const char *why,
                         ll_error *err) LL_WARN_UNUSED;

/* Labels the rows of the requests that follow with the script's step
 * (the seed's step names); NULL or "" clears it. */
void ll_run_set_step(ll_run *r, const char *label);

/* Ends the transport's part of the run (transport->finish): a replay
 * fails (LL_E_REPLAY) when exchanges were never requested, a recording
 * writes its fixture. Called by ll_run_decide(record) and at close. */
ll_status ll_run_end_transport(ll_run *r, ll_error *err) LL_WARN_UNUSED;
/* After LL_E_REPLAY: the full explanation (the diff of the expected
 * exchange against the request, or the exchanges never requested); NULL
 * otherwise. Never holds a real lease ID. */
const char *ll_run_replay_detail(const ll_run *r);

const ll_model *ll_run_model(const ll_run *r);
ll_ledger *ll_run_ledger(ll_run *r);
ll_clock *ll_run_clock(ll_run *r);
const char *ll_run_id(const ll_run *r);

#endif
