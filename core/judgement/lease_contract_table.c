/* The reviewed lease contract: Microsoft's two Lease Blob outcome tables,
 * one row per (state, attempt) cell, each outcome naming its page and
 * section (docs/LEASE_CONTRACT.md is rendered from this table). A cell that
 * two pages answer differently holds both outcomes. A rejected attempt
 * leaves the state unchanged, so its state_after is the cell's state. */
#include "lease_contract_impl.h"

#define USE USE_TITLE
#define OPS OPS_TITLE
#define FB "blob-operation lease family"
#define FL "lease-operation family"

const ll_lease_source ll_lease_sources[] = {
    {"lease-blob", "Lease Blob (REST API) - Azure Storage",
     "https://learn.microsoft.com/en-us/rest/api/storageservices/lease-blob"},
    {"put-blob", "Put Blob (REST API) - Azure Storage",
     "https://learn.microsoft.com/en-us/rest/api/storageservices/put-blob"},
    {"get-blob", "Get Blob (REST API) - Azure Storage",
     "https://learn.microsoft.com/en-us/rest/api/storageservices/get-blob"},
    {"lease-break-dotnet", "BlobLeaseClient.Break Method",
     "https://learn.microsoft.com/en-us/dotnet/api/"
     "azure.storage.blobs.specialized.blobleaseclient.break"},
    {"dev-guide-lease",
     "Create and manage blob leases (lease states and "
     "actions include)",
     "https://github.com/MicrosoftDocs/azure-docs/blob/main/includes/"
     "storage-dev-guides/storage-dev-guide-blob-lease.md"},
    {NULL, NULL, NULL}};

/* Outcomes of the use-attempt table (u*) and the lease-operation table (o*):
 * a success with its status, state and holder, or a failure that leaves the
 * state (after) unchanged. */
#define UOK(st, after, who, text)                                              \
  {                                                                            \
    .status = st, .state_after = after, .holder = who, .source = "lease-blob", \
    .section = USE, .source_text = text                                        \
  }
#define UNO(st, after)                                                         \
  {                                                                            \
    .status = st, .family = FB, .state_after = after, .source = "lease-blob",  \
    .section = USE, .source_text = "Fails (" #st ")"                           \
  }
#define OOK(st, after, who, text)                                              \
  {                                                                            \
    .status = st, .state_after = after, .holder = who, .source = "lease-blob", \
    .section = OPS, .source_text = text                                        \
  }
#define ONO(after)                                                             \
  {                                                                            \
    .status = 409, .family = FL, .state_after = after, .source = "lease-blob", \
    .section = OPS, .source_text = "Fails (409)"                               \
  }
#define CELL(s, o, chk, out)                                                   \
  { .state = s, .op = o, .n_outcomes = 1, .outcome = {out}, .check = chk }
#define CELLC(s, o, chk, out, c1, c2)                                          \
  {                                                                            \
    .state = s, .op = o, .n_outcomes = 1, .outcome = {out},                    \
    .condition = {c1, c2}, .check = chk                                        \
  }

#define AV LL_LS_AVAILABLE
#define LE LL_LS_LEASED
#define BG LL_LS_BREAKING
#define BN LL_LS_BROKEN
#define EX LL_LS_EXPIRED
#define N LL_CHECK_NONE
#define AL LL_CHECK_ALLOWED

#define C_PERIOD                                                               \
  "the break period is used only if it is shorter than the time remaining "    \
  "(lease-break-dotnet: \"This break period is only used if it is shorter "    \
  "than the time remaining on the lease. If longer, the time remaining on "    \
  "the lease is used.\")"
#define C_INFINITE                                                             \
  "an infinite lease broken with no break period breaks at once (lease-blob, " \
  "x-ms-lease-break-period)"
#define C_RENEW                                                                \
  "succeeds only \"if the blob has not been modified\" (or leased again) "     \
  "since the lease expired (lease-blob; dev-guide-lease: \"If the request "    \
  "fails, the client knows that the blob was modified, or the blob was "       \
  "leased again since the lease was last active.\")"

