/* The lease-table plan (core/run/lease_plan.c): every cell of the contract
 * is planned exactly once; a lifecycle ends with at most one
 * state-changing cell, and nothing follows it; preserving rejections come
 * before preserving successes; the waits are the documented ones; without
 * --destructive exactly the three accepted unleased writes are planned
 * NOT_REACHED; the printed plan names every cell and the preflight once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease_table.h"
#include "testlib.h"

static ll_lease_plan plan;

static void test_every_cell_once(int destructive) {
  ll_error err = {0};
  CHECK(ll_lease_plan_build(10, destructive, &plan, &err) == LL_OK);
  int seen[LL_LS_COUNT][LL_LO_COUNT] = {{0}};
  int skipped = 0, total = 0;
  for (int i = 0; i < plan.nlife; i++) {
    const ll_lt_life *l = &plan.life[i];
    for (int k = 0; k < l->ncells; k++) {
      const ll_lt_cell *c = &plan.cells[l->first + k];
      CHECK(c->state == l->state);
      seen[c->state][c->op]++;
      total++;
      skipped += c->skip != NULL;
      /* a state-changing cell is the lifecycle's last (one planned
       * NOT_REACHED sends nothing, so it changes nothing) */
      if (c->changes && !c->skip)
        CHECK_INT(k, l->ncells - 1);
      /* a write cell writes a declared revision of its own */
      if (!c->skip && (c->op == LL_LO_WRITE_A || c->op == LL_LO_WRITE_B ||
                       c->op == LL_LO_WRITE_NONE))
        CHECK(c->revision >= LL_LT_FIRST_REV && c->writer);
    }
  }
  CHECK_INT(total, LL_LS_COUNT * LL_LO_COUNT);
  CHECK_INT(plan.ncells, total);
  for (int s = 0; s < LL_LS_COUNT; s++)
    for (int o = 0; o < LL_LO_COUNT; o++)
      CHECK_INT(seen[s][o], 1);
  CHECK_INT(skipped, destructive ? 0 : 3);
}

static int count_state(ll_lease_state s) {
  int n = 0;
  for (int i = 0; i < plan.nlife; i++)
    n += plan.life[i].state == s;
  return n;
}

static void test_lifecycles_and_waits(void) {
  ll_error err = {0};
  CHECK(ll_lease_plan_build(10, 1, &plan, &err) == LL_OK);
  /* one lifecycle per state-changing cell of each state */
  CHECK_INT(count_state(LL_LS_AVAILABLE), 3); /* acquire none, A, B */
  CHECK_INT(count_state(LL_LS_LEASED), 5);    /* break 0/N, A to B, rel, exp */
  CHECK_INT(count_state(LL_LS_BREAKING), 3);  /* break 0, release A, expiry */
  CHECK_INT(count_state(LL_LS_BROKEN), 5);    /* write none, acquire x3, rel */
  CHECK_INT(count_state(LL_LS_EXPIRED), 8);   /* write none, acquire x3, ... */
  /* the floor: 15 s per Expired (A), 15 s for Leased's expiry, the break */
  CHECK_INT(plan.wait_s, 8 * 15 + 15 + 10);
  for (int i = 0; i < plan.nlife; i++) {
    const ll_lt_life *l = &plan.life[i];
    if (l->state == LL_LS_EXPIRED)
      CHECK_INT(l->duration, LL_LT_EXPIRY_S);
    if (l->state == LL_LS_BREAKING)
      CHECK_INT(l->establish_break, 10);
    if (l->state == LL_LS_BROKEN)
      CHECK_INT(l->establish_break, 0);
    /* rejections before preserving successes */
    int success_seen = 0;
    for (int k = 0; k < l->ncells; k++) {
      const ll_lt_cell *c = &plan.cells[l->first + k];
      const ll_lease_cell *d = ll_lease_contract_cell(c->state, c->op);
      int ok = d->outcome[0].status >= 200 && d->outcome[0].status < 300;
      if (!c->changes && !ok && c->op != LL_LO_EXPIRE)
        CHECK(!success_seen);
      success_seen |= ok && !c->changes;
    }
  }
  CHECK(ll_lease_plan_build(0, 1, &plan, &err) == LL_E_USAGE);
  CHECK(ll_lease_plan_build(61, 1, &plan, &err) == LL_E_USAGE);
}

static void test_text(void) {
  ll_error err = {0};
  CHECK(ll_lease_plan_build(10, 0, &plan, &err) == LL_OK);
  char *text = ll_lease_plan_text(&plan);
  CHECK(text != NULL);
  if (!text)
    return;
  CHECK(strncmp(text,
                "lease-table plan: 22 lifecycles, 95 cells (3 planned "
                "NOT_REACHED)",
                60) == 0);
  const char *p = strstr(text, "preflight: properties before L1 create rev");
  CHECK(p && !strstr(p + 1, "preflight:"));
  CHECK(strstr(text, "  request L1 cell Available/write with A | Put Blob by "
                     "A, lease A\n"));
  CHECK(strstr(text, "  request L4 cell Leased (A)/write with B | Put Blob by "
                     "B, lease B\n"));
  CHECK(strstr(text, "  poll    L8 cell Leased (A)/duration expires: wait | "
                     "Get Blob Properties by observer\n"));
  CHECK(strstr(text, "  skip    cell Broken (A)/write, no lease: NOT_REACHED"));
  free(text);
}

int main(void) {
  test_every_cell_once(0);
  test_every_cell_once(1);
  test_lifecycles_and_waits();
  test_text();
  return ll_test_report("test_lease_plan");
}
