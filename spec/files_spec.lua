-- Files outside the bundle (issue #12, items 6 and 7; #13): the evidence
-- directory is the run's own, input files are regular files under a
-- limit, the record file is new and written atomically, and a secret the
-- service echoes is replaced, never lost. Each case attacks one rule
-- through the shipped flows and checks that C refused it (exit 64, one
-- line naming the file), that nothing was written where it should not
-- be, and, for the echo, that the outcome row and the decision are there.
-- Offline: replays and loopback servers only, every command under
-- timeout(1) so that a hang fails instead of blocking the suite.
local helper = require "helper"
local rp = require "support.replay"
local fp = require "support.faultproxy"

local q = helper.quote
local ACCEPT = "emulator/main-handoff-accept"
local MAIN = "scripts/main_handoff.lua"

-- run(args, env) -> rc, out, err, like helper.run_env but killed after
-- 10 s (rc 124): a FIFO that blocks the host fails the case.
local function run(args, env)
  local d = helper.tmpdir()
  local e = {}
  for k, v in pairs(rp.OFFLINE) do e[k] = v end
  for k, v in pairs(env or {}) do e[k] = v end
  local cmd = { "timeout -s KILL 10", helper.env_prefix(e), q(helper.host) }
  for _, a in ipairs(args) do cmd[#cmd + 1] = q(a) end
  os.execute(table.concat(cmd, " ") .. " >" .. d .. "/out 2>" .. d .. "/err </dev/null; echo $? >" .. d .. "/rc")
  return tonumber(helper.read(d .. "/rc")), helper.read(d .. "/out") or "", helper.read(d .. "/err") or ""
end

local function replay(fixture, ev, extra, env)
  local args = { MAIN, "--replay", rp.fixture(fixture), "--evidence", ev, "--manifest", rp.manifest }
  for _, a in ipairs(extra or {}) do args[#args + 1] = a end
  return run(args, env)
end

local function sh(cmd)
  assert(os.execute(cmd), cmd)
end

-- The names in dir (hidden ones included), sorted; nil if dir is missing.
local function ls(dir)
  if not os.execute("test -d " .. q(dir)) then return nil end
  local p = io.popen("ls -A " .. q(dir))
  local names = {}
  for n in p:lines() do names[#names + 1] = n end
  p:close()
  table.sort(names)
  return names
end

local function exists(path)
  return os.execute("test -e " .. q(path) .. " -o -L " .. q(path)) == true
end

local function is_link(path)
  return os.execute("test -L " .. q(path)) == true
end

-- One line on stderr, naming what and saying what to do.
local function one_line(err, pattern)
  local lines = {}
  for l in err:gmatch("[^\n]+") do lines[#lines + 1] = l end
  assert.are.equal(1, #lines, err)
  assert.matches(pattern, lines[1])
end

-- A loopback target for runs that are not replays: a server that counts
-- requests (and answers 500), with a valid dev token.
local function live_env(srv, token)
  return {
    AZURE_STORAGE_ACCOUNT_URL = srv.url, AZURE_STORAGE_CONTAINER = "lease-handoff-lab",
    AZURE_STORAGE_BLOB = helper.unique_blob("files"), AZURE_STORAGE_TOKEN = token or false,
  }
end

describe("files outside the bundle", function()
  teardown(rp.cleanup)

  describe("the evidence directory is the run's own", function()
    it("a directory the run creates is private (0700), and the run reaches ACCEPT", function()
      local ev = rp.tmpdir() .. "/new/ev"
      local rc, out, err = replay(ACCEPT, ev)
      assert.are.equal(0, rc, out .. err)
      assert.are.equal("700", helper.mode(ev))
      assert.are.equal("700", helper.mode(ev .. "/protected"))
    end)

    it("an empty directory made beforehand, owned by the user, 0755 or 0700, is accepted", function()
      for _, mode in ipairs { "755", "700" } do
        local ev = rp.tmpdir() .. "/ev"
        sh("mkdir " .. q(ev) .. " && chmod " .. mode .. " " .. q(ev))
        local rc, out, err = replay(ACCEPT, ev)
        assert.are.equal(0, rc, mode .. ": " .. out .. err)
        assert.are.equal(mode, helper.mode(ev))
      end
    end)

    it("a directory writable by group or others is refused (exit 64) and nothing is written in it", function()
      for _, mode in ipairs { "777", "770", "1777", "702" } do
        local ev = rp.tmpdir() .. "/ev"
        sh("mkdir " .. q(ev) .. " && chmod " .. mode .. " " .. q(ev))
        local rc, out, err = replay(ACCEPT, ev)
        assert.are.equal(64, rc, mode .. ": " .. out .. err)
        one_line(err, "evidence directory .*/ev is writable by group or others %(mode " ..
          string.format("%04d", tonumber(mode)) .. "%).*new %-%-evidence")
        assert.are.same({}, ls(ev), mode)
        assert.are.equal(mode, helper.mode(ev))
      end
    end)

    it("a directory owned by another user is refused (exit 64) and nothing is written in it", function()
      local ev = rp.tmpdir() .. "/ev"
      sh("mkdir " .. q(ev) .. " && chmod 755 " .. q(ev) .. " && chown nobody " .. q(ev))
      local rc, out, err = replay(ACCEPT, ev)
      assert.are.equal(64, rc, out .. err)
      one_line(err, "evidence directory .*/ev is owned by uid 65534, not by this user %(uid 0%)")
      assert.are.same({}, ls(ev))
    end)

    it("a directory holding anything is refused (exit 64) and its file is left as it was", function()
      local ev = rp.tmpdir() .. "/ev"
      sh("mkdir " .. q(ev))
      helper.write(ev .. "/note.txt", "mine\n")
      local rc, out, err = replay(ACCEPT, ev)
      assert.are.equal(64, rc, out .. err)
      one_line(err, "already holds")
      assert.are.same({ "note.txt" }, ls(ev))
      assert.are.equal("mine\n", helper.read(ev .. "/note.txt"))
    end)

    it("a symlink planted where the run writes (manifest.json, protected) is never followed", function()
      for _, name in ipairs { "manifest.json", "protected", ".manifest.json.tmp" } do
        local d = rp.tmpdir()
        local ev, outside = d .. "/ev", d .. "/outside"
        sh("mkdir " .. q(ev) .. " " .. q(outside))
        helper.write(outside .. "/victim", "untouched\n")
        local target = name == "protected" and outside or outside .. "/victim"
        sh("ln -s " .. q(target) .. " " .. q(ev .. "/" .. name))
        local rc, out, err = replay(ACCEPT, ev)
        assert.are.equal(64, rc, name .. ": " .. out .. err)
        assert.are.equal("untouched\n", helper.read(outside .. "/victim"), name)
        assert.are.same({ "victim" }, ls(outside), name)
        assert.is_true(is_link(ev .. "/" .. name), name)
        assert.are.same({ name }, ls(ev), name)
      end
    end)

    it("links planted during the run, at decision.json or a temporary name, are replaced, never followed", function()
      local ll = require "leaselua"
      local d = rp.tmpdir()
      local ev, outside = d .. "/ev", d .. "/outside"
      sh("mkdir " .. q(outside))
      local r = ll.open {
        evidence = ev, manifest = helper.manifest_table,
        -- nothing listens there, and nothing is sent: the run only decides
        account_url = "http://127.0.0.1:9/devstoreaccount1", container = "lease-handoff-lab", blob = "files.json",
        auth = { kind = "command", token_command = helper.host .. " dev-token" }, -- no shell: no quotes
      }
      r:declare(0, "A")
      local names = { "decision.json", "decision.json.tmp", ".decision.json.tmp", "expected.json.tmp",
        ".expected.json.tmp" }
      for i, name in ipairs(names) do
        helper.write(outside .. "/victim" .. i, "untouched\n")
        sh("ln -s " .. q(outside .. "/victim" .. i) .. " " .. q(ev .. "/" .. name))
      end
      local decision = r:finish()
      r:close()
      assert.are.equal("HOLD", decision.decision)
      for i, name in ipairs(names) do
        assert.are.equal("untouched\n", helper.read(outside .. "/victim" .. i), name)
      end
      assert.are.same({ "victim1", "victim2", "victim3", "victim4", "victim5" }, ls(outside))
      for _, name in ipairs { "decision.json", "expected.json" } do
        assert.is_false(is_link(ev .. "/" .. name), name)
        assert.is_table(require("cjson").decode(helper.read(ev .. "/" .. name)), name)
      end
      assert.is_false(exists(ev .. "/.decision.json.tmp"))
    end)

    it("an evidence path that is itself a symlink is refused, and the directory it names stays empty", function()
      local d = rp.tmpdir()
      sh("mkdir " .. q(d .. "/real") .. " && ln -s real " .. q(d .. "/ev"))
      for _, path in ipairs { "/ev", "/ev/", "/ev//", "/ev/." } do
        local rc, out, err = replay(ACCEPT, d .. path)
        assert.are.equal(64, rc, path .. ": " .. out .. err)
        one_line(err, "evidence directory .*/ev.* the directory itself")
        assert.are.same({}, ls(d .. "/real"), path)
      end
    end)
  end)

  describe("recovery reopens only what a run made", function()
    local pristine

    setup(function()
      pristine = rp.tmpdir() .. "/pristine"
      local rc, out, err = replay("documented/rev5-lost", pristine)
      assert(rc == 2, "the interrupted run ends HOLD: " .. tostring(rc) .. out .. err)
    end)

    -- A copy of the interrupted run's evidence, attack(dir, outside)
    -- applied, then recovery: rc, out, err, dir, outside.
    local function recover(attack)
      local d = rp.tmpdir()
      local ev, outside = d .. "/ev", d .. "/outside"
      sh("cp -a " .. q(pristine) .. " " .. q(ev) .. " && mkdir " .. q(outside))
      helper.write(outside .. "/victim", "untouched\n")
      if attack then attack(ev, outside) end
      local rc, out, err = run({ "scripts/recovery.lua", "--recover", "--replay",
        rp.fixture("documented/rev5-lost.recovery-committed"), "--evidence", ev })
      return rc, out, err, ev, outside
    end

    it("untouched, the interrupted run recovers to ACCEPT (the cases below differ only by the attack)", function()
      local rc, out, err, ev = recover(nil)
      assert.are.equal(0, rc, out .. err)
      assert.are.equal("ACCEPT", rp.decision(ev).decision)
      assert.is_false(is_link(ev .. "/decision.json"))
    end)

    it("a symlink planted at decision.json or expected.json is refused (exit 64), its target untouched", function()
      for _, name in ipairs { "decision.json", "expected.json" } do
        local rc, out, err, ev, outside = recover(function(ev, outside)
          sh("rm " .. q(ev .. "/" .. name) .. " && ln -s " .. q(outside .. "/victim") .. " " .. q(ev .. "/" .. name))
        end)
        assert.are.equal(64, rc, name .. ": " .. out .. err)
        assert.matches(name .. " is a symbolic link", err)
        assert.are.equal("untouched\n", helper.read(outside .. "/victim"), name)
        assert.is_true(is_link(ev .. "/" .. name))
      end
    end)

    it("a ledger file or folder replaced by a symlink is refused (exit 64) and nothing is appended", function()
      for _, name in ipairs { "protected/ledger.jsonl", "export/ledger.jsonl", "export", "protected" } do
        local rc, out, err, _, outside = recover(function(ev, outside)
          sh("mv " .. q(ev .. "/" .. name) .. " " .. q(outside .. "/moved") .. " && ln -s " ..
            q(outside .. "/moved") .. " " .. q(ev .. "/" .. name))
        end)
        assert.are.equal(64, rc, name .. ": " .. out .. err)
        assert.matches("is a symbolic link", err)
        local file = name:find("ledger") and outside .. "/moved" or outside .. "/moved/ledger.jsonl"
        assert.are.equal(helper.read(pristine .. "/" .. (name:find("ledger") and name or name .. "/ledger.jsonl")),
          helper.read(file), name)
      end
    end)

    it("a directory that became writable by others, or another user's, is refused (exit 64)", function()
      local cases = {
        { "chmod 777", "", "evidence directory .*/ev is writable by group or others" },
        { "chown nobody", "", "evidence directory .*/ev is owned by uid 65534" },
        { "chmod 777", "/protected", "/protected is writable by group or others" },
        { "chmod 757", "/export", "/export is writable by group or others" },
        { "chown nobody", "/protected/ledger.jsonl", "ledger%.jsonl is owned by uid 65534" },
      }
      for _, c in ipairs(cases) do
        local how = c[1] .. " " .. c[2]
        local rc, out, err, ev = recover(function(ev)
          sh(c[1] .. " " .. q(ev .. c[2]))
        end)
        assert.are.equal(64, rc, how .. ": " .. out .. err)
        one_line(err, c[3])
        local ledger = "/protected/ledger.jsonl"
        assert.are.equal(helper.read(pristine .. ledger), helper.read(ev .. ledger), how)
      end
    end)
  end)

  describe("input files are regular files under a stated limit", function()
    local fifo

    setup(function()
      fifo = rp.tmpdir() .. "/fifo"
      sh("mkfifo " .. q(fifo))
    end)

    it("a FIFO as --manifest is refused at once (exit 64), no evidence made", function()
      local ev = rp.tmpdir() .. "/ev"
      local rc, out, err = run { MAIN, "--replay", rp.fixture(ACCEPT), "--evidence", ev, "--manifest", fifo }
      assert.are.equal(64, rc, out .. err)
      one_line(err, "manifest .*/fifo is a FIFO, not a regular file: .*%-%-manifest")
      assert.is_false(exists(ev))
    end)

    it("a FIFO as --replay is refused at once (exit 64), no evidence made", function()
      local ev = rp.tmpdir() .. "/ev"
      local rc, out, err = run { MAIN, "--replay", fifo, "--evidence", ev, "--manifest", rp.manifest }
      assert.are.equal(64, rc, out .. err)
      one_line(err, "fixture .*/fifo is a FIFO, not a regular file: .*%-%-replay")
      assert.is_false(exists(ev))
    end)

    it("a FIFO as --token-file or as --ca-file is refused at once (exit 64), nothing sent", function()
      local srv = helper.count_server(15)
      local token = helper.dev_token()
      local cases = {
        { { "--token-file", fifo }, false, "token file .*/fifo is a FIFO, not a regular file" },
        { { "--ca-file", fifo }, token, "CA file .*/fifo is a FIFO, not a regular file: .*%-%-ca%-file" },
      }
      local ok, e = pcall(function()
        for _, c in ipairs(cases) do
          local ev = rp.tmpdir() .. "/ev"
          local args = { MAIN, "--evidence", ev, "--manifest", rp.manifest }
          for _, a in ipairs(c[1]) do args[#args + 1] = a end
          local rc, out, err = run(args, live_env(srv, c[2]))
          assert.are.equal(64, rc, c[1][1] .. ": " .. out .. err)
          one_line(err, c[3])
          assert.is_false(exists(ev), c[1][1])
        end
        assert.are.equal(0, srv.count(), "requests the server received")
        assert.are.equal(0, srv.connections(), "connections the server accepted")
      end)
      srv.stop()
      assert(ok, e)
    end)

    it("a directory or a device as --manifest, --replay or --ca-file is refused (exit 64)", function()
      local d = rp.tmpdir()
      local cases = {
        { "--manifest", d, "manifest .* is a directory, not a regular file" },
        { "--manifest", "/dev/null", "manifest /dev/null is a character device, not a regular file" },
        { "--replay", d, "fixture .* is a directory, not a regular file" },
        { "--replay", "/dev/zero", "fixture /dev/zero is a character device, not a regular file" },
      }
      for _, c in ipairs(cases) do
        local args = { MAIN, "--evidence", d .. "/ev", "--manifest", rp.manifest, "--replay", rp.fixture(ACCEPT) }
        for i = 1, #args do
          if args[i] == c[1] then args[i + 1] = c[2] end
        end
        local rc, out, err = run(args)
        assert.are.equal(64, rc, c[1] .. " " .. c[2] .. ": " .. out .. err)
        one_line(err, c[3])
        assert.is_false(exists(d .. "/ev"))
      end
    end)

    it("a manifest over 64 KiB is refused naming the limit (it was cut silently)", function()
      local d = rp.tmpdir()
      local m = helper.write(d .. "/big.json", '{"resource_owner":"storage-team","ticket":"' ..
        string.rep("x", 70 * 1024) .. '","permitted_actors":["A","B","operator","observer"],' ..
        '"cleanup_authority":"storage-team"}')
      local rc, out, err = run { MAIN, "--replay", rp.fixture(ACCEPT), "--evidence", d .. "/ev", "--manifest", m }
      assert.are.equal(64, rc, out .. err)
      one_line(err, "manifest .*/big%.json is larger than the 64 KiB limit %(71[0-9]+ bytes%)")
      assert.is_false(exists(d .. "/ev"))
    end)

    it("a fixture over 64 MiB is refused naming the limit, before it is read", function()
      local d = rp.tmpdir()
      sh("truncate -s 65M " .. q(d .. "/huge.json"))
      local rc, out, err = run { MAIN, "--replay", d .. "/huge.json", "--evidence", d .. "/ev", "--manifest",
        rp.manifest }
      assert.are.equal(64, rc, out .. err)
      one_line(err, "fixture .*/huge%.json is larger than the 64 MiB limit")
    end)

    it("a symlink as an input file is refused, naming what to pass instead", function()
      local d = rp.tmpdir()
      sh("ln -s " .. q(rp.manifest) .. " " .. q(d .. "/m.json"))
      local rc, out, err = run { MAIN, "--replay", rp.fixture(ACCEPT), "--evidence", d .. "/ev", "--manifest",
        d .. "/m.json" }
      assert.are.equal(64, rc, out .. err)
      one_line(err, "manifest .*/m%.json is a symbolic link: pass the file it names")
    end)
  end)

  describe("the record file", function()
    local token
    setup(function() token = helper.dev_token() end)

    it("an existing --record file is refused (exit 64) before anything is sent, and left byte for byte", function()
      local srv = helper.count_server(15)
      local ok, e = pcall(function()
        for _, kind in ipairs { "file", "symlink", "dangling symlink" } do
          local d = rp.tmpdir()
          local rec, victim = d .. "/rec.json", d .. "/victim.json"
          helper.write(victim, "an export ledger, say\n")
          if kind == "file" then
            helper.write(rec, "an export ledger, say\n")
          elseif kind == "symlink" then
            sh("ln -s victim.json " .. q(rec))
          else
            sh("ln -s nowhere.json " .. q(rec))
          end
          local rc, out, err = run({ MAIN, "--evidence", d .. "/ev", "--manifest", rp.manifest, "--record", rec },
            live_env(srv, token))
          assert.are.equal(64, rc, kind .. ": " .. out .. err)
          one_line(err, "record file .*/rec%.json already exists: .*%-%-record")
          assert.are.equal("an export ledger, say\n", helper.read(victim), kind)
          assert.are.same({ "rec.json", "victim.json" }, ls(d), kind)
          assert.is_false(exists(d .. "/nowhere.json"), kind)
          assert.is_false(exists(d .. "/ev"), kind)
        end
        assert.are.equal(0, srv.count(), "requests the server received")
      end)
      srv.stop()
      assert(ok, e)
    end)
  end)
end)

describe("a service that echoes the credential", function()
  teardown(rp.cleanup)

  local JS = helper.root .. "/spec/support/echo_server.js"
  local token, dir, rc, out, err, requests

  setup(function()
    token = helper.dev_token()
    dir = rp.tmpdir()
    local file = dir .. "/count"
    local p = assert(io.popen(string.format("exec node %s %s 20", q(JS), q(file)), "r"))
    local port, pid = tonumber(p:read("l")), tonumber(p:read("l"))
    assert(port and pid, "echo_server did not start")
    local ok, e = pcall(function()
      rc, out, err = run({ MAIN, "--evidence", dir .. "/ev", "--manifest", rp.manifest, "--record",
        dir .. "/rec.json" }, {
        AZURE_STORAGE_ACCOUNT_URL = string.format("http://127.0.0.1:%d/devstoreaccount1", port),
        AZURE_STORAGE_CONTAINER = "lease-handoff-lab", AZURE_STORAGE_BLOB = helper.unique_blob("echo"),
        AZURE_STORAGE_TOKEN = token,
      })
      requests = tonumber(helper.read(file))
    end)
    fp.kill(pid, "TERM")
    p:close()
    assert(ok, e)
  end)

  it("the run goes on to its decision (HOLD), not to an internal error", function()
    assert.are.equal(2, rc, out .. err)
    assert.matches("DECISION: HOLD", out)
    assert.are.equal("HOLD", rp.decision(dir .. "/ev").decision)
    assert.is_true(requests >= 1)
  end)

  it("every request that was sent has its outcome row, with a note naming the echo", function()
    local rows = helper.rows(dir .. "/ev")
    local intents, outcomes = 0, helper.outcomes(rows)
    for _, r in ipairs(rows) do
      if r.record == "intent" then intents = intents + 1 end
    end
    assert.are.equal(requests, intents)
    assert.are.equal(requests, #outcomes)
    for _, o in ipairs(outcomes) do
      assert.are.equal(403, o.http_status)
      assert.are.equal("AuthenticationFailed", o.azure_error_code)
      assert.matches("^the service echoed a secret in response header .*; replaced by {{secret:token}}$", o.notes)
      for _, part in ipairs { "response header x-ms-request-id", "response header server", "response body" } do
        assert.truthy(o.notes:find(part, 1, true), part .. " in " .. o.notes)
      end
      assert.matches("Token was: {{secret:token}}", o.error_message)
      assert.are.equal("{{secret:token}}", o.x_ms_request_id)
    end
  end)

  it("the fixture holds the placeholder, never the token", function()
    local text = assert(helper.read(dir .. "/rec.json"))
    local f = require("cjson").decode(text)
    assert.are.equal(requests, #f.exchanges)
    local x = f.exchanges[1].response
    assert.are.equal("echo/{{secret:token}}", x.headers.server)
    assert.are.equal("{{secret:token}}", x.headers["x-ms-request-id"])
    assert.matches("Token was: {{secret:token}}", x.body)
    assert.is_nil(text:find(token, 1, true))
  end)

  it("no file of the bundle, the fixture, stdout or stderr holds the token", function()
    local p = io.popen("find " .. q(dir) .. " -type f")
    local n = 0
    for f in p:lines() do
      n = n + 1
      local text = helper.read(f) or ""
      assert.is_nil(text:find(token, 1, true), f)
      -- not even a prefix: a field cut to size must not keep one
      assert.is_nil(text:find(token:sub(1, 40), 1, true), f .. " holds a prefix of the token")
    end
    p:close()
    assert.is_true(n >= 6)
    assert.is_nil(out:find(token, 1, true))
    assert.is_nil(err:find(token, 1, true))
    rp.assert_verifies(dir .. "/ev")
  end)
end)
