-- Invariant 14 when the script waits in run:sleep (helper-33): the count
-- hook fires only every 100,000 instructions, so a script that slept past
-- --deadline-s and its 5 s grace ran its few last instructions, finish
-- included, and recorded a decision. run:sleep now ends at the grace at
-- the latest, and the script is stopped at its next instruction. Offline:
-- a replay (the run's clock is virtual) of a fixture with no exchange.
local helper = require "helper"
local rp = require "support.replay"

describe("run:sleep past the deadline", function()
  teardown(rp.cleanup)

  it("14: ends at the deadline's grace, and the script is stopped at its next instruction", function()
    local d = rp.tmpdir() .. "/sleep"
    local empty = helper.write(rp.tmpdir() .. "/empty.json",
      '{"format": "leaselua-fixture/1", "endpoint_kind": "emulator", "description": "no exchange", ' ..
      '"source": "written by spec/deadline_sleep_spec.lua", "exchanges": []}')
    local s = helper.write(rp.tmpdir() .. "/sleeper.lua", [[
local ll = require "leaselua"
local run = ll.open { name = "sleeper", actors = { "A", "operator", "observer" } }
local t0 = run:now_ms()
run:sleep(120000)
print("slept " .. (run:now_ms() - t0))
run:finish()
print("finished")
]])
    local rc, out, err = rp.replay("sleeper", empty, d, { "--deadline-s", "60" }, nil, s)
    assert.are.equal(2, rc, out .. err)
    assert.are.equal("", out)
    assert.truthy(err:find("leaselua: LL_E_SCOPE: the run's deadline (--deadline-s) passed 5 s ago and the " ..
      "script is still running: the host stops it", 1, true), err)
    assert.falsy(err:find("leaselua: leaselua:", 1, true), err)
    assert.are.equal("HOLD", rp.decision(d).decision)
    local stop
    for _, r in ipairs(helper.rows(d)) do
      if r.record == "stop" then stop = r end
    end
    assert.truthy(stop, "no stop row")
    assert.are.equal("no-decision", stop.kind)
  end)
end)
