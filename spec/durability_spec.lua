-- Invariant 2, the other half: no request leaves without a durable intent.
-- The host runs under a file-size limit (prlimit --fsize, in bytes) that
-- lets every row before the first intent be written but not the intent.
local helper = require "helper"
local slow = require "support.slow"

local SCRIPT = [[
local ll = require "leaselua"
local run = ll.open {}
run:declare(0, "A")
print("putting")
local row, err = run:unbound("A"):put(0)
print("put returned " .. tostring(row and row.result_classification or err))
]]

local RECOVER = [[
local ll = require "leaselua"
local run = ll.open { recover = true }
local recovery -- the reopen's own row (the flow's plan row follows it)
for _, r in ipairs(run:rows()) do
  if r.record == "recovery" then recovery = r end
end
print("reopened open_intents=" .. tostring(recovery and recovery.open_intents))
]]

-- Byte count of the lines of a ledger before the first intent line, and
-- the length of that intent line (with its '\n').
local function split_at_first_intent(path)
  local before = 0
  for _, line in ipairs((slow.lines(path))) do
    if line:find('"record":"intent"', 1, true) then return before, #line + 1 end
    before = before + #line + 1
  end
  error("no intent row in " .. path)
end

local function has_intent(path)
  return (helper.read(path) or ""):find('"record":"intent"', 1, true) ~= nil
end

describe("no request leaves without a durable intent", function()
  local server, script, manifest, before, intent_len

  -- The script run by the operator into a fresh evidence directory dir.
  local function run_script(dir, opts)
    local args, env = slow.operator(server, { script = script, evidence = dir, manifest = manifest })
    return slow.run_host(args, { env = env, prefix = opts and opts.prefix })
  end

  -- The recovery script run by the operator on dir.
  local function recover(dir)
    local args, env = slow.operator(server, { script = slow.script(RECOVER), evidence = dir, recover = true })
    return slow.run_host(args, { env = env })
  end

  lazy_setup(function()
    server = slow.start { lifetime_ms = 40000 }
    -- The same run_id every time: the rows before the intent then have the
    -- same length in every pass (stamps, hashes and the port are fixed-width).
    manifest = {}
    for k, v in pairs(helper.manifest_table) do manifest[k] = v end
    manifest.run_id = "run-durability-spec"
    script = slow.script(SCRIPT)
    -- Pass 1, without a limit: measure. The script records no decision:
    -- the host records HOLD (exit 2).
    local dir = helper.tmpdir() .. "/evidence"
    local rc, out, err = run_script(dir)
    assert(rc == 2, "pass 1 failed: " .. err)
    assert(out:find("put returned ACCEPTED_WRITE", 1, true), "pass 1: " .. out)
    before, intent_len = split_at_first_intent(dir .. "/protected/ledger.jsonl")
  end)

  lazy_teardown(function()
    slow.stop(server)
    helper.cleanup()
  end)

  it("sends nothing when the intent cannot be appended at all", function()
    local puts_before = #slow.puts(server)
    local dir = helper.tmpdir() .. "/evidence"
    -- The limit ends exactly where the intent would start: write() fails
    -- with EFBIG (the host ignores SIGXFSZ).
    local rc, out, err = run_script(dir, { prefix = "prlimit --fsize=" .. before })
    assert.are_not.equal(0, rc)
    assert.truthy(err:find("LL_E_DURABILITY", 1, true), err)
    assert.truthy(err:find("nothing was sent", 1, true), err)
    assert.equals("putting\n", out)
    -- the server saw no Put Blob from this pass
    assert.equals(puts_before, #slow.puts(server))
    -- no intent on disk, in either ledger; everything before it is whole
    local prot = dir .. "/protected/ledger.jsonl"
    assert.is_false(has_intent(prot))
    assert.is_false(has_intent(dir .. "/export/ledger.jsonl"))
    assert.equals(before, #helper.read(prot))
    local _, torn = slow.lines(prot)
    assert.is_false(torn)
    -- and what was written is still a valid chain
    local vrc, vout, verr = slow.run_host({ "verify", dir })
    assert.equals(0, vrc, verr)
    assert.truthy(vout:find("export matches the protected ledger", 1, true), vout)
    -- which reopens cleanly: there is no intent to doubt
    -- (a recovery that records no decision: the host records HOLD, exit 2)
    local rrc, rout, rerr = recover(dir)
    assert.equals(2, rrc, rerr)
    assert.truthy(rout:find("reopened open_intents=0", 1, true), rout)
  end)

  describe("when only part of the intent fits", function()
    local dir, rc, out, err, puts_before

    lazy_setup(function()
      puts_before = #slow.puts(server)
      dir = helper.tmpdir() .. "/evidence"
      -- Room for half the intent line: write() is short.
      local limit = before + intent_len // 2
      rc, out, err = run_script(dir, { prefix = "prlimit --fsize=" .. limit })
    end)

    it("sends nothing", function()
      assert.are_not.equal(0, rc)
      assert.truthy(err:find("LL_E_DURABILITY", 1, true), err)
      assert.truthy(err:find("short write", 1, true), err)
      assert.equals("putting\n", out)
      assert.equals(puts_before, #slow.puts(server))
      assert.is_false(has_intent(dir .. "/export/ledger.jsonl"))
      -- no complete intent row: at most a torn line without its '\n'
      local lines = slow.lines(dir .. "/protected/ledger.jsonl")
      local whole = 0
      for _, line in ipairs(lines) do
        if line:find('"record":"intent"', 1, true) and line:sub(-2) == '"}' then whole = whole + 1 end
      end
      assert.equals(0, whole)
    end)

    it("leaves evidence that recovery can still judge", function()
      -- A short write is truncated away, so the files end on a whole row.
      local rrc, rout, rerr = recover(dir)
      assert.equals(2, rrc, rerr) -- no decision recorded by the script: HOLD
      assert.truthy(rout:find("reopened open_intents=", 1, true), rout)
    end)
  end)
end)
