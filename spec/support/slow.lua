-- The slow fake Blob server (spec/support/slow_server.js) and background
-- host processes for the specs. Every process is started with its PID
-- captured and is stopped by that PID, never by name.
local helper = require "helper"

local M = {}

M.server_js = helper.root .. "/spec/support/slow_server.js"
M.container = "lease-handoff-lab"

local quote = helper.quote

function M.sleep(seconds)
  os.execute(string.format("sleep %.3f", seconds))
end

-- Whether pid is a live process (a zombie counts as dead).
function M.alive(pid)
  local stat = helper.read("/proc/" .. tostring(pid) .. "/stat")
  if not stat then return false end
  local state = stat:match("^%d+ %b() (%a)")
  return state ~= nil and state ~= "Z" and state ~= "X"
end

-- Polls pred() every 50 ms for up to timeout_s; returns its last value.
function M.wait_until(pred, timeout_s)
  local tries = math.ceil((timeout_s or 10) / 0.05)
  for _ = 1, tries do
    local v = pred()
    if v then return v end
    M.sleep(0.05)
  end
  return pred()
end

function M.kill(pid, signal)
  if pid and M.alive(pid) then
    os.execute(string.format("kill -%s %d 2>/dev/null", signal or "TERM", pid))
    M.wait_until(function() return not M.alive(pid) end, 5)
  end
end

local env_prefix = helper.env_prefix

-- Starts `cmd` (a shell word list, already quoted) in the background with
-- stdout and stderr sent to files; returns its PID. `exec` makes the PID
-- the command's own, not a wrapper shell's.
function M.spawn(cmd, out, err)
  local p = assert(io.popen(string.format("sh -c %s >%s 2>%s </dev/null & echo $!",
    quote("exec " .. cmd), quote(out), quote(err))))
  local pid = tonumber(p:read("l"))
  p:close()
  assert(pid, "could not start: " .. cmd)
  return pid
end

-- start_listener(cmd, dir, what) -> pid, port: starts a loopback server
-- that prints its port as its first line, and waits up to 10 s for it.
function M.start_listener(cmd, dir, what)
  local pid = M.spawn(cmd, dir .. "/port", dir .. "/listener.err")
  local port = M.wait_until(function()
    local text = helper.read(dir .. "/port")
    return text and tonumber(text:match("^(%d+)\n"))
  end, 10)
  if not port then
    M.kill(pid)
    error(what .. " did not start: " .. (helper.read(dir .. "/listener.err") or ""))
  end
  return pid, port
end

-- start{delay_put_ms=, slow_puts=, lifetime_ms=, get_version=} -> server
-- with port, pid, log (path), url (the account URL), dir.
function M.start(opts)
  opts = opts or {}
  local dir = helper.tmpdir()
  local env = {
    DELAY_PUT_MS = opts.delay_put_ms and tostring(opts.delay_put_ms) or false,
    DELAY_GET_MS = opts.delay_get_ms and tostring(opts.delay_get_ms) or false,
    DELAY_HEAD_MS = opts.delay_head_ms and tostring(opts.delay_head_ms) or false,
    DELAY_LEASE_MS = false,
    DELAY_ALL_MS = false,
    SLOW_PUTS = opts.slow_puts and tostring(opts.slow_puts) or false,
    LIFETIME_MS = tostring(opts.lifetime_ms or 60000),
    GET_VERSION = opts.get_version or false,
  }
  local s = { dir = dir, log = dir .. "/requests.jsonl" }
  helper.write(s.log, "")
  s.pid, s.port = M.start_listener(env_prefix(env) .. " node " .. quote(M.server_js) .. " " .. quote(s.log),
    dir, "slow server")
  s.url = "http://127.0.0.1:" .. s.port .. "/devstoreaccount1"
  return s
end

function M.stop(s)
  if s then M.kill(s.pid, "TERM") end
end

-- The requests the server logged, as tables.
function M.requests(s)
  return M.decode_lines(s.log)
end

