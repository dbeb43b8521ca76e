-- A non-GUID lease ID can only come from the protected ledger: IDs are
-- generated in C. A protected ledger whose lease_bind row was edited (and
-- its chain recomputed, so that it still verifies) is reopened for
-- recovery: the host refuses with one line and exit 64, sends nothing,
-- and appends nothing. Offline: a counting server stands in for Azure.
local helper = require "helper"
local ll = require "leaselua"
local record = require("support.faultproxy").record

-- Rewrites every line's prev_hash and row_hash, in order, as
-- the ledger computes them (docs/EVIDENCE.md, "The chain").
local function rechain(lines)
  local prev = string.rep("0", 64)
  for i, line in ipairs(lines) do
    line = line:gsub('"prev_hash":"%x+"', '"prev_hash":"' .. prev .. '"', 1)
    local cut = line:find(',"row_hash":"', 1, true)
    local body = line:sub(1, cut - 1) .. "}"
    local h = ll.sha256(prev .. body)
    lines[i] = line:sub(1, cut - 1) .. ',"row_hash":"' .. h .. '"}'
    prev = h
  end
  return lines
end

describe("a non-GUID lease ID in a tampered protected ledger", function()
  local srv, token, manifest

  setup(function()
    token = helper.dev_token()
    manifest = helper.manifest_file(helper.tmpdir())
  end)
  teardown(function()
    if srv then srv.stop() end
    helper.cleanup()
  end)

  it("is refused on reopen with one line and exit 64; nothing is sent or appended", function()
    srv = helper.count_server(20)
    local ev = helper.tmpdir() .. "/ev"
    local env = {
      AZURE_STORAGE_ACCOUNT_URL = srv.url, AZURE_STORAGE_CONTAINER = "lease-handoff-lab",
      AZURE_STORAGE_BLOB = helper.unique_blob("badid"), AZURE_STORAGE_TOKEN = token,
      AZURE_STORAGE_SAS = false, LEASELUA_CA_FILE = false, LEASELUA_EVIDENCE_ROOT = false,
    }
    -- a run that binds A and B, then stops at its first request (500: HOLD)
    local rc = helper.run_env({ "scripts/main_handoff.lua", "--manifest", manifest, "--evidence", ev }, env)
    assert.are.equal(2, rc)
    local sent = srv.count()
    local path = ev .. "/protected/ledger.jsonl"
    local lines = {}
    for line in helper.read(path):gmatch("[^\n]+") do lines[#lines + 1] = line end
    local edited = 0
    for i, line in ipairs(lines) do
      if line:find('"record":"lease_bind"', 1, true) and line:find('"alias":"B"', 1, true) then
        lines[i] = line:gsub('"lease_real_id":"[^"]*"', '"lease_real_id":"not-a-guid"', 1)
        edited = edited + 1
      end
    end
    assert.are.equal(1, edited)
    helper.write(path, table.concat(rechain(lines), "\n") .. "\n")
    -- the edit is invisible to the chain, but not to verify: a protected
    -- ledger must hold real lease IDs (recovery must refuse on its own)
    local vrc, vout, verr = helper.run { "verify", ev }
    assert.are.equal(2, vrc, vout .. verr)
    assert.matches("lease_bind of B%) holds no real lease ID", verr)
    local before = helper.read(path)
    local rrc, out, err = helper.run_env({ "scripts/recovery.lua", "--recover", "--evidence", ev }, env)
    local errs = {}
    for l in err:gmatch("[^\n]+") do errs[#errs + 1] = l end
    record { suite = "bad_input", case = "a non-GUID lease ID (tampered protected ledger, reopened for recovery)",
      rc = rrc, line = errs[1], requests = srv.count() - sent }
    assert.are.equal(64, rrc, out .. err)
    assert.are.equal(1, #errs, err)
    assert.matches("^leaselua: LL_E_BAD_LEASE_ID: lease ID for alias B is not a GUID$", errs[1])
    assert.are.equal(sent, srv.count(), "requests sent by the refused recovery")
    assert.are.equal(before, helper.read(path), "the refused recovery appended to the ledger")
  end)
end)
