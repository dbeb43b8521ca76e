-- Every input is checked before the first request (DESIGN.md invariant
-- 15): a flow parameter out of range, an actor the manifest does not
-- permit, a gap control without its authorisation, all exit 64 with one
-- line, and the counting server sees no connection. The default evidence
-- directory is unique, so a refused run never uses up the next one's.
-- Offline: a counting loopback server, no Azurite.
local helper = require "helper"

local function write_manifest(actors)
  local d = helper.tmpdir()
  return helper.write(d .. "/manifest.json",
    '{"resource_owner":"storage-team","ticket":"LAB-SPEC","permitted_actors":[' .. actors ..
    '],"cleanup_authority":"storage-team"}')
end

describe("checked before the first request", function()
  local srv, manifest
  teardown(helper.cleanup)
  setup(function() manifest = write_manifest('"A","B","operator","observer"') end)
  before_each(function() srv = helper.count_server(20) end)
  after_each(function() srv.stop() end)

  local function env(over)
    local e = {
      AZURE_STORAGE_ACCOUNT_URL = srv.url, AZURE_STORAGE_TOKEN = helper.dev_token(),
      AZURE_STORAGE_BLOB = helper.unique_blob("first"), AZURE_STORAGE_SAS = false, LEASELUA_CA_FILE = false,
    }
    for k, v in pairs(over or {}) do e[k] = v end
    return e
  end

  local CASES = {
    { "a break period of 61 s", { "--break-period", "61" },
      "break period 61 s is outside 0%.%.60: Lease Blob accepts 0 to 60 seconds; pass %-%-break%-period 0%.%.60" },
    { "a negative break period", { "--break-period", "-1" }, "break period %-1 s is outside 0%.%.60" },
    { "a first break period of 61 s", { "--first-break-period", "61" }, "break period 61 s is outside 0%.%.60" },
    { "window attempts 0", { "--window-attempts", "0" },
      "window attempts 0 is outside 1%.%.10: pass %-%-window%-attempts 1%.%.10" },
    { "window attempts 11", { "--window-attempts", "11" }, "window attempts 11 is outside 1%.%.10" },
    { "a manifest without B", { "--manifest", "NO_B" },
      "the flow uses actor B, which is not among the manifest's permitted_actors %(invariant 11%): add it" },
    { "a manifest without the operator", { "--manifest", "NO_OPERATOR" },
      "the flow uses actor operator, which is not among the manifest's permitted_actors" },
    { "an option the flow does not know", { "--brake-period", "30" },
      "unknown argument '%-%-brake%-period': see %-%-help" },
    { "an operator option given twice", { "--timeout-ms", "5", "--timeout-ms", "6" },
      "%-%-timeout%-ms is given twice: give it once" },
    { "a timeout of 0", { "--timeout-ms", "0" }, "%-%-timeout%-ms must be an integer from 1 to 600000" },
    { "two credential sources", { "--token-file", "/nonexistent", "--managed-identity" },
      "%-%-token%-file and %-%-managed%-identity both name a credential: choose one" },
    { "--recover without --evidence", { "--recover" }, "%-%-recover needs %-%-evidence DIR", no_evidence = true },
    { "--destructive without --after", { "--destructive" }, "%-%-destructive and %-%-after DIR go together" },
  }
  for _, c in ipairs(CASES) do
    it("refuses " .. c[1] .. " with exit 64, one line, nothing sent", function()
      local args = { "scripts/main_handoff.lua" }
      if not c.no_evidence then
        args[#args + 1] = "--evidence"
        args[#args + 1] = helper.tmpdir() .. "/ev"
      end
      local has_manifest = false
      for _, a in ipairs(c[2]) do
        if a == "NO_B" then a = write_manifest('"A","operator","observer"') end
        if a == "NO_OPERATOR" then a = write_manifest('"A","B","observer"') end
        if a == "--manifest" then has_manifest = true end
        args[#args + 1] = a
      end
      if not has_manifest then
        args[#args + 1] = "--manifest"
        args[#args + 1] = manifest
      end
      local rc, out, err = helper.run(args, env())
      assert.are.equal(64, rc, out .. err)
      assert.matches(c[3], err)
      assert.are.equal(1, helper.count(err, "\n"), "one line: " .. err)
      assert.is_nil(err:find("%[string"), "Lua internals in: " .. err)
      assert.are.equal(0, srv.connections() or 0, "a connection was made")
    end)
  end

  it("refuses the gap control whose --after bundle does not verify, before any request", function()
    local rc, out, err = helper.run({ "scripts/gap_control.lua", "--manifest", manifest, "--destructive",
      "--after", helper.tmpdir(), "--evidence", helper.tmpdir() .. "/ev" }, env())
    assert.are.equal(64, rc, out .. err)
    assert.matches("does not verify", err)
    assert.are.equal(0, srv.connections() or 0, "a connection was made")
  end)

  -- --after is the operator's: checked at open even when the script does
  -- not declare itself destructive (it went unchecked until the script's
  -- first destructive lifecycle, after requests had gone out).
  it("refuses an --after bundle that does not verify at open, whatever the script declares", function()
    local s = helper.write(helper.tmpdir() .. "/plain.lua",
      'local ll = require "leaselua"\nlocal run = ll.open { name = "plain" }\nrun:create_container()\n')
    local rc, out, err = helper.run({ s, "--manifest", manifest, "--destructive",
      "--after", helper.tmpdir() .. "/nonexistent", "--evidence", helper.tmpdir() .. "/ev" }, env())
    assert.are.equal(64, rc, out .. err)
    assert.matches("LL_E_USAGE: %-%-after .* does not verify %(", err)
    assert.are.equal(1, helper.count(err, "does not verify"), "the message repeats itself: " .. err)
    assert.are.equal(0, srv.connections() or 0, "a connection was made")
  end)

  it("names a unique default evidence directory, so a refused run does not use up the next", function()
    local root = helper.tmpdir()
    local e = env { LEASELUA_EVIDENCE_ROOT = root }
    local s = helper.write(helper.tmpdir() .. "/open.lua",
      'local ll = require "leaselua"\nlocal run = ll.open { name = "unique" }\nprint(run:state().evidence)\n' ..
      'run:finish()\n')
    local rc1, out1, err1 = helper.run({ s, "--manifest", manifest }, e)
    local rc2, out2, err2 = helper.run({ s, "--manifest", manifest }, e)
    assert.are.equal(2, rc1, out1 .. err1) -- nothing proven: HOLD
    assert.are.equal(2, rc2, out2 .. err2)
    local d1, d2 = out1:match("^(%S+)\n"), out2:match("^(%S+)\n")
    assert.matches("^" .. root:gsub("%p", "%%%0") .. "/unique%-%d%d%d%d%d%d%d%dT%d%d%d%d%d%dZ", d1)
    assert.are_not.equal(d1, d2)
    assert.truthy(helper.read(d1 .. "/decision.json"))
    assert.truthy(helper.read(d2 .. "/decision.json"))
  end)

  for flow, name in pairs { main_handoff = "handoff", gap_control = "gap%-control", recovery = "recover" } do
    it(flow .. " --help prints its usage and exits 0, even with no target configured", function()
      local rc, out, err = helper.run({ "scripts/" .. flow .. ".lua", "--help" },
        { AZURE_STORAGE_ACCOUNT_URL = false, AZURE_STORAGE_TOKEN = false })
      assert.are.equal(0, rc, out .. err)
      -- the script by its path says the flow's name (issue 15: flows by name)
      assert.matches("^usage: leaselua " .. name .. " ", out)
      assert.matches("Exit: the decision, 0 ACCEPT 1 WAIT 2 HOLD 3 RECONCILE", out)
      assert.are.equal("", err)
    end)
  end
end)
