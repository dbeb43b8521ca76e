-- What stderr says about a script's own errors (helper-33): a table a
-- script made, with a code and message of its choosing, is marked as the
-- script's, never printed as if leaselua had raised it; and an error
-- raised after the run's decision was recorded says that the exit code is
-- still that decision's. Offline: replays of the shipped recording.
local helper = require "helper"
local rp = require "support.replay"

local MAIN = helper.read(helper.root .. "/scripts/main_handoff.lua")

local function host(source)
  local dir = rp.tmpdir()
  local path = helper.write(dir .. "/script.lua", source)
  return rp.replay("script", "emulator/main-handoff-accept", dir .. "/ev", nil, nil, path)
end

describe("a script's own errors on stderr", function()
  teardown(rp.cleanup)

  it("a forged leaselua error is printed as the script's, not as leaselua's", function()
    local rc, out, err = host('error({ code = "LL_E_USAGE", message = "forged", exit = 0 })')
    assert.are.equal(70, rc, out .. err)
    assert.are.equal("leaselua: a script's error object, not leaselua's: LL_E_USAGE: forged\n", err)
  end)

  it("an error after the decision: the exit code is the decision's, and stderr says so", function()
    local rc, out, err = host(MAIN .. '\nerror("boom after finish")\n')
    assert.are.equal(0, rc, out .. err)
    assert.truthy(out:find("ACCEPT", 1, true), out)
    assert.truthy(err:find("boom after finish", 1, true), err)
    assert.truthy(err:find("leaselua: the script raised after its run's decision was recorded: the exit code is " ..
      "that decision's, and the error changes no evidence", 1, true), err)
  end)

  it("an error before any decision says nothing of one, though a <close> run records HOLD as it unwinds", function()
    local rc, _, err = host('error("early")')
    assert.are.equal(70, rc)
    assert.falsy(err:find("decision was recorded", 1, true), err)
    -- helper-35: the run's close ran before the host looked, and the note
    -- claimed a decision the error itself had caused
    local dir = rp.tmpdir()
    local empty = helper.write(dir .. "/empty.json",
      '{"format": "leaselua-fixture/1", "endpoint_kind": "emulator", "description": "no exchange", ' ..
      '"source": "written by spec/script_errors_spec.lua", "exchanges": []}')
    local path = helper.write(dir .. "/closing.lua", [[
local ll = require "leaselua"
local run <close> = ll.open { name = "closing", actors = { "A", "operator", "observer" } }
error("boom before any decision")
]])
    rc, _, err = rp.replay("closing", empty, dir .. "/ev", nil, nil, path)
    assert.are.equal(2, rc, err)
    assert.truthy(err:find("boom before any decision", 1, true), err)
    assert.falsy(err:find("decision was recorded", 1, true), err)
  end)
end)
