-- The three flows as users run them, against the live Azurite: the main
-- handoff, the unlocked-gap control, and recovery after a SIGKILL.
local helper = require "helper"

local function env(blob)
  local e = helper.live_env(blob)
  e.LEASELUA_CA_FILE = os.getenv("LEASELUA_CA_FILE")
  return e
end

local function revisions(rows, class)
  local out = {}
  for _, r in ipairs(helper.outcomes(rows)) do
    if r.operation == "Put Blob" and r.result_classification == class then
      out[#out + 1] = math.tointeger(r.payload_revision)
    end
  end
  return table.concat(out, ",")
end

local function verify_ok(dir)
  local rc, out = helper.run({ "verify", dir })
  assert.are.equal(0, rc, out)
  assert.matches("consistent", out)
end

describe("flows #live", function()
  local manifest, main_dir, blob
  setup(function()
    manifest = helper.manifest_file(helper.tmpdir())
    blob = helper.unique_blob("flow")
  end)
  teardown(helper.cleanup)

  it("main handoff ends ACCEPT with content history 0 1 3 5 and 2 4 6 rejected", function()
    main_dir = helper.tmpdir() .. "/main"
    local rc, out = helper.run({ "scripts/main_handoff.lua", "--break-period", "2", "--manifest", manifest,
      "--evidence", main_dir }, env(blob))
    assert.are.equal(0, rc, out)
    assert.matches("DECISION: ACCEPT", out)
    assert.matches("emulator evidence, not a cloud qualification", out)
    local rows = helper.rows(main_dir)
    assert.are.equal("0,1,3,5", revisions(rows, "ACCEPTED_WRITE"))
    assert.are.equal("2,4,6", revisions(rows, "EXPECTED_REJECTION"))
    verify_ok(main_dir)
  end)

  it("gap control refuses without --destructive or without an accepted main run", function()
    local rc, _, err = helper.run({ "scripts/gap_control.lua", "--manifest", manifest,
      "--evidence", helper.tmpdir() .. "/g", "--after", main_dir }, env(blob))
    assert.are.equal(64, rc)
    assert.matches("%-%-destructive", err)
    local held = helper.tmpdir() .. "/held"
    helper.run({ "scripts/main_handoff.lua", "--stop-after", "3", "--manifest", manifest,
      "--evidence", held }, env(helper.unique_blob("held")))
    local gdir = helper.tmpdir() .. "/g2"
    rc, _, err = helper.run({ "scripts/gap_control.lua", "--manifest", manifest, "--destructive",
      "--evidence", gdir, "--after", held }, env(blob))
    assert.are.equal(64, rc)
    assert.matches("not an accepted main handoff", err)
    -- nothing was sent: the ledger holds no intent
    for _, r in ipairs(helper.rows(gdir)) do assert.are_not.equal("intent", r.record) end
  end)

  it("gap control after the accepted main run commits 102 without a lease", function()
    local gdir = helper.tmpdir() .. "/gap"
    local rc, out = helper.run({ "scripts/gap_control.lua", "--break-period", "1", "--manifest", manifest,
      "--destructive", "--after", main_dir, "--evidence", gdir }, env(blob))
    assert.are.equal(0, rc, out)
    assert.matches("UNCONDITIONED writer", out)
    local rows = helper.rows(gdir)
    local gap
    for _, r in ipairs(helper.outcomes(rows)) do
      if r.payload_revision == 102 then gap = r end
    end
    assert.are.equal("omitted", gap.lease_alias_supplied)
    assert.are.equal(201, gap.http_status)
    assert.are.equal("100,101,102", revisions(rows, "ACCEPTED_WRITE"))
    verify_ok(gdir)
  end)

  it("recovery after SIGKILL during polling resumes and reaches ACCEPT", function()
    local b = helper.unique_blob("kill9")
    local ev = helper.killed_after(9, env(b), manifest)
    -- the kill left no decision; the ledger still verifies
    verify_ok(ev)
    os.execute("sleep 3")
    local rc, out = helper.run({ "scripts/recovery.lua", "--recover", "--evidence", ev }, env(b))
    assert.are.equal(0, rc, out)
    assert.matches("DECISION: ACCEPT", out)
    assert.matches("resumes after broken", out)
    verify_ok(ev)
  end)

  it("recovery after SIGKILL right after B's acquire proves B by renew and never rewrites blindly", function()
    local b = helper.unique_blob("kill11")
    local ev = helper.killed_after(11, env(b), manifest)
    verify_ok(ev)
    local rc, out = helper.run({ "scripts/recovery.lua", "--recover", "--evidence", ev }, env(b))
    assert.are.equal(0, rc, out)
    assert.matches("5 prove B owns the lease %(renew%)%s+200", out)
    assert.matches("DECISION: ACCEPT", out)
    local rows = helper.rows(ev)
    assert.are.equal("0,1,3,5", revisions(rows, "ACCEPTED_WRITE"))
    verify_ok(ev)
  end)

  it("recovery refuses to run against another blob", function()
    local rc, _, err = helper.run({ "scripts/recovery.lua", "--recover", "--evidence", main_dir },
      env(helper.unique_blob("other")))
    assert.are.equal(64, rc)
    assert.matches("differs from the recorded run", err)
  end)
end)
