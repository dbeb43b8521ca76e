-- Invariant 15, do no harm to the target, replayed offline from documented
-- fixtures (tools/fixtures/make_documented.js): a blob that already
-- exists, one created by someone else between the preflight and the
-- create, a cleanup Delete whose If-Match no longer matches, and a
-- preflight the service refuses. Plus the preflight and the conditional
-- headers every fixture, documented or recorded, carries on the wire.
local helper = require "helper"
local rp = require "support.replay"
local cjson = require "cjson"

local api = { describe = describe, it = it, setup = setup }
local MAIN = "main_handoff"

local function fixture(name)
  return cjson.decode(helper.read(rp.fixture(name)))
end

local function mutations(rows)
  local n = 0
  for _, r in ipairs(rows) do
    if r.record == "intent" and r.http_method ~= "GET" and r.http_method ~= "HEAD" then n = n + 1 end
  end
  return n
end

local WHAT_TO_DO = "leaselua only creates its own disposable blob; choose an unused AZURE_STORAGE_BLOB " ..
  "or delete it yourself if it is yours"

local cases = {
  {
    title = "fixture documented/target-exists",
    phases = { { MAIN, "documented/target-exists" } },
    exits = { 64 },
    trace = {
      "preflight: properties before 0 create container: Get Blob Properties 200 available/unlocked STATE_OBSERVED",
      "refusal LL_E_TARGET_EXISTS Create Container",
      "decision HOLD, window NOT_ATTEMPTED",
    },
    decision = "HOLD",
    window = "NOT_ATTEMPTED",
    reasons = { "the blob /lease-handoff-lab/writer-handoff.json already exists (preflight e0001: 200, ETag " ..
      "\"0x8DE1A2B3C4D5E6F\", 31 bytes, lease available/unlocked): " .. WHAT_TO_DO,
      "no mutation was sent: the target is as the run found it" },
    checks = {
      ["sends no mutation and says so in the decision's target_stop"] = function(dir, rows, runs)
        assert.are.equal(0, mutations(rows))
        local stop = rp.decision(dir).target_stop
        assert.are.equal("target_exists", stop.kind)
        assert.are.equal("LL_E_TARGET_EXISTS", stop.code)
        assert.are.equal(15, stop.invariant)
        assert.are.equal(64, stop.exit)
        assert.are.equal(0, stop.mutations_sent)
        assert.truthy(runs[1].out:find("stopped: LL_E_TARGET_EXISTS: Create Container refused (invariant 15): " ..
          "the blob /lease-handoff-lab/writer-handoff.json already exists", 1, true), runs[1].out)
      end,
      ["records the existing blob's properties from the preflight read"] = function(dir)
        local r = rp.rows_of_step(dir, "preflight")[1]
        assert.is_true(r.preflight)
        assert.are.equal("\"0x8DE1A2B3C4D5E6F\"", r.etag)
        assert.are.equal("31", r.content_length)
        assert.are.equal("available", r.observed_lease_state)
      end,
    },
  },
  {
    title = "fixture documented/create-race",
    phases = { { MAIN, "documented/create-race" } },
    exits = { 64 },
    trace = {
      "preflight: properties before 0 create container: Get Blob Properties 404 BlobNotFound STATE_OBSERVED",
      "0 create container: Create Container 201 ACCEPTED_WRITE",
      "lifecycle 1",
      "1 create rev 0: Put Blob rev 0 409 BlobAlreadyExists EXPECTED_REJECTION",
      "target exists: properties: Get Blob Properties 200 available/unlocked STATE_OBSERVED",
      "1 read back rev 0: Get Blob 200 content undeclared STATE_OBSERVED",
      "refusal LL_E_TARGET_EXISTS Lease Acquire",
      "decision HOLD, window NOT_ATTEMPTED",
    },
    decision = "HOLD",
    window = "NOT_ATTEMPTED",
    reasons = { "the blob /lease-handoff-lab/writer-handoff.json already exists (event e0003: the create of " ..
      "revision 0 was refused 409 BlobAlreadyExists): " .. WHAT_TO_DO,
      "2 mutation request(s) were sent before the stop; none after" },
    checks = {
      ["sends the create with If-None-Match: * and stores the 409 verbatim, no discrepancy"] = function(dir)
        local r = rp.rows_of_step(dir, "1 create rev 0")[1]
        assert.are.equal("*", r.if_none_match)
        assert.matches("if_none_match=%*", r.request_shape)
        assert.are.equal(409, r.http_status)
        assert.are.equal("BlobAlreadyExists", r.azure_error_code)
        assert.are.equal("The specified blob already exists.", r.error_message:match("^[^\n]*"))
        assert.are.equal("201; 409 BlobAlreadyExists if the blob exists", r.expectation)
        assert.are.same({}, r.discrepancy)
      end,
    },
  },
  {
    title = "fixture documented/cleanup-condition-fails",
    phases = { { MAIN, "documented/cleanup-condition-fails" } },
    exits = { 3 },
    trace = {
      "preflight: properties before 0 create container: Get Blob Properties 404 ContainerNotFound STATE_OBSERVED",
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
      -- another writer changed the blob after the release: the Delete's If-Match fails
      "14 delete: Delete Blob 412 ConditionNotMet EXPECTED_REJECTION",
      "decision RECONCILE, window REPRODUCED",
    },
    decision = "RECONCILE",
    window = "REPRODUCED",
    reasons = { "the cleanup Delete was refused 412 ConditionNotMet: the blob changed after the run's last " ..
      "read-back (If-Match \"" },
    checks = {
      ["conditions the Delete on revision 5's ETag, read back, and the service refuses it"] = function(dir)
        local put = rp.rows_of_step(dir, "12 rev 5 with B")[1]
        local back = rp.rows_of_step(dir, "12 read back rev 5")[1]
        local del = rp.rows_of_step(dir, "14 delete")[1]
        assert.are.equal(put.etag, back.etag)
        assert.are.equal(put.etag, del.if_match)
        assert.are.equal(412, del.http_status)
        assert.are.equal("ConditionNotMet", del.azure_error_code)
        assert.are.equal("EXPECTED_REJECTION", del.result_classification)
        assert.are.same({}, del.discrepancy)
        assert.matches("412 ConditionNotMet if the blob changed after the read%-back", del.expectation)
      end,
    },
  },
  {
    title = "fixture documented/preflight-forbidden",
    phases = { { MAIN, "documented/preflight-forbidden" } },
    exits = { 64 },
    trace = {
      "preflight: properties before 0 create container: Get Blob Properties 403 InsufficientAccountPermissions " ..
        "EVIDENCE_ERROR",
      "refusal LL_E_PREFLIGHT Create Container",
      "decision HOLD, window NOT_ATTEMPTED",
    },
    decision = "HOLD",
    window = "NOT_ATTEMPTED",
    reasons = { "the preflight read of /lease-handoff-lab/writer-handoff.json on replay.invalid was refused 403 " ..
      "InsufficientAccountPermissions: nothing was mutated; check the credential",
      "no mutation was sent" },
    checks = {
      ["sends nothing after the read"] = function(_, rows)
        assert.are.equal(0, mutations(rows))
      end,
    },
  },
}

