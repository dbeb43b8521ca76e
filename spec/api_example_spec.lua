-- The custom recovery script of docs/API.md, run as written by the host,
-- the way the doc says the operator runs it, on a run killed right after
-- B's acquire.
local helper = require "helper"

describe("docs/API.md example #live", function()
  teardown(helper.cleanup)

  it("recovers a killed run to ACCEPT", function()
    local doc = assert(helper.read("docs/API.md"))
    local code = doc:match("```lua\n(%-%- Custom recovery:.-)```")
    assert.is_string(code)
    local d = helper.tmpdir()
    local script = helper.write(d .. "/recover.lua", code)
    local blob = helper.unique_blob("api")
    local env = helper.live_env(blob)
    env.LEASELUA_CA_FILE = os.getenv("LEASELUA_CA_FILE")
    local ev = helper.killed_after(11, env, helper.manifest_file(d), d)
    local rc, out = helper.run({ script, "--recover", "--evidence", ev }, env)
    assert.are.equal(0, rc, out)
    assert.matches("content is revision 3: MATCH", out)
    assert.matches("stale A: 412", out)
    assert.matches("ACCEPT", out)
    rc = helper.run({ "verify", ev })
    assert.are.equal(0, rc)
  end)
end)
