-- Invariant 2 end to end: a host killed with a Put Blob in flight leaves a
-- durable intent and an intact chain; reopening turns the intent into
-- UNKNOWN_OUTCOME, which holds every mutation until a reconcile explains
-- the content.
local helper = require "helper"
local slow = require "support.slow"
local cjson = require "cjson"
local ll = require "leaselua"

local CRASH_SCRIPT = [[
local ll = require "leaselua"
local run = ll.open {}
run:declare(0, "A")
print("putting")
run:unbound("A"):put(0)
print("put returned")
]]

local RECOVER_SCRIPT = [[
local ll = require "leaselua"
local run = ll.open { recover = true }
print("doubts=" .. run:state().doubts)
run:declare(1, "A")
local ok, err = pcall(function() return run:unbound("A"):put(1) end)
print("held=" .. tostring(not ok) .. " code=" .. tostring(type(err) == "table" and err.code or err))
local r = run:reconcile()
print("reconcile=" .. r.result .. " content_revision=" .. tostring(r.content_revision))
local row, e = run:unbound("A"):put(1)
print("after=" .. (row and row.result_classification or tostring(e)))
run:read()
run:finish()
]]

local OPEN_ONLY_SCRIPT = [[
local ll = require "leaselua"
local mode = ...
local run = ll.open { recover = mode == "recover" }
if mode ~= "recover" then run:declare(0, "A") end
print("opened " .. run:state().run_id)
]]

