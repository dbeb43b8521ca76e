-- A replay whose read diverges (LL_E_REPLAY, nothing served) under a
-- script that catches the error and keeps running: no request is in
-- flight and none can follow (the run is frozen), so a host killed now is
-- killed between requests and its export must verify as it is
-- (docs/EVIDENCE.md "The chain"). Since 367c7ce the diverging read's
-- intent export line waits for a head that never leaves and for an outcome
-- that is never written, until the close: the export is one row short.
local helper = require "helper"
local slow = require "support.slow"
local rp = require "support.replay"

local SCRIPT = [[
local ll = require "leaselua"
local run = ll.open {}
local ok, e = pcall(run.read, run)
print("read " .. tostring(ok) .. " " .. tostring(type(e) == "table" and e.code or e))
while true do end
]]

describe("a replay killed after a diverging read the script caught", function()
  teardown(rp.cleanup)

  it("leaves an export that verifies as it is", function()
    local evidence = rp.tmpdir() .. "/diverged"
    local args = { slow.script(SCRIPT), "--replay", rp.fixture("documented/azure-main-handoff-accept"),
      "--evidence", evidence, "--manifest", rp.manifest }
    local env = {}
    for k, v in pairs(rp.OFFLINE) do env[k] = v end
    local host = slow.spawn_host(args, { env = env })
    local caught = slow.wait_until(function()
      return (helper.read(host.out) or ""):find("read false LL_E_REPLAY", 1, true)
    end, 10)
    slow.sleep(0.3)
    local alive = slow.alive(host.pid)
    slow.kill(host.pid, "KILL")
    assert(caught, "the read did not diverge: " .. (helper.read(host.out) or "") .. (helper.read(host.err) or ""))
    assert(alive, "the host ended before it was killed")
    local rows = slow.decode_lines(evidence .. "/protected/ledger.jsonl")
    assert.equals("intent", rows[#rows].record)
    local rc, out, err = slow.run_host({ "verify", evidence }, { env = env })
    assert.equals(0, rc, out .. err)
    assert.truthy(out:find("export matches the protected ledger", 1, true), out)
  end)
end)
