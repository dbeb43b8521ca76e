/* The documented lease contract (core/judgement/lease_contract*.c): every
 * state x attempt pair has exactly one cell with a source, the 409/412
 * disagreement keeps both pages, the judge gives each verdict (and a wrong
 * answer DEVIATES), and docs/LEASE_CONTRACT.md equals the rendered table.
 * `test_lease_contract --write` regenerates that doc from the table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease_contract.h"
#include "testlib.h"

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *s = NULL;
  size_t len = 0;
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    char *p = realloc(s, len + n + 1);
    if (!p) {
      free(s);
      fclose(f);
      return NULL;
    }
    s = p;
    memcpy(s + len, chunk, n);
    len += n;
  }
  fclose(f);
  if (s)
    s[len] = '\0';
  return s;
}

static void doc_path(char *out, size_t n) {
  const char *src = getenv("LL_SOURCE_DIR");
  snprintf(out, n, "%s/docs/LEASE_CONTRACT.md", src ? src : ".");
}

static void test_every_pair_once(void) {
  int seen[LL_LS_COUNT][LL_LO_COUNT] = {{0}};
  CHECK_INT(ll_lease_contract_count(), LL_LS_COUNT * LL_LO_COUNT);
  for (size_t i = 0; i < ll_lease_contract_count(); i++) {
    const ll_lease_cell *c = ll_lease_contract_at(i);
    CHECK(c != NULL);
    if (!c || (unsigned)c->state >= LL_LS_COUNT ||
        (unsigned)c->op >= LL_LO_COUNT) {
      CHECK(0);
      continue;
    }
    seen[c->state][c->op]++;
  }
  for (int s = 0; s < LL_LS_COUNT; s++)
    for (int o = 0; o < LL_LO_COUNT; o++) {
      if (seen[s][o] != 1)
        fprintf(stderr, "cell %s / %s appears %d times\n",
                ll_lease_state_name(s), ll_lease_op_name(o), seen[s][o]);
      CHECK_INT(seen[s][o], 1);
      const ll_lease_cell *c = ll_lease_contract_cell(s, o);
      CHECK(c && c->state == (ll_lease_state)s && c->op == (ll_lease_op)o);
    }
  CHECK(ll_lease_contract_at(ll_lease_contract_count()) == NULL);
  CHECK(ll_lease_contract_cell(LL_LS_COUNT, LL_LO_WRITE_A) == NULL);
}

/* Every outcome names a known page, a section and its wording; statuses are
 * the documented ones, failures carry a family and successes none. */
static void test_every_cell_sourced(void) {
  for (size_t i = 0; i < ll_lease_contract_count(); i++) {
    const ll_lease_cell *c = ll_lease_contract_at(i);
    CHECK(c->n_outcomes == 1 || c->n_outcomes == 2);
    for (int k = 0; k < c->n_outcomes; k++) {
      const ll_lease_outcome *o = &c->outcome[k];
      const ll_lease_source *src = ll_lease_contract_source(o->source);
      CHECK(src && src->title && strncmp(src->url, "https://", 8) == 0);
      CHECK(o->section && o->section[0]);
      CHECK(o->source_text && o->source_text[0]);
      CHECK(o->state_after && o->state_after[0]);
      long st = o->status;
      if (o->family)
        CHECK(st == 409 || st == 412);
      else
        CHECK(st == 0 || st == 200 || st == 201 || st == 202);
      CHECK((st == 0) == (c->op == LL_LO_EXPIRE));
    }
  }
  CHECK(ll_lease_contract_source("no-such-page") == NULL);
  /* every listed source is cited by some outcome */
  const char *ids[] = {"lease-blob", "put-blob"};
  for (size_t j = 0; j < sizeof ids / sizeof ids[0]; j++) {
    int used = 0;
    for (size_t i = 0; i < ll_lease_contract_count(); i++) {
      const ll_lease_cell *c = ll_lease_contract_at(i);
      for (int k = 0; k < c->n_outcomes; k++)
        used += strcmp(c->outcome[k].source, ids[j]) == 0;
    }
    CHECK(ll_lease_contract_source(ids[j]) && used > 0);
  }
}

/* Review: every outcome was read in page text; an unchecked row added later
 * must say so here first. */
static void test_every_outcome_checked(void) {
  int unchecked = 0;
  for (size_t i = 0; i < ll_lease_contract_count(); i++) {
    const ll_lease_cell *c = ll_lease_contract_at(i);
    for (int k = 0; k < c->n_outcomes; k++)
      unchecked += c->outcome[k].check != LL_CHECK_PAGE;
  }
  CHECK_INT(unchecked, 0);
}

