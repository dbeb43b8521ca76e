-- The allocation-failure sweep, after SQLite's out-of-memory tests: the main
-- handoff fixture is replayed in this one process, through the stock module,
-- with the Nth counted allocation failing, for N = 1, 2, ... until a run
-- completes without reaching N. At every N: no ACCEPT (a failure was
-- injected), no crash, and an evidence directory that verifies or that
-- verify refuses with a message. Needs a -DLEASELUA_FAILALLOC=ON build.
--
-- usage (from the repository root; `make failalloc` sets the paths):
--   lua5.4 tests/failalloc/sweep.lua [--stride K] [--offset O] [--last N]
--     --stride K  run every Kth N only (CI), starting at --offset O (1..K)
--     --last N    stop after N (a quick look)
-- Exit 0 when every N held; 1 otherwise, naming the first ones that did not.
local ll = require "leaselua"
-- a sanitizer that finds a leak at exit ends the process without flushing
io.stdout:setvbuf("line")

local have, fa = pcall(require, "leaselua.failalloc")
if not have then
  io.stderr:write("sweep: this leaselua.so has no allocation-failure hooks: build it with -DLEASELUA_FAILALLOC=ON\n")
  os.exit(64)
end

local opts = { stride = 1, offset = 1, last = math.maxinteger }
do
  local i = 1
  while arg[i] do
    local name, value = arg[i]:match("^%-%-(%a+)$"), tonumber(arg[i + 1] or "")
    if not (name and opts[name] and value and math.tointeger(value) and value >= 1) then
      io.stderr:write("sweep: usage: sweep.lua [--stride K] [--offset O] [--last N]\n")
      os.exit(64)
    end
    opts[name] = math.tointeger(value)
    i = i + 2
  end
  if opts.offset > opts.stride then opts.offset = (opts.offset - 1) % opts.stride + 1 end
end

local root = os.getenv("PWD")
local FIXTURE = root .. "/fixtures/emulator/main-handoff-accept.json"
local MANIFEST = root .. "/tools/emulator/manifest.json"
local SCRIPT = root .. "/scripts/main_handoff.lua"

-- Evidence goes to /dev/shm when there is one: each run fsyncs its intents.
local base
do
  local shm = os.execute("test -d /dev/shm -a -w /dev/shm") and "/dev/shm" or "/tmp"
  local p = assert(io.popen("mktemp -d " .. shm .. "/leaselua-failalloc.XXXXXX"))
  base = p:read("l")
  p:close()
  assert(base and base ~= "", "mktemp failed")
end

-- The flow as shipped, with the stock module's full configuration: the
-- script's own ll.open call gets the replay, the evidence and the manifest
-- added, whatever flow parameters it passes itself.
local function open_with(dir)
  return function(cfg)
    cfg = cfg or {}
    cfg.evidence, cfg.replay, cfg.manifest = dir, FIXTURE, MANIFEST
    cfg.account_url = "https://replay.invalid"
    cfg.container = cfg.container or "lease-handoff-lab"
    cfg.blob = cfg.blob or "writer-handoff.json"
    cfg.record, cfg.ca_file, cfg.auth = nil, nil, nil
    return ll.open(cfg)
  end
end

-- SWEEP_VERBOSE=1 shows what the flow prints (one N at a time, to debug)
local quiet = os.getenv("SWEEP_VERBOSE") and print or function() end
local real_print = print

local function run_once(dir, n)
  local proxy = setmetatable({ open = open_with(dir) }, { __index = ll })
  local env = setmetatable({ arg = {}, print = quiet }, { __index = _G })
  env.require = function(name)
    if name == "leaselua" then return proxy end
    return require(name)
  end
  local chunk = assert(loadfile(SCRIPT, "t", env))
  _G.print = quiet -- the flow's lib.out prints one line per step
  fa.arm(n)
  local ok, res = pcall(chunk)
  local seen, fired = fa.arm(0)
  _G.print = real_print
  collectgarbage()
  local ending
  if ok then
    -- a script does not choose the exit code: the recorded decision does
    local rows = ll.ledger(dir)
    ending = "no decision recorded"
    for _, row in ipairs(rows or {}) do
      if row.record == "decision" then ending = row.decision end
    end
  elseif type(res) == "table" and res.code then
    ending = res.code
  else
    ending = "raised: " .. tostring(res)
  end
  return { ending = ending, seen = seen, fired = fired,
    message = not ok and type(res) == "table" and tostring(res.message) or tostring(res) }
