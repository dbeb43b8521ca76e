/* The reviewed lease contract: Microsoft's two Lease Blob outcome tables,
 * one row per (state, attempt) cell, each outcome naming its page, section
 * and the cell's wording (docs/LEASE_CONTRACT.md is rendered from this
 * table). A cell that two pages answer differently holds both outcomes. A
 * rejected attempt leaves the state unchanged, so its state_after is the
 * cell's state. Every cell was checked against the Lease Blob page's text
 * (its Markdown source, and a verbatim copy of the current page's use table);
 * the tables name statuses, never codes, so a rejection holds its family. */
#include "lease_contract_impl.h"

#define USE USE_TITLE
#define OPS OPS_TITLE
#define FB "blob-operation lease family"
#define FL "lease-operation family"
#define PAGE LL_CHECK_PAGE

const ll_lease_source ll_lease_sources[] = {
    {"lease-blob", "Lease Blob (REST API) - Azure Storage",
     "https://learn.microsoft.com/en-us/rest/api/storageservices/lease-blob"},
    {"put-blob", "Put Blob (REST API) - Azure Storage",
     "https://learn.microsoft.com/en-us/rest/api/storageservices/put-blob"},
    {NULL, NULL, NULL}};

/* Outcomes of the use-attempt table (U*) and the lease-operation table (O*):
 * a success with its status, state and holder, or a failure that leaves the
 * state (after) unchanged. */
#define UOK(st, after, who, text)                                              \
  {                                                                            \
    .status = st, .state_after = after, .holder = who, .source = "lease-blob", \
    .section = USE, .source_text = text, .check = PAGE                         \
  }
#define UNO(st, after)                                                         \
  {                                                                            \
    .status = st, .family = FB, .state_after = after, .source = "lease-blob",  \
    .section = USE, .source_text = "Fails (" #st ")", .check = PAGE            \
  }
#define OOK(st, after, who, text)                                              \
  {                                                                            \
    .status = st, .state_after = after, .holder = who, .source = "lease-blob", \
    .section = OPS, .source_text = text, .check = PAGE                         \
  }
#define ONO(after)                                                             \
  {                                                                            \
    .status = 409, .family = FL, .state_after = after, .source = "lease-blob", \
    .section = OPS, .source_text = "Fails (409)", .check = PAGE                \
  }
#define CELL(s, o, out)                                                        \
  {                                                                            \
    .state = s, .op = o, .n_outcomes = 1, .outcome = { out }                   \
  }
#define CELLC(s, o, out, c1, c2)                                               \
  {                                                                            \
    .state = s, .op = o, .n_outcomes = 1, .outcome = {out}, .condition = {     \
      c1,                                                                      \
      c2                                                                       \
    }                                                                          \
  }

#define AV LL_LS_AVAILABLE
#define LE LL_LS_LEASED
#define BG LL_LS_BREAKING
#define BN LL_LS_BROKEN
#define EX LL_LS_EXPIRED

#define C_PERIOD                                                               \
  "lease-blob, x-ms-lease-break-period: \"This break period is only used if "  \
  "it is shorter than the time remaining on the lease. If longer, the time "   \
  "remaining on the lease is used.\""
#define C_INFINITE                                                             \
  "lease-blob, x-ms-lease-break-period: \"If this header does not appear "     \
  "with a break operation, a fixed-duration lease breaks after the remaining " \
  "lease period elapses, and an infinite lease breaks immediately.\""
#define C_SHORTER                                                              \
  "lease-blob, changes in 2012-02-12: \"If you break a lease that is in "      \
  "breaking state and include a shorter duration than the remaining break "    \
  "period, your shorter duration is used.\""
#define C_RENEW                                                                \
  "lease-blob, same cell: \"Leased(A), if blob has not been modified. Fails "  \
  "(409) if blob has been modified.\" (x-ms-lease-action: renew: \"as long "   \
  "as the blob has not been modified or leased again\")"

/* Put Blob's Remarks, the second source for a write with the wrong lease. */
#define PUT_412                                                                \
  {                                                                            \
    .status = 412, .family = FB, .state_after = "leased",                      \
    .source = "put-blob", .section = "Remarks",                                \
    .source_text = "If the client doesn't specify a lease ID or specifies an " \
                   "invalid lease ID, Blob Storage returns status code 412 "   \
                   "(Precondition Failed).",                                   \
    .check = PAGE                                                              \
  }

