-- Strict replay: a script that sends one request more, or skips one, or
-- sends a different one, fails loudly with a diff; nothing is served for
-- an unmatched request and no decision is recorded; a replay needs no
-- endpoint, no credential and opens no connection.
local helper = require "helper"
local rp = require "support.replay"

local FIXTURE = "documented/azure-main-handoff-accept"
local BLOB = "/lease%-handoff%-lab/writer%-handoff%.json"

-- scripts/main_handoff.lua with one edit, written to a temporary file.
local function edited_script(from, to)
  local text = helper.read("scripts/main_handoff.lua")
  local i, j = text:find(from, 1, true)
  assert(i, "the script no longer holds: " .. from)
  local path = rp.tmpdir() .. "/edited_main_handoff.lua"
  helper.write(path, text:sub(1, i - 1) .. to .. text:sub(j + 1))
  return path
end

local function last_row(dir)
  local rows = helper.rows(dir)
  return rows[#rows]
end

local function no_decision(dir)
  for _, r in ipairs(helper.rows(dir)) do
    assert.are_not.equal("decision", r.record, "a decision was recorded after a replay failure")
  end
  assert.is_nil(helper.read(dir .. "/decision.json"))
end

describe("strict replay", function()
  teardown(rp.cleanup)

  local READ5 = '  step("5 unconditioned read", run.read, run)\n'

  it("fails with a diff when the script sends one request more", function()
    local script = edited_script(READ5, READ5 .. READ5)
    local dir = rp.tmpdir() .. "/extra"
    local rc, out, err = rp.replay("main_handoff", FIXTURE, dir, {}, nil, script)
    assert.are.equal(64, rc, out .. err)
    assert.matches("leaselua: LL_E_REPLAY: strict replay: request #11 %(GET " .. BLOB ..
      "%) does not match exchange #11 %(HEAD " .. BLOB .. "%)", err)
    assert.matches("%-%-%- expected: exchange #11 of [^\n]*azure%-main%-handoff%-accept%.json", err)
    assert.matches("\n  %- HEAD " .. BLOB .. "\n  %+ GET " .. BLOB .. "\n    x%-ms%-version: 2023%-11%-03", err)
    assert.matches("stopped: LL_E_REPLAY", out) -- the step itself raised
    -- nothing was served: the request has its intent and no outcome
    local last = last_row(dir)
    assert.are.equal("intent", last.record)
    assert.are.equal("Get Blob", last.operation)
    no_decision(dir)
  end)

  it("fails with a diff when the script sends a request after the last exchange", function()
    local script = edited_script("out.decision(run:finish()",
      "run:properties()\nout.decision(run:finish()")
    -- From a deep folder: the one-line message once lost its end on a
    -- checkout whose path was longer than the one it was written on.
    local deep = rp.tmpdir() .. "/" .. string.rep("d", 60) .. "/" .. string.rep("e", 60) .. "/" ..
      string.rep("f", 60)
    os.execute("mkdir -p " .. helper.quote(deep))
    local copy = deep .. "/azure-main-handoff-accept.json"
    helper.write(copy, helper.read(rp.fixture(FIXTURE)))
    local rc, out, err = rp.replay("main_handoff", copy, rp.tmpdir() .. "/after", {}, nil, script)
    assert.are.equal(64, rc, out .. err)
    assert.matches("request #35 %(HEAD " .. BLOB .. "%) comes after the last of the 34 exchanges of " ..
      copy:gsub("%p", "%%%0") .. ": the recording made no such request %(a hidden retry, or an added step%?%)\n",
      err)
    assert.matches("\n  %+ HEAD " .. BLOB, err)
  end)

  it("fails with a diff when the script skips a step", function()
    local script = edited_script(READ5, "")
    local dir = rp.tmpdir() .. "/skip"
    local rc, out, err = rp.replay("main_handoff", FIXTURE, dir, {}, nil, script)
    assert.are.equal(64, rc, out .. err)
    assert.matches("request #10 %(HEAD " .. BLOB .. "%) does not match exchange #10 %(GET " .. BLOB .. "%)", err)
    assert.matches("\n  %- GET " .. BLOB .. "\n  %+ HEAD " .. BLOB, err)
    no_decision(dir)
  end)

  it("fails, listing them, when the run ends with exchanges never requested", function()
    local dir = rp.tmpdir() .. "/short"
    local rc, out, err = rp.replay("main_handoff", FIXTURE, dir, { "--stop-after", "13" })
    assert.are.equal(64, rc, out .. err)
    -- it stops after "13 rev 6 with A": the read, release, properties, delete and
    -- the confirming properties read never come
    assert.matches("5 of the 34 exchanges of [^\n]* were never requested %(a skipped step%?%), from #30 %(GET " ..
      BLOB .. "%)", err)
    assert.matches("\n  %- #30 GET " .. BLOB .. "\n  %- #31 PUT " .. BLOB .. "%?comp=lease lease%-action release" ..
      "\n  %- #32 HEAD " .. BLOB .. "\n  %- #33 DELETE " .. BLOB .. "\n  %- #34 HEAD " .. BLOB, err)
    no_decision(dir)
  end)

  it("fails at close too, for a script that never records its decision", function()
    local path = rp.tmpdir() .. "/no_finish.lua"
    helper.write(path, table.concat({
      'local ll = require "leaselua"',
      'local run <close> = ll.open {}',
      'run:create_container()',
      'return 0',
    }, "\n"))
    local rc, out, err = rp.replay("main_handoff", FIXTURE, rp.tmpdir() .. "/nofinish", {}, nil, path)
    assert.are.equal(64, rc, out .. err)
    -- the preflight and the Create Container were served
    assert.matches("32 of the 34 exchanges of [^\n]* were never requested", err)
  end)

  it("shows a changed header in the diff, never a real lease ID", function()
    local dir = rp.tmpdir() .. "/period"
    local rc, out, err = rp.replay("main_handoff", FIXTURE, dir, { "--break-period", "20" })
    assert.are.equal(64, rc, out .. err)
    assert.matches("\n    x%-ms%-lease%-action: break\n  %- x%-ms%-lease%-break%-period: 30\n" ..
      "  %+ x%-ms%-lease%-break%-period: 20", err)
    -- the protected ledger knows the real IDs; no message shows one
    for _, r in ipairs(helper.rows(dir)) do
      assert.is_nil(r.lease_real_id)
    end
    local protected = helper.read(dir .. "/protected/ledger.jsonl")
    for id in protected:gmatch('"lease_real_id":"([%x%-]+)"') do
      assert.is_nil((out .. err):find(id, 1, true))
    end
  end)

  it("matches the condition headers: a create without If-None-Match, a Delete or an acquire on another ETag", function()
    local cjson = require "cjson"
    local function edited_fixture(name, edit)
      local x = cjson.decode(helper.read(rp.fixture(FIXTURE)))
      for _, e in ipairs(x.exchanges) do edit(e.request.headers) end
      local path = rp.tmpdir() .. "/" .. name .. ".json"
      helper.write(path, cjson.encode(x))
      return path
    end
    -- the recording never sent If-None-Match: the run's create (request #3) does
    local f = edited_fixture("no-if-none-match", function(h) h["if-none-match"] = nil end)
    local rc, out, err = rp.replay("main_handoff", f, rp.tmpdir() .. "/inm")
    assert.are.equal(64, rc, out .. err)
    assert.matches("request #3 %(PUT " .. BLOB .. "%) does not match exchange #3", err)
    assert.matches("\n    x%-ms%-blob%-type: BlockBlob\n  %+ if%-none%-match: %*\n", err)
    -- the recording's Delete was conditioned on another ETag than the run's read-back
    f = edited_fixture("other-if-match", function(h)
      if h["if-match"] and not h["x-ms-lease-action"] then h["if-match"] = '"0x8DE000000000000"' end
    end)
    rc, out, err = rp.replay("main_handoff", f, rp.tmpdir() .. "/im")
    assert.are.equal(64, rc, out .. err)
    assert.matches("request #33 %(DELETE " .. BLOB .. "%) does not match exchange #33", err)
    assert.matches('\n  %- if%-match: "0x8DE000000000000"\n  %+ if%-match: "0x%x+"\n', err)
    -- and A's acquire (request #5) on another ETag than its create's
    f = edited_fixture("other-acquire-if-match", function(h)
      if h["if-match"] and h["x-ms-lease-action"] == "acquire" then h["if-match"] = '"0x8DE000000000000"' end
    end)
    rc, out, err = rp.replay("main_handoff", f, rp.tmpdir() .. "/im-acquire")
    assert.are.equal(64, rc, out .. err)
    assert.matches("request #5 %(PUT " .. BLOB .. "%?comp=lease%) does not match exchange #5", err)
    assert.matches('\n  %- if%-match: "0x8DE000000000000"\n  %+ if%-match: "0x%x+"\n', err)
    assert.is_nil(err:find("record it again", 1, true))
    -- a recording from before acquire and break were conditioned: the cause is named
    f = edited_fixture("older-acquire", function(h)
      if h["x-ms-lease-action"] then h["if-match"] = nil end
    end)
    rc, out, err = rp.replay("main_handoff", f, rp.tmpdir() .. "/im-older")
    assert.are.equal(64, rc, out .. err)
    assert.matches("does not match exchange #5 %b() of [^\n]* %(its lease operation has no If%-Match: recorded " ..
      "before leaselua conditioned acquire and break on the run's ETag; record it again%)", err)
    assert.matches('\n  %+ if%-match: "0x%x+"\n', err)
  end)

  it("opens no connection and needs no credential", function()
    local srv = helper.count_server(20)
    local dir = rp.tmpdir() .. "/net"
    -- an account URL that would answer: the replay must not call it
    local rc, out, err = rp.replay("main_handoff", FIXTURE, dir, {}, { AZURE_STORAGE_ACCOUNT_URL = srv.url })
    local connections = srv.connections() or 0
    srv.stop()
    assert.are.equal(0, rc, out .. err)
    assert.are.equal(0, connections)
    assert.matches("replay of a documented fixture", out)
  end)

  it("refuses --record with --replay, a missing fixture and a malformed one (exit 64)", function()
    local dir = rp.tmpdir()
    local rc, _, err = rp.replay("main_handoff", FIXTURE, dir .. "/a", { "--record", dir .. "/x.json" })
    assert.are.equal(64, rc)
    assert.matches("%-%-replay and %-%-record cannot be combined", err)
    rc, _, err = rp.replay("main_handoff", "documented/no-such-fixture", dir .. "/b")
    assert.are.equal(64, rc)
    assert.matches("cannot read fixture [^\n]*no%-such%-fixture%.json", err)
    local bad = helper.read(rp.fixture(FIXTURE)):gsub("leaselua%-fixture/1", "leaselua-fixture/9", 1)
    helper.write(dir .. "/bad.json", bad)
    rc, _, err = helper.run_env({ "scripts/main_handoff.lua", "--replay", dir .. "/bad.json", "--evidence",
      dir .. "/c", "--manifest", rp.manifest }, rp.OFFLINE)
    assert.are.equal(64, rc)
    assert.matches("LL_E_PARSE: fixture [^\n]*bad%.json: format is 'leaselua%-fixture/9', expected " ..
      "'leaselua%-fixture/1'", err)
  end)

  it("refuses to recover a replayed run against a live endpoint", function()
    local dir = rp.tmpdir() .. "/rev5"
    assert.are.equal(2, (rp.replay("main_handoff", "documented/rev5-lost", dir)))
    local env = {}
    for k, v in pairs(rp.OFFLINE) do env[k] = v end
    env.AZURE_STORAGE_ACCOUNT_URL = "https://replay.invalid"
    env.AZURE_STORAGE_TOKEN = helper.dev_token()
    local rc, out, err = helper.run_env({ "scripts/recovery.lua", "--recover", "--evidence", dir }, env)
    assert.are.equal(64, rc, out .. err)
    assert.matches("this evidence is a replay: recover it with %-%-replay FIXTURE", err)
  end)
end)
