-- A fixture records its target and the flow's own arguments (issue 15), so
-- a replay needs nothing re-typed; a value given that contradicts the
-- fixture is one usage line, exit 64. Offline: the shipped accept fixture,
-- moved onto another blob, its header rewritten.
local helper = require "helper"
local cjson = require "cjson"

local root = os.getenv("PWD")
local shipped = root .. "/fixtures/emulator/main-handoff-accept.json"
local manifest = root .. "/tools/emulator/manifest.json"
local NOENV = {
  AZURE_STORAGE_ACCOUNT_URL = false, AZURE_STORAGE_TOKEN = false, AZURE_STORAGE_SAS = false,
  AZURE_STORAGE_CONTAINER = false, AZURE_STORAGE_BLOB = false,
}

local function env(extra)
  local e = {}
  for k, v in pairs(NOENV) do e[k] = v end
  for k, v in pairs(extra or {}) do e[k] = v end
  return e
end

-- the shipped fixture on blob `blob`, with target and flow in its header
local function moved(blob, flow_args, target)
  local text = assert(helper.read(shipped))
  text = text:gsub("/lease%-handoff%-lab/writer%-handoff%.json", "/lease-handoff-lab/" .. blob)
  local f = cjson.decode(text)
  f.target = target or { container = "lease-handoff-lab", blob = blob }
  f.flow = { script = "main_handoff.lua", args = flow_args }
  local path = helper.tmpdir() .. "/moved.json"
  helper.write(path, cjson.encode(f))
  return path
end

local function handoff(fixture, extra, e)
  local args = { "handoff", "--manifest", manifest, "--replay", fixture, "--evidence", helper.tmpdir() .. "/ev" }
  for _, a in ipairs(extra or {}) do args[#args + 1] = a end
  return helper.run(args, env(e))
end

describe("a fixture's recorded target and flow arguments", function()
  teardown(helper.cleanup)

  it("are taken by the replay when not given: the moved fixture replays to ACCEPT with nothing re-typed", function()
    local fx = moved("mine.json", { "--break-period", "30" })
    local rc, out, err = handoff(fx)
    assert.are.equal(0, rc, out .. err)
    assert.matches("DECISION: ACCEPT", out, 1, true)
  end)

  it("without them the moved fixture needs the blob typed: the replay diverges (exit 64)", function()
    local fx = moved("mine.json", { "--break-period", "30" }, false)
    local f = cjson.decode(helper.read(fx))
    f.target, f.flow = nil, nil
    helper.write(fx, cjson.encode(f))
    local rc, _, err = handoff(fx)
    assert.are.equal(64, rc)
    assert.matches("LL_E_REPLAY", err, 1, true)
    rc = handoff(fx, {}, { AZURE_STORAGE_BLOB = "mine.json" })
    assert.are.equal(0, rc)
  end)

  it("a flow argument recorded is used: a recorded --break-period 20 diverges from 30 s exchanges", function()
    local rc, _, err = handoff(moved("mine.json", { "--break-period", "20" }))
    assert.are.equal(64, rc)
    assert.matches("x%-ms%-lease%-break%-period: 20", err)
  end)

  it("a given value equal to the recorded one is accepted", function()
    local rc = handoff(moved("mine.json", { "--break-period", "30" }), { "--break-period", "30" },
      { AZURE_STORAGE_BLOB = "mine.json", AZURE_STORAGE_CONTAINER = "lease-handoff-lab" })
    assert.are.equal(0, rc)
  end)

  it("a contradicting blob is one usage line, exit 64, naming both", function()
    local rc, out, err = handoff(moved("mine.json", { "--break-period", "30" }), {},
      { AZURE_STORAGE_BLOB = "writer-handoff.json" })
    assert.are.equal(64, rc)
    assert.are.equal("", out)
    assert.are.equal(1, helper.count(err, "\n"), err)
    assert.matches("^leaselua: LL_E_USAGE: AZURE_STORAGE_BLOB=writer%-handoff%.json contradicts the blob", err)
    assert.matches("(mine.json)", err, 1, true)
  end)

  it("a contradicting flow argument is one usage line, exit 64", function()
    local rc, out, err = handoff(moved("mine.json", { "--break-period", "30" }), { "--break-period=5" })
    assert.are.equal(64, rc)
    assert.are.equal("", out)
    assert.are.equal(1, helper.count(err, "\n"), err)
    assert.matches("--break-period 5 contradicts the replayed fixture's --break-period 30", err, 1, true)
  end)

  it("another script's recorded arguments are not applied to this one", function()
    local fx = moved("mine.json", { "--no-such-handoff-option" })
    local f = cjson.decode(helper.read(fx))
    f.flow.script = "recovery.lua"
    helper.write(fx, cjson.encode(f))
    local rc, out, err = handoff(fx)
    assert.are.equal(0, rc, out .. err)
    f.flow.script = "main_handoff.lua"
    helper.write(fx, cjson.encode(f))
    rc, out, err = handoff(fx)
    assert.are.equal("", out)
    assert.are.equal(64, rc)
    assert.matches("unknown argument '--no-such-handoff-option' (recorded in the replayed fixture)", err, 1, true)
  end)

  it("a malformed target is one LL_E_PARSE line, exit 64, before anything runs", function()
    local rc, out, err = handoff(moved("mine.json", { "--break-period", "30" }, { container = 7 }))
    assert.are.equal(64, rc)
    assert.are.equal("", out)
    assert.are.equal(1, helper.count(err, "\n"), err)
    assert.matches("^leaselua: LL_E_PARSE: fixture .* 'target' must be", err)
  end)

  it("the shipped recording carries both fields; a fixture from before them replays as before", function()
    local f = cjson.decode(helper.read(shipped))
    assert.are.same({ container = "lease-handoff-lab", blob = "writer-handoff.json" }, f.target)
    assert.are.equal("main_handoff.lua", f.flow.script)
    assert.are.equal(0, (handoff(shipped)))
    -- written back by lua-cjson, the empty argument list reads {}: no arguments
    local path = helper.tmpdir() .. "/rewritten.json"
    helper.write(path, cjson.encode(f))
    assert.matches('"args":{}', helper.read(path), 1, true)
    assert.are.equal(0, (handoff(path)))
    -- recorded before the fields existed: neither, and the same replay
    f.target, f.flow = nil, nil
    path = helper.tmpdir() .. "/older.json"
    helper.write(path, cjson.encode(f))
    assert.are.equal(0, (handoff(path)))
  end)
end)
