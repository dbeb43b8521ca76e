/* The lease-table plan, computed from the documented contract alone: which
 * lifecycles, which cells each attempts in which order, which requests they
 * send, and the waits they make necessary. A rejected (state-preserving)
 * attempt leaves the state as it was, so every preserving cell of a state
 * shares one lifecycle; each state-changing cell ends a lifecycle of its
 * own. The text printed before the first request and by --plan is made
 * here, from the same rows the engine runs. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease_table_impl.h"

/* Expired (A) is acquired with this finite duration, so it must be one
 * Lease Blob accepts. */
_Static_assert(LL_LT_EXPIRY_S >= LL_LEASE_DURATION_MIN &&
                   LL_LT_EXPIRY_S <= LL_LEASE_DURATION_MAX,
               "LL_LT_EXPIRY_S is not a lease duration Lease Blob accepts");

static const char *const state_keys[LL_LS_COUNT] = {
    "available", "leased", "breaking", "broken", "expired"};

const char *ll_lease_state_key(ll_lease_state s) {
  return (unsigned)s < LL_LS_COUNT ? state_keys[s] : "?";
}

void ll_lease_cell_label(ll_lease_state s, ll_lease_op op, char *buf,
                         size_t cap) {
  snprintf(buf, cap, "%s/%s", ll_lease_state_name(s), ll_lease_op_name(op));
}

int ll_lease_state_from_name(const char *name, ll_lease_state *out) {
  for (int s = 0; name && s < LL_LS_COUNT; s++)
    if (strcmp(name, ll_lease_state_name((ll_lease_state)s)) == 0) {
      *out = (ll_lease_state)s;
      return 0;
    }
  return -1;
}

int ll_lease_op_from_name(const char *name, ll_lease_op *out) {
  for (int o = 0; name && o < LL_LO_COUNT; o++)
    if (strcmp(name, ll_lease_op_name((ll_lease_op)o)) == 0) {
      *out = (ll_lease_op)o;
      return 0;
    }
  return -1;
}

void ll_lt_step(char *buf, size_t cap, int life, int cont, const char *fmt,
                ...) {
  int n = cont ? snprintf(buf, cap, "L%d.%d ", life, cont)
               : snprintf(buf, cap, "L%d ", life);
  if (n < 0 || (size_t)n >= cap)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, cap - (size_t)n, fmt, ap);
  va_end(ap);
}

/* The cell leaves its state (name or holder) by any documented outcome.
 * The duration expiring changes only a running lease or break. */
static int cell_changes(const ll_lease_cell *c) {
  if (c->op == LL_LO_EXPIRE)
    return c->state == LL_LS_LEASED || c->state == LL_LS_BREAKING;
  const char *holder = c->state == LL_LS_AVAILABLE ? NULL : "A";
  for (int i = 0; i < c->n_outcomes; i++) {
    const ll_lease_outcome *o = &c->outcome[i];
    if (!o->state_after ||
        strcmp(o->state_after, ll_lease_state_key(c->state)) != 0)
      return 1;
    if (!o->family && o->status && !ll_strsame(o->holder, holder))
      return 1;
  }
  return 0;
}

static int documented_success(const ll_lease_cell *c) {
  return c->outcome[0].status >= 200 && c->outcome[0].status < 300;
}

/* An accepted write without a lease: only in a destructive lifecycle. */
static int needs_destructive(const ll_lease_cell *c) {
  return c->op == LL_LO_WRITE_NONE && documented_success(c);
}

int ll_lt_cell_writes(const ll_lt_cell *c) {
  return c->op == LL_LO_WRITE_A || c->op == LL_LO_WRITE_B ||
         c->op == LL_LO_WRITE_NONE;
}

/* Rejections first, then the preserving successes, a break last of all
 * (in Breaking (A) it may shorten the period the other cells need). */
static int order_key(const ll_lease_cell *c) {
  int brk = c->op == LL_LO_BREAK_0 || c->op == LL_LO_BREAK_N;
  return (documented_success(c) ? 100 : 0) + (brk ? 50 : 0) + (int)c->op;
}

static void sort_cells(const ll_lease_cell **v, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && order_key(v[j - 1]) > order_key(v[j]); j--) {
      const ll_lease_cell *t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
}

static void add_cell(ll_lease_plan *p, const ll_lease_cell *c,
                     const char *skip) {
  ll_lt_cell *x = &p->cells[p->ncells++];
  x->state = c->state;
  x->op = c->op;
  x->changes = cell_changes(c);
  x->skip = skip;
  x->revision = LL_NO_REVISION;
  x->writer = NULL;
  if (!skip && ll_lt_cell_writes(x)) {
    x->revision = p->next_rev++;
    x->writer = c->op == LL_LO_WRITE_A ? "A" : "B";
  }
  p->life[p->nlife - 1].ncells++;
  if (!skip && needs_destructive(c))
    p->life[p->nlife - 1].destructive = 1;
}