-- Put Blob requests: PUT without comp= or restype=.
function M.puts(s)
  local out = {}
  for _, r in ipairs(M.requests(s)) do
    if r.method == "PUT" and not r.url:find("?", 1, true) then out[#out + 1] = r end
  end
  return out
end

-- The environment a host process needs to talk to the server: a dev token
-- (bearer auth, no SAS).
function M.host_env()
  return { AZURE_STORAGE_TOKEN = helper.dev_token(), AZURE_STORAGE_SAS = false }
end

-- A Lua literal for a value made of strings, numbers, booleans and tables,
-- to embed data in a generated script (a stock-Lua embedder's ll.open
-- table, say; a script run by the host takes its configuration from
-- M.operator instead).
function M.literal(v)
  local t = type(v)
  if t == "string" then return string.format("%q", v) end
  if t == "number" or t == "boolean" then return tostring(v) end
  assert(t == "table", "cannot embed a " .. t)
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local parts = {}
  for _, k in ipairs(keys) do
    local key = type(k) == "number" and "[" .. k .. "]" or "[" .. string.format("%q", k) .. "]"
    parts[#parts + 1] = key .. " = " .. M.literal(v[k])
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

-- operator(s, o) -> args, env: how the operator runs a script against
-- server s (DESIGN.md invariant 14): the target in the environment (the
-- account URL, the lab container, blob o.blob or "x.json"; no CA file, no
-- evidence root), then o.script (if given) and the options --timeout-ms
-- 30000, --evidence o.evidence, and --manifest (o.manifest, a table
-- written to a temporary file) or --recover (o.recover), then o.args.
-- Pass env as run_host's or spawn_host's opts.env.
function M.operator(s, o)
  local args = {}
  if o.script then args[#args + 1] = o.script end
  for _, a in ipairs { "--timeout-ms", "30000", "--evidence", assert(o.evidence, "operator: no evidence") } do
    args[#args + 1] = a
  end
  if o.manifest then
    args[#args + 1] = "--manifest"
    args[#args + 1] = helper.write(helper.tmpdir() .. "/manifest.json", require("cjson").encode(o.manifest))
  end
  if o.recover then args[#args + 1] = "--recover" end
  for _, a in ipairs(o.args or {}) do args[#args + 1] = a end
  local env = {
    AZURE_STORAGE_ACCOUNT_URL = s.url or s,
    AZURE_STORAGE_CONTAINER = M.container,
    AZURE_STORAGE_BLOB = o.blob or "x.json",
    LEASELUA_CA_FILE = false,
    LEASELUA_EVIDENCE_ROOT = false,
  }
  return args, env
end

-- Writes a script into a fresh temporary directory; returns its path.
function M.script(text)
  return helper.write(helper.tmpdir() .. "/script.lua", text)
end

-- Runs the host in the foreground: run_host(args, {env=, prefix=}) ->
-- exit code, stdout, stderr. prefix is put before the host (e.g. prlimit).
function M.run_host(args, opts)
  opts = opts or {}
  local d = helper.tmpdir()
  local env = M.host_env()
  for k, v in pairs(opts.env or {}) do env[k] = v end
  local cmd = { env_prefix(env), opts.prefix or "", quote(helper.host) }
  for _, a in ipairs(args) do cmd[#cmd + 1] = quote(a) end
  os.execute(table.concat(cmd, " ") .. " >" .. d .. "/out 2>" .. d .. "/err </dev/null; echo $? >" .. d .. "/rc")
  return tonumber(helper.read(d .. "/rc")), helper.read(d .. "/out") or "", helper.read(d .. "/err") or ""
end

-- Starts the host in the background; returns {pid, out, err} (file paths).
function M.spawn_host(args, opts)
  opts = opts or {}
  local d = helper.tmpdir()
  local env = M.host_env()
  for k, v in pairs(opts.env or {}) do env[k] = v end
  local cmd = { env_prefix(env), quote(helper.host) }
  for _, a in ipairs(args) do cmd[#cmd + 1] = quote(a) end
  local h = { out = d .. "/out", err = d .. "/err" }
  h.pid = M.spawn(table.concat(cmd, " "), h.out, h.err)
  return h
end

-- The lines of a file, without their '\n' (a final line without one is
-- returned too, flagged by the second result).
function M.lines(path)
  local text = helper.read(path) or ""
  local out = {}
  for line in text:gmatch("([^\n]*)\n") do out[#out + 1] = line end
  local tail = text:match("[^\n]+$")
  if tail then out[#out + 1] = tail end
  return out, tail ~= nil
end

function M.decode_lines(path)
  local cjson = require "cjson"
  local out = {}
  for _, line in ipairs((M.lines(path))) do out[#out + 1] = cjson.decode(line) end
  return out
end

return M
