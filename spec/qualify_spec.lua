-- `leaselua qualify`, offline: documented fixtures replayed into bundles
-- (endpoint kind replay), copies relabelled as emulator and as azure
-- (spec/support/bundles.lua says how, and why verify accepts them), mixed
-- in one table. Non-azure bundles never reach the qualifying section; the
-- QUALIFIED rule is checked condition by condition, end to end where a
-- bundle can carry the case and on lib.qualify's rule for every
-- combination; a DIR with index.json stands for its runs.
local helper = require "helper"
local bd = require "support.bundles"
local cjson = require "cjson"

local q = helper.quote

local B = {} -- bundles, made once

local function qualify(args)
  local argv = { "qualify" }
  for _, a in ipairs(args) do argv[#argv + 1] = a end
  return helper.run(argv)
end

local function qualify_json(args)
  local a = { "--json" }
  for _, x in ipairs(args) do a[#a + 1] = x end
  local rc, out, err = qualify(a)
  return rc, (out ~= "" and cjson.decode(out) or nil), err
end

-- The rows of a section whose runs include dir.
local function row_of(t, section, dir)
  for _, r in ipairs(t[section]) do
    for _, run in ipairs(r.runs) do
      if run.dir == dir then return r, run end
    end
  end
end

local function dirs_in(t, section)
  local out = {}
  for _, r in ipairs(t[section]) do
    for _, run in ipairs(r.runs) do out[run.dir] = true end
  end
  return out
end

setup(function()
  local d = helper.tmpdir()
  B.base = d
  B.replay_accept = bd.replay("documented/azure-main-handoff-accept", d .. "/replay-accept")
  B.replay_409 = bd.replay("documented/put-409-discrepancy", d .. "/replay-409")
  B.emu_replay = bd.replay("emulator/main-handoff-accept", d .. "/emulator-fixture-accept")
  B.az_accept = bd.relabel(B.replay_accept, d .. "/az-accept")
  B.emu_accept = bd.relabel(B.replay_accept, d .. "/emulator-accept", { kind = "emulator" })
  B.az_accept2 = bd.relabel(B.replay_accept, d .. "/az-accept-other-host", { host = "other.blob.core.windows.net" })
  B.az_409 = bd.relabel(B.replay_409, d .. "/az-409", { host = "hold.blob.core.windows.net" })
  B.az_409_same = bd.relabel(B.replay_409, d .. "/az-409-same-host")
  B.az_tampered = bd.relabel(B.replay_accept, d .. "/az-tampered")
  -- one byte of the export changed after the chain was sealed
  local f = B.az_tampered .. "/export/ledger.jsonl"
  helper.write(f, (assert(helper.read(f)):gsub('"ticket":"LAB%-DEMO"', '"ticket":"LAB-DEMX"', 1)))
  B.key, B.allowed = bd.keypair(d, "alice")
  B.other_key = bd.keypair(d, "mallory")
  B.signed_replay = bd.replay("documented/azure-main-handoff-accept", d .. "/signed-replay", { "--sign-key", B.key })
  B.az_signed = bd.relabel(B.signed_replay, d .. "/az-signed", { key = B.key })
  -- a run the host signed with mallory's key, a key alice's file does not allow
  B.mallory_replay = bd.replay("documented/azure-main-handoff-accept", d .. "/mallory-replay",
    { "--sign-key", B.other_key })
  B.az_signed_other = bd.relabel(B.mallory_replay, d .. "/az-signed-mallory", { key = B.other_key })
end)

teardown(function()
  helper.cleanup()
end)

describe("the test bundles", function()
  it("verify accepts the relabelled copies as azure, and the replays as replay", function()
    for _, dir in ipairs { B.az_accept, B.az_409, B.az_signed, B.az_signed_other } do
      local rc, out, err = helper.run { "verify", "--json", dir }
      assert.are.equal(0, rc, err)
      assert.are.equal("azure", cjson.decode(out).endpoint_kind)
    end
    local erc, eout = helper.run { "verify", "--json", B.emu_accept }
    assert.are.equal(0, erc, eout)
    assert.are.equal("emulator", cjson.decode(eout).endpoint_kind)
    local rc, out = helper.run { "verify", "--json", B.replay_accept }
    assert.are.equal(0, rc)
    local v = cjson.decode(out)
    assert.are.same({ "replay", "documented" }, { v.endpoint_kind, v.fixture_label })
    assert.are.equal(2, (helper.run { "verify", B.az_tampered }))
  end)
end)

describe("leaselua qualify", function()
  it("never puts an emulator or replay bundle in the qualifying section", function()
    local rc, t, err = qualify_json { B.replay_accept, B.replay_409, B.emu_replay, B.emu_accept, B.az_accept,
      B.az_409 }
    assert.are.equal(2, rc, err) -- the azure 409 row is NOT QUALIFIED
    assert.are.equal("leaselua-qualify-v1", t.format)
    local qd, nqd = dirs_in(t, "qualifying"), dirs_in(t, "non_qualifying")
    for _, dir in ipairs { B.replay_accept, B.replay_409, B.emu_replay, B.emu_accept } do
      assert.is_nil(qd[dir], dir)
      assert.is_true(nqd[dir], dir)
    end
    for _, dir in ipairs { B.az_accept, B.az_409 } do
      assert.is_true(qd[dir], dir)
      assert.is_nil(nqd[dir], dir)
    end
    for _, r in ipairs(t.qualifying) do assert.are.equal("azure", r.endpoint_kind) end
    for _, r in ipairs(t.non_qualifying) do
      assert.are.equal("NOT QUALIFYING", r.verdict)
      assert.are_not.equal("azure", r.endpoint_kind)
    end
    -- the replay of the documented accept is ACCEPT and REPRODUCED, and still does not qualify
    local _, run = row_of(t, "non_qualifying", B.replay_accept)
    assert.are.same({ "ACCEPT", "REPRODUCED" }, { run.decision, run.window })
    assert.is_false(run.qualified)
  end)

  it("keeps a row per endpoint kind, host, API version, leaselua, libcurl and flow", function()
    local rc, t = qualify_json { B.replay_accept, B.emu_replay, B.az_accept, B.az_accept2 }
    assert.are.equal(0, rc)
    assert.are.equal(2, #t.qualifying)
    assert.are.equal(2, #t.non_qualifying) -- replay (documented) and replay (emulator) apart
    local hosts = {}
    for _, r in ipairs(t.qualifying) do
      hosts[r.account_host] = true
      assert.are.same({ "2023-11-03", "main-handoff", "0.1.0" }, { r.api_version, r.flow, r.leaselua })
      assert.matches("^libcurl/", r.libcurl)
      assert.are.equal("QUALIFIED", r.verdict)
      assert.matches("^%d%d%d%d%-%d%d%-%d%dT", r.date)
      assert.are.equal("unsigned", r.signer)
    end
    assert.are.same({ [bd.AZURE_HOST] = true, ["other.blob.core.windows.net"] = true }, hosts)
  end)

  it("QUALIFIED: azure, ACCEPT, REPRODUCED, consistent; exit 0", function()
    local rc, t = qualify_json { B.az_accept }
    assert.are.equal(0, rc)
    local r, run = row_of(t, "qualifying", B.az_accept)
    assert.are.equal("QUALIFIED", r.verdict)
    assert.is_true(run.qualified)
    assert.are.same({}, r.why)
  end)

  it("not QUALIFIED: decision HOLD (an unexplained discrepancy)", function()
    local rc, t = qualify_json { B.az_409 }
    assert.are.equal(2, rc)
    local r = row_of(t, "qualifying", B.az_409)
    assert.are.equal("NOT QUALIFIED", r.verdict)
    assert.are.same({ "decision HOLD" }, r.why)
  end)

  it("not QUALIFIED: verify finds the bundle inconsistent; it is in no row", function()
    local rc, t = qualify_json { B.az_tampered, B.replay_accept }
    assert.are.equal(2, rc)
    assert.is_nil(row_of(t, "qualifying", B.az_tampered))
    assert.is_nil(row_of(t, "non_qualifying", B.az_tampered))
    assert.are.equal(1, #t.unverified)
    assert.are.equal(B.az_tampered, t.unverified[1].dir)
    assert.matches("row", t.unverified[1].problem)
  end)

  it("with --require-signature: unsigned, or signed by a key not allowed, never qualifies", function()
    local rc, t = qualify_json { "--require-signature", "--allowed-signers", B.allowed, B.az_signed, B.az_accept }
    assert.are.equal(2, rc)
    local r = row_of(t, "qualifying", B.az_signed)
    assert.are.equal(2, #r.runs) -- the same row: same kind, host, versions, flow
    local by = {}
    for _, run in ipairs(r.runs) do by[run.dir] = run end
    assert.is_true(by[B.az_signed].qualified)
    assert.are.equal("signed by alice", by[B.az_signed].signer)
    assert.is_false(by[B.az_accept].qualified)
    assert.are.same({ "signature required: unsigned" }, by[B.az_accept].why)
    -- mallory's signature: verify does not accept it against alice's file
    local rc2, t2 = qualify_json { "--require-signature", "--allowed-signers", B.allowed, B.az_signed_other }
    assert.are.equal(2, rc2)
    assert.is_nil(row_of(t2, "qualifying", B.az_signed_other))
    assert.are.equal(B.az_signed_other, t2.unverified[1].dir)
    -- alone, the signed bundle qualifies under the requirement
    assert.are.equal(0, (qualify { "--require-signature", "--allowed-signers", B.allowed, B.az_signed }))
    -- without the requirement the unsigned one qualifies, and the signer is still shown
    local rc3, t3 = qualify_json { "--allowed-signers", B.allowed, B.az_accept, B.az_signed }
    assert.are.equal(0, rc3)
    assert.are.equal("QUALIFIED", t3.qualifying[1].verdict)
  end)

  it("a row's latest run decides it, and counts the others", function()
    -- the 409 run ends before the accept run (its cleanup never ran)
    local rc, t = qualify_json { B.az_accept, B.az_409_same }
    assert.are.equal(0, rc)
    assert.are.equal(1, #t.qualifying)
    local r = t.qualifying[1]
    assert.are.equal(2, #r.runs)
    assert.are.equal(1, r.qualified_runs)
    assert.are.equal(B.az_accept, r.runs[2].dir)
    assert.are.equal("QUALIFIED", r.verdict)
  end)

  it("exits 1 when no azure evidence is given: nothing can qualify", function()
    local rc, out = qualify { B.replay_accept, B.emu_replay, B.emu_accept }
    assert.are.equal(1, rc)
    assert.matches("(none: no Azure evidence was given)", out, 1, true)
    assert.matches("== Not qualifying: emulator and replay evidence", out, 1, true)
  end)

  it("heads the non-qualifying section as such in text, Markdown and HTML", function()
    local d = helper.tmpdir()
    local rc, out = qualify { "--html", d .. "/q.html", B.az_accept, B.replay_accept }
    assert.are.equal(0, rc)
    local q_at = out:find("== Qualifying section: endpoint kind azure ==", 1, true)
    local nq_at = out:find("== Not qualifying: emulator and replay evidence", 1, true)
    assert.is_truthy(q_at and nq_at and q_at < nq_at)
    assert.is_nil(out:sub(q_at, nq_at):find("replay.invalid", 1, true))
    local rc2, md = qualify { "--md", B.az_accept, B.replay_accept }
    assert.are.equal(0, rc2)
    assert.matches("## Not qualifying: emulator and replay evidence", md, 1, true)
    assert.matches("| QUALIFIED | azure | " .. bd.AZURE_HOST, md, 1, true)
    local html = assert(helper.read(d .. "/q.html"))
    assert.matches("<h2>Not qualifying: emulator and replay evidence", html, 1, true)
    local sec = html:match('<section class="q">(.-)</section>')
    assert.is_nil(sec:find("replay.invalid", 1, true))
  end)

  it("expands a directory holding index.json into its runs", function()
    local parent = B.base .. "/matrix"
    assert(bd.sh(("mkdir -p %s && cp -a %s %s/2023-11-03 && cp -a %s %s/2021-12-02"):format(q(parent),
      q(B.az_accept), q(parent), q(B.az_409_same), q(parent))) == 0)
    helper.write(parent .. "/index.json", cjson.encode {
      format = "leaselua-index-v1", flow = "handoff", created_utc = "2026-12-01T00:00:00Z",
      runs = { { api_version = "2023-11-03", dir = "2023-11-03", decision = "ACCEPT", exit = 0 },
        { api_version = "2021-12-02", dir = "2021-12-02", decision = "HOLD", exit = 2 } } })
    local rc, t = qualify_json { parent }
    assert.are.equal(0, rc)
    assert.are.equal(2, t.bundles)
    assert.are.equal(2, #t.qualifying[1].runs)
    -- a run outside the index's directory is refused before anything is verified
    helper.write(parent .. "/index.json", cjson.encode {
      format = "leaselua-index-v1", runs = { { dir = "../az-accept" } } })
    local rc2, _, err = qualify_json { parent }
    assert.are.equal(64, rc2)
    assert.matches("runs[0].dir must be a relative path", err, 1, true)
    -- an index never leaves out a bundle its directory holds (helper-26: a
    -- signed HOLD bundle marked "bundle": false, or dropped, was not read)
    for _, runs in ipairs {
      { { dir = "2023-11-03" }, { dir = "2021-12-02", bundle = false } },
      { { dir = "2023-11-03" } },
    } do
      helper.write(parent .. "/index.json", cjson.encode { format = "leaselua-index-v1", runs = runs })
      local rc5, _, err5 = qualify_json { parent }
      assert.are.equal(64, rc5, err5)
      assert.matches("does not list " .. parent .. "/2021-12-02 as a bundle, and it holds one", err5, 1, true)
    end
    -- nor one it holds under a hidden name (helper-32: ".b" was skipped)
    assert(os.rename(parent .. "/2021-12-02", parent .. "/.b"))
    helper.write(parent .. "/index.json",
      cjson.encode { format = "leaselua-index-v1", runs = { { dir = "2023-11-03" } } })
    local rc6, _, err6 = qualify_json { parent }
    assert.are.equal(64, rc6, err6)
    assert.matches("does not list " .. parent .. "/.b as a bundle, and it holds one", err6, 1, true)
    -- nor one a level down, in a directory that holds no bundle itself
    assert(bd.sh(("mkdir -p %s/sub"):format(q(parent))) == 0)
    assert(os.rename(parent .. "/.b", parent .. "/sub/c"))
    local rc7, _, err7 = qualify_json { parent }
    assert.are.equal(64, rc7, err7)
    assert.matches("does not list " .. parent .. "/sub/c as a bundle, and it holds one", err7, 1, true)
    assert(os.rename(parent .. "/sub/c", B.base .. "/matrix-2021-12-02"))
    -- a run refused before it made a bundle (bundle: false) is skipped, said so
    helper.write(parent .. "/index.json", cjson.encode {
      format = "leaselua-index-v1", runs = { { api_version = "2023-11-03", dir = "2023-11-03", exit = 0 },
        { api_version = "2024-08-04", dir = "2024-08-04", bundle = false, exit = 64 } } })
    local rc3, t3, err3 = qualify_json { parent }
    assert.are.equal(0, rc3)
    assert.are.equal(1, t3.bundles)
    assert.matches("runs[1] (2024-08-04) made no bundle: skipped", err3, 1, true)
    assert(os.rename(parent .. "/2023-11-03", B.base .. "/matrix-2023-11-03"))
    helper.write(parent .. "/index.json", cjson.encode {
      format = "leaselua-index-v1", runs = { { dir = "2024-08-04", bundle = false } } })
    local rc4, _, err4 = qualify_json { parent }
    assert.are.equal(64, rc4)
    assert.matches("lists no runs with a bundle", err4, 1, true)
  end)

  it("refuses bad input with one line and exit 64", function()
    local rc, _, err = qualify { "--require-signature", B.az_accept }
    assert.are.equal(64, rc)
    assert.matches("--require-signature needs --allowed-signers FILE", err, 1, true)
    rc, _, err = qualify { B.base }
    assert.are.equal(64, rc)
    assert.matches("not an evidence directory", err, 1, true)
    rc = qualify {}
    assert.are.equal(64, rc)
    rc = qualify { "--jobs", "0", B.az_accept }
    assert.are.equal(64, rc)
  end)

  it("gives the same table with workers as without", function()
    local list = { B.replay_accept, B.replay_409, B.emu_replay, B.az_accept, B.az_409, B.az_tampered }
    local a = { "--jobs", "1" }
    local b = { "--jobs", "3" }
    for _, x in ipairs(list) do
      a[#a + 1] = x
      b[#b + 1] = x
    end
    local rc1, t1 = qualify_json(a)
    local rc2, t2 = qualify_json(b)
    assert.are.equal(rc1, rc2)
    assert.are.same(t1, t2)
  end)
end)

describe("the QUALIFIED rule, condition by condition", function()
  require "leaselua" -- lib.* in package.preload
  local rule = require "lib.qualify"
  local good = { endpoint_kind = "azure", decision = "ACCEPT", window = "REPRODUCED", consistent = true,
    signature = { state = "good", principal = "alice" } }
  local bad = { endpoint_kind = { "emulator", "replay" }, decision = { "WAIT", "HOLD", "RECONCILE" },
    window = { "INCONCLUSIVE_WINDOW", "CONTRADICTED", "NOT_ATTEMPTED" }, consistent = { false },
    signature = { { state = "unsigned" }, { state = "unchecked", key = "SHA256:x", key_type = "ED25519" } } }

  it("qualifies only when every condition holds, and names each that fails", function()
    assert.are.same({}, rule.why_not(good, { require_signature = true }))
    for field, values in pairs(bad) do
      for _, v in ipairs(values) do
        local s = {}
        for k, x in pairs(good) do s[k] = x end
        s[field] = v
        local why = rule.why_not(s, { require_signature = true })
        assert.are.equal(1, #why, field .. " " .. tostring(v))
        -- the signature counts only when the operator asked for one
        assert.are.equal(field == "signature" and 0 or 1, #rule.why_not(s, { require_signature = false }))
      end
    end
  end)

  it("every combination of the five: QUALIFIED exactly when all hold", function()
    for mask = 0, 31 do
      local s = {
        endpoint_kind = (mask & 1) ~= 0 and "azure" or "emulator",
        decision = (mask & 2) ~= 0 and "ACCEPT" or "WAIT",
        window = (mask & 4) ~= 0 and "REPRODUCED" or "INCONCLUSIVE_WINDOW",
        consistent = (mask & 8) ~= 0,
        signature = { state = (mask & 16) ~= 0 and "good" or "unsigned" },
      }
      local failed = 0
      for bit = 0, 4 do
        if (mask >> bit) & 1 == 0 then failed = failed + 1 end
      end
      assert.are.equal(failed, #rule.why_not(s, { require_signature = true }), "mask " .. mask)
      -- without --require-signature the signature is not a condition
      local unsigned_fails = failed - (((mask >> 4) & 1 == 0) and 1 or 0)
      assert.are.equal(unsigned_fails, #rule.why_not(s, { require_signature = false }), "mask " .. mask)
    end
  end)
end)

describe("qualify and compare on a live emulator run #live", function()
  it("a real emulator ACCEPT sits in the non-qualifying section, and compares with the documented accept", function()
    local e = helper.live_env(helper.unique_blob("qualify"))
    e.LEASELUA_CA_FILE = os.getenv("LEASELUA_CA_FILE")
    local dir = helper.tmpdir() .. "/live"
    local manifest = helper.manifest_file(helper.tmpdir())
    local rc, out = helper.run({ "scripts/main_handoff.lua", "--break-period", "2", "--manifest", manifest,
      "--evidence", dir }, e)
    assert.are.equal(0, rc, out)
    local qrc, t = qualify_json { dir, B.az_accept }
    assert.are.equal(0, qrc)
    local r, run = row_of(t, "non_qualifying", dir)
    assert.are.equal("emulator", r.endpoint_kind)
    assert.are.equal("NOT QUALIFYING", r.verdict)
    assert.are.same({ "ACCEPT", "REPRODUCED" }, { run.decision, run.window })
    assert.is_nil(row_of(t, "qualifying", dir))
    local crc, cout = helper.run { "compare", dir, B.az_accept }
    assert.is_true(crc == 0 or crc == 1, cout)
    assert.matches("compare: the bundles differ in endpoint kind: A is emulator, B is azure", cout, 1, true)
  end)
end)