local function last(t) return t[#t] end

describe("crash during an in-flight request", function()
  local server, evidence, crash, crash_lines

  lazy_setup(function()
    -- Only the first Put Blob is slow: the one the host dies waiting for.
    server = slow.start { delay_put_ms = 5000, slow_puts = 1, lifetime_ms = 40000 }
    evidence = helper.tmpdir() .. "/evidence"
    local args, env = slow.operator(server, { script = slow.script(CRASH_SCRIPT), evidence = evidence,
      manifest = helper.manifest_table })
    crash = slow.spawn_host(args, { env = env })
    local arrived = slow.wait_until(function() return #slow.puts(server) > 0 end, 10)
    assert(arrived, "the Put Blob never reached the server: " .. (helper.read(crash.err) or ""))
    assert(slow.alive(crash.pid), "the host ended before it was killed: " .. (helper.read(crash.err) or ""))
    slow.kill(crash.pid, "KILL")
    crash_lines = slow.decode_lines(evidence .. "/protected/ledger.jsonl")
  end)

  lazy_teardown(function()
    if crash then slow.kill(crash.pid, "KILL") end
    slow.stop(server)
    helper.cleanup()
  end)

  it("was killed while the server held the response", function()
    assert.is_false(slow.alive(crash.pid))
    assert.equals("putting\n", helper.read(crash.out))
    local puts = slow.puts(server)
    assert.equals(1, #puts)
    assert.equals("/devstoreaccount1/" .. slow.container .. "/x.json", puts[1].url)
    assert.equals(#(ll.payload(0, "A")), puts[1].body_len)
  end)

  it("leaves a durable intent with no outcome as the last protected row", function()
    local row = last(crash_lines)
    assert.equals("intent", row.record)
    assert.equals("Put Blob", row.operation)
    assert.equals("A", row.actor_alias)
    assert.equals(0, row.payload_revision)
    assert.equals(select(2, ll.payload(0, "A")), row.payload_sha256)
    for _, r in ipairs(crash_lines) do
      assert.is_false(r.record == "outcome" and r.event_id == row.event_id, "an outcome was recorded")
    end
    -- the export holds the same row, sanitized
    local exp = slow.decode_lines(evidence .. "/export/ledger.jsonl")
    assert.equals(#crash_lines, #exp)
    assert.equals("intent", last(exp).record)
    assert.equals(row.event_id, last(exp).event_id)
  end)

  it("keeps the chain intact: verify exits 0 after the crash", function()
    local rc, out, err = slow.run_host({ "verify", evidence })
    assert.equals(0, rc, err)
    assert.truthy(out:find("export matches the protected ledger", 1, true), out)
  end)

  describe("reopened for recovery", function()
    local rc, out, err, rows, intent

    lazy_setup(function()
      intent = last(crash_lines)
      local args, env = slow.operator(server, { script = slow.script(RECOVER_SCRIPT), evidence = evidence,
        recover = true })
      rc, out, err = slow.run_host(args, { env = env })
      rows = slow.decode_lines(evidence .. "/export/ledger.jsonl")
    end)

    it("runs the recovery script to the end", function()
      assert.equals(2, rc, err) -- HOLD: this run proves no handoff
      assert.truthy(out:find("doubts=1\n", 1, true), out)
    end)

    it("appends UNKNOWN_OUTCOME for the dangling intent", function()
      local n = #crash_lines
      assert.equals("recovery", rows[n + 1].record)
      assert.equals(1, rows[n + 1].open_intents)
      local o = rows[n + 2]
      assert.equals("outcome", o.record)
      assert.equals(intent.event_id, o.event_id)
      assert.equals("Put Blob", o.operation)
      assert.equals("UNKNOWN", o.outcome)
      assert.equals("UNKNOWN_OUTCOME", o.result_classification)
      assert.equals(cjson.null, o.http_status)
      assert.equals(0, o.payload_revision)
      assert.truthy(tostring(o.transport_error):find("in flight", 1, true))
    end)

    it("holds the next mutation with LL_E_HOLD and records the refusal", function()
      assert.truthy(out:find("held=true code=LL_E_HOLD\n", 1, true), out)
      local refusal
      for _, r in ipairs(rows) do
        if r.record == "refusal" then refusal = refusal or r end
      end
      assert.is_table(refusal)
      assert.equals("LL_E_HOLD", refusal.code)
      assert.equals(3, refusal.invariant)
      assert.equals("Put Blob", refusal.operation)
      -- the refused Put never left: the server saw only the crashed one
      -- before the reconcile
      local methods = {}
      for _, r in ipairs(slow.requests(server)) do methods[#methods + 1] = r.method end
      assert.same({ "PUT", "HEAD", "GET", "PUT", "GET" }, methods)
    end)

    it("reconciles: the content is rev 0, so the doubtful write committed", function()
      assert.truthy(out:find("reconcile=DOUBTFUL_WRITE_COMMITTED content_revision=0\n", 1, true), out)
      local rec
      for _, r in ipairs(rows) do
        if r.record == "reconcile" then rec = r end
      end
      assert.is_table(rec)
      assert.equals("DOUBTFUL_WRITE_COMMITTED", rec.result)
      assert.equals(select(2, ll.payload(0, "A")), rec.content_sha256)
      assert.equals(0, rec.content_revision)
      assert.equals(1, #rec.doubts)
      assert.equals(intent.event_id, rec.doubts[1].event_id)
    end)

    it("allows a new mutation after the reconcile", function()
      assert.truthy(out:find("after=ACCEPTED_WRITE\n", 1, true), out)
    end)

    it("leaves a ledger that verify accepts", function()
      local vrc, vout, verr = slow.run_host({ "verify", evidence })
      assert.equals(0, vrc, verr)
      assert.truthy(vout:find("export matches the protected ledger", 1, true), vout)
      assert.truthy(vout:find("decision HOLD", 1, true), vout)
    end)
  end)

  describe("recovery against another target", function()
    -- No request is sent: opening (fresh or for recovery) only writes rows.
    local script, dir

    -- The same script, run by the operator against url, fresh (with the
    -- manifest) or reopening dir for recovery.
    local function open_only(url, mode)
      local args, env = slow.operator(url, { script = script, evidence = dir, recover = mode == "recover",
        manifest = mode ~= "recover" and helper.manifest_table or nil, args = { mode } })
      return slow.run_host(args, { env = env })
    end

    lazy_setup(function()
      script = slow.script(OPEN_ONLY_SCRIPT)
      dir = helper.tmpdir() .. "/evidence"
      -- the script records no decision: the host records HOLD (exit 2)
      local rc, _, err = open_only("http://127.0.0.1:4000/devstoreaccount1", "fresh")
      assert(rc == 2, err)
    end)

    it("is refused for another port", function()
      local rc, _, err = open_only("http://127.0.0.1:5000/devstoreaccount1", "recover")
      assert.equals(64, rc, err)
      assert.truthy(err:find("LL_E_MANIFEST", 1, true), err)
    end)

    it("is refused for a port the recorded one is a prefix of", function()
      local rc, _, err = open_only("http://127.0.0.1:40001/devstoreaccount1", "recover")
      assert.equals(64, rc, err)
      assert.truthy(err:find("LL_E_MANIFEST", 1, true), err)
    end)
  end)
end)