/* Cells pinned to the page's wording, the ones easiest to misremember. */
static void test_pinned_cells(void) {
  const ll_lease_cell *c =
      ll_lease_contract_cell(LL_LS_BROKEN, LL_LO_WRITE_NONE);
  CHECK_INT(c->outcome[0].status, 201);
  CHECK_STR(c->outcome[0].state_after, "available");
  CHECK_STR(c->outcome[0].source_text, "Available, write succeeds");
  c = ll_lease_contract_cell(LL_LS_EXPIRED, LL_LO_WRITE_NONE);
  CHECK_STR(c->outcome[0].state_after, "available");
  c = ll_lease_contract_cell(LL_LS_LEASED, LL_LO_ACQUIRE_A);
  CHECK_STR(c->outcome[0].source_text, "Leased (A), new duration");
  c = ll_lease_contract_cell(LL_LS_BREAKING, LL_LO_EXPIRE);
  CHECK_STR(c->outcome[0].state_after, "broken");
  c = ll_lease_contract_cell(LL_LS_BROKEN, LL_LO_RELEASE_A);
  CHECK_INT(c->outcome[0].status, 200);
  CHECK_STR(c->outcome[0].state_after, "available");
}

static void test_disagreements(void) {
  int two = 0;
  for (size_t i = 0; i < ll_lease_contract_count(); i++)
    two += ll_lease_contract_at(i)->n_outcomes == 2;
  CHECK_INT(two, 1); /* write B against Leased (A) */
  const ll_lease_cell *w = ll_lease_contract_cell(LL_LS_LEASED, LL_LO_WRITE_B);
  CHECK_INT(w->n_outcomes, 2);
  CHECK_INT(w->outcome[0].status, 409);
  CHECK_STR(w->outcome[0].source, "lease-blob");
  CHECK_INT(w->outcome[1].status, 412);
  CHECK_STR(w->outcome[1].source, "put-blob");
  /* the same table's Breaking (A) row says 412 */
  const ll_lease_cell *bw =
      ll_lease_contract_cell(LL_LS_BREAKING, LL_LO_WRITE_B);
  CHECK_INT(bw->n_outcomes, 1);
  CHECK_INT(bw->outcome[0].status, 412);
  /* the use table's read with B says 409 in both locked states */
  const ll_lease_cell *r = ll_lease_contract_cell(LL_LS_LEASED, LL_LO_READ_B);
  CHECK_INT(r->n_outcomes, 1);
  CHECK_INT(r->outcome[0].status, 409);
  r = ll_lease_contract_cell(LL_LS_BREAKING, LL_LO_READ_B);
  CHECK_INT(r->outcome[0].status, 409);
}

static void test_conditions(void) {
  const ll_lease_cell *c = ll_lease_contract_cell(LL_LS_EXPIRED, LL_LO_RENEW_A);
  CHECK(c->condition[0] && strstr(c->condition[0], "has not been modified"));
  c = ll_lease_contract_cell(LL_LS_LEASED, LL_LO_BREAK_N);
  CHECK(c->condition[0] && strstr(c->condition[0], "shorter than the time"));
  CHECK(c->condition[1] && strstr(c->condition[1], "infinite lease"));
  c = ll_lease_contract_cell(LL_LS_BREAKING, LL_LO_BREAK_N);
  CHECK(c->condition[0] && strstr(c->condition[0], "shorter duration"));
}

