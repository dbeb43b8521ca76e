-- leaselua lease-table against the live Azurite 3.37: every cell of the
-- documented lease contract ends with one of the four verdicts and has its
-- rows; the emulator's deviations are measured cell by cell (and named by
-- core/judgement/known_deviations.json); the plan --plan prints is the
-- requests the run sends, request for request.
local helper = require "helper"
local cjson = require "cjson"

local VERDICTS = { CONFORMS = true, CONFORMS_ONE_SOURCE = true, DEVIATES = true, NOT_REACHED = true }
local CELLS = 95 -- 5 states x 19 attempts (core/judgement/lease_contract_table.c)

local function env(blob)
  local e = helper.live_env(blob)
  e.LEASELUA_CA_FILE = os.getenv("LEASELUA_CA_FILE")
  return e
end

-- the plan's request lines: {life = "L3", step, op, actor, lease, poll}
local function plan_requests(text)
  local out = {}
  for line in text:gmatch("[^\n]+") do
    local kind, step, op, actor, lease =
      line:match("^  (%a+)%s+(.-) | (.-) by ([%w]+), lease (%w+)$")
    if not kind then
      kind, step, op, actor = line:match("^  (%a+)%s+(.-) | (.-) by ([%w]+)$")
    end
    if kind == "request" or kind == "poll" then
      out[#out + 1] = { step = step, op = op, actor = actor, lease = lease, poll = kind == "poll" }
    end
  end
  return out
end

local function life_of(step)
  return step:match("^(L%d+)[ .]") or (step:match("^preflight:") and "L1")
end

describe("lease-table #live", function()
  local manifest, blob, main_dir, dir, rc, out, rows, cells, wall
  setup(function()
    manifest = helper.manifest_file(helper.tmpdir())
    blob = helper.unique_blob("table")
    main_dir = helper.tmpdir() .. "/main"
    local mrc, mout = helper.run({ "scripts/main_handoff.lua", "--break-period", "1", "--manifest", manifest,
      "--evidence", main_dir }, env(blob))
    assert(mrc == 0, mout)
    dir = helper.tmpdir() .. "/table"
    local t0 = os.time()
    rc, out = helper.run({ "lease-table", "--destructive", "--after", main_dir, "--manifest", manifest,
      "--evidence", dir }, env(blob))
    wall = os.time() - t0
    print(("lease-table against Azurite: %d s wall"):format(wall))
    rows = helper.rows(dir)
    cells = {}
    for _, r in ipairs(rows) do
      if r.record == "cell" then
        local key = r.state .. "/" .. r.op
        cells[key] = cells[key] or {}
        table.insert(cells[key], r)
      end
    end
  end)
  teardown(helper.cleanup)

  it("runs fully: exit 0, ACCEPT, the counts of the decision equal the cell rows", function()
    assert.are.equal(0, rc, out)
    assert.matches("DECISION: ACCEPT", out)
    local decision
    for _, r in ipairs(rows) do if r.record == "decision" then decision = r end end
    local n = { CONFORMS = 0, CONFORMS_ONE_SOURCE = 0, DEVIATES = 0, NOT_REACHED = 0 }
    local total = 0
    for _, list in pairs(cells) do
      for _, c in ipairs(list) do n[c.verdict] = n[c.verdict] + 1; total = total + 1 end
    end
    assert.are.equal(CELLS, total)
    assert.are.same({ conforms = n.CONFORMS, conforms_one_source = n.CONFORMS_ONE_SOURCE,
      deviates = n.DEVIATES, not_reached = n.NOT_REACHED, cells = total }, decision.lease_table)
    assert.are.equal(0, n.NOT_REACHED)
    print(("verdicts: %d CONFORMS, %d CONFORMS_ONE_SOURCE, %d DEVIATES, %d NOT_REACHED"):format(
      n.CONFORMS, n.CONFORMS_ONE_SOURCE, n.DEVIATES, n.NOT_REACHED))
    local vrc, vout = helper.run({ "verify", dir })
    assert.are.equal(0, vrc, vout)
    assert.matches("consistent", vout)
  end)

  it("gives every cell exactly one row, one of the four verdicts, and its attempt and observation rows", function()
    local by_event = {}
    for _, r in ipairs(rows) do
      if r.record == "outcome" then by_event[r.event_id] = r end
    end
    local n = 0
    for key, list in pairs(cells) do
      n = n + 1
      assert.are.equal(1, #list, key)
      local c = list[1]
      assert.is_true(VERDICTS[c.verdict], key)
      assert.is_true(#c.expected >= 1, key)
      if c.op == "duration expires" then
        assert.are.equal(cjson.null, c.attempt_event, key)
      else
        local a = by_event[c.attempt_event]
        assert.is_not_nil(a, key .. ": its attempt's outcome row")
        assert.are.equal(key, a.cell)
        assert.are.equal(c.observed.status, a.http_status, key)
      end
      assert.is_true(#c.observe_events >= 1, key)
      local props = by_event[c.observe_events[1]]
      assert.are.equal("Get Blob Properties", props.operation, key)
      assert.are.equal(c.observed.lease_state_after, props.observed_lease_state, key)
      if c.op:match("^write") then
        local content = by_event[c.observe_events[2]]
        assert.are.equal("Get Blob", content and content.operation, key .. ": the content read after a write")
      end
      if c.verdict == "DEVIATES" then assert.is_string(c.reason, key) end
    end
    assert.are.equal(CELLS, n)
  end)

  local function cell(key) return cells[key][1] end

  it("measures read with B on a locked lease: 412 where the use table says 409 (a known deviation)", function()
    for _, key in ipairs({ "Leased (A)/read with B", "Breaking (A)/read with B" }) do
      local c = cell(key)
      assert.are.equal("DEVIATES", c.verdict, key)
      assert.are.equal(412, c.observed.status, key)
      assert.are.equal("LeaseIdMismatchWithBlobOperation", c.observed.code, key)
      assert.are.equal(409, c.expected[1].status, key)
      assert.is_string(c.known_deviation, key)
    end
  end)

  it("measures write with B on a locked lease: 412, Put Blob's answer, the use table's 409 kept beside it", function()
    local c = cell("Leased (A)/write with B")
    assert.are.equal("CONFORMS_ONE_SOURCE", c.verdict)
    assert.are.equal(412, c.observed.status)
    assert.are.equal("LeaseIdMismatchWithBlobOperation", c.observed.code)
    assert.are.same({ 409, 412 }, { c.expected[1].status, c.expected[2].status })
    assert.are.same({ "lease-blob", "put-blob" }, { c.expected[1].source, c.expected[2].source })
    c = cell("Breaking (A)/write with B")
    assert.are.equal("CONFORMS", c.verdict)
    assert.are.equal(412, c.observed.status)
  end)

  it("measures renew after expiry: renew A succeeds, renew B too (Azurite compares no ID)", function()
    local a = cell("Expired (A)/renew A")
    assert.are.equal("CONFORMS", a.verdict)
    assert.are.equal(200, a.observed.status)
    assert.are.equal("leased", a.observed.lease_state_after)
    local b = cell("Expired (A)/renew B")
    assert.are.equal("DEVIATES", b.verdict)
    assert.are.equal(200, b.observed.status)
    assert.are.equal("leased", b.observed.lease_state_after)
    assert.are.equal("azurite-3.37-renew-b-on-expired-200", b.known_deviation)
    -- the renew B left the state: the lifecycle's later cells went on on a
    -- fresh lifecycle of Expired (A), none was retried or left NOT_REACHED
    local after = cell("Expired (A)/release B")
    assert.are_not.equal("NOT_REACHED", after.verdict)
    assert.is_true(after.lifecycle > b.lifecycle)
  end)

  it("measures a write with an ID on an unlocked blob: LeaseNotPresentWithBlobOperation, LeaseLost's message",
    function()
    for _, key in ipairs({ "Available/write with A", "Expired (A)/write with A", "Broken (A)/write with A" }) do
      local c = cell(key)
      assert.are.equal("CONFORMS", c.verdict, key)
      assert.are.equal(412, c.observed.status, key)
      assert.are.equal("LeaseNotPresentWithBlobOperation", c.observed.code, key)
      local a
      for _, r in ipairs(rows) do if r.event_id == c.attempt_event and r.record == "outcome" then a = r end end
      assert.matches("^A lease ID was specified, but the lease for the blob has expired%.", a.error_message,
        1, false, key)
    end
  end)

  it("never lets the lease ID of an acquire without a proposed ID reach the export", function()
    local c = cell("Available/acquire, no ID")
    assert.are.equal("CONFORMS", c.verdict)
    local export = helper.read(dir .. "/export/ledger.jsonl")
    local protected = helper.read(dir .. "/protected/ledger.jsonl")
    local bound = 0
    for id in protected:gmatch('"alias":"X","lease_real_id":"([%x%-]+)"') do
      bound = bound + 1
      assert.is_nil(export:find(id, 1, true))
    end
    assert.is_true(bound >= 1, "the returned ID is bound as X in the protected ledger")
  end)

  it("sends the requests its --plan printed, request for request", function()
    local prc, ptext = helper.run({ "lease-table", "--plan", "--destructive", "--after", main_dir }, {})
    assert.are.equal(0, prc, ptext)
    local plan = plan_requests(ptext)
    assert.is_true(#plan > 200)
    local sent = {}
    for _, r in ipairs(rows) do
      if r.record == "intent" then
        sent[#sent + 1] = { step = r.step, op = r.operation, actor = r.actor_alias,
          lease = r.lease_alias_supplied ~= "omitted" and r.lease_alias_supplied or nil }
      end
    end
    -- a lifecycle a deviation moved on (a preserving cell left its state)
    -- is compared up to that cell's observation; its later cells must then
    -- be sent under L<n>.<k> in the planned order
    local drifted = {}
    for _, list in pairs(cells) do
      local c = list[1]
      local want = c.expected[1].state_after
      if c.verdict == "DEVIATES" and c.observed.lease_state_after ~= want and c.op ~= "duration expires" then
        local life
        for _, r in ipairs(rows) do
          if r.record == "intent" and r.event_id == c.attempt_event then life = life_of(r.step) end
        end
        drifted[life] = c.state .. "/" .. c.op
      end
    end
    local i, j = 1, 1
    while i <= #plan do
      local p = plan[i]
      local life = life_of(p.step)
      if drifted[life] and p.step:find(drifted[life], 1, true) and p.step:match("properties$") then
        -- the drift's observation: then the planned cells of this lifecycle
        -- continue on L<n>.<k>; skip the rest of the plan's block
        assert.are.equal(p.step, sent[j].step)
        j = j + 1
        local later = {}
        i = i + 1
        while i <= #plan and life_of(plan[i].step) == life do
          local cellname = plan[i].step:match("^L%d+ cell (.*)$")
          if cellname then later[#later + 1] = { cellname, plan[i].op } end
          i = i + 1
        end
        local k = 1
        while j <= #sent and life_of(sent[j].step) == life do
          local cellname = sent[j].step:match("^L%d+%.%d+ cell (.*)$")
          if cellname and later[k] then
            assert.are.same(later[k], { cellname, sent[j].op })
            k = k + 1
          end
          j = j + 1
        end
        assert.are.equal(#later + 1, k, "every later cell of " .. life .. " went on")
      elseif p.poll then
        assert.are.equal(p.step, sent[j] and sent[j].step, "poll " .. p.step)
        while sent[j] and sent[j].step == p.step do
          assert.are.equal(p.op, sent[j].op)
          j = j + 1
        end
        i = i + 1
      else
        local s = sent[j] or {}
        assert.are.same({ p.step, p.op, p.actor, p.lease }, { s.step, s.op, s.actor, s.lease })
        i, j = i + 1, j + 1
      end
    end
    assert.are.equal(#sent + 1, j, "no request beyond the plan")
  end)

  it("prints its plan before the first request", function()
    assert.matches("^lease%-table plan: %d+ lifecycles, 95 cells", out)
  end)
end)
