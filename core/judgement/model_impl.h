/* Internal layout of ll_model, private to the judgement group. The files
 * and their direction (each calls only the ones after it):
 *   model.c        the fold: applies rows, calls all of the below
 *   decide.c       the decision over the fold's state (include/decide.h)
 *   baseline.c     expectations and classification of a response
 *   deviations.c   the reviewed known-deviations table (deviations.h)
 *   harm.c         invariant 15's facts, hooks the fold calls
 *   model_query.c  read-only queries on the state, shared by all of them
 * guard.c sits above them all and reads the model through its queries. */
#ifndef LL_MODEL_IMPL_H
#define LL_MODEL_IMPL_H

#include "hash.h"
#include "lease_contract.h"
#include "model.h"

#define LL_MAX_DECL 256
#define LL_MAX_REJECTED 64

/* The breaking-window probe of a lifecycle, as its content read-back goes. */
typedef enum {
  LL_WIN_NONE = 0,     /* no probe reproduced the window */
  LL_WIN_PROBED = 1,   /* the probe's write was accepted while breaking; its
                          read-back is the next content read */
  LL_WIN_READ_BACK = 2 /* that read happened (window_reproduced_any says
                          whether it showed the probe's revision) */
} ll_window;

/* The preflight read of invariant 15, run-wide. */
typedef enum {
  LL_PREFLIGHT_PENDING = 0, /* not recorded yet */
  LL_PREFLIGHT_FRESH = 1,   /* 404: a fresh target */
  LL_PREFLIGHT_STOPPED = 2  /* anything else: the run stopped on it */
} ll_preflight;

/* A reason whose text was lost to a failed allocation: still counted. */
#define LL_REASON_LOST "a reason whose text could not be kept (out of memory)"

typedef struct {
  long revision;
  char writer[LL_ALIAS_MAX];
  char sha[LL_SHA256_HEX];
} ll_decl;

/* harm.c, invariant 15 (do no harm to the target), per lifecycle. */
typedef struct {
  int written;            /* an accepted or doubtful Put in this lifecycle */
  char put_etag[128];     /* ETag of the last accepted Put, not read back */
  char cleanup_etag[128]; /* ETag of the last accepted write read back */
  int created;      /* the lifecycle's own create was accepted and read back (a
                       cleanup ETag was adopted), and the run has not deleted the
                       blob since: lease operations and the Delete need it */
  int etag_unknown; /* the last accepted Put named no ETag and no reconcile
                       has adopted one since */
  char pinned[128]; /* then, the ETag its read-back found on its declared
                       bytes: the one answers may name besides the run's */
} ll_harm_epoch;

/* The ETags the run's own writes were answered with, run-wide: a reconcile
 * adopts only one of these, or the ETag of bytes a doubtful Put of the run
 * declared (model_query.c). The oldest is dropped past the bound: an ETag
 * that old names a generation the run has long written over. */
#define LL_OWN_ETAGS 64

/* What one lifecycle (fixture_epoch) has shown so far. */
typedef struct {
  long epoch;
  int destructive;
  ll_phase phase;
  char holder[LL_ALIAS_MAX];     /* alias holding (or last holding) the lease */
  char old_holder[LL_ALIAS_MAX]; /* alias whose lease was broken */
  long break_period;             /* -1: no break accepted */
  /* the last break answered BREAK_ACCEPTED_NOT_COMPLETE: its answer's end
   * and x-ms-lease-time (the poller's hint, ll_model_break_hint) */
  int break_answered, break_has_hint;
  long break_hint_s; /* -1: the answer gave none */
  double break_end_ns;
  char obs_state[32], obs_status[32], obs_event[16];
  int probe_done;
  long last_accepted;    /* revision, LL_REV_NONE none */
  long unreconciled;     /* accepted Put awaiting read-back, LL_REV_NONE */
  long content_revision; /* last read-back revision: LL_REV_UNKNOWN, or
                            LL_REV_NONE for undeclared bytes */
  int content_read_after_last_write;
  int reconciled; /* the last reconcile settled (ll_model_reconcile_settles) */
  long rejected[LL_MAX_REJECTED];
  int nrejected;
  /* the ACCEPT chain, in the order the seed gives it */
  int saw_breaking;
  int saw_broken_after_breaking;
  int stale_rejected_after_broken;
  char new_holder[LL_ALIAS_MAX];
  int new_acquired; /* 201 captured, or doubtful acquire proven */
  int new_acquire_doubtful;
  int new_write_readback; /* new holder's Put accepted and read back */
  long new_write_rev;
  int old_rejected_under_new;
  /* the event of the first lease grant or accepted write to the old
   * holder after broken was observed: the handoff does not stand */
  char old_regained[16];
  int content_uncertain; /* a doubtful Put not settled by a later write */
  int cleanup_confirmed;
  ll_window window_reproduced;
  int window_inconclusive;
  char poll_hold[200]; /* a poll HOLD not superseded by a later BROKEN */
  long gap_write_rev;  /* unconditioned Put accepted while broken */
  int gap_readback;
  int saw_broken;
  int mutations; /* blob mutations answered in this lifecycle */
  int puts;      /* Put Blob requests answered in this lifecycle */
  ll_harm_epoch harm;
} ll_epoch_state;