end

local KNOWN = { "manifest.json", "environment.json", "expected.json", "decision.json", "report.html",
  "summary.md", "export/ledger.jsonl", "protected/ledger.jsonl", "export", "protected" }
local function remove(dir)
  for _, f in ipairs(KNOWN) do os.remove(dir .. "/" .. f) end
  if not os.remove(dir) and io.open(dir, "r") then
    os.execute("rm -rf '" .. dir .. "'") -- something unexpected was left
  end
end

local t0 = os.time()
local clock0 = os.clock()

-- The complete run: its allocation count is the number of points to sweep.
-- Twice: the first also fills what the core keeps for the process (the
-- parsed known-deviations table), which later runs do not allocate again.
local baseline
for i = 1, 2 do
  local dir = base .. "/baseline" .. i
  baseline = run_once(dir, 0)
  local bcode, bmsg, bdec = fa.verify(dir)
  if baseline.ending ~= "ACCEPT" or bcode ~= "LL_OK" or bdec ~= "ACCEPT" then
    io.stderr:write(string.format("sweep: the complete run did not ACCEPT and verify (%s; verify %s %s %s)\n",
      baseline.ending .. " " .. baseline.message, bcode, bmsg, bdec))
    os.exit(1)
  end
  if i == 1 then remove(dir) end
end
local total = baseline.seen
local complete = base .. "/baseline2" -- kept for the verify sweep below
io.stdout:write(string.format("sweep: a complete replay of %s makes %d counted allocations\n",
  FIXTURE:match("fixtures/.*"), total))

local count = { runs = 0, covered = 0, wrong_accept = 0, other = 0, refused = 0, verified = 0, none = 0,
  accept_then_failed = 0 }
local endings, refusals, bad = {}, {}, {}
local completed_at
local progress = os.getenv("SWEEP_PROGRESS") -- a file naming the N in flight (for a crash)
-- SWEEP_LEAKCHECK=K: ask LeakSanitizer every K runs, to name the N that leaked
local leakcheck = math.tointeger(tonumber(os.getenv("SWEEP_LEAKCHECK") or ""))

