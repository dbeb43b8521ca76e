-- The fixtures written from Microsoft's documentation (fixtures/documented,
-- tools/fixtures/make_documented.js), replayed strictly and offline: the
-- decision paths a live emulator cannot produce on demand. One describe
-- per fixture (recovery fixtures replay after their main run, on the same
-- evidence): exit codes, classes row by row, decision, verify. The last
-- describe checks that every decision branch of DESIGN.md section 5 has
-- a fixture here.
local helper = require "helper"
local rp = require "support.replay"

local api = { describe = describe, it = it, setup = setup }

local function lines(...)
  return rp.cat(...)
end

-- The documented service up to B's early acquire (steps 0 to 8), after
-- the preflight read that C sends before the first mutation (invariant 15).
local PREFLIGHT = "preflight: properties before 0 create container: Get Blob Properties 404 ContainerNotFound " ..
  "STATE_OBSERVED"
local TO_8 = {
  PREFLIGHT,
  "0 create container: Create Container 201 ACCEPTED_WRITE",
  "lifecycle 1",
  "1 create rev 0: Put Blob rev 0 201 ACCEPTED_WRITE",
  "1 read back rev 0: Get Blob 200 content 0 STATE_OBSERVED",
  "2 acquire A (infinite): Lease Acquire 201 ACCEPTED_WRITE",
  "3 rev 1 with A: Put Blob rev 1 201 ACCEPTED_WRITE",
  "3 read back rev 1: Get Blob 200 content 1 STATE_OBSERVED",
  "4 rev 2 without lease: Put Blob rev 2 412 LeaseIdMissing EXPECTED_REJECTION",
  "4 rev 1 still there: Get Blob 200 content 1 STATE_OBSERVED",
  "5 unconditioned read: Get Blob 200 content 1 STATE_OBSERVED",
  "6 properties before break: Get Blob Properties 200 leased/locked STATE_OBSERVED",
  "6 break, period 30: Lease Break 202 BREAK_ACCEPTED_NOT_COMPLETE",
  "7 probe rev 3 while breaking: Get Blob Properties 200 breaking/locked STATE_OBSERVED",
  "7 probe rev 3 while breaking: Put Blob rev 3 201 ACCEPTED_WRITE",
  "7 probe rev 3 while breaking: Get Blob Properties 200 breaking/locked STATE_OBSERVED",
  "finding window REPRODUCED",
  "7 read back after probe: Get Blob 200 content 3 STATE_OBSERVED",
  "8 fresh properties: Get Blob Properties 200 breaking/locked STATE_OBSERVED",
  "8 B acquire while breaking: Lease Acquire 409 LeaseIsBreakingAndCannotBeAcquired EXPECTED_REJECTION",
  "9 wait for broken: Get Blob Properties 200 breaking/locked STATE_OBSERVED",
}

local TO_11 = lines(TO_8, {
  "9 wait for broken: Get Blob Properties 200 broken/unlocked STATE_OBSERVED",
  "finding poll BROKEN",
  "10 rev 4 with stale A: Put Blob rev 4 412 LeaseNotPresentWithBlobOperation EXPECTED_REJECTION",
})

local TO_13 = lines(TO_11, {
  "11 acquire B (infinite): Lease Acquire 201 ACCEPTED_WRITE",
  "12 rev 5 with B: Put Blob rev 5 201 ACCEPTED_WRITE",
  "12 read back rev 5: Get Blob 200 content 5 STATE_OBSERVED",
})

local CLEANUP = {
  "14 release B: Lease Release 200 ACCEPTED_WRITE",
  "14 confirm release: Get Blob Properties 200 available/unlocked STATE_OBSERVED",
  "14 delete: Delete Blob 202 ACCEPTED_WRITE",
  "14 confirm absent: Get Blob Properties 404 BlobNotFound STATE_OBSERVED",
}

local REV5_LOST = lines(TO_11, {
  "11 acquire B (infinite): Lease Acquire 201 ACCEPTED_WRITE",
  "12 rev 5 with B: Put Blob rev 5 UNKNOWN UNKNOWN_OUTCOME",
  "decision HOLD, window REPRODUCED",
})

local ACQUIRE_LOST = lines(TO_11, {
  "11 acquire B (infinite): Lease Acquire UNKNOWN UNKNOWN_OUTCOME",
  "decision HOLD, window REPRODUCED",
})