/* harm.c, run-wide: the preflight and the stop it (or a refused create)
 * causes. */
typedef struct {
  ll_preflight preflight;
  ll_code stop_code;   /* LL_E_TARGET_EXISTS, LL_E_PREFLIGHT, or LL_OK */
  char stop_kind[24];  /* target_exists | preflight_failed | _unanswered */
  int stop_exit;       /* 64, or 2 when the service gave no usable answer */
  char stop_msg[800];  /* one line: what was found and what to do */
  long mutations_sent; /* mutation requests that may have left */
  char last_read_etag[128];
  char own_etags[LL_OWN_ETAGS][128];
  int n_own_etags; /* ever added; own_etags[i % LL_OWN_ETAGS] */
  /* The run's accepted Puts whose answer named no ETag (an outcome the
   * logs settled: the response itself was lost), by revision and writer:
   * a reconcile adopts the ETag of exactly their declared bytes, as it
   * does a doubtful Put's. The oldest is dropped past the bound. */
  long etagless_rev[LL_OWN_ETAGS];
  char etagless_actor[LL_OWN_ETAGS][64];
  int n_etagless; /* ever added; etagless_*[i % LL_OWN_ETAGS] */
  char account_host[128];
  char blob_path[300];
} ll_harm_run;

struct ll_model {
  int have_manifest;
  char run_id[128];
  char endpoint_kind[16]; /* azure | emulator | replay */
  char judged_as[16];     /* azure | emulator | documented (replay label) */
  char api_version[32];
  ll_decl decl[LL_MAX_DECL];
  int ndecl;
  ll_epoch_state ep;
  /* a pending read of this lifecycle, for the reconcile row */
  char last_props_event[16], last_props_state[32], last_props_status[32];
  int last_props_ok;
  char last_read_event[16], last_read_sha[LL_SHA256_HEX];
  long last_read_revision;
  int last_read_ok;
  /* outstanding doubts: event ids of mutations whose outcome is unknown */
  cJSON *actors;       /* manifest permitted_actors */
  cJSON *doubts;       /* array of {event_id, operation, revision, actor} */
  cJSON *open_intents; /* object event_id -> intent row copy */
  cJSON *events;    /* event_id -> {operation, class, state, status, actor} */
  cJSON **ev_slots; /* model_events.c: the index of events, by event_id */
  size_t ev_cap, ev_n;
  cJSON *hold_reasons;
  cJSON *reconcile_reasons;
  /* the reasons counted apart from their text (model.c add_hold) */
  int n_hold, n_reconcile, unexplained;
  int oom; /* an allocation failed while folding: nothing here is trusted */
  /* EVIDENCE_ERROR outcomes, counted apart from n_hold: the decision needs
   * both to be zero (decide.c nothing_against, tests/test_fail_closed.c) */
  int evidence_errors;
  int window_reproduced_any, window_inconclusive_any;
  long last_seq;
  /* a stop row of this session: no request follows it; a no-decision
   * stop's reason is a HOLD reason until recovery reopens the run */
  char stopped[200];
  char abandoned[512];
  /* Run-wide: the guard's scope is the blob, so a new lifecycle resets
   * none of these (DESIGN.md section 2, invariant 14). */
  int run_leased;        /* some lifecycle of this run left phase none */
  int blob_deleted;      /* the last blob mutation was an accepted delete */
  int absent_confirmed;  /* ...and a read since answered 404 BlobNotFound */
  int lease_released;    /* the last blob mutation was an accepted release */
  int release_confirmed; /* ...and a properties read since: available */
  ll_harm_run harm;
  /* the lease table (model_cell.c): its cell rows' verdicts */
  struct {
    int on; /* the flow row declared the lease table */
    int cells, conforms, conforms_one_source, deviates, not_reached;
    unsigned char seen[LL_LS_COUNT][LL_LO_COUNT]; /* a cell has its row */
  } table;
};

