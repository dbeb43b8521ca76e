-- The script orders steps and nothing more (DESIGN.md invariant 14): a
-- hostile script run by the host cannot choose what C trusts (a command,
-- an endpoint, a file, a lifecycle boundary) nor the exit code, and cannot
-- make the host write a core file. Each case attacks from a sandboxed
-- script and checks what C refused, what was recorded, and what left.
local helper = require "helper"
local cjson = require "cjson"

local function script(text)
  return helper.write(helper.tmpdir() .. "/hostile.lua", text)
end

local function manifest()
  return helper.manifest_file(helper.tmpdir())
end

-- A target and a credential for the cases whose script never opens a run:
-- the host asks for both before it runs a script, and these cases must not
-- depend on the live Azurite's environment (nothing listens on port 9).
local function offline_target(extra)
  local env = { AZURE_STORAGE_ACCOUNT_URL = "https://127.0.0.1:9", AZURE_STORAGE_TOKEN = "offline-token" }
  for k, v in pairs(extra or {}) do env[k] = v end
  return env
end

local function rows_of(dir, record)
  local out = {}
  for _, r in ipairs(helper.rows(dir)) do
    if r.record == record then out[#out + 1] = r end
  end
  return out
end

describe("the operator configures, the script orders steps", function()
  teardown(helper.cleanup)

  -- Every key a script might use to choose what C trusts is refused by
  -- leaselua.open, with where the operator sets it; nothing is opened,
  -- nothing is sent (the counting server sees no connection).
  local OPERATOR_KEYS = {
    account_url = { '"https://evil.example"', "AZURE_STORAGE_ACCOUNT_URL" },
    container = { '"other"', "AZURE_STORAGE_CONTAINER" },
    blob = { '"precious.json"', "AZURE_STORAGE_BLOB" },
    auth = { '{ kind = "command", token_command = "touch MARKER" }', "--token-command" },
    ca_file = { '"/etc/passwd"', "--ca-file" },
    evidence = { '"/tmp/elsewhere"', "--evidence" },
    manifest = { '{ permitted_actors = { "A" } }', "--manifest" },
    record = { '"/etc/leaselua-overwritten"', "--record" },
    replay = { '"/dev/zero"', "--replay" },
    after = { '"/tmp/forged-bundle"', "--after" },
    deadline_s = { "86400", "--deadline-s" },
    total_timeout_ms = { "1", "--timeout-ms" },
    max_single_put = { "1073741824", "fixed at 1 MiB" },
  }
  for key, v in pairs(OPERATOR_KEYS) do
    it("refuses leaselua.open{" .. key .. "} from a script, naming " .. v[2], function()
      local srv = helper.count_server(10)
      local d = helper.tmpdir()
      local s = script(('local ll = require "leaselua"\nll.open { %s = %s }\n'):format(key, v[1]))
      local rc, out, err = helper.run({ s, "--manifest", manifest(), "--evidence", d .. "/ev" },
        { AZURE_STORAGE_ACCOUNT_URL = srv.url, AZURE_STORAGE_TOKEN = helper.dev_token() })
      srv.stop()
      assert.are.equal(64, rc, out .. err)
      assert.matches("LL_E_USAGE: '" .. key .. "' is the operator's to set, not the script's %(invariant 14%)", err)
      assert.truthy(err:find(v[2], 1, true), err)
      assert.are.equal(1, helper.count(err, "\n"), "one line: " .. err)
      assert.are.equal(0, srv.connections() or 0, "a connection was made")
      assert.is_nil(helper.read(d .. "/ev/export/ledger.jsonl"), "a run was opened")
    end)
  end

  it("1: a token command from a script spawns no process (strace: one execve, no fork)", function()
    local d = helper.tmpdir()
    local marker = d .. "/MARKER"
    local s = script(('local ll = require "leaselua"\n' ..
      'll.open { auth = { kind = "command", token_command = "touch %s" } }\n'):format(marker))
    local log = d .. "/strace.log"
    local rc, out, err = helper.run({ s, "--manifest", manifest(), "--evidence", d .. "/ev" },
      { AZURE_STORAGE_ACCOUNT_URL = "https://127.0.0.1:9/devstoreaccount1", AZURE_STORAGE_TOKEN = false })
    assert.are.equal(64, rc, out .. err)
    -- the same under strace, which sees every process the host starts
    local cmd = ("strace -f -qq -e trace=execve,fork,vfork,clone,clone3 -o %s %s %s --manifest %s " ..
      "--evidence %s >/dev/null 2>&1"):format(helper.quote(log), helper.quote(helper.host), helper.quote(s),
      helper.quote(manifest()), helper.quote(d .. "/ev2"))
    os.execute("AZURE_STORAGE_ACCOUNT_URL=https://127.0.0.1:9/devstoreaccount1 " .. cmd)
    local trace = assert(helper.read(log), "strace wrote nothing")
    assert.are.equal(1, helper.count(trace, "execve%("), trace)
    assert.are.equal(0, helper.count(trace, "clone3?%(") + helper.count(trace, "v?fork%("), trace)
    assert.is_nil(helper.read(marker), "the command ran")
  end)

  it("1: the operator's own token command runs without a shell", function()
    local d = helper.tmpdir()
    local marker = d .. "/MARKER"
    local token = helper.dev_token()
    local tokfile = helper.write(d .. "/tok", token)
    -- cat FILE $(touch MARKER): a shell would run the touch; an argument
    -- vector hands "$(touch" to cat as a file name, and cat fails
    local rc, out, err = helper.run({ "scripts/main_handoff.lua", "--manifest", manifest(), "--evidence",
      d .. "/ev", "--token-command", "cat " .. tokfile .. " $(touch " .. marker .. ")" },
      { AZURE_STORAGE_ACCOUNT_URL = "https://127.0.0.1:9/devstoreaccount1", AZURE_STORAGE_TOKEN = false })
    assert.is_nil(helper.read(marker), "a shell ran the command line")
    assert.are.equal(64, rc, out .. err)
    assert.is_nil(err:find(token, 1, true), "the token reached stderr")
  end)

  it("2: a sandboxed script cannot read the credential or the target from the environment", function()
    local s = script([[
local ll = require "leaselua"
for _, name in ipairs { "AZURE_STORAGE_TOKEN", "AZURE_STORAGE_SAS", "AZURE_STORAGE_ACCOUNT_URL", "HOME" } do
  local ok = pcall(ll.getenv, name)
  print(name .. "=" .. tostring(ok))
end
print("os=" .. tostring(os) .. " io=" .. tostring(io) .. " debug=" .. tostring(debug) ..
  " package=" .. tostring(package))
ll.help("done")
]])
    local rc, out, err = helper.run({ s }, offline_target { AZURE_STORAGE_TOKEN = "secret-token-value" })
    assert.are.equal(64, rc, out .. err) -- a usage nobody asked for opens no run: no decision
    assert.truthy(out:find("AZURE_STORAGE_TOKEN=false\nAZURE_STORAGE_SAS=false\n" ..
      "AZURE_STORAGE_ACCOUNT_URL=false\nHOME=false\n", 1, true), out)
    assert.truthy(out:find("os=nil io=nil debug=nil package=nil", 1, true), out)
    assert.is_nil((out .. err):find("secret-token-value", 1, true))
  end)

  it("6: a script cannot read a ledger at a path it chose", function()
    local s = script('local ll = require "leaselua"\nll.ledger("/etc")\n')
    local rc, out, err = helper.run({ s }, offline_target())
    assert.are.equal(64, rc, out .. err)
    assert.matches("leaselua.ledger reads a path: a script reads its own run's rows with run:rows%(%)", err)
  end)

  it("a script opens one run", function()
    local d = helper.tmpdir()
    local s = script('local ll = require "leaselua"\nlocal a = ll.open {}\nlocal ok, e = pcall(ll.open, {})\n' ..
      'print(ok, e.code, e.message)\na:finish()\n')
    local rc, out, err = helper.run({ s, "--replay", helper.root .. "/fixtures/emulator/main-handoff-accept.json",
      "--manifest", manifest(), "--evidence", d .. "/ev" }, { AZURE_STORAGE_ACCOUNT_URL = false })
    assert.truthy(out:find("false\tLL_E_USAGE\ta script opens one run", 1, true), out .. err)
    assert.are.equal(64, rc, "the replay's unused exchanges are a strict failure: " .. err)
  end)

  it("5: a usage or plan printed unasked opens nothing and claims nothing: exit 64, never 0", function()
    -- helper-27: a script that printed an ACCEPT line and a plan exited 0
    for _, body in ipairs { 'll.lease_plan { break_period = 10 }', 'll.help("usage: hostile")' } do
      local s = script('local ll = require "leaselua"\nprint("DECISION: ACCEPT")\n' .. body .. '\n')
      local rc, out, err = helper.run({ s, "--manifest", manifest(), "--evidence", helper.tmpdir() .. "/ev" },
        offline_target())
      assert.are.equal(64, rc, body .. ": " .. out .. err)
      assert.truthy(err:find("opened no run, so there is no decision (exit 64)", 1, true), err)
      -- asked for by the arguments: the usage or plan is the answer, exit 0
      rc, out, err = helper.run({ s, "--manifest", manifest(), body:find("help", 1, true) and "--help" or "--plan" },
        offline_target())
      assert.are.equal(0, rc, body .. ": " .. out .. err)
    end
  end)

  it("a destructive lifecycle or a recovery is the operator's boundary, not the script's", function()
    local target = { AZURE_STORAGE_ACCOUNT_URL = "https://127.0.0.1:9/devstoreaccount1",
      LEASELUA_EVIDENCE_ROOT = helper.tmpdir() }
    local s = script('local ll = require "leaselua"\nll.open { destructive = true }\n')
    local rc, _, err = helper.run({ s, "--manifest", manifest() }, target)
    assert.are.equal(64, rc, err)
    assert.matches("the operator passes %-%-destructive %-%-after DIR", err)
    s = script('local ll = require "leaselua"\nll.open { recover = true }\n')
    rc, _, err = helper.run({ s, "--manifest", manifest() }, target)
    assert.are.equal(64, rc, err)
    assert.matches("this flow recovers an interrupted run: pass %-%-recover %-%-evidence DIR", err)
  end)
end)

describe("a lease-table run: only C's table engine sends", function()
  teardown(helper.cleanup)

  -- A user script may open a run for the lease table (the operator's
  -- --destructive --after still gates its destructive lifecycles), but
  -- the table's evidence says each cell was attempted in the state C
  -- established: a request or a lifecycle of the script's own between the
  -- cells would change that state unseen, and the run's requests would no
  -- longer be the printed plan. Offline: the replay serves the script's
  -- create container if it is ever sent (it matches the fixture).
  it("refuses the script's own requests and lifecycles, before and after run:lease_plan", function()
    local d = helper.tmpdir()
    local s = script([[
local ll = require "leaselua"
local run = ll.open { name = "lease-table", actors = { "A", "B", "operator", "observer" },
  break_periods = { 0, 10 }, lease_table = true }
local function try(label, f, ...)
  local ok, row, e = pcall(f, ...)
  if ok and row then print(label, "SENT") return end
  e = ok and e or row
  print(label, "REFUSED", e and e.code, e and e.message)
end
try("before", run.create_container, run)
run:lease_plan { break_period = 10 }
try("after", run.create_container, run)
try("lifecycle", run.lifecycle, run, { reason = "the script's own" })
try("properties", run.properties, run)
]])
    local rc, out, err = helper.run({ s, "--replay", helper.root .. "/fixtures/emulator/main-handoff-accept.json",
      "--manifest", manifest(), "--evidence", d .. "/ev" }, { AZURE_STORAGE_ACCOUNT_URL = false })
    for _, label in ipairs({ "before", "after", "lifecycle", "properties" }) do
      assert.truthy(out:find(label .. "\tREFUSED\tLL_E_ORDER\t", 1, true), label .. ": " .. out .. err)
    end
    assert.matches("only the lease table's engine", out)
    assert.are.equal(0, #rows_of(d .. "/ev", "intent"), "no request was sent")
    assert.are.equal(0, #rows_of(d .. "/ev", "lifecycle"), "no lifecycle was started")
    assert.are_not.equal(0, rc)
  end)
end)

describe("5: the exit code is the recorded decision #live", function()
  teardown(helper.cleanup)

  -- A run that sends a create container and a properties read, then
  -- finishes: the decision is HOLD (no handoff was attempted).
  local function run_returning(tail)
    local d = helper.tmpdir()
    local s = script([[
local ll = require "leaselua"
local run = ll.open { name = "exit-test", actors = { "A", "operator", "observer" } }
run:create_container()
run:properties()
local d = run:finish()
print("decision " .. d.decision)
]] .. tail)
    local rc, out, err = helper.run({ s, "--manifest", manifest(), "--evidence", d .. "/ev" },
      helper.live_env(helper.unique_blob("exit")))
    return rc, out, err, d .. "/ev"
  end

  for _, tail in ipairs { "", "return 0", 'return "0"', "return 3.0", "return 7", "return -1",
    "os = nil return 0" } do
    it("a script that records HOLD and then runs " .. (tail == "" and "to its end" or "`" .. tail .. "`") ..
      " exits 2", function()
      local rc, out, err, ev = run_returning(tail)
      assert.truthy(out:find("decision HOLD", 1, true), out .. err)
      assert.are.equal(2, rc, out .. err)
      assert.are.equal("HOLD", cjson.decode(helper.read(ev .. "/decision.json")).decision)
    end)
  end

  it("a script raising after mutations gets a recorded HOLD and exits 2", function()
    if not helper.have_live() then return pending("needs the live Azurite of tools/run-specs.sh") end
    local d = helper.tmpdir()
    local s = script([[
local ll = require "leaselua"
local run = ll.open { name = "raise-test", actors = { "A", "operator", "observer" } }
run:declare(0, "A")
run:create_container()
run:lifecycle { reason = "raise" }
run:unbound("A"):put(0)
error({ code = "LL_OK", exit = 0, message = "a script's own error table" })
]])
    local rc, out, err = helper.run({ s, "--manifest", manifest(), "--evidence", d .. "/ev" },
      helper.live_env(helper.unique_blob("raise")))
    assert.are.equal(2, rc, out .. err)
    assert.matches("leaselua: a script's error object, not leaselua's: LL_OK: a script's own error table\n", err)
    local stops = rows_of(d .. "/ev", "stop")
    assert.are.equal(1, #stops)
    assert.are.equal("no-decision", stops[1].kind)
    assert.matches("it raised an error", stops[1].reason)
    local dec = rows_of(d .. "/ev", "decision")
    assert.are.equal(1, #dec)
    assert.are.equal("HOLD", dec[1].decision)
    assert.matches("the script ended without recording a decision", dec[1].reasons[1])
    local vrc, vout = helper.run({ "verify", d .. "/ev" })
    assert.are.equal(0, vrc, vout)
  end)

  it("an uncaught guard refusal after mutations records the refusal and a HOLD, exit 2", function()
    if not helper.have_live() then return pending("needs the live Azurite of tools/run-specs.sh") end
    local d = helper.tmpdir()
    local s = script([[
local ll = require "leaselua"
local run = ll.open { name = "refusal-test", actors = { "A", "operator", "observer" } }
run:declare(0, "A")
run:declare(1, "A")
run:create_container()
run:lifecycle { reason = "refusal" }
local A = run:unbound("A")
A:put(0)
A:put(1) -- no read-back of rev 0: invariant 4, not caught
]])
    local rc, out, err = helper.run({ s, "--manifest", manifest(), "--evidence", d .. "/ev" },
      helper.live_env(helper.unique_blob("refusal")))
    assert.are.equal(2, rc, out .. err)
    assert.matches("leaselua: LL_E_UNRECONCILED: Put Blob refused", err)
    assert.are.equal("LL_E_UNRECONCILED", rows_of(d .. "/ev", "refusal")[1].code)
    assert.are.equal("HOLD", cjson.decode(helper.read(d .. "/ev/decision.json")).decision)
  end)

  it("after finish() no request is sent, and a second finish() is refused", function()
    if not helper.have_live() then return pending("needs the live Azurite of tools/run-specs.sh") end
    local d = helper.tmpdir()
    local s = script([[
local ll = require "leaselua"
local run = ll.open { name = "finished", actors = { "A", "operator", "observer" } }
run:create_container()
run:finish()
local ok, e = pcall(run.properties, run)
print("request after finish: " .. tostring(ok) .. " " .. tostring(e.code))
ok, e = pcall(run.finish, run)
print("second finish: " .. tostring(ok))
]])
    local rc, out, err = helper.run({ s, "--manifest", manifest(), "--evidence", d .. "/ev" },
      helper.live_env(helper.unique_blob("finished")))
    assert.are.equal(2, rc, out .. err)
    assert.truthy(out:find("request after finish: false LL_E_ORDER", 1, true), out)
    assert.truthy(out:find("second finish: false", 1, true), out)
    assert.are.equal(1, #rows_of(d .. "/ev", "decision"))
    -- the preflight read (invariant 15), then the Create Container: nothing after finish()
    local intents = rows_of(d .. "/ev", "intent")
    assert.are.equal(2, #intents)
    assert.is_true(intents[1].preflight)
    assert.are.equal("Create Container", intents[2].operation)
  end)
end)

describe("the operator's deadline bounds the run, not the script #live", function()
  teardown(helper.cleanup)

  -- --deadline-s was checked against the credential only: a script could
  -- wait past it, or loop, and go on sending. Every request after it is
  -- now refused in C, a read as much as a mutation.
  it("14: after --deadline-s, nothing leaves, whatever the script waits for", function()
    if not helper.have_live() then return pending("needs the live Azurite of tools/run-specs.sh") end
    local d = helper.tmpdir()
    local s = script([[
local ll = require "leaselua"
local run = ll.open { name = "deadline", actors = { "A", "operator", "observer" } }
run:create_container()
run:sleep(1500)
for _, f in ipairs { "properties", "create_container" } do
  local ok, e = pcall(run[f], run)
  print(f .. " after the deadline: " .. tostring(ok) .. " " .. tostring(ok or e.code))
end
run:finish()
]])
    local rc, out, err = helper.run({ s, "--manifest", manifest(), "--evidence", d .. "/ev", "--deadline-s", "1" },
      helper.live_env(helper.unique_blob("deadline")))
    assert.are.equal(2, rc, out .. err)
    -- the bound is in the bundle, so a reader sees why the requests stopped
    assert.are.equal(1, cjson.decode(helper.read(d .. "/ev/manifest.json")).deadline_s)
    assert.are.equal(1, helper.rows(d .. "/ev")[1].deadline_s)
    assert.truthy(out:find("properties after the deadline: false LL_E_SCOPE", 1, true), out)
    assert.truthy(out:find("create_container after the deadline: false LL_E_SCOPE", 1, true), out)
    local refusals = rows_of(d .. "/ev", "refusal")
    assert.are.equal(2, #refusals)
    for _, r in ipairs(refusals) do
      assert.are.equal(14, r.invariant)
      assert.truthy(r.message:find("the run's deadline passed (--deadline-s 1", 1, true), r.message)
    end
    -- the preflight read and the Create Container, both before the deadline
    local intents = rows_of(d .. "/ev", "intent")
    assert.are.equal(2, #intents)
    assert.are.equal("Create Container", intents[2].operation)
    assert.are.equal("HOLD", cjson.decode(helper.read(d .. "/ev/decision.json")).decision)
    -- the same script under the default deadline (900 s) reads again
    d = helper.tmpdir()
    local _, out2, err2 = helper.run({ s, "--manifest", manifest(), "--evidence", d .. "/ev" },
      helper.live_env(helper.unique_blob("deadline")))
    assert.truthy(out2:find("properties after the deadline: true true", 1, true), out2 .. err2)
    for _, r in ipairs(rows_of(d .. "/ev", "refusal")) do assert.are_not.equal(14, r.invariant, r.message) end
  end)
end)

describe("a script cannot outlive its run's deadline #live", function()
  teardown(helper.cleanup)

  -- Past --deadline-s nothing is sent, but a script spinning on the CPU
  -- held the run (and the blob's lock) open until someone killed it, a
  -- pcall around the spin catching any one error. 5 s after the deadline
  -- the host now raises at every instruction, and ends the run.
  it("14: a spinning script is stopped 5 s after --deadline-s, and the run ends HOLD", function()
    if not helper.have_live() then return pending("needs the live Azurite of tools/run-specs.sh") end
    local slow = require "support.slow"
    local d = helper.tmpdir()
    local s = script([[
local ll = require "leaselua"
local run = ll.open { name = "spinner", actors = { "A", "operator", "observer" } }
run:create_container()
while true do pcall(function() while true do end end) end
]])
    local t0 = os.time()
    local rc, out, err = slow.run_host({ s, "--manifest", manifest(), "--evidence", d .. "/ev", "--deadline-s", "1" },
      { env = helper.live_env(helper.unique_blob("spinner")), prefix = "timeout -s KILL 60" })
    local took = os.time() - t0
    assert.are.equal(2, rc, out .. err)
    assert.is_true(took >= 5 and took <= 20, "stopped after " .. took .. " s")
    assert.truthy(err:find("the host stops it", 1, true), err)
    assert.are.equal("HOLD", cjson.decode(helper.read(d .. "/ev/decision.json")).decision)
  end)

  -- A count hook never fires inside a C function: a backtracking
  -- string.find ran 12 s past a 1 s deadline, and this pattern would run
  -- for hours (helper-30). The host's hard stop ends the process once the
  -- deadline, the grace and any request's own time (--timeout-ms) are
  -- past: 1 + 5 + 1 + 5 s here, offline, nothing sent.
  -- A run whose script, after `before`, is stuck in a backtracking find:
  -- the evidence directory, exit code, stdout, stderr and seconds taken.
  local function stuck(before)
    local slow = require "support.slow"
    local d = helper.tmpdir()
    local s = script(([[
local ll = require "leaselua"
local run = ll.open { name = "backtrack", actors = { "A", "operator", "observer" } }
%s
print(string.find(string.rep("a", 60), string.rep("a-", 12) .. "b"))
]]):format(before))
    local t0 = os.time()
    local rc, out, err = slow.run_host({ s, "--manifest", manifest(), "--evidence", d .. "/ev", "--deadline-s", "1",
      "--timeout-ms", "1000" }, { env = offline_target { AZURE_STORAGE_TOKEN = helper.dev_token() },
      prefix = "timeout -s KILL 60" })
    return d, rc, out, err, os.time() - t0
  end

  it("14: a script stuck inside a library call is stopped, the run left undecided (exit 70)", function()
    local d, rc, out, err, took = stuck('run:note("start", "into the library call")')
    assert.are.equal(70, rc, out .. err)
    assert.is_true(took >= 11 and took <= 30, "stopped after " .. took .. " s")
    assert.truthy(err:find("inside a call no hook reaches: the process stops here", 1, true), err)
    assert.truthy(err:find("--recover --evidence " .. d .. "/ev", 1, true), err)
    assert.is_nil(helper.read(d .. "/ev/decision.json"), "no decision is claimed")
    assert.are.equal(1, #rows_of(d .. "/ev", "note"), "the rows written before are kept")
    assert.are.equal(0, #rows_of(d .. "/ev", "intent"), "nothing was sent")
  end)

  -- helper-31: after run:finish() the line said "undecided" and sent the
  -- operator to recovery, while the decision stood in the bundle.
  it("14: stopped after its decision, the line names the decision, and the exit is still 70", function()
    local d, rc, out, err = stuck("run:finish()")
    assert.are.equal(70, rc, out .. err)
    assert.truthy(err:find("after the run recorded its decision (HOLD): the process stops here (exit 70", 1, true),
      err)
    assert.is_nil(err:find("undecided", 1, true), err)
    assert.are.equal("HOLD", cjson.decode(helper.read(d .. "/ev/decision.json")).decision)
  end)
end)

describe("a bounded bundle", function()
  teardown(helper.cleanup)

  -- The script's Lua state had no bound: a script could take the
  -- machine's memory until the OOM killer ended leaselua (or something
  -- else). Past 1 GiB an allocation now fails as Lua's own "not enough
  -- memory"; the run still ends with its decision.
  it("14: a script cannot take more than 1 GiB of memory; the run still ends HOLD", function()
    local d = helper.tmpdir()
    local s = script([[
local ll = require "leaselua"
local run = ll.open { name = "hog", actors = { "A", "operator", "observer" } }
local ok, e = pcall(string.rep, "x", 1536 * 1024 * 1024)
print("big: " .. tostring(ok) .. " " .. (ok and #e or tostring(e)))
local small = string.rep("y", 1024 * 1024)
print("small: " .. #small)
]])
    local rc, out, err = helper.run({ s, "--manifest", manifest(), "--evidence", d .. "/ev" },
      offline_target { AZURE_STORAGE_TOKEN = helper.dev_token() })
    assert.are.equal(2, rc, out .. err)
    assert.truthy(out:find("big: false not enough memory", 1, true), out .. err)
    assert.truthy(out:find("small: 1048576", 1, true), out)
    assert.are.equal("HOLD", cjson.decode(helper.read(d .. "/ev/decision.json")).decision)
  end)

  -- A loop of run:note wrote 161 MB in 0.4 s, with no end but the disk.
  -- Past the bound, only the decision row is written: offline, nothing
  -- is sent (port 9), and the bundle still verifies.
  it("14: a script cannot grow the evidence past its bound; the decision is still written", function()
    local d = helper.tmpdir()
    local s = script([[
local ll = require "leaselua"
local run = ll.open { name = "filler", actors = { "A", "operator", "observer" } }
local text, n = string.rep("x", 4000), 0
while n < 100000 do
  local ok, e = pcall(run.note, run, "fill", text)
  if not ok then
    print("refused after " .. n .. " notes: " .. tostring(e.code) .. ": " .. tostring(e.message))
    break
  end
  n = n + 1
end
local ok, e = pcall(run.properties, run)
print("read: " .. tostring(ok) .. " " .. tostring(ok or e.code))
]])
    local rc, out, err = helper.run({ s, "--manifest", manifest(), "--evidence", d .. "/ev" },
      offline_target { AZURE_STORAGE_TOKEN = helper.dev_token() })
    assert.are.equal(2, rc, out .. err)
    local n = tonumber(out:match("refused after (%d+) notes: LL_E_SCOPE: the run's evidence reached its bound"))
    assert.truthy(n, out)
    assert.is_true(n > 30000 and n < 33000, out) -- a 4000-byte note is a 4.2 kB row
    assert.truthy(out:find("read: false LL_E_SCOPE", 1, true), out)
    local f = assert(io.open(d .. "/ev/protected/ledger.jsonl", "rb"))
    local size = f:seek("end")
    f:close()
    assert.is_true(size >= 128 * 1048576 and size < 129 * 1048576, tostring(size))
    assert.are.equal("HOLD", cjson.decode(helper.read(d .. "/ev/decision.json")).decision)
    local vrc, vout, verr = helper.run({ "verify", d .. "/ev" })
    assert.are.equal(0, vrc, vout .. verr)
  end)
end)

describe("no core file while a token is held #live", function()
  teardown(helper.cleanup)

  -- ulimit -c unlimited, a run holding its token asleep, then a signal:
  -- the host made itself undumpable, so the kernel writes no core file.
  -- A control (a plain sleep killed the same way) shows that this machine
  -- does write core files into the working directory, so the check can fail.
  local function core_files(dir)
    local p = io.popen("ls " .. helper.quote(dir))
    local n = 0
    for f in p:lines() do
      if f:match("^core") then n = n + 1 end
    end
    p:close()
    return n
  end

  local function killed(cmd, signal)
    local d = helper.tmpdir()
    local pidfile = d .. "/pid"
    os.execute(("cd %s && (ulimit -c unlimited; exec %s) >/dev/null 2>&1 & echo $! > %s"):format(
      helper.quote(d), cmd, helper.quote(pidfile)))
    os.execute("sleep 1.5")
    local pid = helper.read(pidfile):match("%d+")
    os.execute("kill -" .. signal .. " " .. pid .. "; sleep 1")
    return d
  end

  for _, signal in ipairs { "ABRT", "SEGV" } do
    it("SIG" .. signal .. " to a host holding a token writes no core", function()
      if not helper.have_live() then return pending("needs the live Azurite of tools/run-specs.sh") end
      local pattern = helper.read("/proc/sys/kernel/core_pattern") or ""
      if pattern:sub(1, 1) == "|" then return pending("core_pattern pipes cores away: " .. pattern) end
      local control = killed("sleep 30", signal)
      assert.are.equal(1, core_files(control), "the control wrote no core: this machine writes none")
      local s = script('local ll = require "leaselua"\nlocal run = ll.open {}\nrun:properties()\nrun:sleep(20000)\n')
      local env = helper.live_env(helper.unique_blob("core"))
      local parts = {}
      for k, v in pairs(env) do parts[#parts + 1] = k .. "=" .. helper.quote(v) end
      local d = killed(("env %s %s %s --manifest %s --evidence ev"):format(table.concat(parts, " "),
        helper.quote(helper.host), helper.quote(s), helper.quote(manifest())), signal)
      assert.truthy(helper.read(d .. "/ev/export/ledger.jsonl"), "the run never started")
      assert.are.equal(0, core_files(d), "a core file was written")
    end)
  end
end)

-- Script code runs only where the script orders a step: a finalizer would
-- run when the collector decides, inside a run method reading the ledger
-- or after the host fixed the exit code; the sandbox refuses one. And a
-- recovery whose plan is refused after the bundle was reopened still ends
-- with the host's HOLD, and opens nothing more.
describe("script code runs only where the script orders it", function()
  local rp = require "support.replay"
  teardown(function()
    helper.cleanup()
    rp.cleanup()
  end)

  it("refuses a __gc finalizer: nothing opened, exit 64, one line", function()
    local d = helper.tmpdir()
    local s = script('local ll = require "leaselua"\n'
      .. 'KEEP = setmetatable({}, { __gc = function() ll.open {} end })\n'
      .. 'print("not reached")\n')
    local rc, out, err = helper.run_env({ s, "--manifest", manifest(), "--evidence", d .. "/ev" }, offline_target())
    assert.are.equal(64, rc, err)
    assert.matches("LL_E_USAGE: setmetatable: a __gc finalizer is refused", err, 1, true)
    assert.is_nil(out:find("not reached", 1, true))
    assert.is_nil(helper.read(d .. "/ev/export/ledger.jsonl"), "a run was opened")
  end)

  it("a __gc added to a metatable after setmetatable never runs", function()
    local d = helper.tmpdir()
    local s = script('local mt = {}\nlocal t = setmetatable({}, mt)\n'
      .. 'mt.__gc = function() print("finalizer ran") end\nt = nil\ncollectgarbage()\n'
      .. 'require("leaselua").help("usage")\n')
    local rc, out = helper.run_env({ s, "--manifest", manifest(), "--evidence", d .. "/ev" }, offline_target())
    assert.are.equal(64, rc) -- it opened no run: no decision
    assert.is_nil(out:find("finalizer ran", 1, true))
  end)

  it("refuses a writer named for a role: the operator's and the observer's credentials never write", function()
    local d = rp.tmpdir()
    local s = helper.write(d .. "/roles.lua", 'local ll = require "leaselua"\n'
      .. 'local run = ll.open { actors = { "A", "B", "operator", "observer" } }\n'
      .. 'for _, who in ipairs { "operator", "observer" } do\n'
      .. '  for _, how in ipairs { "writer", "unbound" } do\n'
      .. '    local ok, e = pcall(run[how], run, who)\n'
      .. '    print(how, who, ok, ok and "" or e.code, ok and "" or e.message)\n'
      .. '  end\n'
      .. 'end\n')
    local _, out = rp.replay("x", "emulator/main-handoff-accept", d .. "/ev", nil, nil, s)
    for _, who in ipairs { "operator", "observer" } do
      for _, how in ipairs { "writer", "unbound" } do
        assert.matches(how .. "\t" .. who .. "\tfalse\tLL_E_USAGE\trun:" .. how .. ": '" .. who
          .. "' is a role, not a writer", out, 1, true)
      end
    end
    for _, r in ipairs(helper.rows(d .. "/ev")) do
      assert.is_true(r.record ~= "lease_bind", "a role was bound as a writer")
    end
  end)

  it("a recovery whose plan is refused after the reopen opens no second run and never exits 0", function()
    local d = rp.tmpdir()
    local ev = d .. "/ev"
    local rc = rp.replay("main_handoff", "documented/acquire-lost", ev)
    assert.are.equal(2, rc)
    local before = #helper.rows(ev)
    local s = helper.write(d .. "/z.lua", 'local ll = require "leaselua"\n'
      .. 'local ok, e = pcall(ll.open, { name = "x", recover = true, actors = { "Z" } })\n'
      .. 'print("first", ok, e.code)\n'
      .. 'ok, e = pcall(ll.open, { name = "x", recover = true, actors = { "A", "B", "operator", "observer" } })\n'
      .. 'print("second", ok, e.code, e.message)\n'
      .. 'll.help("usage")\n')
    local rc2, out, err = rp.replay("recovery", "documented/acquire-lost.recovery-proven", ev, nil, nil, s)
    assert.matches("first\tfalse\tLL_E_MANIFEST", out, 1, true)
    assert.matches("second\tfalse\tLL_E_USAGE\ta script opens one run", out, 1, true)
    assert.are.equal(70, rc2, err) -- a run was opened and no decision recorded
    local rows = helper.rows(ev)
    assert.are.equal(before + 1, #rows, "only the reopen's recovery row was added")
    assert.are.equal("recovery", rows[#rows].record)
  end)
end)
