-- The gap control's --after DIR: only an accepted, cleaned-up main handoff
-- on the same live target authorises the destructive lifecycle. Each wrong
-- bundle is refused with exit 64 before anything is sent: the server the
-- gap control was pointed at logs no request (a counting server, or a
-- logging proxy in front of Azurite), and the gap ledger holds no intent.
local helper = require "helper"
local rp = require "support.replay"
local proxy = require "support.faultproxy"

local CONTAINER, BLOB = "lease-handoff-lab", "writer-handoff.json" -- the replayed fixture's target

describe("gap control --after #live", function()
  if not proxy.have_live() then
    it("needs a live Azurite (tools/run-specs.sh)", function() pending("AZURE_STORAGE_ACCOUNT_URL is not set") end)
    return
  end

  local manifest, srv, px, replayed, live_main, live_blob

  local function target(url, blob)
    return {
      AZURE_STORAGE_ACCOUNT_URL = url, AZURE_STORAGE_CONTAINER = CONTAINER, AZURE_STORAGE_BLOB = blob,
      AZURE_STORAGE_TOKEN = helper.dev_token(), AZURE_STORAGE_SAS = false,
      LEASELUA_CA_FILE = os.getenv("LEASELUA_CA_FILE"), LEASELUA_EVIDENCE_ROOT = false,
    }
  end

  -- requests the two servers have seen so far
  local function seen()
    return srv.count() + #proxy.log(px, "request")
  end

  setup(function()
    manifest = helper.manifest_file(helper.tmpdir())
    srv = helper.count_server(300)
    px = proxy.start({}, 300000)
    -- a replayed main handoff: ACCEPT, verifies, endpoint kind replay
    replayed = rp.tmpdir() .. "/replayed"
    local rc, out, err = rp.replay("main_handoff", "emulator/main-handoff-accept", replayed)
    assert(rc == 0, "replay: " .. out .. err)
    -- a live main handoff on Azurite through the proxy: ACCEPT, its blob
    -- deleted, but no read after the delete found it absent: the shipped
    -- flow sends that read, so this copy does steps 10 to 14 itself
    -- without it
    local text = helper.read("scripts/main_handoff.lua")
    local call = "handoff.after_broken(run, step, { A = A, B = B, A_unleased = A_unleased })"
    local i, j = text:find(call, 1, true)
    assert(i, "scripts/main_handoff.lua no longer holds: " .. call)
    local no_confirm = helper.write(helper.tmpdir() .. "/main_no_confirm.lua", text:sub(1, i - 1) .. [[
step("10 rev 4 with stale A", A.put, A, 4)
  step("11 acquire B (infinite)", B.acquire, B, { duration = -1 })
  step("12 rev 5 with B", B.put, B, 5)
  step("12 read back rev 5", run.read, run)
  step("13 rev 6 with A", A.put, A, 6)
  step("13 rev 5 still there", run.read, run)
  step("14 release B", B.release, B)
  step("14 confirm release", run.properties, run)
  step("14 delete", A_unleased.delete, A_unleased)]] .. text:sub(j + 1))
    live_blob = helper.unique_blob("gap-after")
    live_main = helper.tmpdir() .. "/live-main"
    rc, out, err = helper.run({ no_confirm, "--break-period", "2", "--manifest", manifest,
      "--evidence", live_main }, target(px.url, live_blob))
    assert(rc == 0, "main handoff on Azurite: " .. out .. err)
  end)

  teardown(function()
    if srv then srv.stop() end
    proxy.stop(px)
    rp.cleanup()
  end)

  -- gap(env, after) -> exit, output; asserts that no server saw a request
  -- and that the gap ledger holds no intent.
  local function gap(env, after)
    local before = seen()
    local gdir = helper.tmpdir() .. "/gap"
    local rc, out, err = helper.run({ "scripts/gap_control.lua", "--manifest", manifest, "--destructive",
      "--break-period", "1", "--after", after, "--evidence", gdir }, env)
    assert.are.equal(before, seen(), "a server logged a request from the refused gap control")
    for _, r in ipairs(helper.rows(gdir)) do
      assert.are_not.equal("intent", r.record, "the gap control sent something")
    end
    return rc, out .. err
  end

  it("both bundles verify: they are refused for what they are, not for being broken", function()
    for _, dir in ipairs { replayed, live_main } do
      local rc, out, err = helper.run({ "verify", dir })
      assert.are.equal(0, rc, dir .. ": " .. out .. err)
      assert.truthy(out:find("decision ACCEPT", 1, true), out)
    end
  end)

  it("refuses a replay bundle for a live blob, although it is an accepted handoff of that blob", function()
    local rc, out = gap(target(srv.url, BLOB), replayed)
    assert.are.equal(64, rc, out)
    assert.matches("is replay evidence: a gap control on a live blob needs a live main handoff", out)
  end)

  it("refuses a bundle from another host for the same container and blob", function()
    local rc, out = gap(target(srv.url, live_blob), live_main)
    assert.are.equal(64, rc, out)
    assert.matches("ran on account host 127%.0%.0%.1:" .. px.port .. ", not 127%.0%.0%.1:" .. srv.port, out)
  end)

  it("refuses a bundle from another blob on the same host", function()
    local rc, out = gap(target(px.url, "another-blob.json"), live_main)
    assert.are.equal(64, rc, out)
    assert.matches("concerns /devstoreaccount1/lease%-handoff%-lab/gap%-after[^,]*, not " ..
      "/devstoreaccount1/lease%-handoff%-lab/another%-blob%.json", out)
  end)

  it("refuses an accepted live handoff whose cleanup no read confirmed (no 404 after the delete)", function()
    local rc, out = gap(target(px.url, live_blob), live_main)
    assert.are.equal(64, rc, out)
    assert.matches("did not confirm its cleanup by a read that found the blob absent", out)
  end)

  it("refuses a bundle whose protected ledger is a copy of its export", function()
    local dir = helper.tmpdir() .. "/copied"
    os.execute(string.format("cp -a %s %s && cp %s/export/ledger.jsonl %s/protected/ledger.jsonl",
      helper.quote(live_main), helper.quote(dir), helper.quote(dir), helper.quote(dir)))
    local rc, out = gap(target(px.url, live_blob), dir)
    assert.are.equal(64, rc, out)
    assert.matches("does not verify %(protected row %d+ %(lease_bind of A%) holds no real lease ID", out)
  end)
end)
