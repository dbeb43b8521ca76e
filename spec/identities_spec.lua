-- One credential per actor (DESIGN.md, "Actors and identities"): on the
-- live Azurite, writer A, writer B and the operator each send with their
-- own dev token; every row's principal is its actor's fingerprint, the
-- fault proxy in front of Azurite sees each request carry its own actor's
-- token (compared by hash, never printed), and the report and verify name
-- three principals. With one shared token, both say the evidence does not
-- distinguish principals. Offline: the operator's per-actor options are
-- checked before anything is sent.
local helper = require "helper"
local actors = require "support.actors"
local fp = require "support.faultproxy"
local cjson = require "cjson"

local SCRIPT = helper.root .. "/scripts/main_handoff.lua"
local ONE = "all actors used one identity: the evidence does not distinguish principals"

local function manifest_row(dir)
  return helper.rows(dir)[1]
end

local function verdict(dir)
  local rc, out, err = helper.run({ "verify", "--json", dir })
  assert.are.equal(0, rc, out .. err)
  return cjson.decode(out)
end

local function report(dir)
  local rc, out, err = helper.run({ "report", dir })
  assert.are.equal(0, rc, out .. err)
  return helper.read(dir .. "/summary.md"), helper.read(dir .. "/report.html")
end

describe("each actor with its own identity", function()
  teardown(helper.cleanup)

  describe("three dev tokens through the recording proxy #live", function()
    if not fp.have_live() then
      it("needs a live Azurite (tools/run-specs.sh)", function() pending("AZURE_STORAGE_ACCOUNT_URL is not set") end)
      return
    end
    local dir, rc, out, err, tokens, proxy_reqs

    setup(function()
      local d = helper.tmpdir()
      dir = d .. "/ev"
      tokens = actors.mint(d)
      local p = fp.start({}, 120000)
      local env = fp.env(p, helper.unique_blob("actors"))
      env.AZURE_STORAGE_TOKEN = false -- no default: each actor's own only
      local args = { SCRIPT, "--manifest", helper.manifest_file(d), "--evidence", dir, "--break-period", "1" }
      for _, a in ipairs(actors.args(tokens)) do args[#args + 1] = a end
      local ok, e = pcall(function() rc, out, err = helper.run(args, env) end)
      proxy_reqs = fp.log(p, "request")
      fp.stop(p)
      assert(ok, e)
    end)

    it("the three tokens are distinct principals, and the handoff ran to ACCEPT", function()
      assert.are_not.equal(tokens.oid.A, tokens.oid.B)
      assert.are_not.equal(tokens.oid.B, tokens.oid.operator)
      assert.are_not.equal(tokens.fp.A, tokens.fp.B)
      assert.are.equal(0, rc, out .. err)
      assert.matches("DECISION: ACCEPT", out)
    end)

    it("the manifest row records each actor's identity before the first request", function()
      local rows = helper.rows(dir)
      local m = rows[1]
      assert.are.equal("manifest", m.record)
      for _, a in ipairs { "A", "B", "operator", "observer" } do
        local e = m.identities[a]
        local sender = actors.sender(a)
        assert.are.equal(tokens.fp[sender], e.fingerprint, a)
        assert.are.equal("jwt", e.kind)
        assert.are.equal("token-file:" .. tokens.files[sender], e.credential)
        -- the export keeps the fingerprint, never tid or oid
        assert.is_nil(e.tid)
        assert.is_nil(e.oid)
      end
      assert.is_false(m.shared_identity)
      -- before the first request: row 1, and no request row precedes it
      assert.are.equal(1, m.seq)
    end)

    it("every request row's principal is the fingerprint of the actor that sent it", function()
      local n = 0
      for _, r in ipairs(helper.rows(dir)) do
        if r.record == "intent" or r.record == "outcome" then
          n = n + 1
          assert.are.equal(tokens.fp[actors.sender(r.actor_alias)], r.principal, r.step)
        end
      end
      assert.is_true(n > 20, n .. " request rows")
    end)

    it("the proxy saw each request carry its own actor's token", function()
      local by_id = {}
      for _, q in ipairs(proxy_reqs) do by_id[q.client_request_id or "?"] = q end
      local seen, n = {}, 0
      for _, r in ipairs(helper.rows(dir)) do
        if r.record == "intent" then
          local q = by_id[r.client_request_id]
          assert.is_truthy(q, "the proxy never saw " .. r.step)
          assert.are.equal(tokens.tag[actors.sender(r.actor_alias)], q.auth, r.step .. " (" .. r.actor_alias .. ")")
          seen[q.auth] = true
          n = n + 1
        end
      end
      assert.are.equal(#proxy_reqs, n, "requests the proxy saw vs intents")
      local distinct = 0
      for _ in pairs(seen) do distinct = distinct + 1 end
      assert.are.equal(3, distinct)
    end)

    it("the protected ledger keeps tid and oid; no token, oid or tid reaches the export, report or output", function()
      local prot = helper.read(dir .. "/protected/ledger.jsonl")
      assert.is_truthy(prot:find(tokens.oid.A, 1, true))
      local md, html = report(dir)
      local texts = { out = out, err = err, md = md, html = html, manifest = helper.read(dir .. "/manifest.json"),
        export = helper.read(dir .. "/export/ledger.jsonl"), decision = helper.read(dir .. "/decision.json"),
        environment = helper.read(dir .. "/environment.json") }
      for name, text in pairs(texts) do
        local flat = text:lower():gsub("%-", "")
        for _, a in ipairs(actors.ACTORS) do
          assert.is_nil(text:find(tokens.token[a], 1, true), name .. ": token of " .. a)
          assert.is_nil(flat:find(tokens.oid[a]:gsub("%-", ""), 1, true), name .. ": oid of " .. a)
          assert.is_nil(flat:find(tokens.tid[a]:gsub("%-", ""), 1, true), name .. ": tid")
        end
      end
    end)

    it("the report shows the three fingerprints, and verify agrees", function()
      local md, html = report(dir)
      for _, a in ipairs(actors.ACTORS) do
        assert.is_truthy(md:find(tokens.fp[a], 1, true), "summary.md: " .. a)
        assert.is_truthy(html:find(tokens.fp[a], 1, true), "report.html: " .. a)
      end
      assert.matches("each actor used its own identity", md)
      assert.is_nil(md:find(ONE, 1, true))
      local v = verdict(dir)
      assert.is_true(v.consistent)
      assert.is_false(v.shared_identity)
      assert.matches("^each actor used its own identity", v.identity)
    end)

    it("verify refuses an export whose row names another actor's principal, chain recomputed", function()
      local ll = require "leaselua"
      local lines = {}
      for line in helper.read(dir .. "/export/ledger.jsonl"):gmatch("[^\n]+") do lines[#lines + 1] = line end
      local target
      for i, line in ipairs(lines) do
        if line:find('"record":"intent"', 1, true) and line:find('"actor_alias":"B"', 1, true) then
          target = i
          lines[i] = line:gsub('"principal":"%x+"', '"principal":"' .. tokens.fp.A .. '"')
          break
        end
      end
      assert.is_truthy(target)
      -- the forger recomputes the whole chain (DESIGN.md section 3)
      local prev = string.rep("0", 64)
      for i, line in ipairs(lines) do
        local body = line:match("^(.*),\"row_hash\":\"%x+\"}$")
        body = body:gsub('"prev_hash":"%x+"', '"prev_hash":"' .. prev .. '"')
        local h = ll.sha256(prev .. body .. "}")
        lines[i] = body .. ',"row_hash":"' .. h .. '"}'
        prev = h
      end
      local d2 = helper.tmpdir() .. "/forged"
      os.execute("mkdir -p " .. helper.quote(d2 .. "/export"))
      helper.write(d2 .. "/export/ledger.jsonl", table.concat(lines, "\n") .. "\n")
      local rc2, out2, err2 = helper.run({ "verify", "--export-only", d2 })
      assert.are.equal(2, rc2, out2 .. err2)
      assert.matches("row " .. target .. ": principal " .. tokens.fp.A .. " of actor B is not", err2)
    end)
  end)

  describe("one shared token #live", function()
    if not helper.have_live() then
      it("needs a live Azurite (tools/run-specs.sh)", function() pending("AZURE_STORAGE_ACCOUNT_URL is not set") end)
      return
    end
    local dir, rc, out, err

    setup(function()
      local d = helper.tmpdir()
      dir = d .. "/ev"
      local env = helper.live_env(helper.unique_blob("shared"))
      env.AZURE_STORAGE_TOKEN = os.getenv("AZURE_STORAGE_TOKEN")
      env.LEASELUA_CA_FILE = os.getenv("LEASELUA_CA_FILE")
      env.AZURE_STORAGE_SAS = false
      rc, out, err = helper.run({ SCRIPT, "--manifest", helper.manifest_file(d), "--evidence", dir,
        "--break-period", "1" }, env)
    end)

    it("records one identity for every actor, shared", function()
      assert.are.equal(0, rc, out .. err)
      local m = manifest_row(dir)
      assert.is_true(m.shared_identity)
      local f = m.identities.A.fingerprint
      assert.matches("^%x+$", f)
      assert.are.equal(16, #f)
      for _, a in ipairs { "B", "operator", "observer" } do
        assert.are.equal(f, m.identities[a].fingerprint)
        assert.are.equal("token-env:AZURE_STORAGE_TOKEN", m.identities[a].credential)
      end
    end)

    it("the report and verify --json say exactly that the evidence does not distinguish principals", function()
      local md = report(dir)
      assert.is_truthy(md:find(ONE, 1, true), md)
      local v = verdict(dir)
      assert.are.equal(ONE, v.identity)
      assert.is_true(v.shared_identity)
      local rc2, text = helper.run({ "verify", dir })
      assert.are.equal(0, rc2)
      assert.is_truthy(text:find("verify: identities: " .. ONE, 1, true), text)
    end)
  end)

  describe("the operator's per-actor options, before anything is sent", function()
    local d, token, manifest
    local env
    setup(function()
      d = helper.tmpdir()
      manifest = helper.manifest_file(d)
      token = d .. "/a.jwt"
      os.execute("umask 077 && " .. helper.quote(helper.host) .. " dev-token 3600 --actor A >" .. helper.quote(token))
      -- a port nothing listens on: a request would fail, and none is made
      env = { AZURE_STORAGE_ACCOUNT_URL = "https://127.0.0.1:9/devstoreaccount1", AZURE_STORAGE_TOKEN = false,
        AZURE_STORAGE_SAS = false, LEASELUA_CA_FILE = false }
    end)

    local function refused(args, want_code, pattern)
      local ev = helper.tmpdir() .. "/ev"
      local all = { SCRIPT, "--manifest", manifest, "--evidence", ev }
      for _, a in ipairs(args) do all[#all + 1] = a end
      local rc, out, err = helper.run(all, env)
      assert.are.equal(64, rc, out .. err)
      assert.are.equal(1, select(2, err:gsub("\n", "")), err)
      assert.matches(want_code, err)
      assert.matches(pattern, err)
      assert.is_nil(io.open(ev .. "/export/ledger.jsonl"), "evidence was written")
    end

    it("a credential for an actor the flow never uses is refused", function()
      local script = d .. "/only_a.lua"
      helper.write(script, 'local ll = require "leaselua"\n' ..
        'local run <close> = ll.open { name = "only-a", actors = { "A", "operator", "observer" } }\n')
      local ev = helper.tmpdir() .. "/ev"
      local e2 = {}
      for k, v in pairs(env) do e2[k] = v end
      e2.AZURE_STORAGE_TOKEN = helper.dev_token()
      local rc, out, err = helper.run({ script, "--manifest", manifest, "--evidence", ev, "--credential-b",
        "token-file:" .. token }, e2)
      assert.are.equal(64, rc, out .. err)
      assert.are.equal(1, select(2, err:gsub("\n", "")), err)
      assert.matches("%-%-credential%-b gives a credential for actor B, which this flow never uses", err)
      assert.is_nil(io.open(ev .. "/export/ledger.jsonl"))
    end)

    it("without a default, an actor with no credential is refused", function()
      refused({ "--credential-a", "token-file:" .. token }, "LL_E_AUTH", "actor B has no credential")
    end)

    it("a SPEC that is no credential source is refused", function()
      refused({ "--credential-a", "password:x" }, "LL_E_USAGE",
        "%-%-credential%-a: a credential is token%-env:VAR, token%-file:PATH")
    end)

    it("a token pasted where token-env: wants a variable name is refused, never echoed", function()
      local tok = helper.dev_token()
      for _, spec in ipairs({ "token-env:" .. tok, "sas-env:sv=2024-11-04&sig=c2lnbmF0dXJlU0lHU0lH" }) do
        local ev = helper.tmpdir() .. "/ev"
        local rc, out, err = helper.run({ SCRIPT, "--manifest", manifest, "--evidence", ev, "--credential-a", spec },
          env)
        assert.are.equal(64, rc, out .. err)
        assert.are.equal(1, select(2, err:gsub("\n", "")), err)
        assert.matches("LL_E_USAGE", err)
        assert.matches("%-%-credential%-a: %a+%-env takes the name of an environment variable", err)
        local value = spec:match(":(.*)$")
        assert.is_nil(err:find(value, 1, true), err)
        assert.is_nil(out:find(value, 1, true), out)
        assert.is_nil(err:find(value:sub(1, 20), 1, true), err)
        assert.is_nil(io.open(ev .. "/export/ledger.jsonl"), "evidence was written")
      end
    end)

    it("an actor's expired token fails the same lifetime preflight", function()
      local old = d .. "/old.jwt"
      helper.write(old, helper.jwt('{"exp":1000,"oid":"x","tid":"y"}') .. "\n")
      refused({ "--credential-a", "token-file:" .. token, "--credential-b", "token-file:" .. old,
        "--credential-operator", "token-file:" .. token }, "LL_E_AUTH", "actor B .*expired")
    end)
  end)

  it("a replayed bundle records no identities: unknown, never distinct", function()
    local ev = helper.tmpdir() .. "/replay"
    local rc, out, err = helper.run({ SCRIPT, "--replay", helper.root .. "/fixtures/emulator/main-handoff-accept.json",
      "--manifest", helper.manifest_file(helper.tmpdir()), "--evidence", ev },
      { AZURE_STORAGE_ACCOUNT_URL = false, AZURE_STORAGE_TOKEN = false, AZURE_STORAGE_SAS = false })
    assert.are.equal(0, rc, out .. err)
    assert.is_nil(manifest_row(ev).identities)
    local v = verdict(ev)
    assert.is_nil(v.shared_identity == true or nil)
    assert.matches("^identities not recorded", v.identity)
    assert.is_nil(v.identity:find(ONE, 1, true))
  end)
end)
