-- Replaying fixtures as the offline specs do: the host with --replay, no
-- endpoint, no credential, no network; then the evidence rows, one line
-- each, to compare with what the spec expects row by row.
local helper = require "helper"

local M = {}

M.manifest = helper.root .. "/tools/emulator/manifest.json"

-- Nothing of a live endpoint reaches a replay (run-specs.sh exports one).
M.OFFLINE = {
  AZURE_STORAGE_ACCOUNT_URL = false, AZURE_STORAGE_TOKEN = false, AZURE_STORAGE_SAS = false,
  AZURE_STORAGE_CONTAINER = false, AZURE_STORAGE_BLOB = false, LEASELUA_CA_FILE = false,
  LEASELUA_PAUSE_AFTER = false, LEASELUA_EVIDENCE_ROOT = false,
}

-- Evidence of replays lives on /dev/shm when there is one: every row is
-- fsync'd, and on a busy disk fsync, not the replay, would set the pace
-- of the offline suite. Removed by M.cleanup().
local remove_replays
M.tmpdir, remove_replays = helper.tmp_space(function()
  return os.execute("test -d /dev/shm -a -w /dev/shm") and "/dev/shm" or "/tmp"
end, "leaselua-replay")

function M.cleanup()
  remove_replays()
  helper.cleanup()
end

-- A fixture's path: a name relative to fixtures/ without .json, or an
-- absolute path, returned as it is.
function M.fixture(name)
  if name:sub(1, 1) == "/" then return name end
  return helper.root .. "/fixtures/" .. name .. ".json"
end

