-- Every Blob operation the Lua API can send, once, against the live Azurite:
-- each row's status, error code and class, then the same outcomes in the
-- export ledger and a clean `leaselua verify`. (Change Lease has no Lua
-- method, so it is not exercised here.)
local helper = require "helper"

local LEASE_FAMILY = {
  LeaseAlreadyPresent = true, LeaseAlreadyBroken = true,
  LeaseIdMismatchWithLeaseOperation = true, LeaseIsBreakingAndCannotBeAcquired = true,
  LeaseIsBreakingAndCannotBeChanged = true, LeaseIsBrokenAndCannotBeRenewed = true,
  LeaseNotPresentWithLeaseOperation = true,
}

describe("blob operations through the Lua API #live", function()
  if not helper.have_live() then
    it("needs a live Azurite (tools/run-specs.sh)", function() pending("AZURE_STORAGE_ACCOUNT_URL is not set") end)
    return
  end

  local ll = require "leaselua"
  local cjson = require "cjson"
  local dir, blob
  local rows = {}    -- label -> row returned to Lua
  local errors = {}  -- label -> error raised or returned
  local order = {}   -- labels of request rows, in order
  local early_refusal
  local decision, exit_code

  -- JSON null (cjson.null) as nil, so export rows compare with Lua rows.
  local function v(x)
    if x == cjson.null then return nil end
    return x
  end

  setup(function()
    dir = helper.tmpdir() .. "/ev"
    blob = helper.unique_blob("ops")
    local run = ll.open {
      evidence = dir, manifest = helper.manifest_table,
      account_url = os.getenv("AZURE_STORAGE_ACCOUNT_URL"),
      container = "lease-handoff-lab", blob = blob,
      ca_file = os.getenv("LEASELUA_CA_FILE"),
    }
    for _, d in ipairs { { 0, "A" }, { 1, "A" }, { 2, "A" }, { 3, "A" }, { 5, "B" } } do
      run:declare(d[1], d[2])
    end
    local A, B, U = run:writer("A"), run:writer("B"), run:unbound("A")
    -- Runs one step; a raise or a transport failure is kept, not thrown,
    -- so each `it` below reports its own step.
    local function step(label, fn, ...)
      local ok, row, err = pcall(fn, ...)
      if not ok then
        errors[label] = row
      elseif row == nil then
        errors[label] = err
      else
        rows[label] = row
        if row.record == "outcome" then order[#order + 1] = label end
      end
      return rows[label]
    end
    step("create container", run.create_container, run)
    step("put rev 0 unbound", U.put, U, 0)
    step("get blob", run.read, run)
    step("properties before lease", run.properties, run)
    step("acquire A", A.acquire, A, { duration = -1 })
    step("put rev 1 with A", A.put, A, 1)
    step("read back rev 1", run.read, run)
    step("put rev 2 without lease", U.put, U, 2, { control = true })
    step("put rev 5 with wrong lease", B.put, B, 5)
    step("renew A", A.renew, A)
    step("change A", A.change, A)
    step("renew A after change", A.renew, A)
    step("break period 2", run.break_lease, run, { period = 2 })
    step("properties breaking", run.properties, run)
    local ok, e = pcall(B.acquire, B, { duration = -1 })
    early_refusal = { ok = ok, err = e }
    step("probe", run.probe, run, A, 3)
    step("read back probe", run.read, run)
    step("acquire B while breaking", B.acquire, B, { duration = -1 })
    step("wait for broken", run.wait_for_broken, run, { deadline_ms = 20000 })
    step("properties broken", run.properties, run)
    step("acquire B", B.acquire, B, { duration = -1 })
    step("release B", B.release, B)
    step("delete", U.delete, U)
    decision, exit_code = run:finish()
    run:close()
  end)

  teardown(function()
    helper.cleanup()
  end)

  -- The common checks of one request row, then the row.
  local function outcome(label, status, code, class)
    assert.is_nil(errors[label], label .. " raised or failed: " .. tostring(errors[label]))
    local r = rows[label]
    assert.is_table(r, label .. " has no row")
    assert.are.equal("outcome", r.record)
    assert.are.equal(status, r.http_status, label .. ": http_status")
    assert.are.equal(code, r.azure_error_code, label .. ": azure_error_code")
    assert.are.equal(class, r.result_classification, label .. ": result_classification")
    assert.are.equal(1, r.emitted_requests, label .. ": one request head on the wire")
    assert.are.equal("emulator", r.endpoint_kind)
    assert.is_nil(r.lease_real_id, "rows handed to Lua carry no real lease ID")
    for _, d in ipairs(r.discrepancy or {}) do
      assert.is_string(d.explained_by, label .. ": unexplained discrepancy: " .. tostring(d.text))
    end
    return r
  end

  it("Create Container: 201, or 409 ContainerAlreadyExists when it exists", function()
    local r = rows["create container"]
    assert.is_table(r, tostring(errors["create container"]))
    if r.http_status == 201 then
      outcome("create container", 201, nil, "ACCEPTED_WRITE")
    else
      outcome("create container", 409, "ContainerAlreadyExists", "STATE_OBSERVED")
    end
  end)

  it("Put Blob, unbound, revision 0: 201", function()
    local r = outcome("put rev 0 unbound", 201, nil, "ACCEPTED_WRITE")
    assert.are.equal(0, r.payload_revision)
    assert.are.equal("omitted", r.lease_alias_supplied)
    assert.are.equal(select(2, ll.payload(0, "A")), r.payload_sha256)
  end)

  it("Get Blob: 200, content revision 0", function()
    local r = outcome("get blob", 200, nil, "STATE_OBSERVED")
    assert.are.equal(0, r.content_revision)
    assert.are.equal(select(2, ll.payload(0, "A")), r.content_sha256)
  end)

  it("Get Blob Properties: 200, available/unlocked", function()
    local r = outcome("properties before lease", 200, nil, "STATE_OBSERVED")
    assert.are.equal("available", r.observed_lease_state)
    assert.are.equal("unlocked", r.observed_lease_status)
  end)

  it("Lease acquire by A, infinite: 201 with the proposed lease ID", function()
    local r = outcome("acquire A", 201, nil, "ACCEPTED_WRITE")
    assert.are.equal("A", r.lease_alias_supplied)
    assert.is_true(r.returned_lease_matches_proposed)
  end)

  it("Put Blob with A's lease: 201, then read back", function()
    local r = outcome("put rev 1 with A", 201, nil, "ACCEPTED_WRITE")
    assert.are.equal("A", r.lease_alias_supplied)
    assert.matches("lease_header=present", r.request_shape)
    assert.are.equal(1, outcome("read back rev 1", 200, nil, "STATE_OBSERVED").content_revision)
  end)

  it("Put Blob without a lease (negative control): 412 LeaseIdMissing", function()
    local r = outcome("put rev 2 without lease", 412, "LeaseIdMissing", "EXPECTED_REJECTION")
    assert.matches("lease_header=absent", r.request_shape)
  end)

  it("Put Blob with another writer's lease: 412 LeaseIdMismatchWithBlobOperation", function()
    local r = outcome("put rev 5 with wrong lease", 412, "LeaseIdMismatchWithBlobOperation", "EXPECTED_REJECTION")
    assert.are.equal("B", r.lease_alias_supplied)
  end)

  it("Lease renew by A: 200", function()
    outcome("renew A", 200, nil, "ACCEPTED_WRITE")
  end)

  it("Lease change by A: 200, and A's next renew uses the new ID", function()
    outcome("change A", 200, nil, "ACCEPTED_WRITE")
    outcome("renew A after change", 200, nil, "ACCEPTED_WRITE")
  end)

  it("Lease break, period 2: 202 with x-ms-lease-time", function()
    local r = outcome("break period 2", 202, nil, "BREAK_ACCEPTED_NOT_COMPLETE")
    assert.are.equal(2, r.break_period)
    local t = tonumber(r.x_ms_lease_time)
    assert.is_number(t, "x_ms_lease_time: " .. tostring(r.x_ms_lease_time))
    assert.is_true(t >= 0 and t <= 2)
  end)

  it("Get Blob Properties while breaking: breaking/locked", function()
    local r = outcome("properties breaking", 200, nil, "STATE_OBSERVED")
    assert.are.equal("breaking", r.observed_lease_state)
    assert.are.equal("locked", r.observed_lease_status)
  end)

  it("the guard refuses B's acquire before the breaking-window probe, sending nothing", function()
    assert.is_false(early_refusal.ok)
    assert.are.equal("LL_E_ORDER", early_refusal.err.code)
    local refusals = {}
    for _, r in ipairs(helper.rows(dir)) do
      if r.record == "refusal" then refusals[#refusals + 1] = r end
    end
    assert.are.equal(1, #refusals)
    assert.are.equal("Lease Acquire", refusals[1].operation)
    assert.are.equal("LL_E_ORDER", refusals[1].code)
  end)

  it("the probe: A's write while breaking is accepted (REPRODUCED) and read back", function()
    local f = rows["probe"]
    assert.is_table(f, tostring(errors["probe"]))
    assert.are.equal("finding", f.record)
    assert.are.equal("window", f.kind)
    assert.are.equal("REPRODUCED", f.result)
    assert.are.equal(3, outcome("read back probe", 200, nil, "STATE_OBSERVED").content_revision)
  end)

  it("Lease acquire by B while breaking: 409, lease-operation family", function()
    local r = rows["acquire B while breaking"]
    assert.is_table(r, tostring(errors["acquire B while breaking"]))
    outcome("acquire B while breaking", 409, r.azure_error_code, "EXPECTED_REJECTION")
    assert.is_true(LEASE_FAMILY[r.azure_error_code] == true, tostring(r.azure_error_code))
    assert.is_false(r.returned_lease_matches_proposed)
  end)

  it("wait_for_broken: BROKEN", function()
    local f = rows["wait for broken"]
    assert.is_table(f, tostring(errors["wait for broken"]))
    assert.are.equal("finding", f.record)
    assert.are.equal("poll", f.kind)
    assert.are.equal("BROKEN", f.result)
    assert.is_true(f.polls >= 1)
  end)

  it("Get Blob Properties after the break: broken/unlocked", function()
    local r = outcome("properties broken", 200, nil, "STATE_OBSERVED")
    assert.are.equal("broken", r.observed_lease_state)
    assert.are.equal("unlocked", r.observed_lease_status)
  end)

  it("Lease acquire by B after broken: 201", function()
    local r = outcome("acquire B", 201, nil, "ACCEPTED_WRITE")
    assert.is_true(r.returned_lease_matches_proposed)
  end)

  it("Lease release by B: 200", function()
    outcome("release B", 200, nil, "ACCEPTED_WRITE")
  end)

  it("Delete Blob, unleased after the release: 202", function()
    outcome("delete", 202, nil, "ACCEPTED_WRITE")
  end)

  it("the decision is recorded (not ACCEPT: this sequence proves no handoff)", function()
    assert.are.equal("decision", decision.record)
    assert.are.equal("HOLD", decision.decision)
    assert.are.equal(2, exit_code)
  end)

  it("the export ledger holds the same outcomes, with a valid chain", function()
    local exported = helper.rows(dir)
    local by_event = {}
    for _, r in ipairs(exported) do
      if r.record == "outcome" then by_event[r.event_id] = r end
    end
    assert.is_true(#order == 20, "request rows seen: " .. #order)
    for _, label in ipairs(order) do
      local mine = rows[label]
      local e = by_event[mine.event_id]
      assert.is_table(e, label .. ": no export row for " .. tostring(mine.event_id))
      assert.are.equal(mine.seq, e.seq, label)
      assert.are.equal(mine.row_hash, e.row_hash, label)
      assert.are.equal(mine.operation, e.operation, label)
      assert.are.equal(mine.http_status, v(e.http_status), label)
      assert.are.equal(mine.azure_error_code, v(e.azure_error_code), label)
      assert.are.equal(mine.result_classification, e.result_classification, label)
      assert.is_nil(e.lease_real_id)
    end
    local checked = ll.ledger(dir)
    assert.is_table(checked)
    assert.are.equal(#exported, #checked)
  end)

  it("`leaselua verify` accepts the evidence directory", function()
    local rc, out, err = helper.run { "verify", dir }
    assert.are.equal(0, rc, out .. err)
    assert.matches("consistent", out)
  end)
end)