local function step_row(dir, prefix)
  local rows = rp.rows_of_step(dir, prefix)
  assert.are.equal(1, #rows, "one row for step " .. prefix)
  return rows[1]
end

local MAIN = "main_handoff"
local REC = "recovery"

local cases = {
  {
    title = "fixture documented/azure-main-handoff-accept",
    branch = { "ACCEPT", "window REPRODUCED" },
    phases = { { MAIN, "documented/azure-main-handoff-accept" } },
    exits = { 0 },
    trace = lines(TO_13, {
      "13 rev 6 with A: Put Blob rev 6 412 LeaseIdMismatchWithBlobOperation EXPECTED_REJECTION",
      "13 rev 5 still there: Get Blob 200 content 5 STATE_OBSERVED",
    }, CLEANUP, { "decision ACCEPT, window REPRODUCED" }),
    decision = "ACCEPT",
    window = "REPRODUCED",
    checks = {
      ["is judged like azure: every version echoed, no discrepancy at all"] = function(_, rows)
        for _, r in ipairs(rows) do
          if r.record == "outcome" then
            assert.are.equal("2023-11-03", r.returned_api_version, r.event_id)
            assert.are.same({}, r.discrepancy, r.event_id)
          end
        end
      end,
      ["reads the XML error bodies behind their UTF-8 BOM"] = function(dir)
        local r = step_row(dir, "4 rev 2 without lease")
        assert.are.equal("There is currently a lease on the blob and no lease ID was specified in the request.",
          r.error_message:match("^[^\n]*"))
        local fixture = helper.read(rp.fixture("documented/azure-main-handoff-accept"))
        assert.truthy(fixture:find('"body": "\\ufeff<?xml', 1, true))
      end,
      ["labels the manifest replay, fixture documented, and says so in the statement"] = function(dir)
        local m = require("cjson").decode(helper.read(dir .. "/manifest.json"))
        assert.are.equal("replay", m.endpoint_kind)
        assert.are.equal("documented", m.fixture_label)
        assert.matches("replay of a documented fixture: not a cloud qualification", rp.decision(dir).statement)
      end,
    },
  },
  {
    title = "fixture documented/put-409-discrepancy",
    branch = { "HOLD unexplained discrepancy" },
    phases = { { MAIN, "documented/put-409-discrepancy" } },
    exits = { 2 },
    trace = lines(TO_13, {
      "13 rev 6 with A: Put Blob rev 6 409 LeaseIdMismatchWithBlobOperation EXPECTED_REJECTION",
      "13 rev 5 still there: Get Blob 200 content 5 STATE_OBSERVED",
      "stop 14 left-for-operator",
      "decision HOLD, window REPRODUCED",
    }),
    decision = "HOLD",
    window = "REPRODUCED",
    reasons = { "(Put Blob): unexplained discrepancy: documented 412 blob-operation lease family, observed 409 " ..
      "LeaseIdMismatchWithBlobOperation" },
    checks = {
      ["stores the 409 verbatim, its discrepancy unexplained"] = function(dir)
        local r = step_row(dir, "13 rev 6 with A")
        assert.are.equal(409, r.http_status)
        assert.are.equal("LeaseIdMismatchWithBlobOperation", r.azure_error_code)
        assert.are.equal(1, #r.discrepancy)
        assert.are.equal(require("cjson").null, r.discrepancy[1].explained_by)
      end,
    },
  },
  {
    title = "fixture documented/version-mismatch",
    branch = { "HOLD EVIDENCE_ERROR" },
    phases = { { MAIN, "documented/version-mismatch" } },
    exits = { 2 },
    -- No reconcile lifts a doubt about the evidence: C refuses the break.
    trace = (function()
      local t = { table.unpack(TO_8, 1, 12) }
      t[11] = "5 unconditioned read: Get Blob 200 content 1 EVIDENCE_ERROR"
      return lines(t, { "refusal LL_E_HOLD Lease Break", "decision HOLD, window NOT_ATTEMPTED" })
    end)(),
    decision = "HOLD",
    window = "NOT_ATTEMPTED",
    reasons = { "(Get Blob): EVIDENCE_ERROR", "requested x-ms-version 2023-11-03, returned 2021-12-02" },
    checks = {
      ["stops at the break, refused in C, and leaves A's lease in place"] = function(_, rows, runs)
        local refusal
        for _, r in ipairs(rows) do
          if r.record == "refusal" then refusal = r end
          assert.is_false(r.record == "intent" and r.operation == "Lease Break", "a break was sent")
        end
        assert.are.equal("LL_E_HOLD", refusal.code)
        assert.matches("^Lease Break refused: the run can only end HOLD %(event e%d+ %(Get Blob%): unexplained " ..
          "discrepancy: requested x%-ms%-version 2023%-11%-03, returned 2021%-12%-02%)", refusal.message)
        assert.matches("stopped: LL_E_HOLD: Lease Break refused", runs[1].out)
      end,
    },
  },
  {
    title = "fixture documented/poll-deadline",
    branch = { "HOLD polling deadline" },
    phases = { { MAIN, "documented/poll-deadline" } },
    exits = { 2 },
    trace = lines(TO_8, { "finding poll HOLD", "decision HOLD, window REPRODUCED" }),
    decision = "HOLD",
    window = "REPRODUCED",
    reasons = { "poll: deadline passed before broken/unlocked was observed" },
    checks = {
      ["stops with the lease still breaking, past x-ms-lease-time + 60 s"] = function(_, rows)
        local brk, last, finding
        for _, r in ipairs(rows) do
          if r.record == "outcome" and r.operation == "Lease Break" then brk = r end
          if r.record == "outcome" then last = r end
          if r.record == "finding" and r.kind == "poll" then finding = r end
        end
        assert.are.equal("breaking", last.observed_lease_state)
        assert.are.equal(30, finding.hint_s)
        assert.is_true(last.mono_end_ns - brk.mono_end_ns > 90e9)
      end,
    },
  },
  {
    title = "fixture documented/properties-read-fails",
    branch = { "HOLD failed properties read" },
    phases = { { MAIN, "documented/properties-read-fails" } },
    exits = { 2 },
    trace = lines(TO_8, {
      "9 wait for broken: Get Blob Properties 503 ServerBusy UNKNOWN_OUTCOME",
      "finding poll HOLD",
      "decision HOLD, window REPRODUCED",
    }),
    decision = "HOLD",
    window = "REPRODUCED",
    reasons = { "poll: a properties read failed when the state was needed" },
  },
  {
    title = "fixture documented/unexpected-state",
    branch = { "HOLD unexpected state" },
    phases = { { MAIN, "documented/unexpected-state" } },
    exits = { 2 },
    trace = lines(TO_8, {
      "9 wait for broken: Get Blob Properties 200 leased/locked STATE_OBSERVED",
      "finding poll HOLD",
      "decision HOLD, window REPRODUCED",
    }),
    decision = "HOLD",
    window = "REPRODUCED",
    reasons = { "poll: unexpected state leased/locked while waiting for broken" },
  },
  {
    title = "fixture documented/content-differs",
    branch = { "RECONCILE content differs" },
    phases = { { MAIN, "documented/content-differs" } },
    exits = { 3 },
    trace = lines(TO_13, {
      "13 rev 6 with A: Put Blob rev 6 412 LeaseIdMismatchWithBlobOperation EXPECTED_REJECTION",
      "13 rev 5 still there: Get Blob 200 content undeclared STATE_OBSERVED",
      "stop 14 left-for-operator",
      "decision RECONCILE, window REPRODUCED",
    }),
    decision = "RECONCILE",
    window = "REPRODUCED",
    reasons = { "content is undeclared bytes", "the accepted-write ledger says revision 5" },
  },
  {
    title = "fixture documented/rejected-revision-found",
    branch = { "RECONCILE rejected revision found" },
    phases = { { MAIN, "documented/rejected-revision-found" } },
    exits = { 3 },
    trace = lines(TO_13, {
      "13 rev 6 with A: Put Blob rev 6 412 LeaseIdMismatchWithBlobOperation EXPECTED_REJECTION",
      "13 rev 5 still there: Get Blob 200 content 6 STATE_OBSERVED",
      "stop 14 left-for-operator",
      "decision RECONCILE, window REPRODUCED",
    }),
    decision = "RECONCILE",
    window = "REPRODUCED",
    reasons = { "rejected revision 6 found in the content" },
    checks = {
      ["skips cleanup, naming the decision and its reason"] = function(_, _, runs)
        assert.matches("14 cleanup skipped: the decision is RECONCILE %([^\n]-rejected revision 6 found in the " ..
          "content%); the blob is left for the operator", runs[1].out)
      end,
    },
  },
  {
    title = "fixture documented/late-probe",
    branch = { "window INCONCLUSIVE_WINDOW", "HOLD ownership not proven" },
    phases = { { MAIN, "documented/late-probe", { "--window-attempts", "1" } } },
    exits = { 2 },
    trace = lines({ table.unpack(TO_8, 1, 13) }, {
      "7 probe rev 3 while breaking: Get Blob Properties 200 broken/unlocked STATE_OBSERVED",
      "finding window INCONCLUSIVE_WINDOW",
      "7 read back after probe: Get Blob 200 content 1 STATE_OBSERVED",
      "8 fresh properties: Get Blob Properties 200 broken/unlocked STATE_OBSERVED",
      "note 8",
      "9 wait for broken: Get Blob Properties 200 broken/unlocked STATE_OBSERVED",
      "finding poll BROKEN",
      "stop 10 out-of-reach",
      "decision HOLD, window INCONCLUSIVE_WINDOW",
    }),
    decision = "HOLD",
    window = "INCONCLUSIVE_WINDOW",
    reasons = { "ownership not proven: no fresh breaking observation" },
    checks = {
      ["makes no claim about breaking: no probe write, no REPRODUCED"] = function(_, rows, runs)
        for _, r in ipairs(rows) do
          assert.is_false(r.record == "outcome" and r.payload_revision == 3, "a probe write was sent")
          assert.is_false(r.record == "finding" and r.result == "REPRODUCED")
        end
        assert.matches("breaking%-window finding: INCONCLUSIVE_WINDOW", runs[1].out)
        -- ACCEPT is out of reach once broken is seen without breaking: the
        -- C fold says so, and the flow sends no mutation after step 9
        assert.matches("10 ACCEPT is out of reach %(the lease left breaking without a fresh breaking " ..
          "observation in this lifecycle%): no further mutation; the blob is left for the operator", runs[1].out)
        local poll_seen = false
        for _, r in ipairs(rows) do
          if r.record == "finding" and r.kind == "poll" then poll_seen = true end
          assert.is_false(poll_seen and r.record == "intent", "a request after broken: " .. tostring(r.step))
        end
      end,
    },
  },
  {
    title = "fixture documented/rev5-lost",
    branch = { "HOLD unreconciled UNKNOWN_OUTCOME" },
    phases = { { MAIN, "documented/rev5-lost" } },
    exits = { 2 },
    trace = REV5_LOST,
    decision = "HOLD",
    window = "REPRODUCED",
    reasons = { "(Put Blob by B): UNKNOWN_OUTCOME, not reconciled" },
    checks = {
      ["keeps the transport error of the lost response"] = function(dir)
        local r = step_row(dir, "12 rev 5 with B")
        assert.are.equal("UNKNOWN", r.outcome)
        assert.matches("response lost after the request was sent", r.transport_error)
      end,
    },
  },
  {
    title = "fixture documented/rev5-lost.recovery-committed (after rev5-lost)",
    branch = { "ACCEPT after recovery" },
    phases = { { MAIN, "documented/rev5-lost" }, { REC, "documented/rev5-lost.recovery-committed" } },
    exits = { 2, 0 },
    trace = lines(REV5_LOST, {
      "recovery, open intents 0",
      "2-4 reconcile with the ledger: Get Blob Properties 200 leased/locked STATE_OBSERVED",
      "2-4 reconcile with the ledger: Get Blob 200 content 5 STATE_OBSERVED",
      "reconcile DOUBTFUL_WRITE_COMMITTED (content 5)",
      "5 prove B owns the lease (renew): Lease Renew 200 ACCEPTED_WRITE",
      -- revision 5 is there: not rewritten
      "13 rev 6 with A: Put Blob rev 6 412 LeaseIdMismatchWithBlobOperation EXPECTED_REJECTION",
      "13 rev 5 still there: Get Blob 200 content 5 STATE_OBSERVED",
    }, CLEANUP, { "decision ACCEPT, window REPRODUCED" }),
    decision = "ACCEPT",
    window = "REPRODUCED",
  },
  {
    title = "fixture documented/rev5-lost.recovery-rev3 (after rev5-lost)",
    branch = { "ACCEPT after recovery" },
    phases = { { MAIN, "documented/rev5-lost" }, { REC, "documented/rev5-lost.recovery-rev3" } },
    exits = { 2, 0 },
    trace = lines(REV5_LOST, {
      "recovery, open intents 0",
      "2-4 reconcile with the ledger: Get Blob Properties 200 leased/locked STATE_OBSERVED",
      "2-4 reconcile with the ledger: Get Blob 200 content 3 STATE_OBSERVED",
      "reconcile DOUBTFUL_WRITE_NOT_PRESENT (content 3)",
      "5 prove B owns the lease (renew): Lease Renew 200 ACCEPTED_WRITE",
      -- the conditioned retry by B, allowed once B is proven
      "12 rev 5 with B: Put Blob rev 5 201 ACCEPTED_WRITE",
      "12 read back rev 5: Get Blob 200 content 5 STATE_OBSERVED",
      "13 rev 6 with A: Put Blob rev 6 412 LeaseIdMismatchWithBlobOperation EXPECTED_REJECTION",
      "13 rev 5 still there: Get Blob 200 content 5 STATE_OBSERVED",
    }, CLEANUP, { "decision ACCEPT, window REPRODUCED" }),
    decision = "ACCEPT",
    window = "REPRODUCED",
    checks = {
      ["retries revision 5 only with B's lease"] = function(_, rows)
        local puts = 0
        for _, r in ipairs(rows) do
          if r.record == "outcome" and r.payload_revision == 5 then
            puts = puts + 1
            assert.are.equal("B", r.lease_alias_supplied)
          end
        end
        assert.are.equal(2, puts)
      end,
    },
  },
  {
    title = "fixture documented/rev5-lost.recovery-rev3-stop (after rev5-lost)",
    branch = { "RECONCILE confirmed owner, content uncertain" },
    phases = { { MAIN, "documented/rev5-lost" },
      { REC, "documented/rev5-lost.recovery-rev3-stop", { "--stop-after", "5" } } },
    exits = { 2, 3 },
    trace = lines(REV5_LOST, {
      "recovery, open intents 0",
      "2-4 reconcile with the ledger: Get Blob Properties 200 leased/locked STATE_OBSERVED",
      "2-4 reconcile with the ledger: Get Blob 200 content 3 STATE_OBSERVED",
      "reconcile DOUBTFUL_WRITE_NOT_PRESENT (content 3)",
      "5 prove B owns the lease (renew): Lease Renew 200 ACCEPTED_WRITE",
      "stop 5 prove B owns the lease (renew) stop-after",
      "decision RECONCILE, window REPRODUCED",
    }),
    decision = "RECONCILE",
    window = "REPRODUCED",
    reasons = { "owner confirmed but a doubtful Put Blob was not settled by a later accepted write" },
  },
  {
    title = "fixture documented/acquire-lost",
    branch = { "HOLD unreconciled UNKNOWN_OUTCOME" },
    phases = { { MAIN, "documented/acquire-lost" } },
    exits = { 2 },
    trace = ACQUIRE_LOST,
    decision = "HOLD",
    window = "REPRODUCED",
    reasons = { "(Lease Acquire by B): UNKNOWN_OUTCOME, not reconciled" },
  },
  {
    title = "fixture documented/acquire-lost.recovery-proven (after acquire-lost)",
    branch = { "ACCEPT after recovery" },
    phases = { { MAIN, "documented/acquire-lost" }, { REC, "documented/acquire-lost.recovery-proven" } },
    exits = { 2, 0 },
    trace = lines(ACQUIRE_LOST, {
      "recovery, open intents 0",
      "2-4 reconcile with the ledger: Get Blob Properties 200 leased/locked STATE_OBSERVED",
      "2-4 reconcile with the ledger: Get Blob 200 content 3 STATE_OBSERVED",
      "reconcile MATCH (content 3)",
      "5 prove B owns the lease (renew): Lease Renew 200 ACCEPTED_WRITE",
      "12 rev 5 with B: Put Blob rev 5 201 ACCEPTED_WRITE",
      "12 read back rev 5: Get Blob 200 content 5 STATE_OBSERVED",
      "13 rev 6 with A: Put Blob rev 6 412 LeaseIdMismatchWithBlobOperation EXPECTED_REJECTION",
      "13 rev 5 still there: Get Blob 200 content 5 STATE_OBSERVED",
    }, CLEANUP, { "decision ACCEPT, window REPRODUCED" }),
    decision = "ACCEPT",
    window = "REPRODUCED",
  },
  {
    title = "fixture documented/acquire-lost.recovery-not-proven (after acquire-lost)",
    branch = { "HOLD ownership not proven" },
    phases = { { MAIN, "documented/acquire-lost" }, { REC, "documented/acquire-lost.recovery-not-proven" } },
    exits = { 2, 2 },
    trace = lines(ACQUIRE_LOST, {
      "recovery, open intents 0",
      "2-4 reconcile with the ledger: Get Blob Properties 200 leased/locked STATE_OBSERVED",
      "2-4 reconcile with the ledger: Get Blob 200 content 3 STATE_OBSERVED",
      "reconcile MATCH (content 3)",
      -- leased, but not B's: the renew is refused
      "5 prove B owns the lease (renew): Lease Renew 409 LeaseIdMismatchWithLeaseOperation EXPECTED_REJECTION",
      "stop 5 left-for-operator",
      "decision HOLD, window REPRODUCED",
    }),
    decision = "HOLD",
    window = "REPRODUCED",
    reasons = { "ownership not proven: B's acquire outcome is unknown and no conditioned renew proved it" },
    checks = {
      ["writes nothing and leaves the blob"] = function(_, _, runs)
        assert.matches("B's ownership is not proven: no mutation; the blob is left for the operator", runs[2].out)
      end,
    },
  },
}

describe("documented fixtures, replayed", function()
  teardown(rp.cleanup)
  for _, c in ipairs(cases) do rp.case(api, c) end
end)

-- DESIGN.md section 5, branch by branch: the fixture that drives it. The
-- cases above assert the decision and the reason at run time; this checks
-- that none is missing.
describe("DESIGN.md section 5: every decision branch has a fixture", function()
  teardown(rp.cleanup)
  local branches = {
    ["ACCEPT"] = "ACCEPT", ["ACCEPT after recovery"] = "ACCEPT",
    ["HOLD unreconciled UNKNOWN_OUTCOME"] = "HOLD", ["HOLD EVIDENCE_ERROR"] = "HOLD",
    ["HOLD unexplained discrepancy"] = "HOLD", ["HOLD polling deadline"] = "HOLD",
    ["HOLD failed properties read"] = "HOLD", ["HOLD unexpected state"] = "HOLD",
    ["HOLD ownership not proven"] = "HOLD",
    ["RECONCILE content differs"] = "RECONCILE", ["RECONCILE rejected revision found"] = "RECONCILE",
    ["RECONCILE confirmed owner, content uncertain"] = "RECONCILE",
    ["window REPRODUCED"] = nil, ["window INCONCLUSIVE_WINDOW"] = nil,
  }
  local names = {}
  for b in pairs(branches) do names[#names + 1] = b end
  names[#names + 1] = "window REPRODUCED"
  names[#names + 1] = "window INCONCLUSIVE_WINDOW"
  table.sort(names)
  for _, b in ipairs(names) do
    it(b, function()
      local found
      for _, c in ipairs(cases) do
        for _, cb in ipairs(c.branch) do
          if cb == b then found = c end
        end
      end
      assert.is_truthy(found, "no documented fixture drives " .. b)
      if branches[b] then
        assert.are.equal(branches[b], found.decision)
        assert.is_true(b:match("^ACCEPT") ~= nil or #(found.reasons or {}) > 0, "the case names the reason")
      else
        assert.are.equal(b:match("^window (.*)"), found.window)
      end
    end)
  end
  it("WAIT (the latest fresh read breaking, the flow needing broken): emulator/wait-while-breaking", function()
    local dir = rp.tmpdir() .. "/wait"
    local rc = rp.replay(MAIN, "emulator/wait-while-breaking", dir, { "--stop-after", "8" })
    assert.are.equal(1, rc)
    assert.are.equal("WAIT", rp.decision(dir).decision)
  end)
end)
