-- The actors a flow declares at open are the only writers of the run, bound
-- or not (helper-33: run:unbound skipped the check, so an undeclared
-- writer the manifest permits could write and delete, and the run exited
-- ACCEPT with a bundle verify refused). C checks it when the handle is
-- made and again at every request (core/run/run_request.c). Offline: the
-- runs replay a fixture with no exchange and send nothing.
local ll = require "leaselua"
local helper = require "helper"
local rp = require "support.replay"

describe("the flow's declared actors", function()
  teardown(rp.cleanup)

  -- a fixture with no exchange: the run opens and closes, sending nothing
  local empty = helper.write(rp.tmpdir() .. "/empty.json",
    '{"format": "leaselua-fixture/1", "endpoint_kind": "emulator", "description": "no exchange", ' ..
    '"source": "written by spec/flow_actors_spec.lua", "exchanges": []}')

  local n = 0
  local function open(actors)
    n = n + 1
    return assert(ll.open {
      evidence = rp.tmpdir() .. "/flow-actors-" .. n, manifest = rp.manifest,
      account_url = "https://replay.invalid", container = "lease-handoff-lab", blob = "writer-handoff.json",
      replay = empty, auth = { kind = "none" },
      name = "flow-actors", actors = actors, break_periods = { 0 }, window_attempts = 1,
    })
  end

  local function refused(run, fn, alias)
    local ok, e = pcall(run[fn], run, alias)
    assert.is_false(ok, fn .. "(" .. alias .. ") was made")
    return e
  end

  it("refuse an unbound writer the flow did not declare, as they refuse a bound one", function()
    local run = open { "A", "operator", "observer" }
    for _, fn in ipairs { "unbound", "writer" } do
      local e = refused(run, fn, "B")
      assert.are.equal("LL_E_USAGE", e.code)
      assert.matches("actor B is not among the actors the flow declared at open", e.message, 1, true)
    end
    assert.truthy(run:unbound("A"))
    run:close()
  end)

  it("refuse an ill-formed unbound alias when the handle is made", function()
    local run = open { "A", "operator", "observer" }
    for _, alias in ipairs { "A ", "", "A/B", string.rep("A", 16) } do
      local e = refused(run, "unbound", alias)
      assert.are.equal("LL_E_USAGE", e.code, alias)
    end
    run:close()
  end)
end)
