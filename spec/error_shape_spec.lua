-- Errors cross the Lua boundary in one shape (STYLE.md, "Errors at the
-- boundary"; docs/API.md): whatever C raises or returns as err is a
-- leaselua.Error table {code, message, invariant, exit} whose __tostring
-- gives "CODE: message"; a transport failure's err also carries the row.
-- Each kind of error is provoked once, through the stock module and
-- through the host's sandbox. Offline: a replay, and a loopback port
-- nothing listens on.
local ll = require "leaselua"
local helper = require "helper"
local rp = require "support.replay"

local FIXTURE = rp.fixture("emulator/main-handoff-accept")
local FIELDS = { code = true, message = true, invariant = true, exit = true }

local function evidence()
  return rp.tmpdir() .. "/ev"
end

local function config(dir)
  return {
    evidence = dir or evidence(), manifest = rp.manifest, account_url = "https://replay.invalid",
    container = "lease-handoff-lab", blob = "writer-handoff.json", replay = FIXTURE,
  }
end

-- err is a leaselua error of code with exit and invariant; extra names
-- the one field besides the four it may carry (a transport error's row).
local function assert_shape(err, code, exit, invariant, extra)
  assert.are.equal("table", type(err), "not an error table: " .. tostring(err))
  assert.are.equal("leaselua.Error", getmetatable(err))
  assert.are.equal(code, rawget(err, "code"))
  local msg = rawget(err, "message")
  assert.are.equal("string", type(msg))
  assert.is_true(#msg > 0, "an empty message")
  assert.are.equal(exit, rawget(err, "exit"))
  assert.are.equal(invariant, rawget(err, "invariant"))
  assert.are.equal(code .. ": " .. msg, tostring(err))
  for k in pairs(err) do
    assert.is_true(FIELDS[k] or k == extra, "unexpected field " .. tostring(k))
  end
end

-- The error a call raised (it must raise).
local function raised(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "it did not raise")
  return err
end

describe("one error shape from the stock module", function()
  teardown(rp.cleanup)

  it("misuse raises LL_E_USAGE (exit 64)", function()
    assert_shape(raised(ll.payload, -1, "A"), "LL_E_USAGE", 64, 0)
    assert_shape(raised(ll.getenv, "AZURE_STORAGE_TOKEN"), "LL_E_USAGE", 64, 0)
  end)

  it("a flow's own bad argument (lib.cli) raises the same table, made in C", function()
    local cli = require "lib.cli"
    local err = raised(cli.parse, { "--bogus" }, {})
    assert_shape(err, "LL_E_USAGE", 64, 0)
    assert.matches("unknown argument '%-%-bogus'", err.message)
    assert_shape(raised(cli.parse, { "--n", "x" }, { n = "number" }), "LL_E_USAGE", 64, 0)
    assert_shape(raised(cli.usage_error, "bad flow argument"), "LL_E_USAGE", 64, 0)
  end)

  it("a configuration error raises before anything opens (exit 64)", function()
    local c = config()
    c.manifest = nil
    local err = raised(ll.open, c)
    assert_shape(err, "LL_E_MANIFEST", 64, 11)
    assert.matches("no manifest", err.message)
    c = config()
    c.replay = rp.tmpdir() .. "/no-such-fixture.json"
    assert_shape(raised(ll.open, c), "LL_E_USAGE", 64, 0)
  end)

  it("a refusal by the guard raises its code and invariant", function()
    local run = assert(ll.open(config()))
    local w = run:writer("A")
    local err = raised(w.put, w, 7)
    assert_shape(err, "LL_E_UNDECLARED", 64, 6)
    assert.matches("invariant 6", err.message)
    assert_shape(raised(run.wait_for_broken, run), "LL_E_ORDER", 64, 0)
    -- a replay that was not played to its end is refused at close
    local rerr = raised(run.close, run)
    assert_shape(rerr, "LL_E_REPLAY", 64, 0)
    assert_shape(raised(run.read, run), "LL_E_CLOSED", 64, 0)
  end)

  it("a file that cannot be read is nil, err (not raised)", function()
    local rows, err = ll.ledger(rp.tmpdir() .. "/not-an-evidence-dir")
    assert.is_nil(rows)
    assert_shape(err, "LL_E_IO", 64, 0)
  end)

  it("a transport failure is nil, err with the outcome row", function()
    local d = rp.tmpdir()
    local tok = helper.write(d .. "/token", helper.dev_token())
    assert.is_true(os.execute("chmod 600 " .. helper.quote(tok)))
    -- loopback port 9: nothing listens, so the request is never sent
    local run = assert(ll.open {
      evidence = d .. "/ev", manifest = rp.manifest, account_url = "http://127.0.0.1:9/devstoreaccount1",
      container = "lease-handoff-lab", blob = "writer-handoff.json",
      auth = { kind = "file", token_file = tok }, connect_timeout_ms = 2000, total_timeout_ms = 4000,
    })
    local row, err = run:properties()
    assert.is_nil(row)
    assert_shape(err, "LL_E_TRANSPORT", 2, 0, "row")
    assert.are.equal("outcome", err.row.record)
    assert.are.equal("NOT_SENT", err.row.outcome)
    run:close()
  end)
end)

describe("one error shape in the host's sandbox", function()
  teardown(rp.cleanup)

  -- Runs source in the host (replaying FIXTURE); each `shape(e)` prints one
  -- line "type|metatable|code|exit|invariant|tostring".
  local PRELUDE = 'local function shape(e)\n' ..
    '  if type(e) ~= "table" then print(type(e) .. "|" .. tostring(e)) return end\n' ..
    '  print(table.concat({ type(e), tostring(getmetatable(e)), tostring(e.code), tostring(e.exit),\n' ..
    '    tostring(e.invariant), tostring(e) }, "|"))\n' ..
    'end\n'
  local function host(source)
    local dir = rp.tmpdir()
    local path = helper.write(dir .. "/shape.lua", PRELUDE .. source)
    return rp.replay("shape", "emulator/main-handoff-accept", dir .. "/ev", nil, nil, path)
  end
  local function lines(s)
    local out = {}
    for l in s:gmatch("[^\n]+") do out[#out + 1] = l end
    return out
  end

  it("raises the table for a library outside the allow list and a chunk that is not text", function()
    local _, out, err = host('shape(select(2, pcall(require, "io")))\n' ..
      'shape(select(2, pcall(require, {})))\n' ..
      'shape(select(2, pcall(load, 42)))\n' ..
      'shape(select(2, pcall(load, "return 1", {})))\n')
    local l = lines(out)
    assert.are.equal(4, #l, out .. err)
    assert.are.equal("table|leaselua.Error|LL_E_USAGE|64|0|LL_E_USAGE: module 'io' is not available in the " ..
      "sandbox (only leaselua and lib.*)", l[1])
    for i = 2, 4 do assert.matches("^table|leaselua%.Error|LL_E_USAGE|64|0|LL_E_USAGE: ", l[i]) end
    assert.matches("load: the chunk must be a string", l[3])
  end)

  it("raises the same table for misuse, a refusal and a flow's argument", function()
    local _, out, err = host('local ll = require "leaselua"\n' ..
      'shape(select(2, pcall(ll.payload, -1, "A")))\n' ..
      'shape(select(2, pcall(ll.ledger, "/etc")))\n' ..
      'shape(select(2, pcall(ll.open, { account_url = "https://evil.example" })))\n' ..
      'shape(select(2, pcall(require("lib.cli").parse, { "--bogus" }, {})))\n' ..
      'local run = ll.open {}\nlocal w = run:writer("A")\n' ..
      'shape(select(2, pcall(w.put, w, 7)))\n')
    local l = lines(out)
    assert.are.equal(5, #l, out .. err)
    for i = 1, 4 do assert.matches("^table|leaselua%.Error|LL_E_USAGE|64|0|LL_E_USAGE: ", l[i]) end
    assert.matches("is the operator's to set", l[3])
    assert.matches("^table|leaselua%.Error|LL_E_UNDECLARED|64|6|LL_E_UNDECLARED: revision 7 by A", l[5])
  end)

  it("an uncaught error from C ends the script with one line and its exit code", function()
    local rc, out, err = host('require "os"\n')
    assert.are.equal(64, rc, out .. err)
    local l = lines(err)
    assert.are.equal("leaselua: LL_E_USAGE: module 'os' is not available in the sandbox (only leaselua and lib.*)",
      l[1])
  end)

  it("a script's own runtime error stays Lua's string, and the host ends it with exit 70", function()
    local _, out = host('shape(select(2, pcall(function() return nil + 1 end)))\n')
    assert.matches("^string|", out)
    local rc, out2, err = host('local x = nil\nreturn x.field\n')
    assert.are.equal(70, rc, out2 .. err)
    assert.matches("^leaselua: .*attempt to index a nil value", err)
  end)
end)