static void open_life(ll_lease_plan *p, ll_lease_state s, int expires) {
  ll_lt_life *l = &p->life[p->nlife++];
  memset(l, 0, sizeof *l);
  l->state = s;
  l->first = p->ncells;
  l->create_rev = p->next_rev++;
  l->establish_break = -1;
  l->duration = 0;
  if (s != LL_LS_AVAILABLE)
    l->duration =
        s == LL_LS_EXPIRED || expires ? LL_LT_EXPIRY_S : LL_LEASE_INFINITE;
  if (s == LL_LS_BREAKING)
    l->establish_break = p->break_period;
  if (s == LL_LS_BROKEN)
    l->establish_break = 0;
  if (s == LL_LS_EXPIRED)
    l->wait_s += LL_LT_EXPIRY_S;
  if (s == LL_LS_LEASED && expires)
    l->wait_s += LL_LT_EXPIRY_S;
  if (s == LL_LS_BREAKING && expires)
    l->wait_s += p->break_period;
}

#define SKIP_DESTRUCTIVE                                                       \
  "the cell's documented outcome is an accepted write without a lease: it "    \
  "runs only in a destructive lifecycle, which the operator authorises with "  \
  "--destructive --after DIR"

static ll_status plan_state(ll_lease_plan *p, ll_lease_state s, ll_error *err) {
  const ll_lease_cell *keep[LL_LO_COUNT], *change[LL_LO_COUNT];
  const ll_lease_cell *skipped[LL_LO_COUNT];
  int nkeep = 0, nchange = 0, nskip = 0;
  for (int o = 0; o < LL_LO_COUNT; o++) {
    const ll_lease_cell *c = ll_lease_contract_cell(s, (ll_lease_op)o);
    if (!c)
      return ll_fail(err, LL_E_INTERNAL, "the contract has no cell %s/%s",
                     ll_lease_state_name(s), ll_lease_op_name((ll_lease_op)o));
    if (needs_destructive(c) && !p->destructive)
      skipped[nskip++] = c;
    else if (cell_changes(c) && c->op != LL_LO_EXPIRE)
      change[nchange++] = c;
    else if (!cell_changes(c))
      keep[nkeep++] = c;
  }
  /* the duration expiring goes last: its lifecycle waits */
  const ll_lease_cell *exp = ll_lease_contract_cell(s, LL_LO_EXPIRE);
  if (cell_changes(exp))
    change[nchange++] = exp;
  sort_cells(keep, nkeep);
  int nlife = nchange > 0 ? nchange : 1;
  if (p->nlife + nlife > LL_LT_MAX_LIFE)
    return ll_fail(err, LL_E_INTERNAL, "the plan needs too many lifecycles");
  for (int i = 0; i < nlife; i++) {
    const ll_lease_cell *last = i < nchange ? change[i] : NULL;
    open_life(p, s, last && last->op == LL_LO_EXPIRE);
    if (i == 0) {
      for (int k = 0; k < nskip; k++)
        add_cell(p, skipped[k], SKIP_DESTRUCTIVE);
      for (int k = 0; k < nkeep; k++)
        add_cell(p, keep[k], NULL);
    }
    if (last)
      add_cell(p, last, NULL);
    p->wait_s += p->life[p->nlife - 1].wait_s;
  }
  return LL_OK;
}

ll_status ll_lease_plan_build(long break_period, int destructive,
                              ll_lease_plan *p, ll_error *err) {
  memset(p, 0, sizeof *p);
  if (break_period < 1 || break_period > LL_BREAK_PERIOD_MAX)
    return ll_fail(err, LL_E_USAGE,
                   "break period %ld s is outside 1..%d: Breaking (A) needs a "
                   "break period; pass --break-period 1..%d",
                   break_period, LL_BREAK_PERIOD_MAX, LL_BREAK_PERIOD_MAX);
  p->break_period = break_period;
  p->destructive = destructive;
  p->next_rev = LL_LT_FIRST_REV;
  for (int s = 0; s < LL_LS_COUNT; s++) {
    ll_status st = plan_state(p, (ll_lease_state)s, err);
    if (st != LL_OK)
      return st;
  }
  return LL_OK;
}

/* ---- the requests a cell sends ---------------------------------------- */