-- replay(script, fixture, evidence[, args[, env[, script_path]]]) -> exit
-- code, stdout, stderr. fixture is relative to fixtures/, without .json.
function M.replay(script, fixture, evidence, args, env, script_path)
  local argv = { script_path or ("scripts/" .. script .. ".lua"), "--replay", M.fixture(fixture),
    "--evidence", evidence }
  if script ~= "recovery" then
    argv[#argv + 1] = "--manifest"
    argv[#argv + 1] = M.manifest
  else
    argv[#argv + 1] = "--recover"
  end
  for _, a in ipairs(args or {}) do argv[#argv + 1] = a end
  local e = {}
  for k, v in pairs(M.OFFLINE) do e[k] = v end
  for k, v in pairs(env or {}) do e[k] = v end
  return helper.run_env(argv, e)
end

local function int(v)
  return v ~= nil and v ~= require("cjson").null and tostring(math.tointeger(v) or v) or nil
end

-- One line for a row that carries evidence; nil for the others.
function M.line(r)
  if r.record == "outcome" then
    local parts = { r.operation }
    if r.payload_revision and int(r.payload_revision) then parts[#parts + 1] = "rev " .. int(r.payload_revision) end
    parts[#parts + 1] = int(r.http_status) or r.outcome
    if type(r.azure_error_code) == "string" then parts[#parts + 1] = r.azure_error_code end
    if r.operation == "Get Blob" and r.http_status == 200 then
      parts[#parts + 1] = "content " .. (int(r.content_revision) or "undeclared")
    end
    if type(r.observed_lease_state) == "string" then
      parts[#parts + 1] = r.observed_lease_state .. "/" .. tostring(r.observed_lease_status)
    end
    parts[#parts + 1] = r.result_classification
    return r.step .. ": " .. table.concat(parts, " ")
  elseif r.record == "finding" then
    return "finding " .. r.kind .. " " .. r.result
  elseif r.record == "reconcile" then
    return "reconcile " .. r.result .. " (content " .. int(r.content_revision) .. ")"
  elseif r.record == "refusal" then
    return "refusal " .. r.code .. " " .. r.operation
  elseif r.record == "lifecycle" then
    return "lifecycle " .. int(r.fixture_epoch) .. (r.destructive and " destructive" or "")
  elseif r.record == "note" then
    return "note " .. r.step
  elseif r.record == "stop" then
    return "stop " .. r.step .. " " .. r.kind
  elseif r.record == "recovery" then
    return "recovery, open intents " .. int(r.open_intents)
  elseif r.record == "decision" then
    return "decision " .. r.decision .. ", window " .. r.window_finding
  end
  return nil
end

-- The lines of dir's export, a run of equal lines (the poller's reads of
-- one state) written once: their count depends on the recording's timing.
function M.trace(dir)
  local out = {}
  for _, r in ipairs(helper.rows(dir)) do
    local l = M.line(r)
    if l and l ~= out[#out] then out[#out + 1] = l end
  end
  return out
end

-- The last decision row of dir.
function M.decision(dir)
  local d
  for _, r in ipairs(helper.rows(dir)) do
    if r.record == "decision" then d = r end
  end
  return d
end

-- Asserts the trace of dir equals want, line by line, naming the first
-- difference (busted's table diff of 60 lines is hard to read).
function M.assert_trace(dir, want)
  local got = M.trace(dir)
  for i = 1, math.max(#got, #want) do
    if got[i] ~= want[i] then
      error(string.format("row %d of the trace differs:\n  want: %s\n  got:  %s\nwhole trace:\n  %s", i,
        tostring(want[i]), tostring(got[i]), table.concat(got, "\n  ")), 2)
    end
  end
end

-- `leaselua verify DIR` passes.
function M.assert_verifies(dir)
  local rc, out, err = helper.run({ "verify", dir })
  assert(rc == 0, "verify failed (" .. tostring(rc) .. "): " .. out .. err)
  assert(out:find("consistent", 1, true), out)
end

-- Concatenates lists of lines (shared parts of the expected traces).
function M.cat(...)
  local out = {}
  for _, list in ipairs { ... } do
    for _, l in ipairs(list) do out[#out + 1] = l end
  end
  return out
end

-- A main run that several recovery cases start from is replayed once; the
-- later cases start from a copy of its evidence (recovery only appends).
local pristine = {}
function M.replay_once(shared, script, fixture, dir, args)
  local key = script .. " " .. fixture .. " " .. table.concat(args or {}, " ")
  local have = shared and pristine[key]
  if have then
    os.execute(string.format("cp -a %s %s", helper.quote(have.dir), helper.quote(dir)))
    return have.run
  end
  local rc, out, err = M.replay(script, fixture, dir, args)
  local run = { rc = rc, out = out, err = err }
  if shared then
    local copy = M.tmpdir() .. "/pristine"
    os.execute(string.format("cp -a %s %s", helper.quote(dir), helper.quote(copy)))
    pristine[key] = { dir = copy, run = run }
  end
  return run
end

-- Declares one fixture's spec with busted's functions (api: describe, it,
-- setup; modules do not see busted's globals). c: title, phases (a list
-- of {script, fixture, args, dir = name}, replayed in order; phases with
-- the same dir name (default "ev") share one evidence directory, and args
-- may be a function(dirs) -> args), exits (one per phase), then, for the
-- last phase's directory: trace (the whole expected trace), decision,
-- window, reasons (substrings, each found in some reason), and optional
-- checks {title = function(dir, rows, runs, dirs)}.
function M.case(api, c)
  api.describe(c.title, function()
    local dir, runs, dirs = nil, {}, {}
    api.setup(function()
      for i, p in ipairs(c.phases) do
        local name = p.dir or "ev"
        dirs[name] = dirs[name] or (M.tmpdir() .. "/" .. name)
        dir = dirs[name]
        local args = type(p[3]) == "function" and p[3](dirs) or p[3]
        runs[#runs + 1] = M.replay_once(i == 1 and #c.phases > 1, p[1], p[2], dir, args)
      end
    end)
    api.it("replays offline, each phase ending with its exit code", function()
      for i, want in ipairs(c.exits) do
        local r = runs[i]
        if r.rc ~= want then
          error(string.format("phase %d (%s) exit %s, want %d\n%s%s", i, c.phases[i][2], tostring(r.rc), want,
            r.out, r.err), 0)
        end
      end
    end)
    api.it("records the expected classes, row by row", function()
      M.assert_trace(dir, c.trace)
    end)
    api.it("decides " .. c.decision .. ", window " .. c.window, function()
      local d = M.decision(dir)
      if not d then error("no decision row", 0) end
      if d.decision ~= c.decision or d.window_finding ~= c.window or d.endpoint_kind ~= "replay" then
        error(string.format("decision %s, window %s, kind %s", d.decision, d.window_finding, d.endpoint_kind), 0)
      end
      local reasons = table.concat(d.reasons or {}, "\n")
      if #(c.reasons or {}) == 0 and #(d.reasons or {}) > 0 then error("unexpected reasons:\n" .. reasons, 0) end
      for _, want in ipairs(c.reasons or {}) do
        if not reasons:find(want, 1, true) then
          error("no reason contains '" .. want .. "'; reasons:\n" .. reasons, 0)
        end
      end
      if not runs[#runs].out:find("DECISION: " .. c.decision .. " (endpoint kind: replay)", 1, true) then
        error("the printed decision differs:\n" .. runs[#runs].out, 0)
      end
    end)
    api.it("verifies from the export alone", function()
      M.assert_verifies(dir)
    end)
    for title, fn in pairs(c.checks or {}) do
      api.it(title, function() fn(dir, helper.rows(dir), runs, dirs) end)
    end
  end)
end

-- Outcome rows of dir whose step starts with prefix.
function M.rows_of_step(dir, prefix)
  local out = {}
  for _, r in ipairs(helper.rows(dir)) do
    if r.record == "outcome" and r.step:sub(1, #prefix) == prefix then out[#out + 1] = r end
  end
  return out
end

return M
