-- The gap control's --after DIR: only an accepted, cleaned-up main handoff
-- on the same live target authorises the destructive lifecycle. Each wrong
-- bundle is refused with exit 64 before anything is sent: the counting
-- server sees no request, and the gap evidence holds no intent.
local helper = require "helper"
local rp = require "support.replay"

local CONTAINER, BLOB = "lease-handoff-lab", "writer-handoff.json" -- the replayed fixture's target

describe("gap control --after #live", function()
  if not helper.have_live() then
    it("needs a live Azurite (tools/run-specs.sh)", function() pending("AZURE_STORAGE_ACCOUNT_URL is not set") end)
    return
  end

  local manifest, srv, replayed, azurite_main, azurite_blob, other_blob

  local function target(url, blob)
    return {
      AZURE_STORAGE_ACCOUNT_URL = url, AZURE_STORAGE_CONTAINER = CONTAINER, AZURE_STORAGE_BLOB = blob,
      AZURE_STORAGE_TOKEN = helper.dev_token(), AZURE_STORAGE_SAS = false,
      LEASELUA_CA_FILE = os.getenv("LEASELUA_CA_FILE") or false, LEASELUA_EVIDENCE_ROOT = false,
    }
  end

  setup(function()
    manifest = helper.manifest_file(helper.tmpdir())
    srv = helper.count_server(240)
    -- 1. a replayed main handoff: ACCEPT, verifies, endpoint kind replay
    replayed = rp.tmpdir() .. "/replayed"
    local rc, out, err = rp.replay("main_handoff", "emulator/main-handoff-accept", replayed)
    assert(rc == 0, "replay: " .. out .. err)
    -- 2. a live main handoff on Azurite: ACCEPT, its blob deleted, but no
    -- read after the delete found it absent
    azurite_blob = helper.unique_blob("gap-after")
    azurite_main = helper.tmpdir() .. "/azurite-main"
    rc, out, err = helper.run({ "scripts/main_handoff.lua", "--break-period", "2", "--manifest", manifest,
      "--evidence", azurite_main }, target(os.getenv("AZURE_STORAGE_ACCOUNT_URL"), azurite_blob))
    assert(rc == 0, "main handoff on Azurite: " .. out .. err)
    -- 3. a run on the counting server itself, on another blob (it ends
    -- HOLD at its first request: the server answers 500)
    other_blob = helper.tmpdir() .. "/other-blob"
    rc, out, err = helper.run({ "scripts/main_handoff.lua", "--manifest", manifest, "--evidence", other_blob },
      target(srv.url, "another-blob.json"))
    assert(rc == 2, "run on the counting server: " .. out .. err)
  end)

  teardown(function()
    if srv then srv.stop() end
    rp.cleanup()
  end)

  -- gap(env, after) -> exit, stderr, gap evidence dir; asserts that the
  -- counting server saw nothing and the gap ledger holds no intent.
  local function gap(env, after)
    local before = srv.count()
    local gdir = helper.tmpdir() .. "/gap"
    local rc, out, err = helper.run({ "scripts/gap_control.lua", "--manifest", manifest, "--destructive",
      "--break-period", "1", "--after", after, "--evidence", gdir }, env)
    assert.are.equal(before, srv.count(), "the counting server saw a request")
    for _, r in ipairs(helper.rows(gdir)) do
      assert.are_not.equal("intent", r.record, "the gap control sent something")
    end
    return rc, out .. err
  end

  it("the three bundles verify: they are refused for what they are, not for being broken", function()
    for _, dir in ipairs { replayed, azurite_main, other_blob } do
      local rc, out, err = helper.run({ "verify", dir })
      assert.are.equal(0, rc, dir .. ": " .. out .. err)
    end
  end)

  it("refuses a replay bundle for a live blob, although it is an accepted handoff of the same blob", function()
    local rc, out = gap(target(srv.url, BLOB), replayed)
    assert.are.equal(64, rc, out)
    assert.matches("is replay evidence: a gap control on a live blob needs a live main handoff", out)
  end)

  it("refuses a bundle from another host (Azurite's) for the same container and blob", function()
    local rc, out = gap(target(srv.url, azurite_blob), azurite_main)
    assert.are.equal(64, rc, out)
    assert.matches("ran on account host 127%.0%.0%.1:%d+, not 127%.0%.0%.1:" .. srv.port, out)
  end)

  it("refuses a bundle from another blob on the same host", function()
    local rc, out = gap(target(srv.url, BLOB), other_blob)
    assert.are.equal(64, rc, out)
    assert.matches("concerns /devstoreaccount1/lease%-handoff%-lab/another%-blob%.json, not", out)
  end)

  it("refuses an accepted live handoff whose cleanup no read confirmed (no 404 after the delete)", function()
    local env = target(os.getenv("AZURE_STORAGE_ACCOUNT_URL"), azurite_blob)
    local rc, out = gap(env, azurite_main)
    assert.are.equal(64, rc, out)
    assert.matches("did not confirm its cleanup by a read that found the blob absent", out)
  end)

  it("refuses a bundle whose protected ledger is a copy of its export", function()
    local dir = helper.tmpdir() .. "/copied"
    os.execute(string.format("cp -a %s %s && cp %s/export/ledger.jsonl %s/protected/ledger.jsonl",
      helper.quote(azurite_main), helper.quote(dir), helper.quote(dir), helper.quote(dir)))
    local rc, out = gap(target(os.getenv("AZURE_STORAGE_ACCOUNT_URL"), azurite_blob), dir)
    assert.are.equal(64, rc, out)
    assert.matches("does not verify %(protected row %d+ %(lease_bind of A%) holds no real lease ID", out)
  end)
end)
