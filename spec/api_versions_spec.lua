-- --api-version a,b,c on the live Azurite: one run per version, each its
-- own fresh lifecycle and bundle under one parent with index.json, and
-- `leaselua compare` telling the requested versions apart while Azurite
-- returns one version whatever is asked.
local helper = require "helper"
local cjson = require "cjson"

local VERSIONS = { "2021-12-02", "2023-11-03" }

local function exists(path)
  return os.execute("test -e " .. helper.quote(path)) == true
end

local function env_for(blob)
  local env = helper.live_env(blob)
  env.LEASELUA_EVIDENCE_ROOT = false
  return env
end

describe("--api-version list #live", function()
  local parent, rc, out, err, index
  local manifest

  setup(function()
    manifest = helper.manifest_file(helper.tmpdir())
    parent = helper.tmpdir() .. "/matrix"
    -- the container made first, so that both versions' runs find it there
    -- (a fresh Azurite's first run creates it: 201 and ContainerNotFound
    -- where the second sees 409 and BlobNotFound, a true difference that
    -- is not the one under test)
    local wrc, _, werr = helper.run({ "handoff", "--manifest", manifest, "--evidence", helper.tmpdir() .. "/warm",
      "--break-period", "1" }, env_for(helper.unique_blob("versions-warm")))
    assert(wrc == 0, "the warm-up run exited " .. tostring(wrc) .. ": " .. werr)
    rc, out, err = helper.run({ "handoff", "--manifest", manifest, "--evidence", parent,
      "--api-version", table.concat(VERSIONS, ","), "--break-period", "1" }, env_for(helper.unique_blob("versions")))
    index = cjson.decode(helper.read(parent .. "/index.json") or "null")
  end)

  teardown(helper.cleanup)

  it("runs the handoff once per version and exits as the worst of them (all ACCEPT: 0)", function()
    assert.are.equal(0, rc, err)
    for i, v in ipairs(VERSIONS) do
      assert.matches("api%-version " .. (v:gsub("%-", "%%-")) .. " %(" .. i .. " of 2%)", err)
    end
    assert.matches("2 API versions, index .*index%.json %(exit 0, the worst of the runs%)", err)
    assert.are.equal(2, helper.count(out, "DECISION: ACCEPT"), out)
  end)

  it("writes index.json by the contract, one run per version in the order given", function()
    assert.is_table(index)
    assert.are.equal("leaselua-index-v1", index.format)
    assert.are.equal("main-handoff", index.flow)
    assert.matches("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ$", index.created_utc)
    assert.are.equal(#VERSIONS, #index.runs)
    assert.are.equal(0, #index.not_run)
    for i, v in ipairs(VERSIONS) do
      local r = index.runs[i]
      assert.are.same({ api_version = v, dir = v, bundle = true, decision = "ACCEPT", exit = 0 }, r)
    end
  end)

  it("gives each version its own bundle, requesting only that version, each verified consistent", function()
    local returned = {}
    local runs = {}
    for _, v in ipairs(VERSIONS) do
      local dir = parent .. "/" .. v
      assert.is_true(exists(dir .. "/protected/ledger.jsonl"), dir)
      local vrc, vout = helper.run({ "verify", dir }, {})
      assert.are.equal(0, vrc, vout)
      local rows = helper.rows(dir)
      assert.are.equal(v, rows[1].api_version, "the manifest row names the version")
      local n = 0
      for _, o in ipairs(helper.outcomes(rows)) do
        if o.requested_api_version ~= nil then
          n = n + 1
          assert.are.equal(v, o.requested_api_version)
          if o.returned_api_version ~= cjson.null then returned[o.returned_api_version] = true end
        end
      end
      assert.is_true(n > 5, "outcome rows with a requested version: " .. n)
      for _, r in ipairs(rows) do
        if r.record == "manifest" then runs[#runs + 1] = r.run_id end
      end
    end
    -- Azurite answers one version whatever is asked: the same in both
    local seen = {}
    for k in pairs(returned) do seen[#seen + 1] = k end
    assert.are.equal(1, #seen, "returned versions: " .. table.concat(seen, ", "))
    -- two runs, not one run split in two
    assert.are.equal(2, #runs)
  end)

  it("leaselua compare reports the requested-version difference and the same returned version", function()
    local a, b = parent .. "/" .. VERSIONS[1], parent .. "/" .. VERSIONS[2]
    local crc, cout, cerr = helper.run({ "compare", "--json", a, b }, {})
    assert.are.equal(0, crc, "compare: no behavioural difference; " .. cerr)
    local c = cjson.decode(cout:match("[^\n]+"))
    assert.are.equal("leaselua-compare-v1", c.format)
    assert.is_false(c.endpoint_kind_differs)
    -- the version asked for differs, said once for the bundle ...
    assert.are.same({ { field = "API version requested", a = VERSIONS[1], b = VERSIONS[2] } }, c.bundle)
    assert.are.equal(VERSIONS[1], c.a.api_version)
    assert.are.equal(VERSIONS[2], c.b.api_version)
    -- ... and no step changed: the returned x-ms-version, compared at every
    -- step, is the same, since Azurite answers one version whatever is asked
    assert.is_true(c.both > 10, "steps in both: " .. tostring(c.both))
    assert.are.same({}, c.changed)
    assert.are.equal(c.both, c.same)
    assert.are.same({}, c.only_a)
    assert.are.same({}, c.only_b)
    assert.are.equal(1, #c.a.returned_versions, cjson.encode(c.a.returned_versions))
    assert.are.same(c.a.returned_versions, c.b.returned_versions)
    assert.are_not.equal(VERSIONS[1], c.a.returned_versions[1])
    -- and the text form says both
    local trc, tout = helper.run({ "compare", a, b }, {})
    assert.are.equal(0, trc)
    local ret = tostring(c.a.returned_versions[1])
    assert.matches("API " .. VERSIONS[1] .. " (returned " .. ret .. ")", tout, 1, true)
    assert.matches("API " .. VERSIONS[2] .. " (returned " .. ret .. ")", tout, 1, true)
    assert.matches("API version requested +" .. (VERSIONS[1]:gsub("%-", "%%-")) .. " %-> " ..
      (VERSIONS[2]:gsub("%-", "%%-")), tout)
    local both = string.format("%d", c.both)
    assert.matches(both .. " steps in both: 0 changed, " .. both .. " the same", tout, 1, true)
  end)

  it("compare and qualify take the parent for its runs (index.json)", function()
    local qrc, qout, qerr = helper.run({ "qualify", "--json", parent }, {})
    assert.are.equal(1, qrc, "emulator bundles only: nothing can qualify; " .. qerr)
    local q = cjson.decode(qout)
    assert.are.equal(2, q.bundles, "the index stands for its two runs")
    assert.are.same({}, q.qualifying, "emulator rows never sit in the qualifying section")
    assert.are.equal(2, #q.non_qualifying, "one row per API version")
    local seen = {}
    for _, r in ipairs(q.non_qualifying) do
      assert.are.equal("emulator", r.endpoint_kind)
      seen[#seen + 1] = r.api_version
    end
    table.sort(seen)
    assert.are.same(VERSIONS, seen)
  end)

  it("refuses a parent directory that already holds files, before any request", function()
    local crc, _, cerr = helper.run({ "handoff", "--manifest", manifest, "--evidence", parent,
      "--api-version", table.concat(VERSIONS, ",") }, env_for(helper.unique_blob("versions-again")))
    assert.are.equal(64, crc)
    assert.matches("LL_E_EVIDENCE_EXISTS: .* already holds files", cerr)
  end)

  -- kill_paused(args, env, log) -> runs the host in the background with
  -- LEASELUA_PAUSE_AFTER=3, waits for its pause line, SIGKILLs it by PID
  local function kill_paused(args, env, log)
    local cmd = { helper.env_prefix(env), "LEASELUA_PAUSE_AFTER=3", helper.quote(helper.host) }
    for _, a in ipairs(args) do cmd[#cmd + 1] = helper.quote(a) end
    local p = io.popen(table.concat(cmd, " ") .. " >" .. helper.quote(log) .. " 2>&1 & echo $!")
    local pid = p:read("l")
    p:close()
    for _ = 1, 300 do
      if (helper.read(log) or ""):find("pausing", 1, true) then break end
      os.execute("sleep 0.1")
    end
    assert((helper.read(log) or ""):find("pausing", 1, true), "the host never paused: " .. (helper.read(log) or ""))
    os.execute("kill -9 " .. pid)
    os.execute("sleep 0.2")
  end

  it("a series killed mid-run names its bundle, and a later run on the blob beside it is refused", function()
    local root = helper.tmpdir()
    local env = env_for(helper.unique_blob("versions-killed"))
    kill_paused({ "handoff", "--manifest", manifest, "--evidence", root .. "/series",
      "--api-version", table.concat(VERSIONS, ","), "--break-period", "1" }, env, root .. "/killed.log")
    local ix = cjson.decode(helper.read(root .. "/series/index.json"))
    assert.are.equal(1, #ix.runs)
    assert.are.equal(VERSIONS[1], ix.runs[1].api_version)
    assert.are.equal(cjson.null, ix.runs[1].exit, "started, never ended")
    assert.are.equal(cjson.null, ix.runs[1].decision)
    local krc, _, kerr = helper.run({ "handoff", "--manifest", manifest, "--evidence", root .. "/next",
      "--break-period", "1" }, env)
    assert.are.equal(64, krc, kerr)
    assert.matches("LL_E_SCOPE: .*" .. (root:gsub("%p", "%%%0")) .. "/series/" .. (VERSIONS[1]:gsub("%-", "%%-")) ..
      ", ended without a decision", kerr)
  end)

  it("a list beside an interrupted run on the same blob is refused before any bundle is made", function()
    local root = helper.tmpdir()
    local env = env_for(helper.unique_blob("versions-beside"))
    kill_paused({ "handoff", "--manifest", manifest, "--evidence", root .. "/single", "--break-period", "1" },
      env, root .. "/killed.log")
    local krc, _, kerr = helper.run({ "handoff", "--manifest", manifest, "--evidence", root .. "/series",
      "--api-version", table.concat(VERSIONS, ","), "--break-period", "1" }, env)
    assert.are.equal(64, krc, kerr)
    assert.matches("LL_E_SCOPE: .*/single, ended without a decision", kerr)
    assert.is_false(exists(root .. "/series"))
  end)

  it("ends the series at a run that does not ACCEPT, and lists the rest as not run", function()
    -- --stop-after 2 leaves A's lease held: a HOLD (or WAIT), never ACCEPT,
    -- so the next version must not start a lifecycle on that blob
    local p = helper.tmpdir() .. "/stopped"
    local blob = helper.unique_blob("versions-stop")
    local src, sout, serr = helper.run({ "handoff", "--manifest", manifest, "--evidence", p,
      "--api-version", "2023-11-03,2021-12-02", "--break-period", "1", "--stop-after", "2" }, env_for(blob))
    assert.is_true(src ~= 0, sout .. serr)
    local ix = cjson.decode(helper.read(p .. "/index.json"))
    assert.are.equal(1, #ix.runs)
    assert.are.equal("2023-11-03", ix.runs[1].api_version)
    assert.are.equal(src, ix.runs[1].exit, "the worst of one run is that run's")
    assert.are_not.equal("ACCEPT", ix.runs[1].decision)
    assert.are.equal(1, #ix.not_run)
    assert.are.equal("2021-12-02", ix.not_run[1].api_version)
    assert.matches("did not ACCEPT", ix.not_run[1].reason)
    assert.is_false(exists(p .. "/2021-12-02"))
  end)
end)
