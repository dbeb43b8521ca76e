-- The fault proxy (tools/faultproxy/faultproxy.js) in front of the live
-- Azurite, and the host runs of the drills. Every process is started with
-- its PID captured and stopped by that PID, never by name.
local helper = require "helper"
local slow = require "support.slow"
local cjson = require "cjson"

local M = {}

M.js = helper.root .. "/tools/faultproxy/faultproxy.js"
M.container = "lease-handoff-lab"
local quote = helper.quote

-- Process helpers shared with the slow-server specs.
M.sleep, M.alive, M.wait_until, M.kill = slow.sleep, slow.alive, slow.wait_until, slow.kill


function M.have_live()
  return os.getenv("AZURE_STORAGE_ACCOUNT_URL") ~= nil and os.getenv("LEASELUA_CA_FILE") ~= nil
end

-- start(rules[, lifetime_ms[, idle_close_ms]]) -> proxy {pid, port, url, log, dir}: a proxy
-- in front of the live Azurite (AZURE_STORAGE_ACCOUNT_URL), serving the
-- emulator's own certificate, with the fault rules given (a list of rule
-- tables, see faultproxy.js).
function M.start(rules, lifetime_ms, idle_close_ms)
  local dir = helper.tmpdir()
  local ca = os.getenv("LEASELUA_CA_FILE")
  local key = ca:gsub("cert%.pem$", "key.pem")
  local p = { dir = dir, log = dir .. "/proxy.jsonl", script = dir .. "/rules.json" }
  helper.write(p.log, "")
  helper.write(p.script, cjson.encode { rules = #rules > 0 and rules or cjson.empty_array })
  local cmd = string.format("env -u NODE_EXTRA_CA_CERTS node %s --cert %s --key %s --upstream %s " ..
    "--upstream-ca %s --log %s --script %s --lifetime-ms %d", quote(M.js), quote(ca), quote(key),
    quote(os.getenv("AZURE_STORAGE_ACCOUNT_URL")), quote(ca), quote(p.log), quote(p.script), lifetime_ms or 120000) ..
    (idle_close_ms and (" --idle-close-ms " .. idle_close_ms) or "")
  p.pid, p.port = slow.start_listener(cmd, dir, "fault proxy")
  p.url = "https://127.0.0.1:" .. p.port .. "/devstoreaccount1"
  return p
end

function M.stop(p)
  if p then M.kill(p.pid, "TERM") end
end

-- The proxy's log lines, as tables; kind "request" or "result".
function M.log(p, kind)
  local out = {}
  for line in (helper.read(p.log) or ""):gmatch("[^\n]+") do
    local ok, row = pcall(cjson.decode, line)
    if ok and (not kind or row.kind == kind) then out[#out + 1] = row end
  end
  return out
end

function M.is_mutation(r)
  return r.method == "PUT" or r.method == "DELETE"
end

-- A key naming one mutation: the same key twice is the same request sent
-- twice (method, path, query, lease action, lease IDs sent, payload
-- revision).
function M.key(r)
  return table.concat({ r.method, r.path, r.query, tostring(r.lease_action), tostring(r.lease),
    tostring(r.proposed), tostring(r.revision) }, " ")
end

-- The environment of a host run through proxy p on blob.
function M.env(p, blob)
  return {
    AZURE_STORAGE_ACCOUNT_URL = p.url,
    AZURE_STORAGE_CONTAINER = M.container,
    AZURE_STORAGE_BLOB = blob,
    LEASELUA_CA_FILE = os.getenv("LEASELUA_CA_FILE"),
    AZURE_STORAGE_TOKEN = os.getenv("AZURE_STORAGE_TOKEN"),
    AZURE_STORAGE_SAS = false,
    LEASELUA_PAUSE_AFTER = false,
  }
end

-- The host in the foreground (exit code, stdout, stderr) or in the
-- background ({pid, out, err}), with env on top of slow.host_env().
function M.run_host(args, env)
  return slow.run_host(args, { env = env })
end

function M.spawn_host(args, env)
  return slow.spawn_host(args, { env = env })
end

-- Export (default) or protected rows of an evidence directory.
function M.rows(dir, which)
  return slow.decode_lines(dir .. "/" .. (which or "export") .. "/ledger.jsonl")
end

-- The name of the test that is running, for the records below.
local current_test
local ok_busted, busted = pcall(require, "busted")
if ok_busted and type(busted) == "table" and busted.subscribe then
  busted.subscribe({ "test", "start" }, function(element)
    current_test = element.name
    return nil, true
  end)
end

-- Appends one JSON line to $LEASELUA_DRILL_LOG (tools/faultproxy/drills.sh
-- turns them into the tables of docs/RELIABILITY.md); `case` defaults to
-- the running test's name.
function M.record(entry)
  local path = os.getenv("LEASELUA_DRILL_LOG")
  if not path or path == "" then return end
  entry.case = entry.case or current_test
  local f = assert(io.open(path, "a"))
  f:write(cjson.encode(entry), "\n")
  f:close()
end

return M
