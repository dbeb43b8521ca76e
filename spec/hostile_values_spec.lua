-- Hostile values at every Lua-facing function: each function of the
-- module, each method of the Run and Writer handles and each metamethod is
-- called with each hostile value in each argument position and as each
-- field of its option tables. Each call succeeds or raises an error a
-- script can read; none crashes (under `make check-asan`: no sanitizer
-- report either). Then the host: scripts raising error objects of every
-- shape end with one line and a documented exit code, never a panic.
-- Offline: the runs replay a shipped fixture, nothing is sent.
local ll = require "leaselua"
local helper = require "helper"
local rp = require "support.replay"

local FIXTURE = rp.fixture("emulator/main-handoff-accept")
local MIB = string.rep("m", 1 << 20)

-- A fresh evidence path, longer than 40 bytes: Lua interns shorter
-- strings, so only a long one is a fresh allocation the collector frees.
local root, opened = nil, 0
local function evidence()
  root = root or rp.tmpdir()
  opened = opened + 1
  return string.format("%s/%d-evidence-of-the-hostile-value-sweep", root, opened)
end
-- Valid strings of the sweep are long for the same reason.
local function long(s)
  return s .. " " .. string.rep("-", 48 - #s)
end

-- The embedding API's leaselua.open: the operator's keys (a replay: no
-- endpoint, no credential) and, with plan = true, the flow's plan.
local function config(dir, plan)
  local c = {
    evidence = dir or evidence(), manifest = rp.manifest, account_url = "https://replay.invalid",
    container = "lease-handoff-lab", blob = "writer-handoff.json", replay = FIXTURE,
  }
  if plan then
    c.name, c.actors, c.break_periods, c.window_attempts = "hostile-sweep", { "A", "B" }, { 0 }, 1
    c.auth = { kind = "none" }
    c.connect_timeout_ms, c.total_timeout_ms, c.deadline_s, c.max_single_put = 1000, 1000, 60, 1024
    c.record_description, c.recover, c.destructive = long("described"), false, false
  end
  return c
end

local function open()
  return assert(ll.open(config()))
end

-- A table whose __index hands out fresh strings of base's and runs a full
-- collection first: a C reader that calls __index and keeps the pointer
-- after popping it reads freed memory (issue #12, item 4).
local function collecting_proxy(base)
  return setmetatable({}, {
    __index = function(_, k)
      collectgarbage()
      local v = base[k]
      if type(v) == "string" then return (v .. "\0"):sub(1, -2) end
      return v
    end,
  })
end

local function raising()
  error("hostile metamethod ran", 0)
end

local error_object = select(2, pcall(ll.payload, -1, "A"))
assert(type(error_object) == "table", "no leaselua error object to sweep with")

-- name -> value; built once the handles exist.
local function hostile_values(h)
  local cycle = {}
  cycle.self = cycle
  local deep = {}
  for _ = 1, 100 do deep = { deep } end
  local v = {
    ["__index allocates and collects"] = collecting_proxy { step = string.rep("s", 60), period = 1 },
    ["__index raises"] = setmetatable({}, { __index = raising, __newindex = raising, __len = raising,
      __pairs = raising, __eq = raising, __lt = raising, __concat = raising, __call = raising }),
    ["__tostring raises"] = setmetatable({}, { __tostring = raising, __name = "hostile" }),
    ["1 MiB string"] = MIB,
    ["NUL in a string"] = "A\0B",
    ["invalid UTF-8"] = "\xff\xfe",
    ["empty string"] = "",
    NaN = 0 / 0,
    ["+inf"] = math.huge,
    ["-inf"] = -math.huge,
    mininteger = math.mininteger,
    maxinteger = math.maxinteger,
    ["-1"] = -1,
    ["2.5"] = 2.5,
    ["2^53 + 1 as a float"] = 2.0 ^ 53 + 1,
    coroutine = coroutine.create(print),
    ["io.stdout"] = io.stdout,
    ["a function"] = print,
    ["true"] = true,
    ["a Writer"] = h.writer,
    ["an unbound Writer"] = h.unbound,
    ["a Run"] = h.run,
    ["a closed Run"] = h.closed,
    ["a Writer of a closed Run"] = h.orphan,
    ["a leaselua error"] = error_object,
    ["error {code = {}}"] = { code = {}, message = {}, exit = "x" },
    ["a forged error"] = { code = "LL_OK", message = "fine", exit = 0 },
    ["a cyclic table"] = cycle,
    ["tables 100 deep"] = deep,
    ["a mixed table"] = { 1, 2, x = 3 },
  }
  local list = {}
  for name, value in pairs(v) do list[#list + 1] = { name = name, value = value } end
  list[#list + 1] = { name = "nil", value = nil }
  table.sort(list, function(a, b) return a.name < b.name end)
  return list
end

-- The functions and their valid arguments (a function returns fresh
-- ones). `ll` is the module table, `run` and `writer` stand for the
-- handles; option tables are swept field by field.
local MODULE = {
  versions = {}, isatty = {}, columns = {}, fixture_args = {},
  payload = { 1, "A" },
  sha256 = { long("abc") },
  getenv = { "NO_COLOR" },
  ledger = function(h) return { h.ledger_dir } end,
  lease_contract = {},
  open = function(h) return { config(h.fresh, true) } end,
  help = { long("usage") },
  usage_error = { long("usage error") },
  lease_plan = { { break_period = 10 } },
}
-- Functions whose errors may still be plain strings in Lua's own wording
-- (luaL_checktype, luaL_checkstring, luaL_argerror): the lead's, not yet
-- on the readers of bindings/l_common.h.
local PLAIN_ERRORS_ALLOWED = {}
-- What not to sweep: help prints its string (a mebibyte to the spec's
-- output; a number as a string), so it gets only the values it refuses.
local SKIP = {
  help = function(pos, v) return pos > 1 or type(v) == "string" or type(v) == "number" end,
}

local RUN = {
  properties = { long("props") }, read = { long("read") }, create_container = {},
  break_lease = { { period = 0, step = long("break") } },
  writer = { "B" }, unbound = { "B" },
  declare = { 1, "A" },
  lifecycle = { { reason = long("sweep"), destructive = false } },
  note = { long("note"), long("text") },
  stop = { "stop-after", long("reason") },
  step = { long("label") },
  reconcile = { long("reconcile") },
  probe = function(h) return { h.writer, 1 } end,
  wait_for_broken = { { deadline_ms = 1, floor_ms = 1, budget = 1, fixed_ms = 1, progress = false } },
  decide = {}, finish = {}, rows = {}, state = {}, now_ms = {}, utc = {},
  sleep = { 1 },
  -- the sweep's run was not opened for the lease table: these raise
  lease_plan = { { break_period = 10 } }, lease_lifecycle = {},
  cell = { "Available", "write with A" },
  close = {}, -- on a spare run
}

local WRITER = {
  put = { 1, { step = long("put"), control = false } },
  acquire = { { duration = -1, step = long("acquire") } },
  release = { { step = long("release") } }, renew = { { step = long("renew") } },
  change = { { step = long("change") } }, delete = { { step = long("delete") } },
}

-- Metamethods that are functions, per metatable.
local META = {
  run = { "__close", "__gc", "__tostring" },
  writer = { "__index", "__tostring" },
  error = { "__tostring" },
}

local function functions_of(t)
  local out = {}
  for k, v in pairs(t) do
    if type(v) == "function" then out[#out + 1] = k end
  end
  table.sort(out)
  return out
end

local function keys_of(t)
  local out = {}
  for k in pairs(t) do out[#out + 1] = k end
  table.sort(out)
  return out
end

local function describe_value(v)
  if type(v) == "string" then return #v > 40 and ("a string of " .. #v .. " bytes") or string.format("%q", v) end
  return type(v)
end

-- The error of a failed call must be readable by a script: a leaselua
-- error table (raw string code and message, a __tostring that works) or,
-- where allowed, a plain string. Misuse never reads like Lua internals.
local function check_error(label, err, plain_ok)
  if type(err) == "table" then
    local code, msg = rawget(err, "code"), rawget(err, "message")
    if type(code) ~= "string" or type(msg) ~= "string" then
      error(label .. ": the error table has no string code and message", 0)
    end
    local s = tostring(err)
    if type(s) ~= "string" or not s:find(code, 1, true) then
      error(label .. ": tostring(err) gave " .. tostring(s), 0)
    end
    if msg:find("bad argument", 1, true) or msg:find("[string", 1, true) then
      error(label .. ": the message reads like Lua internals: " .. msg, 0)
    end
    return
  end
  if plain_ok and type(err) == "string" then return end
  error(label .. ": raised a " .. type(err) .. " (" .. tostring(err) .. "), not a leaselua error", 0)
end

local calls = 0

-- Calls fn with args (n of them) and checks how it ended.
local function try(label, plain_ok, fn, args, n)
  calls = calls + 1
  local ok, err = pcall(fn, table.unpack(args, 1, n))
  collectgarbage() -- a pointer C kept into a collected value shows up now
  if not ok then check_error(label, err, plain_ok) end
  return ok, err
end

local function copy(t)
  local out = {}
  for k, v in pairs(t) do out[k] = v end
  return out
end

-- Every position (the receiver too, for methods) and every field of every
-- option table of the valid argument list, with every hostile value; and
-- each option table replaced by a collecting proxy of itself.
local function sweep(label, fn, base, values, plain_ok, self, skip)
  local args = self and { self, table.unpack(base) } or copy(base)
  local n = #args
  for pos = 1, n + 1 do
    for _, hv in ipairs(values) do
      if skip and skip(pos, hv.value) then goto next end
      local a = copy(args)
      a[pos] = hv.value
      try(string.format("%s, argument %d = %s", label, pos, hv.name), plain_ok, fn, a, math.max(n, pos))
      ::next::
    end
  end
  for pos = 1, n do
    if type(args[pos]) == "table" and getmetatable(args[pos]) == nil then
      for _, key in ipairs(keys_of(args[pos])) do
        for _, hv in ipairs(values) do
          local a = copy(args)
          a[pos] = copy(args[pos])
          a[pos][key] = hv.value
          try(string.format("%s, option %s = %s", label, key, hv.name), plain_ok, fn, a, n)
        end
      end
      local a = copy(args)
      a[pos] = collecting_proxy(args[pos])
      try(string.format("%s, argument %d = a collecting proxy of the options", label, pos), plain_ok, fn, a, n)
    end
  end
end

-- Closes what a sweep opened (a replay not played to its end raises).
local function close_quietly(r)
  if type(r) == "userdata" and getmetatable(r) == "leaselua.Run" then pcall(r.close, r) end
end

describe("hostile values", function()
  local h, values
  setup(function()
    h = {}
    h.run = open()
    h.writer, h.unbound = h.run:writer("A"), h.run:unbound("A")
    h.closed = open()
    h.orphan = h.closed:writer("A")
    h.closed:declare(1, "A")
    pcall(h.closed.close, h.closed)
    h.ledger_dir = evidence()
    h.fresh = evidence() -- stands for a fresh evidence directory in open's arguments
    local r = assert(ll.open(config(h.ledger_dir)))
    r:declare(0, "A")
    pcall(r.close, r)
    values = hostile_values(h)
  end)
  teardown(function()
    close_quietly(h.run)
    rp.cleanup()
  end)

  it("covers every function the module and the handles expose", function()
    assert.are.same(keys_of(MODULE), functions_of(ll))
    local nonfunctions = {}
    for k, v in pairs(ll) do
      if type(v) ~= "function" then nonfunctions[#nonfunctions + 1] = k .. "=" .. type(v) end
    end
    table.sort(nonfunctions)
    assert.are.same({ "_NAME=string", "_VERSION=string" }, nonfunctions)
    assert.are.same(keys_of(RUN), functions_of(debug.getmetatable(h.run).__index))
    assert.are.same(keys_of(WRITER), functions_of(debug.getmetatable(h.writer).methods))
    assert.are.same(META.run, functions_of(debug.getmetatable(h.run)))
    assert.are.same(META.writer, functions_of(debug.getmetatable(h.writer)))
    assert.are.same(META.error, functions_of(debug.getmetatable(error_object)))
    -- scripts cannot reach or swap the metatables
    assert.are.equal("leaselua.Run", getmetatable(h.run))
    assert.are.equal("leaselua.Writer", getmetatable(h.writer))
    assert.are.equal("leaselua.Error", getmetatable(error_object))
    assert.has_error(function() setmetatable(error_object, {}) end)
  end)

  it("module functions succeed or raise a readable error", function()
    for _, name in ipairs(functions_of(ll)) do
      local base = assert(MODULE[name], "leaselua." .. name .. " is not in the sweep: add it to MODULE")
      if type(base) == "function" then base = base(h) end
      sweep("leaselua." .. name, function(cfg, ...)
        if name ~= "open" then return ll[name](cfg, ...) end
        if type(cfg) == "table" and getmetatable(cfg) == nil and type(cfg.evidence) == "string" then
          cfg = copy(cfg) -- the valid arguments stay as they are for the next call
          if cfg.evidence == h.fresh then
            cfg.evidence = evidence()
          elseif cfg.evidence:sub(1, 1) ~= "/" then -- "A\0B" and the like: never in the work tree
            cfg.evidence = root .. "/" .. cfg.evidence
          end
        end
        close_quietly(ll.open(cfg, ...))
      end, base, values, PLAIN_ERRORS_ALLOWED[name], nil, SKIP[name])
    end
  end)

  it("Writer methods succeed or raise a readable error", function()
    local methods = debug.getmetatable(h.writer).methods
    for _, name in ipairs(functions_of(methods)) do
      local base = assert(WRITER[name], "writer:" .. name .. " is not in the sweep: add it to WRITER")
      sweep("writer:" .. name, methods[name], base, values, false, h.writer)
      sweep("unbound:" .. name, methods[name], base, values, false, h.unbound)
    end
  end)

  it("Run methods succeed or raise a readable error", function()
    local methods = debug.getmetatable(h.run).__index
    local spare
    for _, name in ipairs(functions_of(methods)) do
      local base = assert(RUN[name], "run:" .. name .. " is not in the sweep: add it to RUN")
      if type(base) == "function" then base = base(h) end
      if name == "close" then
        -- each call may close its receiver: a spare run, renewed once closed
        sweep("run:close", function(self, ...)
          if self == "spare" or self == h.run then -- never the run the sweep uses
            if not spare or tostring(spare):find("closed", 1, true) then spare = open() end
            self = spare
          end
          return methods.close(self, ...)
        end, base, values, false, "spare")
      else
        sweep("run:" .. name, methods[name], base, values, false, h.run)
      end
    end
    close_quietly(spare)
    -- the run still answers after all of it
    assert.are.equal("replay", h.run:state().endpoint_kind)
  end)

  it("metamethods never crash; __gc and the error __tostring never raise", function()
    local run_mt, writer_mt = debug.getmetatable(h.run), debug.getmetatable(h.writer)
    local err_mt = debug.getmetatable(error_object)
    for _, hv in ipairs(values) do
      local seconds = { hv.value, "alias", error_object }
      for j = 1, 3 do
        local second = seconds[j]
        local receivers = { hv.value, h.writer }
        for i = 1, 2 do
          local self = receivers[i]
          if self ~= h.run then -- __gc and __close would end the run the sweep uses
            local label = "(" .. hv.name .. ", " .. describe_value(second) .. ")"
            assert.is_true((try("run.__gc" .. label, false, run_mt.__gc, { self, second }, 2)))
            try("run.__close" .. label, false, run_mt.__close, { self, second }, 2)
            try("writer.__index" .. label, false, writer_mt.__index, { self, second }, 2)
            local ok, s = try("error.__tostring" .. label, false, err_mt.__tostring, { self, second }, 2)
            assert.is_true(ok and type(s) == "string", "error.__tostring" .. label)
          end
          try("run.__tostring(" .. hv.name .. ")", false, run_mt.__tostring, { self }, 1)
          try("writer.__tostring(" .. hv.name .. ")", false, writer_mt.__tostring, { self }, 1)
        end
      end
    end
    local spare = open()
    assert.is_true((pcall(run_mt.__gc, spare)))
    assert.are.equal("leaselua.Run(closed)", tostring(spare))
    assert.is_nil(h.writer[h.run], "a Writer indexed with a non-string key has no such field")
    assert.are.equal("A", h.writer.alias)
  end)

  it("reads option tables raw: a collecting proxy of a valid config opens nothing", function()
    local cfg = config()
    local ok, err = pcall(ll.open, collecting_proxy(cfg))
    assert.is_false(ok)
    assert.are.equal("LL_E_USAGE", err.code)
    assert.is_nil(helper.read(cfg.evidence .. "/export/ledger.jsonl"), "a run was opened from what __index gave")
    -- and a proxy of a request's options is no options at all: its
    -- period = "x" is never seen (the request then fails on the replay)
    ok, err = pcall(h.run.break_lease, h.run, collecting_proxy { period = "x" })
    assert.is_false(ok)
    assert.is_nil(err.message:find("period", 1, true), err.message)
  end)

  it("names the option, the range and what was given, without Lua internals", function()
    local cases = {
      { h.run.break_lease, { h.run, { period = 0 / 0 } },
        "run:break_lease: option 'period' must be an integer from 0 to 60, got NaN" },
      { h.run.break_lease, { h.run, { period = 61 } }, "option 'period' must be an integer from 0 to 60, got 61" },
      { h.run.break_lease, { h.run, { step = MIB } },
        "option 'step' must be a string of at most 95 bytes, got a string of 1048576 bytes" },
      { h.run.break_lease, { h.run, 7 }, "run:break_lease: the options must be a table, got 7" },
      { h.run.lifecycle, { h.run, { destructive = "yes" } }, "option 'destructive' must be true or false" },
      { h.run.note, { h.run, "s", MIB }, "run:note: the text must be a string of at most 4095 bytes" },
      { h.run.note, { h.run, "s", "a\0b" }, "run:note: the text holds a NUL byte" },
      -- the host's signing declaration is not a script's to write (or erase)
      { h.run.note, { h.run, "signing", "no key here" }, "run:note: the step 'signing' is the host's" },
      { h.run.note, { h.run, " Signing ", "x" }, "run:note: the step 'signing' is the host's" },
      { h.run.sleep, { h.run, math.huge },
        "run:sleep: the time in ms must be an integer from 0 to 600000, got infinity" },
      { h.run.declare, { h.run, math.maxinteger, "A" }, "got 9223372036854775807" },
      { h.run.declare, { io.stdout, 1, "A" },
        "argument 1 must be a leaselua.Run (call methods with ':'), got a userdata" },
      { h.run.declare, { h.writer, 1, "A" }, "must be a leaselua.Run (call methods with ':'), got a leaselua.Writer" },
      { h.writer.put, { h.writer, 2.5 },
        "writer:put: the revision must be an integer from 0 to 2147483647, got 2.5" },
      { h.writer.put, { h.run, 1 }, "writer:put: argument 1 must be a leaselua.Writer" },
      { h.run.probe, { h.run, h.unbound, 1 }, "run:probe: the probe needs a lease-bound writer" },
      { h.closed.read, { h.closed }, "run handle used after close" },
      { ll.payload, { 1, MIB },
        "leaselua.payload: the writer (1 to 15 of [A-Za-z0-9_-]) must be a string of at most 15" },
      { ll.sha256, { nil }, "leaselua.sha256: pass a string" },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(c[1], table.unpack(c[2], 1, #c[2]))
      assert.is_false(ok, c[3])
      assert.are.equal("table", type(err), c[3])
      assert.truthy(err.message:find(c[3], 1, true), "want: " .. c[3] .. "\ngot:  " .. err.message)
      assert.is_nil(err.message:find("bad argument", 1, true))
    end
  end)

  it("turns Lua values into JSON exactly, or names what it refused", function()
    local function manifest(extra)
      local m = copy(helper.manifest_table)
      for k, v in pairs(extra) do m[k] = v end
      local cfg = config()
      cfg.manifest = m
      local ok, err = pcall(ll.open, cfg)
      if ok then close_quietly(err) end
      return ok, err
    end
    local cycle = {}
    cycle.again = cycle
    local wide = {}
    for i = 1, 100001 do wide[i] = i end
    local refused = {
      { { ticket = 0 / 0 }, "ticket: NaN and infinities cannot be written as JSON" },
      { { ticket = math.maxinteger }, "ticket: an integer beyond 2^53 cannot be written exactly" },
      { { extra = cycle }, "extra.again: the table contains itself (a cycle)" },
      { { extra = { 1, 2, x = 3 } }, "extra: a table mixes a list with other keys" },
      { { extra = { [1] = 1, [3] = 3 } }, "extra: a table mixes a list with other keys (or has holes)" },
      { { extra = { [true] = 1 } }, "extra: table keys must be strings" },
      { { extra = { print } }, "extra[1]: a function cannot be written as JSON" },
      { { ticket = "a\0b" }, "ticket: a string holds a NUL byte" },
      { { ticket = "\xc0\xaf" }, "ticket: a string is not valid UTF-8" },
      { { extra = wide }, "more than 100000 values" },
    }
    for _, c in ipairs(refused) do
      local ok, err = manifest(c[1])
      assert.is_false(ok, c[2])
      assert.are.equal("LL_E_MANIFEST", err.code, c[2])
      assert.truthy(err.message:find(c[2], 1, true), "want: " .. c[2] .. "\ngot:  " .. err.message)
    end
    -- a table with a raising __index is read raw, as what it holds
    local ok, run = manifest { extra = setmetatable({ x = 1 }, { __index = raising, __pairs = raising }) }
    assert.is_true(ok, tostring(run))
  end)

  -- The stock-Lua module allows finalizers: one that closes the run while
  -- run:rows() or run:state() is building its answer (the collector runs
  -- it inside their allocations) is refused, so C never reads a freed run.
  -- The collector is put where it must run finalizers at the next
  -- allocation: stopped, stepped one small step at a time until the first of
  -- many pending finalizers has run (each step runs at most ten), then
  -- restarted just before the call. A chance timing is not relied upon.
  it("refuses a close from a finalizer that runs inside a run method", function()
    local run = open()
    for i = 1, 40 do run:note("n" .. i, string.rep("x", 200)) end
    local seen, fired, armed = {}, 0, false
    local function bomb()
      setmetatable({}, { __gc = function()
        fired = fired + 1
        if not armed then return end
        local where = debug.traceback("", 2)
        local inside = where:find("'rows'", 1, true) or where:find("'state'", 1, true)
        -- outside the methods a close would succeed and rightly fail what follows
        if not inside then return end
        local ok, e = pcall(run.close, run)
        seen[#seen + 1] = { closed = ok, code = not ok and e.code or nil }
      end })
    end
    local methods = {
      function() return run:rows() end, -- named in a traceback
      function() return run:state() end,
    }
    -- the collector as busted runs it again, whatever fails below
    finally(function()
      collectgarbage("restart")
      collectgarbage("incremental", 200, 100, 13)
    end)
    collectgarbage("incremental", 100, 1, 0) -- the smallest step there is
    for round = 1, 20 do
      local call = methods[round % 2 + 1]
      collectgarbage() -- a whole cycle: nothing left pending from before
      for _ = 1, 400 do bomb() end
      fired = 0
      collectgarbage("stop")
      local steps = 0
      while fired == 0 and steps < 1e6 do
        collectgarbage("step", 0)
        steps = steps + 1
      end
      assert.is_true(fired > 0 and fired < 400, "the collector ran " .. fired .. " finalizers in one step")
      armed = true
      collectgarbage("restart")
      local ok = pcall(call)
      armed = false
      assert.is_true(ok, "a run method failed: the run was closed under it")
      if #seen > 0 and round >= 2 then break end
    end
    collectgarbage()
    assert.is_true(#seen > 0, "no finalizer ran inside run:rows() or run:state()")
    for _, s in ipairs(seen) do
      assert.is_false(s.closed, "a finalizer closed the run inside run:rows()/run:state()")
      assert.are.equal("LL_E_USAGE", s.code)
    end
    pcall(run.close, run) -- the replay's exchanges were never requested: it raises, and closes
    assert.matches("closed", tostring(run), 1, true)
  end)

  it("makes thousands of calls in well under a minute", function()
    assert.is_true(calls > 3000, "only " .. calls .. " calls were made")
  end)
end)

-- The host: a script that raises error objects of every shape, or returns
-- odd values, ends with one stderr line and a documented code.
describe("hostile error objects at the host", function()
  teardown(rp.cleanup)

  -- The script, run by the host as an operator would (a replay: nothing
  -- is sent); the script itself never opens a run unless it says so.
  local function host(source)
    local dir = rp.tmpdir()
    local path = helper.write(dir .. "/hostile.lua", source)
    return rp.replay("hostile", "emulator/main-handoff-accept", dir .. "/ev", nil, nil, path)
  end

  local function lines(s)
    local out = {}
    for l in s:gmatch("[^\n]+") do out[#out + 1] = l end
    return out
  end

  local function no_crash(what, rc, err)
    assert.is_nil(err:find("PANIC", 1, true), what .. ": " .. err)
    assert.is_nil(err:find("Sanitizer", 1, true), what .. ": " .. err)
    assert.is_nil(err:find("runtime error:", 1, true), what .. ": " .. err)
    assert.is_true(rc ~= nil and rc < 128, what .. ": killed by a signal (exit " .. tostring(rc) .. ")\n" .. err)
  end

  -- {title, script, exit code, one line?}
  local cases = {
    { "error {code = {}}", "error({ code = {} })", 70, true },
    { "a table whose __index raises", 'error(setmetatable({}, { __index = function() error("x") end }))', 70, true },
    { "a table whose __tostring raises", 'error(setmetatable({}, { __tostring = function() error("y") end }))', 70,
      true },
    { "__index and __tostring both raising",
      'local f = function() error("z") end\nerror(setmetatable({}, { __index = f, __tostring = f, __name = f }))',
      70, true },
    { "nil", "error(nil)", 70, true },
    { "true", "error(true)", 70, true },
    { "a function", "error(print)", 70, true },
    { "a table posing as a leaselua error", 'error(setmetatable({ code = "LL_E_USAGE" }, ' ..
      '{ __metatable = "leaselua.Error" }))', 70, true },
    { "a forged error with a decision's exit code", 'error({ code = "LL_E_HOLD", message = "m", exit = 2 })',
      70, true },
    { "a leaselua error whose fields the script rewrote",
      'local ll = require "leaselua"\nlocal _, e = pcall(ll.payload, -1, "A")\n' ..
      'rawset(e, "exit", 0)\nrawset(e, "code", "LL_OK")\nerror(e)', 64, true },
    { "a leaselua error whose message is a table",
      'local ll = require "leaselua"\nlocal _, e = pcall(ll.sha256)\ne.message = {}\nerror(e)', 64, true },
    -- the sandbox has no coroutine library: the script fails on the name
    { "a coroutine", "error(coroutine.create(print))", 70, false },
    { "a 1 MiB string", 'error(string.rep("x", 1 << 20))', 70, false },
    { "a number", "error(42)", 70, false },
    { "a stack overflow", "local function f() return 1 + f() end\nf()", 70, false },
  }

  for _, c in ipairs(cases) do
    it("survives " .. c[1] .. " (exit " .. c[3] .. ")", function()
      local rc, out, err = host(c[2])
      no_crash(c[1], rc, err)
      assert.are.equal(c[3], rc, c[1] .. ":\n" .. out .. err)
      local l = lines(err)
      assert.matches("^leaselua: ", l[1] or "")
      assert.is_true(#l[1] <= 2300, c[1] .. ": the first line is " .. #l[1] .. " bytes long")
      if c[4] then assert.are.equal(1, #l, c[1] .. ": more than one line:\n" .. err) end
    end)
  end

  it("survives a script returning odd values or failing in a finalizer", function()
    for _, ret in ipairs { "{}", "0/0", "math.huge", "-1", "1 << 40", "'x'", "print",
      "setmetatable({}, { __index = function() error('x') end })",
      "setmetatable({}, { __gc = function() error('gc') end })" } do
      local rc, _, err = host("return " .. ret)
      no_crash("return " .. ret, rc, err)
    end
  end)
end)
