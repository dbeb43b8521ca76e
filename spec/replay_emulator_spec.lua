-- The fixtures recorded from Azurite (fixtures/emulator, `make fixtures`),
-- replayed strictly and offline: no Azurite, no network, no credential.
-- One describe per fixture: exit code, classes row by row, decision,
-- verify. A run of equal poll rows counts once (their number follows the
-- recording's timing).
local helper = require "helper"
local rp = require "support.replay"

local api = { describe = describe, it = it, setup = setup }

-- Steps 1 to 6 of one main-handoff lifecycle, as Azurite answers them.
local function lifecycle(epoch, period)
  return {
    "lifecycle " .. epoch,
    "1 create rev 0: Put Blob rev 0 201 ACCEPTED_WRITE",
    "1 read back rev 0: Get Blob 200 content 0 STATE_OBSERVED",
    "2 acquire A (infinite): Lease Acquire 201 ACCEPTED_WRITE",
    "3 rev 1 with A: Put Blob rev 1 201 ACCEPTED_WRITE",
    "3 read back rev 1: Get Blob 200 content 1 STATE_OBSERVED",
    "4 rev 2 without lease: Put Blob rev 2 412 LeaseIdMissing EXPECTED_REJECTION",
    "4 rev 1 still there: Get Blob 200 content 1 STATE_OBSERVED",
    "5 unconditioned read: Get Blob 200 content 1 STATE_OBSERVED",
    "6 properties before break: Get Blob Properties 200 leased/locked STATE_OBSERVED",
    "6 break, period " .. period .. ": Lease Break 202 BREAK_ACCEPTED_NOT_COMPLETE",
  }
end

local REPRODUCED = {
  "7 probe rev 3 while breaking: Get Blob Properties 200 breaking/locked STATE_OBSERVED",
  "7 probe rev 3 while breaking: Put Blob rev 3 201 ACCEPTED_WRITE",
  "7 probe rev 3 while breaking: Get Blob Properties 200 breaking/locked STATE_OBSERVED",
  "finding window REPRODUCED",
  "7 read back after probe: Get Blob 200 content 3 STATE_OBSERVED",
  "8 fresh properties: Get Blob Properties 200 breaking/locked STATE_OBSERVED",
}

local TO_THE_END = {
  "8 B acquire while breaking: Lease Acquire 409 LeaseAlreadyPresent EXPECTED_REJECTION",
  "9 wait for broken: Get Blob Properties 200 breaking/locked STATE_OBSERVED",
  "9 wait for broken: Get Blob Properties 200 broken/unlocked STATE_OBSERVED",
  "finding poll BROKEN",
  "10 rev 4 with stale A: Put Blob rev 4 412 LeaseNotPresentWithBlobOperation EXPECTED_REJECTION",
  "11 acquire B (infinite): Lease Acquire 201 ACCEPTED_WRITE",
  "12 rev 5 with B: Put Blob rev 5 201 ACCEPTED_WRITE",
  "12 read back rev 5: Get Blob 200 content 5 STATE_OBSERVED",
  "13 rev 6 with A: Put Blob rev 6 412 LeaseIdMismatchWithBlobOperation EXPECTED_REJECTION",
  "13 rev 5 still there: Get Blob 200 content 5 STATE_OBSERVED",
  "14 release B: Lease Release 200 ACCEPTED_WRITE",
  "14 confirm release: Get Blob Properties 200 available/unlocked STATE_OBSERVED",
  "14 delete: Delete Blob 202 ACCEPTED_WRITE",
  "14 confirm absent: Get Blob Properties 404 BlobNotFound STATE_OBSERVED",
  "decision ACCEPT, window REPRODUCED",
}

-- The preflight C sends before the first mutation (invariant 15), as
-- Azurite answered it: no container yet on a fresh Azurite, no blob after.
local function preflight(before, code)
  return "preflight: properties before " .. before .. ": Get Blob Properties 404 " .. code .. " STATE_OBSERVED"
end

-- Azurite's deviations are written down and explained, never corrected.
local function explained(_, rows)
  local seen = 0
  for _, r in ipairs(rows) do
    for _, d in ipairs(r.record == "outcome" and r.discrepancy or {}) do
      seen = seen + 1
      assert.is_string(d.explained_by, r.event_id .. ": " .. d.text)
      assert.matches("^azurite%-3%.37%-", d.explained_by)
    end
  end
  assert.is_true(seen > 0, "an Azurite run always shows its x-ms-version deviation")
end

local function manifest_says_replay(dir)
  local m = require("cjson").decode(helper.read(dir .. "/manifest.json"))
  assert.are.equal("replay", m.endpoint_kind)
  assert.are.equal("emulator", m.fixture_label)
  assert.are.equal("replay.invalid", m.account_host)
end

describe("emulator fixtures, replayed", function()
  teardown(rp.cleanup)

  rp.case(api, {
    title = "fixture emulator/main-handoff-accept",
    phases = { { "main_handoff", "emulator/main-handoff-accept" } },
    exits = { 0 },
    trace = rp.cat({ preflight("0 create container", "ContainerNotFound"),
      "0 create container: Create Container 201 ACCEPTED_WRITE" }, lifecycle(1, 30), REPRODUCED, TO_THE_END),
    decision = "ACCEPT",
    window = "REPRODUCED",
    checks = {
      ["explains every Azurite deviation"] = explained,
      ["labels the manifest replay, with the fixture's label"] = manifest_says_replay,
      ["follows the recorded timings on a virtual clock"] = function(_, rows)
        local brk, broken
        for _, r in ipairs(rows) do
          if r.operation == "Lease Break" and r.record == "outcome" then brk = r end
          if r.observed_lease_state == "broken" and not broken then broken = r end
        end
        -- the 30 s break is in the rows, though the replay took milliseconds
        assert.is_true(broken.mono_end_ns - brk.mono_end_ns >= 30e9)
      end,
    },
  })

  rp.case(api, {
    title = "fixture emulator/gap-control (after main-handoff-accept, on its evidence)",
    phases = {
      { "main_handoff", "emulator/main-handoff-accept" },
      { "gap_control", "emulator/gap-control", function(dirs)
        return { "--destructive", "--after", dirs.ev, "--break-period", "10" }
      end, dir = "gap" },
    },
    exits = { 0, 0 },
    trace = {
      "lifecycle 1 destructive",
      preflight("1 create rev 100", "BlobNotFound"),
      "1 create rev 100: Put Blob rev 100 201 ACCEPTED_WRITE",
      "1 read back rev 100: Get Blob 200 content 100 STATE_OBSERVED",
      "2 acquire A (infinite): Lease Acquire 201 ACCEPTED_WRITE",
      "3 rev 101 with A: Put Blob rev 101 201 ACCEPTED_WRITE",
      "3 read back rev 101: Get Blob 200 content 101 STATE_OBSERVED",
      "4 break, period 10: Lease Break 202 BREAK_ACCEPTED_NOT_COMPLETE",
      "4 wait for broken: Get Blob Properties 200 breaking/locked STATE_OBSERVED",
      "4 wait for broken: Get Blob Properties 200 broken/unlocked STATE_OBSERVED",
      "finding poll BROKEN",
      -- no lease ID, accepted: the unlocked gap
      "5 rev 102 WITHOUT a lease: Put Blob rev 102 201 ACCEPTED_WRITE",
      "6 read back rev 102: Get Blob 200 content 102 STATE_OBSERVED",
      "7 delete: Delete Blob 202 ACCEPTED_WRITE",
      "7 confirm absent: Get Blob Properties 404 BlobNotFound STATE_OBSERVED",
      "decision ACCEPT, window NOT_ATTEMPTED",
    },
    decision = "ACCEPT",
    window = "NOT_ATTEMPTED",
    checks = {
      ["says an unconditioned writer entered the gap"] = function(dir, _, runs)
        assert.matches("^Unlocked%-gap control accepted", rp.decision(dir).statement)
        assert.matches("An unconditioned writer %(B, no lease ID%) entered the unlocked gap", runs[2].out)
      end,
      ["explains every Azurite deviation"] = explained,
    },
  })

  rp.case(api, {
    title = "fixture emulator/window-missed-then-repeat",
    phases = { { "main_handoff", "emulator/window-missed-then-repeat",
      { "--first-break-period", "0", "--break-period", "10" } } },
    exits = { 0 },
    trace = rp.cat({ preflight("0 create container", "BlobNotFound"),
      "0 create container: Create Container 409 ContainerAlreadyExists STATE_OBSERVED" }, lifecycle(1, 0), {
        -- the probe comes late: broken at its first read, so no write
        "7 probe rev 3 while breaking: Get Blob Properties 200 broken/unlocked STATE_OBSERVED",
        "finding window INCONCLUSIVE_WINDOW",
        "7 read back after probe: Get Blob 200 content 1 STATE_OBSERVED",
        "7 finish lifecycle: wait broken: Get Blob Properties 200 broken/unlocked STATE_OBSERVED",
        "finding poll BROKEN",
        "7 finish lifecycle: delete: Delete Blob 202 ACCEPTED_WRITE",
        -- the next lifecycle starts only once a read shows the blob gone
        "7 confirm absent: Get Blob Properties 404 BlobNotFound STATE_OBSERVED",
      }, lifecycle(2, 10), REPRODUCED, TO_THE_END),
    decision = "ACCEPT",
    window = "REPRODUCED",
    checks = {
      ["keeps the first attempt's INCONCLUSIVE_WINDOW, with no write sent"] = function(_, rows)
        local findings = {}
        for _, r in ipairs(rows) do
          if r.record == "finding" and r.kind == "window" then findings[#findings + 1] = r end
        end
        assert.are.equal(2, #findings)
        assert.are.equal("INCONCLUSIVE_WINDOW", findings[1].result)
        assert.are.equal("", findings[1].put_event)
        assert.matches("late probe proves nothing", findings[1].reason)
        assert.are.equal("REPRODUCED", findings[2].result)
      end,
    },
  })

  rp.case(api, {
    title = "fixture emulator/wait-while-breaking",
    phases = { { "main_handoff", "emulator/wait-while-breaking", { "--stop-after", "8" } } },
    exits = { 1 },
    trace = rp.cat({ preflight("0 create container", "BlobNotFound"),
      "0 create container: Create Container 409 ContainerAlreadyExists STATE_OBSERVED" }, lifecycle(1, 30), REPRODUCED,
      { "stop 8 fresh properties stop-after", "decision WAIT, window REPRODUCED" }),
    decision = "WAIT",
    window = "REPRODUCED",
    reasons = { "is breaking/locked; the flow needs broken" },
  })
end)