describe("do-no-harm fixtures, replayed", function()
  teardown(rp.cleanup)
  for _, c in ipairs(cases) do rp.case(api, c) end
end)

describe("every fixture carries the conditional headers, documented and recorded", function()
  local files = {}
  for _, kind in ipairs { "documented", "emulator" } do
    local p = io.popen("ls " .. helper.quote(helper.root .. "/fixtures/" .. kind) .. "/*.json")
    for f in p:lines() do files[#files + 1] = f end
    p:close()
  end

  it("the first Put Blob of each lifecycle sends If-None-Match: *, every Delete an If-Match", function()
    local deletes = 0
    for _, f in ipairs(files) do
      local x = fixture(f)
      local creates = 0
      local written = f:find("%.recovery%-") ~= nil -- its lifecycle began in the main run
      for i, e in ipairs(x.exchanges) do
        local q = e.request
        local h = q.headers
        if q.method == "PUT" and not q.query then
          if written then
            assert.is_nil(h["if-none-match"], f .. " #" .. i .. ": only the create carries If-None-Match")
          else
            assert.are.equal("*", h["if-none-match"], f .. " #" .. i .. ": the create carries If-None-Match: *")
            creates = creates + 1
          end
          written = written or (e.response == nil or e.response.status == 201)
        elseif q.method == "DELETE" then
          assert.matches('^"0x%x+"$', h["if-match"] or "", f .. " #" .. i .. ": the Delete carries If-Match")
          deletes = deletes + 1
          written = false -- a fresh lifecycle follows
        end
      end
      -- every main run creates its blob, except those stopped by the preflight
      local stopped = f:find("target%-exists") or f:find("preflight%-forbidden")
      if not f:find("%.recovery%-") and not stopped then
        assert.is_true(creates >= 1, f .. ": no create")
      end
    end
    assert.is_true(deletes >= 8, "deletes seen: " .. deletes)
  end)

  it("each main run's first request is the preflight Get Blob Properties", function()
    for _, f in ipairs(files) do
      if not f:find("%.recovery%-") then
        local q = fixture(f).exchanges[1].request
        assert.are.equal("HEAD", q.method, f)
        assert.is_nil(q.query, f)
      end
    end
  end)
end)
