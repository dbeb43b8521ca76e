-- A host killed while a read's connection is still being set up (a TLS
-- handshake or a proxy CONNECT that hangs: no request head has left yet).
-- No request is on the wire, so by the chain's contract (docs/EVIDENCE.md
-- "The chain"; spec/crash_drills_spec.lua: "the ledger verifies; its last
-- row is the step's intent") the export must verify as it is. Since
-- 367c7ce a read's intent export line waits for the head to leave; a kill
-- during a slow connect leaves the export one row short and verify says
-- INCONSISTENT. No Azurite needed: a loopback listener that never answers.
local helper = require "helper"
local slow = require "support.slow"

local READ_SCRIPT = [[
local ll = require "leaselua"
local run = ll.open {}
print("reading")
run:read()
print("read returned")
]]

local function blackhole()
  local dir = helper.tmpdir()
  local pid, port = slow.start_listener("node " .. helper.quote(helper.root .. "/spec/support/blackhole.js") ..
    " 30", dir, "blackhole")
  return { pid = pid, port = port }
end

-- Starts the host reading through target/proxy, waits until its protected
-- ledger's last row is the read's intent, lets it hang a moment, then
-- kills it with SIGKILL. Returns the evidence directory.
local function kill_while_connecting(account_url, extra_env)
  local evidence = helper.tmpdir() .. "/evidence"
  local args, env = slow.operator(account_url, { script = slow.script(READ_SCRIPT), evidence = evidence,
    manifest = helper.manifest_table })
  for k, v in pairs(extra_env or {}) do env[k] = v end
  local host = slow.spawn_host(args, { env = env })
  local intent = slow.wait_until(function()
    local rows = slow.decode_lines(evidence .. "/protected/ledger.jsonl")
    local last = rows[#rows]
    return last and last.record == "intent" and last.operation == "Get Blob"
  end, 10)
  slow.sleep(0.5)
  local alive = slow.alive(host.pid)
  slow.kill(host.pid, "KILL")
  assert(intent, "no read intent was written: " .. (helper.read(host.err) or ""))
  assert(alive, "the host ended before it was killed: " .. (helper.read(host.err) or ""))
  return evidence
end

local function assert_verifies(evidence)
  local prot = slow.decode_lines(evidence .. "/protected/ledger.jsonl")
  local exp = slow.decode_lines(evidence .. "/export/ledger.jsonl")
  local rc, out, err = slow.run_host({ "verify", evidence })
  assert.equals(0, rc, out .. err)
  assert.truthy(out:find("export matches the protected ledger", 1, true), out)
  assert.equals(#prot, #exp)
  assert.equals("intent", exp[#exp].record)
end

describe("a host killed while a read is still connecting", function()
  local hole

  before_each(function() hole = blackhole() end)
  after_each(function()
    slow.kill(hole.pid, "TERM")
    helper.cleanup()
  end)

  it("leaves an export that verifies as it is (TLS handshake hangs)", function()
    assert_verifies(kill_while_connecting("https://127.0.0.1:" .. hole.port .. "/devstoreaccount1"))
  end)

  -- helper-29: the deadline was checked before a connection was set up,
  -- and curl gave that up only at its connect timeout (10 s), so a proxy
  -- holding the connection let a read leave seconds after --deadline-s.
  -- Now a connection not up at the deadline is given up: NOT_SENT then.
  it("gives up a connection still being set up at --deadline-s (NOT_SENT, not 10 s later)", function()
    local evidence = helper.tmpdir() .. "/evidence"
    local args, env = slow.operator("https://127.0.0.1:" .. hole.port .. "/devstoreaccount1", {
      script = slow.script(READ_SCRIPT), evidence = evidence, manifest = helper.manifest_table,
      args = { "--deadline-s", "2" } })
    local t0 = os.time()
    local rc, out, err = slow.run_host(args, { env = env })
    local took = os.time() - t0
    assert.are.equal(2, rc, out .. err)
    assert.is_true(took <= 6, "the read was given up after " .. took .. " s")
    local rows = slow.decode_lines(evidence .. "/export/ledger.jsonl")
    local read
    for _, r in ipairs(rows) do
      if r.record == "outcome" and r.operation == "Get Blob" then read = r end
    end
    assert.truthy(read, "no outcome for the read")
    assert.are.equal("NOT_SENT", read.outcome)
  end)

  it("leaves an export that verifies as it is (proxy CONNECT hangs)", function()
    assert_verifies(kill_while_connecting("https://127.0.0.1:1/devstoreaccount1", {
      HTTPS_PROXY = "http://127.0.0.1:" .. hole.port, https_proxy = false, ALL_PROXY = false, all_proxy = false,
      NO_PROXY = false, no_proxy = false,
    }))
  end)
end)