const ll_lease_cell ll_lease_cells[] = {
    /* use attempts: write (Put Blob) */
    CELL(AV, LL_LO_WRITE_A, UNO(412, "available")),
    CELL(LE, LL_LO_WRITE_A,
         UOK(201, "leased", "A", "Leased (A), write succeeds")),
    CELL(BG, LL_LO_WRITE_A,
         UOK(201, "breaking", "A", "Breaking (A), write succeeds")),
    CELL(BN, LL_LO_WRITE_A, UNO(412, "broken")),
    CELL(EX, LL_LO_WRITE_A, UNO(412, "expired")),
    CELL(AV, LL_LO_WRITE_B, UNO(412, "available")),
    {.state = LE,
     .op = LL_LO_WRITE_B,
     .n_outcomes = 2,
     .outcome = {UNO(409, "leased"), PUT_412}},
    CELL(BG, LL_LO_WRITE_B, UNO(412, "breaking")),
    CELL(BN, LL_LO_WRITE_B, UNO(412, "broken")),
    CELL(EX, LL_LO_WRITE_B, UNO(412, "expired")),
    CELL(AV, LL_LO_WRITE_NONE,
         UOK(201, "available", NULL, "Available, write succeeds")),
    CELL(LE, LL_LO_WRITE_NONE, UNO(412, "leased")),
    CELL(BG, LL_LO_WRITE_NONE, UNO(412, "breaking")),
    CELL(BN, LL_LO_WRITE_NONE,
         UOK(201, "available", NULL, "Available, write succeeds")),
    CELL(EX, LL_LO_WRITE_NONE,
         UOK(201, "available", NULL, "Available, write succeeds")),
    /* use attempts: read (Get Blob) */
    CELL(AV, LL_LO_READ_A, UNO(412, "available")),
    CELL(LE, LL_LO_READ_A,
         UOK(200, "leased", "A", "Leased (A), read succeeds")),
    CELL(BG, LL_LO_READ_A,
         UOK(200, "breaking", "A", "Breaking (A), read succeeds")),
    CELL(BN, LL_LO_READ_A, UNO(412, "broken")),
    CELL(EX, LL_LO_READ_A, UNO(412, "expired")),
    CELL(AV, LL_LO_READ_B, UNO(412, "available")),
    CELL(LE, LL_LO_READ_B, UNO(409, "leased")),
    CELL(BG, LL_LO_READ_B, UNO(409, "breaking")),
    CELL(BN, LL_LO_READ_B, UNO(412, "broken")),
    CELL(EX, LL_LO_READ_B, UNO(412, "expired")),
    CELL(AV, LL_LO_READ_NONE,
         UOK(200, "available", NULL, "Available, read succeeds")),
    CELL(LE, LL_LO_READ_NONE,
         UOK(200, "leased", "A", "Leased (A), read succeeds")),
    CELL(BG, LL_LO_READ_NONE,
         UOK(200, "breaking", "A", "Breaking (A), read succeeds")),
    CELL(BN, LL_LO_READ_NONE,
         UOK(200, "broken", "A", "Broken (A), read succeeds")),
    CELL(EX, LL_LO_READ_NONE,
         UOK(200, "expired", "A", "Expired (A), read succeeds")),
    /* lease operations: acquire (201 Created) */
    CELL(AV, LL_LO_ACQUIRE_NONE, OOK(201, "leased", "X", "Leased (X)")),
    CELL(LE, LL_LO_ACQUIRE_NONE, ONO("leased")),
    CELL(BG, LL_LO_ACQUIRE_NONE, ONO("breaking")),
    CELL(BN, LL_LO_ACQUIRE_NONE, OOK(201, "leased", "X", "Leased (X)")),
    CELL(EX, LL_LO_ACQUIRE_NONE, OOK(201, "leased", "X", "Leased (X)")),
    CELL(AV, LL_LO_ACQUIRE_A, OOK(201, "leased", "A", "Leased (A)")),
    CELL(LE, LL_LO_ACQUIRE_A,
         OOK(201, "leased", "A", "Leased (A), new duration")),
    CELL(BG, LL_LO_ACQUIRE_A, ONO("breaking")),
    CELL(BN, LL_LO_ACQUIRE_A, OOK(201, "leased", "A", "Leased (A)")),
    CELL(EX, LL_LO_ACQUIRE_A, OOK(201, "leased", "A", "Leased (A)")),
    CELL(AV, LL_LO_ACQUIRE_B, OOK(201, "leased", "B", "Leased (B)")),
    CELL(LE, LL_LO_ACQUIRE_B, ONO("leased")),
    CELL(BG, LL_LO_ACQUIRE_B, ONO("breaking")),
    CELL(BN, LL_LO_ACQUIRE_B, OOK(201, "leased", "B", "Leased (B)")),
    CELL(EX, LL_LO_ACQUIRE_B, OOK(201, "leased", "B", "Leased (B)")),
    /* break (202 Accepted) */
    CELL(AV, LL_LO_BREAK_0, ONO("available")),
    CELL(LE, LL_LO_BREAK_0, OOK(202, "broken", "A", "Broken (A)")),
    CELL(BG, LL_LO_BREAK_0, OOK(202, "broken", "A", "Broken (A)")),
    CELL(BN, LL_LO_BREAK_0, OOK(202, "broken", "A", "Broken (A)")),
    CELL(EX, LL_LO_BREAK_0, OOK(202, "broken", "A", "Broken (A)")),
    CELL(AV, LL_LO_BREAK_N, ONO("available")),
    CELLC(LE, LL_LO_BREAK_N, OOK(202, "breaking", "A", "Breaking (A)"),
          C_PERIOD, C_INFINITE),
    CELLC(BG, LL_LO_BREAK_N, OOK(202, "breaking", "A", "Breaking (A)"),
          C_SHORTER, NULL),
    CELL(BN, LL_LO_BREAK_N, OOK(202, "broken", "A", "Broken (A)")),
    CELL(EX, LL_LO_BREAK_N, OOK(202, "broken", "A", "Broken (A)")),
    /* change (200 OK) */
    CELL(AV, LL_LO_CHANGE_AB, ONO("available")),
    CELL(LE, LL_LO_CHANGE_AB, OOK(200, "leased", "B", "Leased (B)")),
    CELL(BG, LL_LO_CHANGE_AB, ONO("breaking")),
    CELL(BN, LL_LO_CHANGE_AB, ONO("broken")),
    CELL(EX, LL_LO_CHANGE_AB, ONO("expired")),
    CELL(AV, LL_LO_CHANGE_BA, ONO("available")),
    CELL(LE, LL_LO_CHANGE_BA, OOK(200, "leased", "A", "Leased (A)")),
    CELL(BG, LL_LO_CHANGE_BA, ONO("breaking")),
    CELL(BN, LL_LO_CHANGE_BA, ONO("broken")),
    CELL(EX, LL_LO_CHANGE_BA, ONO("expired")),
    CELL(AV, LL_LO_CHANGE_BC, ONO("available")),
    CELL(LE, LL_LO_CHANGE_BC, ONO("leased")),
    CELL(BG, LL_LO_CHANGE_BC, ONO("breaking")),
    CELL(BN, LL_LO_CHANGE_BC, ONO("broken")),
    CELL(EX, LL_LO_CHANGE_BC, ONO("expired")),
    /* renew (200 OK) */
    CELL(AV, LL_LO_RENEW_A, ONO("available")),
    CELL(LE, LL_LO_RENEW_A,
         OOK(200, "leased", "A", "Leased (A), expiration clock reset")),
    CELL(BG, LL_LO_RENEW_A, ONO("breaking")),
    CELL(BN, LL_LO_RENEW_A, ONO("broken")),
    CELLC(EX, LL_LO_RENEW_A,
          OOK(200, "leased", "A", "Leased(A), if blob has not been modified."),
          C_RENEW, NULL),
    CELL(AV, LL_LO_RENEW_B, ONO("available")),
    CELL(LE, LL_LO_RENEW_B, ONO("leased")),
    CELL(BG, LL_LO_RENEW_B, ONO("breaking")),
    CELL(BN, LL_LO_RENEW_B, ONO("broken")),
    CELL(EX, LL_LO_RENEW_B, ONO("expired")),
    /* release (200 OK) */
    CELL(AV, LL_LO_RELEASE_A, ONO("available")),
    CELL(LE, LL_LO_RELEASE_A, OOK(200, "available", NULL, "Available")),
    CELL(BG, LL_LO_RELEASE_A, OOK(200, "available", NULL, "Available")),
    CELL(BN, LL_LO_RELEASE_A, OOK(200, "available", NULL, "Available")),
    CELL(EX, LL_LO_RELEASE_A, OOK(200, "available", NULL, "Available")),
    CELL(AV, LL_LO_RELEASE_B, ONO("available")),
    CELL(LE, LL_LO_RELEASE_B, ONO("leased")),
    CELL(BG, LL_LO_RELEASE_B, ONO("breaking")),
    CELL(BN, LL_LO_RELEASE_B, ONO("broken")),
    CELL(EX, LL_LO_RELEASE_B, ONO("expired")),
    /* the lease duration expiring (no request: status 0) */
    CELL(AV, LL_LO_EXPIRE, OOK(0, "available", NULL, "Available")),
    CELL(LE, LL_LO_EXPIRE, OOK(0, "expired", "A", "Expired (A)")),
    CELL(BG, LL_LO_EXPIRE, OOK(0, "broken", "A", "Broken (A)")),
    CELL(BN, LL_LO_EXPIRE, OOK(0, "broken", "A", "Broken (A)")),
    CELL(EX, LL_LO_EXPIRE, OOK(0, "expired", "A", "Expired (A)")),
};

const size_t ll_lease_cells_count =
    sizeof ll_lease_cells / sizeof ll_lease_cells[0];