void ll_lt_cell_request(const ll_lease_plan *p, const ll_lt_cell *c,
                        ll_lt_req *q) {
  memset(q, 0, sizeof *q);
  q->sends = c->op != LL_LO_EXPIRE && !c->skip;
  q->duration = LL_LEASE_INFINITE;
  q->break_period = LL_BREAK_PERIOD_OMIT;
  q->revision = LL_NO_REVISION;
  switch (c->op) {
  case LL_LO_WRITE_A:
  case LL_LO_WRITE_B:
    q->op = LL_OP_PUT_BLOB;
    q->actor = q->lease = c->op == LL_LO_WRITE_A ? "A" : "B";
    q->bound = 1;
    q->revision = c->revision;
    break;
  case LL_LO_WRITE_NONE:
    q->op = LL_OP_PUT_BLOB;
    q->actor = "B";
    q->revision = c->revision;
    break;
  case LL_LO_READ_A:
  case LL_LO_READ_B:
    q->op = LL_OP_GET_BLOB;
    q->actor = q->lease = c->op == LL_LO_READ_A ? "A" : "B";
    break;
  case LL_LO_READ_NONE:
    q->op = LL_OP_GET_BLOB;
    q->actor = "observer";
    break;
  case LL_LO_ACQUIRE_NONE:
    q->op = LL_OP_LEASE_ACQUIRE;
    q->actor = "operator";
    break;
  case LL_LO_ACQUIRE_A:
  case LL_LO_ACQUIRE_B:
    q->op = LL_OP_LEASE_ACQUIRE;
    q->actor = q->proposed = c->op == LL_LO_ACQUIRE_A ? "A" : "B";
    q->bound = 1;
    break;
  case LL_LO_BREAK_0:
  case LL_LO_BREAK_N:
    q->op = LL_OP_LEASE_BREAK;
    q->actor = "operator";
    q->break_period = c->op == LL_LO_BREAK_0 ? 0 : p->break_period;
    break;
  case LL_LO_CHANGE_AB:
    q->op = LL_OP_LEASE_CHANGE;
    q->actor = q->lease = "A";
    q->change_to = "B";
    q->bound = 1;
    break;
  case LL_LO_CHANGE_BA:
  case LL_LO_CHANGE_BC:
    q->op = LL_OP_LEASE_CHANGE;
    q->actor = q->lease = "B";
    q->change_to = c->op == LL_LO_CHANGE_BA ? "A" : "C";
    q->bound = 1;
    break;
  case LL_LO_RENEW_A:
  case LL_LO_RENEW_B:
  case LL_LO_RELEASE_A:
  case LL_LO_RELEASE_B:
    q->op = c->op == LL_LO_RENEW_A || c->op == LL_LO_RENEW_B
                ? LL_OP_LEASE_RENEW
                : LL_OP_LEASE_RELEASE;
    q->actor = q->lease =
        c->op == LL_LO_RENEW_A || c->op == LL_LO_RELEASE_A ? "A" : "B";
    q->bound = 1;
    break;
  case LL_LO_EXPIRE:
  case LL_LO_COUNT:
    q->sends = 0;
    break;
  }
}

const char *ll_lt_life_end_state(const ll_lease_plan *p, const ll_lt_life *l) {
  if (l->ncells == 0)
    return ll_lease_state_key(l->state);
  const ll_lt_cell *c = &p->cells[l->first + l->ncells - 1];
  if (!c->changes)
    return ll_lease_state_key(l->state);
  const ll_lease_cell *d = ll_lease_contract_cell(c->state, c->op);
  return d && d->outcome[0].state_after ? d->outcome[0].state_after : "?";
}

int ll_lt_cleanup_breaks(const char *state) {
  return state &&
         (strcmp(state, "leased") == 0 || strcmp(state, "breaking") == 0);
}

/* ---- the text --------------------------------------------------------- */

typedef ll_buf buf;

/* A line of the plan (each well under 512 bytes), appended to b; an
 * allocation that failed makes the whole text NULL (ll_buf's oom). */