local n = opts.offset
while n <= opts.last do
  if progress then
    local f = io.open(progress, "w")
    if f then
      f:write(n, "\n")
      f:close()
    end
  end
  local dir = base .. "/n" .. n
  local r = run_once(dir, n)
  count.runs = count.runs + 1
  if not r.fired then
    -- the run ended before its Nth allocation: nothing was injected
    completed_at = n
    if r.ending ~= "ACCEPT" then
      bad[#bad + 1] = string.format("N=%d: no failure injected, yet the run ended %s (%s)", n, r.ending, r.message)
    end
    remove(dir)
    break
  end
  count.covered = count.covered + 1
  endings[r.ending] = (endings[r.ending] or 0) + 1
  if r.ending == "ACCEPT" then
    count.wrong_accept = count.wrong_accept + 1
    bad[#bad + 1] = string.format("N=%d: ACCEPT although allocation %d failed", n, n)
  elseif r.ending ~= "HOLD" and r.ending ~= "LL_E_NOMEM" then
    count.other = count.other + 1
    bad[#bad + 1] = string.format("N=%d: ended %s, not HOLD or LL_E_NOMEM: %s", n, r.ending, r.message)
  end
  local code, msg, dec = fa.verify(dir)
  if code == "LL_OK" then
    count.verified = count.verified + 1
    if dec == "ACCEPT" then count.accept_then_failed = count.accept_then_failed + 1 end
  elseif code == "LL_E_IO" then
    count.none = count.none + 1 -- nothing was written: verify says so
  elseif code == "LL_E_TAMPER" and msg ~= "" then
    count.refused = count.refused + 1
    local key = msg:gsub("%d+", "#")
    refusals[key] = (refusals[key] or 0) + 1
  else
    bad[#bad + 1] = string.format("N=%d: verify answered %s %q", n, code, msg)
  end
  remove(dir)
  if leakcheck and count.runs % leakcheck == 0 and fa.leakcheck() then
    bad[#bad + 1] = string.format("N in (%d, %d]: LeakSanitizer found a leak", n - leakcheck * opts.stride, n)
  end
  if count.runs % 2000 == 0 then
    io.stdout:write(string.format("sweep: N=%d, %d runs, %d s\n", n, count.runs, os.time() - t0))
    io.stdout:flush()
  end
  n = n + opts.stride
end

-- verify itself, on the complete run's evidence, with its Nth allocation
-- failing: consistent or LL_E_NOMEM (exit 70), never a false alarm.
fa.arm(0)
fa.verify(complete)
local vtotal = fa.arm(0)
local vcount = { fired = 0, nomem = 0 }
local vn = opts.offset
while vn <= opts.last do
  fa.arm(vn)
  local code, msg, dec = fa.verify(complete)
  local _, fired = fa.arm(0)
  if not fired then
    if code ~= "LL_OK" or dec ~= "ACCEPT" then
      bad[#bad + 1] = string.format("verify N=%d: nothing injected, yet %s %q", vn, code, msg)
    end
    break
  end
  vcount.fired = vcount.fired + 1
  if code == "LL_E_NOMEM" then
    vcount.nomem = vcount.nomem + 1
  elseif code ~= "LL_OK" then
    bad[#bad + 1] = string.format("verify N=%d: allocation %d failed and verify said %s %q", vn, vn, code, msg)
  end
  vn = vn + opts.stride
end
os.execute("rm -rf '" .. base .. "'")

local wall = os.time() - t0
local function list(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  local out = {}
  for _, k in ipairs(keys) do out[#out + 1] = string.format("%s %d", k, t[k]) end
  return table.concat(out, ", ")
end

io.stdout:write(string.format(
  "sweep: N from %d to %s, stride %d: %d runs, %d allocation points covered of %d, %d wrong ACCEPTs, " ..
  "%d other endings, 0 crashes; ended %s; evidence: %d verified (%d with an ACCEPT recorded before the " ..
  "failure), %d refused by verify, %d with none written; %d s wall, %.0f s CPU\n",
  opts.offset, completed_at and tostring(completed_at) or tostring(n - opts.stride), opts.stride, count.runs,
  count.covered, total, count.wrong_accept, count.other, list(endings), count.verified, count.accept_then_failed,
  count.refused, count.none, wall, os.clock() - clock0))
if next(refusals) then io.stdout:write("sweep: verify refused: " .. list(refusals) .. "\n") end
io.stdout:write(string.format("sweep: verify of the complete evidence makes %d counted allocations; " ..
  "%d of them failed in turn: %d LL_E_NOMEM, %d consistent, 0 crashes\n", vtotal, vcount.fired,
  vcount.nomem, vcount.fired - vcount.nomem))
if not completed_at and opts.last == math.maxinteger then
  bad[#bad + 1] = "the sweep never reached a run without an injected failure"
end
if #bad > 0 then
  for i = 1, math.min(#bad, 20) do io.stderr:write("sweep: " .. bad[i] .. "\n") end
  io.stderr:write(string.format("sweep: FAILED (%d problems)\n", #bad))
  os.exit(1, false)
end
io.stdout:write("sweep: passed\n")
-- without closing the state: the module stays mapped, so a leak report at
-- exit names its functions
os.exit(0, false)