const ll_lease_cell ll_lease_cells[] = {
    /* use attempts: write (Put Blob) */
    CELL(AV, LL_LO_WRITE_A, N, UNO(412, "available")),
    CELL(LE, LL_LO_WRITE_A, N, UOK(201, "leased", "A", "Leased (A)")),
    CELL(BG, LL_LO_WRITE_A, N, UOK(201, "breaking", "A", "Breaking (A)")),
    CELL(BN, LL_LO_WRITE_A, N, UNO(412, "broken")),
    CELL(EX, LL_LO_WRITE_A, N, UNO(412, "expired")),
    CELL(AV, LL_LO_WRITE_B, N, UNO(412, "available")),
    {.state = LE,
     .op = LL_LO_WRITE_B,
     .n_outcomes = 2,
     .outcome = {UNO(409, "leased"),
                 {.status = 412,
                  .family = FB,
                  .state_after = "leased",
                  .source = "put-blob",
                  .section = "Request headers: x-ms-lease-id",
                  .source_text = "Required if the blob has an active lease. To "
                                 "perform this operation on a blob with an "
                                 "active lease, specify the valid lease ID "
                                 "for this header. (a mismatch fails with "
                                 "412 Precondition Failed)"}},
     .check = N},
    CELL(BG, LL_LO_WRITE_B, N, UNO(412, "breaking")),
    CELL(BN, LL_LO_WRITE_B, N, UNO(412, "broken")),
    CELL(EX, LL_LO_WRITE_B, N, UNO(412, "expired")),
    CELL(AV, LL_LO_WRITE_NONE, N, UOK(201, "available", NULL, "Available")),
    CELL(LE, LL_LO_WRITE_NONE, N, UNO(412, "leased")),
    CELL(BG, LL_LO_WRITE_NONE, N, UNO(412, "breaking")),
    CELL(BN, LL_LO_WRITE_NONE, N, UOK(201, "broken", "A", "Broken (A)")),
    CELL(EX, LL_LO_WRITE_NONE, N, UOK(201, "expired", "A", "Expired (A)")),
    /* use attempts: read (Get Blob) */
    CELL(AV, LL_LO_READ_A, N, UNO(412, "available")),
    CELL(LE, LL_LO_READ_A, N, UOK(200, "leased", "A", "Leased (A)")),
    CELL(BG, LL_LO_READ_A, N, UOK(200, "breaking", "A", "Breaking (A)")),
    CELL(BN, LL_LO_READ_A, N, UNO(412, "broken")),
    CELL(EX, LL_LO_READ_A, N, UNO(412, "expired")),
    CELL(AV, LL_LO_READ_B, N, UNO(412, "available")),
    {.state = LE,
     .op = LL_LO_READ_B,
     .n_outcomes = 2,
     .outcome = {UNO(409, "leased"),
                 {.status = 412,
                  .family = FB,
                  .state_after = "leased",
                  .source = "get-blob",
                  .section = "Request headers: x-ms-lease-id",
                  .source_text = "If this header is specified, the operation "
                                 "is performed only if both of the following "
                                 "conditions are met: the blob's lease is "
                                 "currently active; the lease ID specified in "
                                 "the request matches the lease ID of the "
                                 "blob. (otherwise 412 Precondition Failed)"}},
     .check = N},
    CELL(BG, LL_LO_READ_B, N, UNO(412, "breaking")),
    CELL(BN, LL_LO_READ_B, N, UNO(412, "broken")),
    CELL(EX, LL_LO_READ_B, N, UNO(412, "expired")),
    CELL(AV, LL_LO_READ_NONE, N, UOK(200, "available", NULL, "Available")),
    CELL(LE, LL_LO_READ_NONE, N, UOK(200, "leased", "A", "Leased (A)")),
    CELL(BG, LL_LO_READ_NONE, N, UOK(200, "breaking", "A", "Breaking (A)")),
    CELL(BN, LL_LO_READ_NONE, N, UOK(200, "broken", "A", "Broken (A)")),
    CELL(EX, LL_LO_READ_NONE, N, UOK(200, "expired", "A", "Expired (A)")),
    /* lease operations: acquire */
    CELL(AV, LL_LO_ACQUIRE_NONE, AL, OOK(201, "leased", "X", "Leased (X)")),
    CELL(LE, LL_LO_ACQUIRE_NONE, AL, ONO("leased")),
    CELL(BG, LL_LO_ACQUIRE_NONE, AL, ONO("breaking")),
    CELL(BN, LL_LO_ACQUIRE_NONE, AL, OOK(201, "leased", "X", "Leased (X)")),
    CELL(EX, LL_LO_ACQUIRE_NONE, AL, OOK(201, "leased", "X", "Leased (X)")),
    CELL(AV, LL_LO_ACQUIRE_A, AL, OOK(201, "leased", "A", "Leased (A)")),
    CELL(LE, LL_LO_ACQUIRE_A, AL,
         OOK(201, "leased", "A", "Leased (A) with a new duration")),
    CELL(BG, LL_LO_ACQUIRE_A, AL, ONO("breaking")),
    CELL(BN, LL_LO_ACQUIRE_A, AL, OOK(201, "leased", "A", "Leased (A)")),
    CELL(EX, LL_LO_ACQUIRE_A, AL, OOK(201, "leased", "A", "Leased (A)")),
    CELL(AV, LL_LO_ACQUIRE_B, AL, OOK(201, "leased", "B", "Leased (B)")),
    CELL(LE, LL_LO_ACQUIRE_B, AL, ONO("leased")),
    CELL(BG, LL_LO_ACQUIRE_B, AL, ONO("breaking")),
    CELL(BN, LL_LO_ACQUIRE_B, AL, OOK(201, "leased", "B", "Leased (B)")),
    CELL(EX, LL_LO_ACQUIRE_B, AL, OOK(201, "leased", "B", "Leased (B)")),
    /* break */
    CELL(AV, LL_LO_BREAK_0, AL, ONO("available")),
    CELL(LE, LL_LO_BREAK_0, AL, OOK(202, "broken", "A", "Broken (A)")),
    CELL(BG, LL_LO_BREAK_0, AL, OOK(202, "broken", "A", "Broken (A)")),
    CELL(BN, LL_LO_BREAK_0, AL, OOK(202, "broken", "A", "Broken (A)")),
    CELL(EX, LL_LO_BREAK_0, AL, OOK(202, "broken", "A", "Broken (A)")),
    CELL(AV, LL_LO_BREAK_N, AL, ONO("available")),
    CELLC(LE, LL_LO_BREAK_N, AL, OOK(202, "breaking", "A", "Breaking (A)"),
          C_PERIOD, C_INFINITE),
    CELLC(BG, LL_LO_BREAK_N, AL, OOK(202, "breaking", "A", "Breaking (A)"),
          C_PERIOD, NULL),
    CELL(BN, LL_LO_BREAK_N, AL, OOK(202, "broken", "A", "Broken (A)")),
    CELL(EX, LL_LO_BREAK_N, AL, OOK(202, "broken", "A", "Broken (A)")),
    /* change */
    CELL(AV, LL_LO_CHANGE_AB, AL, ONO("available")),
    CELL(LE, LL_LO_CHANGE_AB, AL, OOK(200, "leased", "B", "Leased (B)")),
    CELL(BG, LL_LO_CHANGE_AB, AL, ONO("breaking")),
    CELL(BN, LL_LO_CHANGE_AB, AL, ONO("broken")),
    CELL(EX, LL_LO_CHANGE_AB, AL, ONO("expired")),
    CELL(AV, LL_LO_CHANGE_BA, AL, ONO("available")),
    CELL(LE, LL_LO_CHANGE_BA, N, OOK(200, "leased", "A", "Leased (A)")),
    CELL(BG, LL_LO_CHANGE_BA, AL, ONO("breaking")),
    CELL(BN, LL_LO_CHANGE_BA, AL, ONO("broken")),
    CELL(EX, LL_LO_CHANGE_BA, AL, ONO("expired")),
    CELL(AV, LL_LO_CHANGE_BC, AL, ONO("available")),
    CELL(LE, LL_LO_CHANGE_BC, N, ONO("leased")),
    CELL(BG, LL_LO_CHANGE_BC, AL, ONO("breaking")),
    CELL(BN, LL_LO_CHANGE_BC, AL, ONO("broken")),
    CELL(EX, LL_LO_CHANGE_BC, AL, ONO("expired")),
    /* renew */
    CELL(AV, LL_LO_RENEW_A, AL, ONO("available")),
    CELL(LE, LL_LO_RENEW_A, AL,
         OOK(200, "leased", "A", "Leased (A), expiration clock reset")),
    CELL(BG, LL_LO_RENEW_A, AL, ONO("breaking")),
    CELL(BN, LL_LO_RENEW_A, AL, ONO("broken")),
    CELLC(
        EX, LL_LO_RENEW_A, AL,
        OOK(200, "leased", "A", "Leased (A) if the blob has not been modified"),
        C_RENEW, NULL),
    CELL(AV, LL_LO_RENEW_B, AL, ONO("available")),
    CELL(LE, LL_LO_RENEW_B, N, ONO("leased")),
    CELL(BG, LL_LO_RENEW_B, AL, ONO("breaking")),
    CELL(BN, LL_LO_RENEW_B, AL, ONO("broken")),
    CELL(EX, LL_LO_RENEW_B, N, ONO("expired")),
    /* release */
    CELL(AV, LL_LO_RELEASE_A, AL, ONO("available")),
    CELL(LE, LL_LO_RELEASE_A, AL, OOK(200, "available", NULL, "Available")),
    CELL(BG, LL_LO_RELEASE_A, AL, OOK(200, "available", NULL, "Available")),
    CELL(BN, LL_LO_RELEASE_A, AL, OOK(200, "available", NULL, "Available")),
    CELL(EX, LL_LO_RELEASE_A, AL, OOK(200, "available", NULL, "Available")),
    CELL(AV, LL_LO_RELEASE_B, AL, ONO("available")),
    CELL(LE, LL_LO_RELEASE_B, N, ONO("leased")),
    CELL(BG, LL_LO_RELEASE_B, N, ONO("breaking")),
    CELL(BN, LL_LO_RELEASE_B, N, ONO("broken")),
    CELL(EX, LL_LO_RELEASE_B, N, ONO("expired")),
    /* the lease duration expiring (no request: status 0) */
    CELL(AV, LL_LO_EXPIRE, N, OOK(0, "available", NULL, "Available")),
    CELL(LE, LL_LO_EXPIRE, N, OOK(0, "expired", "A", "Expired (A)")),
    CELL(BG, LL_LO_EXPIRE, N, OOK(0, "broken", "A", "Broken (A)")),
    CELL(BN, LL_LO_EXPIRE, N, OOK(0, "broken", "A", "Broken (A)")),
    CELL(EX, LL_LO_EXPIRE, N, OOK(0, "expired", "A", "Expired (A)")),
};

const size_t ll_lease_cells_count =
    sizeof ll_lease_cells / sizeof ll_lease_cells[0];
