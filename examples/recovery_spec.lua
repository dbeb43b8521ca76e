-- Template: a busted spec for your own recovery script, replaying fixtures
-- you recorded. Copy it beside your files, change the names and the
-- expectations below, and run it with
--
--   leaselua spec recovery_spec.lua
--
-- (`leaselua spec` starts busted under lua5.4 with leaselua's paths and
-- sets LEASELUA to its own binary). Nothing is sent: both phases replay
-- strictly, so a request your script adds, drops or changes fails the spec
-- with a diff. Record the fixtures once, against Azurite or a disposable
-- blob (the fixture keeps the blob name and the flow's options, so the
-- replay needs neither re-typed):
--
--   leaselua handoff --manifest manifest.json --stop-after 10 \
--       --record interrupted.json --evidence ev-run
--   leaselua my_recovery.lua --recover --evidence ev-run --record recovery.json
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"

-- Your files, beside this spec, and the flow that recorded INTERRUPTED:
local FLOW = "handoff"
local MANIFEST = here .. "manifest.json"
local INTERRUPTED = here .. "interrupted.json" -- the run your script recovers
local SCRIPT = here .. "my_recovery.lua"       -- your recovery script
local RECOVERY = here .. "recovery.json"       -- the fixture of its recovery
-- What the interrupted run and the recovery must end with:
local INTERRUPTED_EXIT = 2 -- HOLD: stopped before the handoff finished
local EXPECT_EXIT = 0      -- 0 ACCEPT, 1 WAIT, 2 HOLD, 3 RECONCILE
local EXPECT_DECISION = "ACCEPT"

local LEASELUA = assert(os.getenv("LEASELUA"), "run this with `leaselua spec`")

local function quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- run(args) -> exit code, output (stdout and stderr). No variable of the
-- live target reaches a replay.
local function run(args)
  local words = { "env -u AZURE_STORAGE_ACCOUNT_URL -u AZURE_STORAGE_TOKEN -u AZURE_STORAGE_SAS",
    "-u AZURE_STORAGE_CONTAINER -u AZURE_STORAGE_BLOB", quote(LEASELUA) }
  for _, a in ipairs(args) do words[#words + 1] = quote(a) end
  local p = assert(io.popen(table.concat(words, " ") .. " 2>&1; echo \"rc=$?\""))
  local out = p:read("a")
  p:close()
  local rc = tonumber(out:match("rc=(%d+)%s*$"))
  return rc, out
end

local function tmpdir()
  local p = assert(io.popen("mktemp -d"))
  local d = p:read("l")
  p:close()
  return d
end

describe("my recovery script, replayed", function()
  local dir = tmpdir()
  local ev = dir .. "/ev"
  teardown(function() os.execute("rm -rf " .. quote(dir)) end)

  it("replays the interrupted run", function()
    local rc, out = run { FLOW, "--manifest", MANIFEST, "--replay", INTERRUPTED, "--evidence", ev }
    assert.are.equal(INTERRUPTED_EXIT, rc, out)
  end)

  it("recovers it to the expected decision", function()
    local rc, out = run { SCRIPT, "--recover", "--evidence", ev, "--replay", RECOVERY }
    assert.are.equal(EXPECT_EXIT, rc, out)
    -- the shipped recovery prints "DECISION: ACCEPT", the API.md example
    -- "decision: ACCEPT (...)"
    assert.truthy(out:lower():find("decision: " .. EXPECT_DECISION:lower(), 1, true), out)
  end)

  it("leaves evidence that verify finds consistent", function()
    local rc, out = run { "verify", ev }
    assert.are.equal(0, rc, out)
  end)
end)
