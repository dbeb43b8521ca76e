-- Every example of docs/API.md, run as written: each ```lua block is
-- extracted (it starts with "-- Example: NAME") and run by the runner of
-- that NAME; a block without a runner fails the spec, so a new example
-- cannot go unrun. Also the documented classification of a lost read, run
-- on fixtures made from the shipped one.
local helper = require "helper"
local cjson = require "cjson"

local root = os.getenv("PWD")
local manifest_path = root .. "/tools/emulator/manifest.json"
local NOENV = {
  AZURE_STORAGE_ACCOUNT_URL = false, AZURE_STORAGE_TOKEN = false, AZURE_STORAGE_SAS = false,
  AZURE_STORAGE_CONTAINER = false, AZURE_STORAGE_BLOB = false,
}

local function examples()
  local doc = assert(helper.read(root .. "/docs/API.md"))
  local list = {}
  for block in doc:gmatch("```lua\n(.-)```") do
    list[#list + 1] = { name = block:match("^%-%- Example: ([^\n]-)%s*\n"), code = block }
  end
  return list
end

local function example(prefix)
  for _, e in ipairs(examples()) do
    if e.name and e.name:sub(1, #prefix) == prefix then return e.code end
  end
  error("docs/API.md has no example named '" .. prefix .. "...'")
end

local RUNNERS = { "reading a bundle", "custom recovery" }

describe("docs/API.md examples", function()
  teardown(helper.cleanup)

  it("each lua block is named and has a runner in this spec", function()
    local list = examples()
    assert.is_true(#list >= #RUNNERS)
    for _, e in ipairs(list) do
      assert.is_string(e.name, "a ```lua block of docs/API.md without '-- Example: NAME': " .. e.code:sub(1, 80))
      local known = false
      for _, r in ipairs(RUNNERS) do known = known or e.name:sub(1, #r) == r end
      assert.is_true(known, "no runner for the example '" .. e.name .. "'")
    end
  end)

  it("reading a bundle: runs under stock lua5.4 as documented and counts the bundle's rows", function()
    local d = helper.tmpdir()
    local ev = d .. "/ev"
    local rc = helper.run({ "handoff", "--manifest", manifest_path, "--replay",
      root .. "/fixtures/emulator/main-handoff-accept.json", "--evidence", ev }, NOENV)
    assert.are.equal(0, rc)
    local script = helper.write(d .. "/bundle.lua", example("reading a bundle"))
    -- the documented build-tree form: LUA_CPATH='build/?.so;;' lua5.4 bundle.lua DIR
    local build = (os.getenv("LEASELUA") or (root .. "/build/leaselua")):match("^(.*)/[^/]*$")
    local p = assert(io.popen("cd " .. helper.quote(root) .. " && LUA_CPATH=" ..
      helper.quote(build .. "/?.so;;") .. " lua5.4 " .. helper.quote(script) .. " " .. helper.quote(ev) ..
      " 2>&1; echo rc=$?"))
    local out = p:read("a")
    p:close()
    local rows, outcomes = helper.rows(ev), 0
    for _, r in ipairs(rows) do
      if r.record == "outcome" then outcomes = outcomes + 1 end
    end
    assert.is_true(outcomes > 10)
    assert.matches(string.format("%d rows, %d outcomes, decision ACCEPT\nrc=0", #rows, outcomes), out, 1, true)
  end)
end)

describe("docs/API.md custom recovery example #live", function()
  local d, env, manifest, script
  setup(function()
    d = helper.tmpdir()
    env = helper.live_env(helper.unique_blob("api"))
    env.LEASELUA_CA_FILE = os.getenv("LEASELUA_CA_FILE")
    manifest = helper.manifest_file(d)
    script = helper.write(d .. "/recover.lua", example("custom recovery"))
  end)
  teardown(helper.cleanup)

  local function fresh_env()
    local e = {}
    for k, v in pairs(env) do e[k] = v end
    e.AZURE_STORAGE_BLOB = helper.unique_blob("api")
    return e
  end

  local function stopped_before_b(e, name)
    local ev = d .. "/" .. name
    local rc, out, err = helper.run({ "handoff", "--manifest", manifest, "--stop-after", "10",
      "--break-period", "2", "--evidence", ev }, e)
    assert.are.equal(2, rc, out .. err)
    assert.falsy(out:find("11 acquire B", 1, true), out)
    return ev
  end

  it("recovers a killed run to ACCEPT", function()
    local ev = helper.killed_after(11, env, manifest, d)
    local rc, out = helper.run({ script, "--recover", "--evidence", ev }, env)
    assert.are.equal(0, rc, out)
    assert.matches("content is revision 3: MATCH", out)
    assert.matches("stale A: 412", out)
    assert.matches("ACCEPT", out)
    assert.matches("B's renew: 200", out, 1, true)
    rc = helper.run({ "verify", ev })
    assert.are.equal(0, rc)
  end)

  it("recovers a run stopped before B acquired to ACCEPT, acquiring for B after broken", function()
    if not helper.have_live() then return pending("needs the live Azurite of tools/run-specs.sh") end
    local e = fresh_env()
    local ev = stopped_before_b(e, "ev-stopped")
    local rc, out = helper.run({ script, "--recover", "--evidence", ev }, e)
    assert.are.equal(0, rc, out)
    assert.matches("content is revision 3: MATCH", out, 1, true)
    assert.matches("stale A after broken: 412", out, 1, true)
    assert.matches("B's acquire: 201", out, 1, true)
    assert.matches("stale A: 412", out, 1, true)
    assert.matches("decision: ACCEPT (all evidence observed)", out, 1, true)
    assert.are.equal(0, (helper.run({ "verify", ev })))
  end)

  it("ends HOLD, and says what it did and why, when the blob went away before recovery", function()
    if not helper.have_live() then return pending("needs the live Azurite of tools/run-specs.sh") end
    local e = fresh_env()
    local ev = stopped_before_b(e, "ev-deleted")
    -- someone else deletes the blob (its lease is broken: no lease ID needed)
    local url = e.AZURE_STORAGE_ACCOUNT_URL .. "/" .. e.AZURE_STORAGE_CONTAINER .. "/" .. e.AZURE_STORAGE_BLOB
    local p = assert(io.popen("curl -sS -o /dev/null -w '%{http_code}' --cacert " .. helper.quote(e.LEASELUA_CA_FILE) ..
      " -X DELETE -H 'x-ms-version: 2023-11-03' -H " ..
      helper.quote("Authorization: Bearer " .. os.getenv("AZURE_STORAGE_TOKEN")) .. " " .. helper.quote(url)))
    local code = p:read("a")
    p:close()
    assert.are.equal("202", code)
    local rc, out = helper.run({ script, "--recover", "--evidence", ev }, e)
    assert.are.equal(2, rc, out)
    assert.matches("open unknown outcomes: 0", out, 1, true)
    assert.matches("content is revision", out, 1, true)
    assert.matches("the ledger does not explain the content: no write", out, 1, true)
    assert.matches("decision: HOLD (", out, 1, true)
    assert.falsy(out:find("B's acquire", 1, true), out)
    assert.are.equal(0, (helper.run({ "verify", ev })))
  end)
end)

-- The lost read of docs/API.md ("A request whose outcome is NOT_SENT or
-- UNKNOWN"): the shipped accept fixture's read-back of revision 0 made a
-- lost answer (UNKNOWN) or a request never sent (NOT_SENT), followed by a
-- reconcile (HEAD, GET) and A's acquire.
describe("a lost read, as docs/API.md says", function()
  teardown(helper.cleanup)

  local SCRIPT = [[
local ll = require "leaselua"
local run <close> = ll.open { name = "lost-read", actors = { "A", "operator", "observer" } }
run:declare(0, "A")
local A, U = run:writer("A"), run:unbound("A")
run:create_container()
run:lifecycle { reason = "lost read" }
U:put(0)
local row, err = run:read()
print("read", tostring(row), err.code, err.row.outcome, err.row.result_classification)
print("doubts", run:state().doubts)
local ok, e = pcall(A.acquire, A, { duration = -1 })
print("before reconcile", ok and "sent" or tostring(e.code), ok and "" or tostring(e.invariant))
local r = run:reconcile()
print("reconcile", r.result, tostring(run:state().reconciled), run:state().doubts)
ok, e = pcall(A.acquire, A, { duration = -1 })
print("after reconcile", ok and ("sent " .. e.http_status) or tostring(e.code))
local d = run:decide()
print("reachable", tostring(d.accept_reachable))
run:finish()
]]

  local function fixture(outcome, with_acquire_after)
    local f = cjson.decode((assert(helper.read(root .. "/fixtures/emulator/main-handoff-accept.json"))))
    local x = f.exchanges
    local get = cjson.decode(cjson.encode(x[4]))
    x[4].response = nil
    x[4].transport_error = "connection lost"
    x[4].outcome = outcome
    local head = cjson.decode(cjson.encode(get))
    head.request.method = "HEAD"
    head.response.body = ""
    head.t_ms, get.t_ms = x[4].t_ms + 1, x[4].t_ms + 2
    local acquire = x[5]
    acquire.t_ms = x[4].t_ms + 5
    f.exchanges = { x[1], x[2], x[3], x[4], head, get }
    if with_acquire_after then f.exchanges[7] = acquire end
    local path = helper.tmpdir() .. "/lost-read.json"
    helper.write(path, cjson.encode(f))
    return path
  end

  local function run(fx)
    local d = helper.tmpdir()
    local script = helper.write(d .. "/lost.lua", SCRIPT)
    return helper.run({ script, "--manifest", manifest_path, "--replay", fx, "--evidence", d .. "/ev" }, NOENV)
  end

  it("UNKNOWN: UNKNOWN_OUTCOME, a doubt that refuses mutations (invariant 3) until a reconcile settles it", function()
    local _, out, err = run(fixture("UNKNOWN", true))
    assert.matches("read\tnil\tLL_E_TRANSPORT\tUNKNOWN\tUNKNOWN_OUTCOME", out, 1, true)
    assert.matches("doubts\t1", out, 1, true)
    assert.matches("before reconcile\tLL_E_HOLD\t3", out, 1, true)
    assert.matches("reconcile\tMATCH\ttrue\t0", out, 1, true)
    assert.matches("after reconcile\tsent 201", out, 1, true)
    assert.matches("reachable\ttrue", out .. err, 1, true)
  end)

  it("NOT_SENT: EVIDENCE_ERROR, the run can only end HOLD, and no reconcile lifts it", function()
    local _, out = run(fixture("NOT_SENT", false))
    assert.matches("read\tnil\tLL_E_TRANSPORT\tNOT_SENT\tEVIDENCE_ERROR", out, 1, true)
    assert.matches("before reconcile\tLL_E_HOLD\t3", out, 1, true)
    assert.matches("reconcile\tMATCH\ttrue\t0", out, 1, true)
    assert.matches("after reconcile\tLL_E_HOLD", out, 1, true)
    assert.matches("reachable\tfalse", out, 1, true)
  end)
end)

-- lib.evidence's open_unknown_outcomes lists the outcome row of every
-- doubt the fold in C holds open, whatever its class: a lost answer
-- (UNKNOWN_OUTCOME) and a mutation never sent whole (EVIDENCE_ERROR, which
-- the fold counts as a doubt too), on the shipped fixture with its first
-- Put made lost.
describe("evidence.open_unknown_outcomes", function()
  teardown(helper.cleanup)

  local SCRIPT = [[
local ll = require "leaselua"
local evidence = require "lib.evidence"
local run <close> = ll.open { name = "lost-put", actors = { "A", "operator", "observer" } }
run:declare(0, "A")
local U = run:unbound("A")
run:create_container()
run:lifecycle { reason = "lost put" }
local row, err = U:put(0)
print("put", tostring(row), err.row.outcome, err.row.result_classification, err.row.event_id)
print("doubts", table.concat(run:state().doubt_events, ","))
for _, r in ipairs(evidence.open_unknown_outcomes(run)) do
  print("open", r.event_id, r.record, r.result_classification)
end
print("open count", #evidence.open_unknown_outcomes(run))
run:finish()
]]

  local function run_lost_put(outcome)
    local f = cjson.decode((assert(helper.read(root .. "/fixtures/emulator/main-handoff-accept.json"))))
    local x = f.exchanges
    x[3].response = nil
    x[3].transport_error = "connection lost"
    x[3].outcome = outcome
    f.exchanges = { x[1], x[2], x[3] }
    local d = helper.tmpdir()
    local fx = helper.write(d .. "/lost-put.json", cjson.encode(f))
    local script = helper.write(d .. "/lost.lua", SCRIPT)
    return helper.run({ script, "--manifest", manifest_path, "--replay", fx, "--evidence", d .. "/ev" }, NOENV)
  end

  for _, case in ipairs({ { "UNKNOWN", "UNKNOWN_OUTCOME" }, { "NOT_SENT", "EVIDENCE_ERROR" } }) do
    it(case[1] .. ": the Put's outcome row (" .. case[2] .. ") is the one open doubt listed", function()
      local _, out, err = run_lost_put(case[1])
      local event = out:match("put\tnil\t" .. case[1] .. "\t" .. case[2] .. "\t(%S+)\n")
      assert.is_truthy(event, out .. err)
      assert.matches("doubts\t" .. event .. "\n", out, 1, true)
      assert.matches("open\t" .. event .. "\toutcome\t" .. case[2] .. "\n", out, 1, true)
      assert.matches("open count\t1\n", out, 1, true)
    end)
  end
end)
