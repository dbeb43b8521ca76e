-- The stale writer A regaining the blob after broken never ends in ACCEPT
-- (found by helper-27): from a script, the whole handoff runs and the
-- preview says ACCEPT; then B releases, A acquires its old lease ID again
-- and writes the final content. C's fold refuses the chain: HOLD, naming
-- the event, and verify re-derives the same. Against the live Azurite.
local helper = require "helper"

local SCRIPT = [[
local ll = require "leaselua"
local run = ll.open { name = "old-holder", actors = { "A", "B", "operator", "observer" },
  break_periods = { 1 }, window_attempts = 1 }
for _, d in ipairs { { 0, "A" }, { 1, "A" }, { 3, "A" }, { 4, "A" }, { 5, "B" }, { 6, "A" }, { 7, "A" } } do
  run:declare(d[1], d[2])
end
local A, B, U = run:writer("A"), run:writer("B"), run:unbound("A")
run:create_container()
run:lifecycle { reason = "spec: the old holder after broken" }
U:put(0); run:read()
A:acquire { duration = -1 }
A:put(1); run:read()
run:properties()
run:break_lease { period = 1 }
run:probe(A, 3); run:read()
run:wait_for_broken {}
A:put(4)
B:acquire { duration = -1 }
B:put(5); run:read()
A:put(6); run:read()
print("preview " .. run:decide().decision)
TAKEOVER
run:properties()
print("decision " .. run:finish().decision)
]]

describe("the old holder after broken #live", function()
  local TAKEOVERS = {
    none = "",
    late = "B:release()\nA:acquire { duration = -1 }\nA:put(7); run:read()",
  }

  teardown(function() helper.cleanup() end)

  local function run(takeover)
    local dir = helper.tmpdir() .. "/ev"
    local script = helper.tmpdir() .. "/old_holder.lua"
    helper.write(script, (SCRIPT:gsub("TAKEOVER", TAKEOVERS[takeover])))
    local env = helper.live_env(helper.unique_blob("oldholder"))
    local rc, out, err = helper.run({ script, "--manifest", helper.manifest_file(helper.tmpdir()),
      "--evidence", dir }, env)
    return rc, out, err, dir
  end

  it("the same handoff without the takeover is ACCEPT (the control)", function()
    local rc, out, err = run("none")
    assert.are.equal(0, rc, out .. err)
    assert.truthy(out:find("preview ACCEPT", 1, true), out)
    assert.truthy(out:find("decision ACCEPT", 1, true), out)
  end)

  it("B released, A re-acquired its old ID and wrote the content: HOLD, and verify agrees", function()
    local rc, out, err, dir = run("late")
    assert.truthy(out:find("preview ACCEPT", 1, true), out)
    assert.are.equal(2, rc, out .. err)
    assert.truthy(out:find("decision HOLD", 1, true), out)
    local decision = helper.read(dir .. "/decision.json")
    assert.truthy(decision:find("the old holder A was granted the lease or a write again after broken", 1, true),
      decision)
    assert.truthy(decision:find("the last accepted write (revision 7) is not the new holder's (revision 5)", 1,
      true), decision)
    local vrc, vout, verr = helper.run { "verify", dir }
    assert.are.equal(0, vrc, vout .. verr)
    assert.truthy(vout:find("decision HOLD", 1, true), vout)
  end)
end)