/* model.c: fills (fill) or checks the derived fields of row. */
ll_status ll_model_settle(cJSON *row, cJSON *derived, int fill,
                          ll_error *err) LL_WARN_UNUSED;

/* model_events.c: the outcome summary of event id, or NULL; _put
 * stores e (taken) as id's, replacing any, 0 when out of memory (e
 * freed). */
const cJSON *ll_model_event(const ll_model *m, const char *id);
int ll_model_event_put(ll_model *m, const char *id, cJSON *e);
/* An outcome row's summary, put under its event ID (model_events.c). */
void ll_model_remember_event(ll_model *m, const cJSON *row, const char *cls);
void ll_model_events_free(ll_model *m);

/* model_cell.c: the lease table's cell rows and its counts. */
ll_status ll_model_apply_cell(ll_model *m, cJSON *row, int fill,
                              ll_error *err) LL_WARN_UNUSED;
/* {conforms, conforms_one_source, deviates, not_reached, cells}, or NULL */
cJSON *ll_model_table_counts(const ll_model *m);

/* baseline.c */
typedef struct {
  long status;        /* documented status */
  const char *family; /* NULL: success expected; else error family name */
  /* the codes of the family that say why, in the modelled lease state
   * (NULL-terminated), and what they say; NULL: any code of the family */
  const char *const *codes;
  const char *codes_why;
  char text[160]; /* "201", "412 blob-operation lease family", ... */
} ll_expect;

void ll_baseline_expect(const ll_model *m, ll_op op, const char *lease_alias,
                        ll_expect *out);
int ll_baseline_in_family(const char *family, const char *code);
/* 1 when row's answer is the documented rejection of its request in the
 * modelled state: its status, and a code the state gives (e.codes). A
 * link of the ACCEPT chain that is a rejection needs this (model.c). */
int ll_baseline_rejection_proven(const ll_model *m, const cJSON *row);
/* Fills derived fields of an outcome row into derived (an object). */
void ll_baseline_classify(const ll_model *m, const cJSON *row, cJSON *derived);

/* harm.c: invariant 15. The hooks the fold calls. */
/* A HOLD or a RECONCILE reason (model_life.c): counted apart from its
 * text, so the decision tests the count and a text lost to a failed
 * allocation still stands against ACCEPT. */
void ll_model_add_hold(ll_model *m, const char *fmt, ...) LL_PRINTF(2, 3);
void ll_model_add_reconcile(ll_model *m, const char *fmt, ...) LL_PRINTF(2, 3);

void ll_harm_manifest(ll_model *m, const cJSON *row);
/* Before the outcome changes any other state. Returns 1 for the preflight
 * row, which it settles alone (it belongs to no lifecycle's chain). */
int ll_harm_outcome(ll_model *m, const cJSON *row, ll_op op, const char *cls);
/* A reconcile row's result (its content read is the last read), and the
 * ETag it read when it did not adopt it (its "etag_not_adopted"), or NULL. */
void ll_harm_reconcile(ll_model *m, const char *result,
                       const char *not_adopted);
/* The stop as decision reasons, first. */
void ll_harm_decide_reasons(const ll_model *m, cJSON *hold);

/* model_query.c: queries shared by the files above it. */
/* Whether a write of this run was answered with etag (harm.c keeps them). */
int ll_model_own_etag(const ll_model *m, const char *etag);
/* The declared revision whose payload has this sha256: LL_REV_NONE for
 * bytes no declaration explains, LL_REV_UNKNOWN for no sha256. */
long ll_model_revision_of(const ll_model *m, const char *sha);
int ll_model_was_rejected(const ll_model *m, long revision);

/* model_life.c: the state at the start of a lifecycle (epoch). */
void ll_model_epoch_reset(ll_epoch_state *ep, long epoch, int destructive);

#endif
