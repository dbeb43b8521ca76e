-- Recording against the live Azurite of tools/run-specs.sh, then replaying
-- what was recorded: the replay's rows, class by class, are the live
-- run's, and the fixture holds no lease ID.
local helper = require "helper"
local rp = require "support.replay"

describe("--record against Azurite, then --replay #live", function()
  if not helper.have_live() then
    it("needs a live Azurite (tools/run-specs.sh)", function() pending("AZURE_STORAGE_ACCOUNT_URL is not set") end)
    return
  end
  teardown(rp.cleanup)

  local blob = helper.unique_blob("record")
  local dir, fixture, live_rc, live_out, live_err

  setup(function()
    dir = rp.tmpdir()
    fixture = dir .. "/recorded.json"
    local env = helper.live_env(blob)
    env.LEASELUA_CA_FILE = os.getenv("LEASELUA_CA_FILE")
    live_rc, live_out, live_err = helper.run({ "scripts/main_handoff.lua", "--break-period", "3",
      "--manifest", rp.manifest, "--evidence", dir .. "/live", "--record", fixture,
      "--record-description", "record_spec: a short main handoff" }, env)
  end)

  it("records the run as it goes, without changing it", function()
    assert.are.equal(0, live_rc, live_out .. live_err)
    local f = require("cjson").decode(helper.read(fixture))
    assert.are.equal("leaselua-fixture/1", f.format)
    assert.are.equal("emulator", f.endpoint_kind)
    assert.are.equal("record_spec: a short main handoff", f.description)
    assert.matches("^recorded by leaselua .* from an emulator endpoint %(server Azurite%-Blob/", f.source)
    local outcomes = #helper.outcomes(helper.rows(dir .. "/live"))
    assert.are.equal(outcomes, #f.exchanges)
    -- #1 is the preflight read of the blob, #2 the container, #3 the create
    assert.are.equal("/lease-handoff-lab/" .. blob, f.exchanges[1].request.path)
    assert.are.equal("HEAD", f.exchanges[1].request.method)
    assert.are.equal("/lease-handoff-lab/" .. blob, f.exchanges[3].request.path)
    assert.are.equal("*", f.exchanges[3].request.headers["if-none-match"])
  end)

  it("keeps no lease ID, token or SAS in the fixture", function()
    local text = helper.read(fixture)
    local protected = helper.read(dir .. "/live/protected/ledger.jsonl")
    local ids = 0
    for id in protected:gmatch('"lease_real_id":"([%x%-]+)"') do
      ids = ids + 1
      assert.is_nil(text:lower():find(id:lower(), 1, true))
      assert.is_nil(text:lower():find(id:lower():gsub("%-", ""), 1, true))
    end
    assert.is_true(ids >= 2)
    assert.truthy(text:find('"x-ms-proposed-lease-id": "{{lease:A}}"', 1, true))
    assert.truthy(text:find('"x-ms-proposed-lease-id": "{{lease:B}}"', 1, true))
    local token = os.getenv("AZURE_STORAGE_TOKEN")
    if token then assert.is_nil(text:find(token, 1, true)) end
    assert.is_nil(text:find("eyJ", 1, true))
    assert.is_nil(text:lower():find("authorization", 1, true))
  end)

  it("replays offline to the same rows, the same decision, and verifies", function()
    local rc, out, err = helper.run_env({ "scripts/main_handoff.lua", "--break-period", "3",
      "--manifest", rp.manifest, "--evidence", dir .. "/replayed", "--replay", fixture },
      (function()
        local e = {}
        for k, v in pairs(rp.OFFLINE) do e[k] = v end
        e.AZURE_STORAGE_CONTAINER = "lease-handoff-lab"
        e.AZURE_STORAGE_BLOB = blob
        return e
      end)())
    assert.are.equal(0, rc, out .. err)
    assert.are.same(rp.trace(dir .. "/live"), rp.trace(dir .. "/replayed"))
    assert.are.equal("ACCEPT", rp.decision(dir .. "/replayed").decision)
    rp.assert_verifies(dir .. "/replayed")
  end)
end)