static void test_judge(void) {
  const ll_lease_cell *acq =
      ll_lease_contract_cell(LL_LS_BROKEN, LL_LO_ACQUIRE_B);
  ll_lease_observation ok = {201, NULL, "leased"};
  CHECK_INT(ll_lease_contract_judge(acq, &ok), LL_VERDICT_CONFORMS);
  ll_lease_observation wrong_status = {200, NULL, "leased"};
  CHECK_INT(ll_lease_contract_judge(acq, &wrong_status), LL_VERDICT_DEVIATES);
  ll_lease_observation wrong_state = {201, NULL, "broken"};
  CHECK_INT(ll_lease_contract_judge(acq, &wrong_state), LL_VERDICT_DEVIATES);
  ll_lease_observation unread = {201, NULL, NULL};
  CHECK_INT(ll_lease_contract_judge(acq, &unread), LL_VERDICT_DEVIATES);

  const ll_lease_cell *rn =
      ll_lease_contract_cell(LL_LS_BREAKING, LL_LO_RENEW_A);
  ll_lease_observation rej = {409, "LeaseIsBrokenAndCannotBeRenewed",
                              "breaking"};
  CHECK_INT(ll_lease_contract_judge(rn, &rej), LL_VERDICT_CONFORMS);
  ll_lease_observation off_family = {409, "LeaseIdMissing", "breaking"};
  CHECK_INT(ll_lease_contract_judge(rn, &off_family), LL_VERDICT_DEVIATES);
  ll_lease_observation no_code = {409, NULL, "breaking"};
  CHECK_INT(ll_lease_contract_judge(rn, &no_code), LL_VERDICT_DEVIATES);

  const ll_lease_cell *w = ll_lease_contract_cell(LL_LS_LEASED, LL_LO_WRITE_B);
  ll_lease_observation put412 = {412, "LeaseIdMismatchWithBlobOperation",
                                 "leased"};
  CHECK_INT(ll_lease_contract_judge(w, &put412),
            LL_VERDICT_CONFORMS_ONE_SOURCE);
  ll_lease_observation put409 = {409, "LeaseIdMismatchWithBlobOperation",
                                 "leased"};
  CHECK_INT(ll_lease_contract_judge(w, &put409),
            LL_VERDICT_CONFORMS_ONE_SOURCE);
  ll_lease_observation put201 = {201, NULL, "leased"};
  CHECK_INT(ll_lease_contract_judge(w, &put201), LL_VERDICT_DEVIATES);

  /* a code in the family whose own words contradict the cell
   * (helper-32), beside the code that fits */
  static const struct {
    ll_lease_state s;
    ll_lease_op op;
    long status;
    const char *fits, *contradicts, *after;
  } words[] = {
      {LL_LS_LEASED, LL_LO_ACQUIRE_B, 409, "LeaseAlreadyPresent",
       "LeaseIsBrokenAndCannotBeRenewed", "leased"},
      {LL_LS_LEASED, LL_LO_ACQUIRE_NONE, 409, "LeaseAlreadyPresent",
       "LeaseNotPresentWithLeaseOperation", "leased"},
      {LL_LS_AVAILABLE, LL_LO_WRITE_A, 412, "LeaseNotPresentWithBlobOperation",
       "LeaseIdMissing", "available"},
      {LL_LS_LEASED, LL_LO_WRITE_NONE, 412, "LeaseIdMissing",
       "LeaseIdMismatchWithBlobOperation", "leased"},
      {LL_LS_AVAILABLE, LL_LO_CHANGE_AB, 409,
       "LeaseNotPresentWithLeaseOperation", "LeaseIsBreakingAndCannotBeChanged",
       "available"},
  };
  for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
    const ll_lease_cell *c = ll_lease_contract_cell(words[i].s, words[i].op);
    ll_lease_observation fits = {words[i].status, words[i].fits,
                                 words[i].after};
    ll_lease_observation against = {words[i].status, words[i].contradicts,
                                    words[i].after};
    CHECK_INT(ll_lease_contract_judge(c, &fits), LL_VERDICT_CONFORMS);
    CHECK_INT(ll_lease_contract_judge(c, &against), LL_VERDICT_DEVIATES);
  }

  const ll_lease_cell *exp = ll_lease_contract_cell(LL_LS_LEASED, LL_LO_EXPIRE);
  ll_lease_observation expired = {0, NULL, "expired"};
  CHECK_INT(ll_lease_contract_judge(exp, &expired), LL_VERDICT_CONFORMS);
  CHECK_INT(ll_lease_contract_judge(NULL, &expired), LL_VERDICT_DEVIATES);
  CHECK_INT(ll_lease_contract_judge(exp, NULL), LL_VERDICT_DEVIATES);
  CHECK_STR(ll_lease_verdict_name(LL_VERDICT_CONFORMS_ONE_SOURCE),
            "CONFORMS_ONE_SOURCE");
}

static int write_doc(void) {
  char path[4096];
  doc_path(path, sizeof path);
  char *md = ll_lease_contract_markdown();
  FILE *f = md ? fopen(path, "wb") : NULL;
  int ok = f && fputs(md, f) >= 0;
  if (f && fclose(f) != 0)
    ok = 0;
  free(md);
  fprintf(stderr, "%s %s\n", ok ? "wrote" : "could not write", path);
  return ok ? 0 : 1;
}

static void test_doc_matches(void) {
  char path[4096];
  doc_path(path, sizeof path);
  char *md = ll_lease_contract_markdown();
  char *doc = slurp(path);
  CHECK(md != NULL);
  CHECK(doc != NULL);
  int same = md && doc && strcmp(md, doc) == 0;
  if (!same)
    fprintf(stderr,
            "%s differs from the table: run "
            "build/test_lease_contract --write\n",
            path);
  CHECK(same);
  /* the disagreement is rendered with both outcomes, 409 first */
  CHECK(md && strstr(md, "409 (blob-operation lease family) leased **or** "
                         "412 (blob-operation lease family) leased"));
  free(md);
  free(doc);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--write") == 0)
    return write_doc();
  test_every_pair_once();
  test_every_cell_sourced();
  test_every_outcome_checked();
  test_pinned_cells();
  test_disagreements();
  test_conditions();
  test_judge();
  test_doc_matches();
  return ll_test_report("test_lease_contract");
}