static void put(buf *b, const char *fmt, ...) LL_PRINTF(2, 3);
static void put(buf *b, const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0)
    b->oom = 1;
  else
    ll_buf_put(b, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* One request line: the intent's step label, its operation and actor. */
static void req_line(buf *b, const char *kind, const char *step, ll_op op,
                     const char *actor, const char *lease) {
  put(b, "  %-7s %s | %s by %s%s%s\n", kind, step, ll_op_name(op), actor,
      lease ? ", lease " : "", lease ? lease : "");
}

static void cell_lines(buf *b, const ll_lease_plan *p, int li,
                       const ll_lt_cell *c) {
  char label[80], step[LL_LT_STEP_MAX];
  ll_lt_req q;
  ll_lease_cell_label(c->state, c->op, label, sizeof label);
  ll_lt_cell_request(p, c, &q);
  if (c->skip) {
    put(b, "  skip    cell %s: NOT_REACHED (needs --destructive --after)\n",
        label);
    return;
  }
  ll_lt_step(step, sizeof step, li, 0, "cell %s", label);
  if (q.sends) {
    req_line(b, "request", step, q.op, q.actor,
             q.lease ? q.lease : q.proposed); /* the alias the intent names */
  } else if (c->state == LL_LS_LEASED) {
    ll_lt_step(step, sizeof step, li, 0, "cell %s: wait", label);
    req_line(b, "poll", step, LL_OP_GET_PROPERTIES, "observer", NULL);
    return; /* the last poll is the observation */
  } else if (c->state == LL_LS_BREAKING) {
    ll_lt_step(step, sizeof step, li, 0, "cell %s: wait", label);
    req_line(b, "poll", step, LL_OP_GET_PROPERTIES, "observer", NULL);
    return;
  }
  ll_lt_step(step, sizeof step, li, 0, "observe %s: properties", label);
  req_line(b, "request", step, LL_OP_GET_PROPERTIES, "observer", NULL);
  if (ll_lt_cell_writes(c)) {
    ll_lt_step(step, sizeof step, li, 0, "observe %s: content", label);
    req_line(b, "request", step, LL_OP_GET_BLOB, "observer", NULL);
  }
}

static void life_lines(buf *b, const ll_lease_plan *p, int i) {
  const ll_lt_life *l = &p->life[i];
  int li = i + 1;
  char step[LL_LT_STEP_MAX], create[LL_LT_STEP_MAX];
  put(b, "lifecycle %d: %s%s, %d cells, wait %ld s\n", li,
      ll_lease_state_name(l->state), l->destructive ? " (destructive)" : "",
      l->ncells, l->wait_s);
  ll_lt_step(create, sizeof create, li, 0, "create rev %ld", l->create_rev);
  if (i == 0) {
    snprintf(step, sizeof step, "preflight: properties before %.60s", create);
    req_line(b, "request", step, LL_OP_GET_PROPERTIES, "observer", NULL);
  }
  req_line(b, "request", create, LL_OP_PUT_BLOB, "A", NULL);
  ll_lt_step(step, sizeof step, li, 0, "read back rev %ld", l->create_rev);
  req_line(b, "request", step, LL_OP_GET_BLOB, "observer", NULL);
  if (l->duration) {
    if (l->duration < 0)
      ll_lt_step(step, sizeof step, li, 0, "acquire A (infinite)");
    else
      ll_lt_step(step, sizeof step, li, 0, "acquire A (%ld s)", l->duration);
    req_line(b, "request", step, LL_OP_LEASE_ACQUIRE, "A", "A");
  }
  if (l->establish_break >= 0) {
    ll_lt_step(step, sizeof step, li, 0, "break, period %ld",
               l->establish_break);
    req_line(b, "request", step, LL_OP_LEASE_BREAK, "operator", NULL);
  }
  if (l->state == LL_LS_EXPIRED) {
    ll_lt_step(step, sizeof step, li, 0, "wait for expired");
    req_line(b, "poll", step, LL_OP_GET_PROPERTIES, "observer", NULL);
  } else {
    ll_lt_step(step, sizeof step, li, 0, "establish: properties");
    req_line(b, "request", step, LL_OP_GET_PROPERTIES, "observer", NULL);
  }
  for (int k = 0; k < l->ncells; k++)
    cell_lines(b, p, li, &p->cells[l->first + k]);
  const char *end = ll_lt_life_end_state(p, l);
  if (ll_lt_cleanup_breaks(end)) {
    ll_lt_step(step, sizeof step, li, 0, "cleanup: break, period 0");
    req_line(b, "request", step, LL_OP_LEASE_BREAK, "operator", NULL);
    ll_lt_step(step, sizeof step, li, 0, "cleanup: properties");
    req_line(b, "request", step, LL_OP_GET_PROPERTIES, "observer", NULL);
  }
  ll_lt_step(step, sizeof step, li, 0, "cleanup: delete");
  req_line(b, "request", step, LL_OP_DELETE_BLOB, "operator", NULL);
  ll_lt_step(step, sizeof step, li, 0, "cleanup: confirm absent");
  req_line(b, "request", step, LL_OP_GET_PROPERTIES, "observer", NULL);
}

char *ll_lease_plan_text(const ll_lease_plan *p) {
  buf b = {0};
  int skipped = 0;
  for (int i = 0; i < p->ncells; i++)
    skipped += p->cells[i].skip != NULL;
  put(&b,
      "lease-table plan: %d lifecycles, %d cells (%d planned NOT_REACHED), "
      "break period %ld s, expiry lease %d s, expected wait %ld s\n",
      p->nlife, p->ncells, skipped, p->break_period, LL_LT_EXPIRY_S, p->wait_s);
  put(&b, "(each request line: its step label | operation and actor; a poll "
          "line is one or more reads; the cleanup is planned for the "
          "documented end state; a state-preserving cell that leaves its "
          "state, a deviation, moves its lifecycle's later cells to a fresh "
          "lifecycle of the same state, labelled L<n>.<k>)\n");
  for (int i = 0; i < p->nlife; i++)
    life_lines(&b, p, i);
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}
