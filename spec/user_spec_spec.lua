-- `leaselua spec` and the template spec for a custom recovery script
-- (issue 15): a fixture is recorded against Azurite, the template is
-- copied beside it and run through the documented command, and its
-- assertions pass; broken variants (a wrong expectation, a recovery script
-- that sends something else) make it fail, so the template can fail.
local helper = require "helper"

local root = os.getenv("PWD")

local function api_example()
  local doc = assert(helper.read(root .. "/docs/API.md"))
  return assert(doc:match("```lua\n(%-%- Example: custom recovery.-)```"), "no custom recovery example in API.md")
end

-- runs `leaselua spec ARGS` in dir, with no live target in the environment
local function spec_cmd(dir, args)
  local words = { "cd", helper.quote(dir), "&&", helper.env_prefix {
    AZURE_STORAGE_ACCOUNT_URL = false, AZURE_STORAGE_TOKEN = false, AZURE_STORAGE_SAS = false,
  }, helper.quote(helper.host), "spec" }
  for _, a in ipairs(args) do words[#words + 1] = helper.quote(a) end
  local p = assert(io.popen(table.concat(words, " ") .. " 2>&1; echo \"rc=$?\""))
  local out = p:read("a")
  p:close()
  return tonumber(out:match("rc=(%d+)%s*$")), out
end

describe("leaselua spec", function()
  teardown(helper.cleanup)

  it("--help exits 0 and names the command; no spec is a usage error (64)", function()
    local rc, out = helper.run { "spec", "--help" }
    assert.are.equal(0, rc)
    assert.matches("usage: leaselua spec", out, 1, true)
    local rc2, _, err = helper.run { "spec" }
    assert.are.equal(64, rc2)
    assert.matches("usage: leaselua spec", err, 1, true)
  end)

  it("runs a spec under Lua 5.4 with leaselua.so and the flows on the paths", function()
    local d = helper.tmpdir()
    helper.write(d .. "/paths_spec.lua", [[
describe("paths", function()
  it("lua 5.4, the module, lib.*, the flows and LEASELUA", function()
    assert.are.equal("Lua 5.4", _VERSION)
    local ll = require "leaselua"
    assert.are.equal("leaselua", ll._NAME)
    assert.is_table(require("lib.flows").handoff)
    assert.truthy(package.searchpath("main_handoff", package.path))
    assert.truthy(io.open(os.getenv("LEASELUA")))
  end)
end)
]])
    local rc, out = spec_cmd(d, { "-o", "TAP", "paths_spec.lua" })
    assert.are.equal(0, rc, out)
    assert.matches("ok 1 %- paths", out)
    helper.write(d .. "/fails_spec.lua",
      'describe("x", function() it("fails", function() assert.are.equal(1, 2) end) end)')
    rc = spec_cmd(d, { "fails_spec.lua" })
    assert.are_not.equal(0, rc)
  end)
end)

describe("the template recovery spec #live", function()
  teardown(helper.cleanup)

  it("passes on fixtures recorded from Azurite, and fails when its script or expectation is wrong", function()
    if not helper.have_live() then
      pending("needs the live Azurite of tools/run-specs.sh")
      return
    end
    local d = helper.tmpdir()
    local env = helper.live_env(helper.unique_blob("tmpl"))
    env.LEASELUA_CA_FILE = os.getenv("LEASELUA_CA_FILE")
    env.AZURE_STORAGE_TOKEN = os.getenv("AZURE_STORAGE_TOKEN")
    helper.write(d .. "/manifest.json", assert(helper.read(root .. "/tools/emulator/manifest.json")))
    helper.write(d .. "/my_recovery.lua", api_example())
    -- the documented recording, stopped before B acquired
    local rc, out, err = helper.run({ "handoff", "--manifest", d .. "/manifest.json", "--stop-after", "10",
      "--break-period", "2", "--record", d .. "/interrupted.json", "--evidence", d .. "/ev-run" }, env)
    assert.are.equal(2, rc, out .. err)
    rc, out, err = helper.run({ d .. "/my_recovery.lua", "--recover", "--evidence", d .. "/ev-run",
      "--record", d .. "/recovery.json" }, env)
    assert.are.equal(0, rc, out .. err)
    assert.matches("decision: ACCEPT", out, 1, true)
    local fx = assert(helper.read(d .. "/interrupted.json"))
    assert.matches('"blob": "' .. env.AZURE_STORAGE_BLOB .. '"', fx, 1, true)
    assert.matches('"args": [\n      "--stop-after",\n      "10",\n      "--break-period",\n      "2"\n    ]',
      fx, 1, true)
    assert.falsy(fx:find(env.AZURE_STORAGE_TOKEN, 1, true))

    local template = assert(helper.read(root .. "/examples/recovery_spec.lua"))
    helper.write(d .. "/recovery_spec.lua", template)
    rc, out = spec_cmd(d, { "-o", "TAP", "recovery_spec.lua" })
    assert.are.equal(0, rc, out)
    assert.are.equal(3, helper.count("\n" .. out, "\nok %d"), out)

    -- a wrong expectation fails
    helper.write(d .. "/wrong_spec.lua", (template:gsub('EXPECT_DECISION = "ACCEPT"', 'EXPECT_DECISION = "RECONCILE"')))
    rc, out = spec_cmd(d, { "-o", "TAP", "wrong_spec.lua" })
    assert.are_not.equal(0, rc, out)
    assert.matches("not ok 2 ", out, 1, true)
    -- a script that sends something the recording did not fails (strict replay)
    helper.write(d .. "/broken_recovery.lua", (api_example():gsub("A:put%(6%)", "A:put(4)")))
    helper.write(d .. "/broken_spec.lua", (template:gsub('"my_recovery.lua"', '"broken_recovery.lua"')))
    rc, out = spec_cmd(d, { "-o", "TAP", "broken_spec.lua" })
    assert.are_not.equal(0, rc, out)
    assert.matches("not ok 2 ", out, 1, true)
    assert.matches("LL_E_REPLAY", out, 1, true)
  end)
end)
