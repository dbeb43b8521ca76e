-- Shared by the specs: paths, a fresh evidence directory, a manifest, and
-- running the host as a user would (capturing output and exit code).
local M = {}

M.root = os.getenv("PWD")
M.host = os.getenv("LEASELUA") or (M.root .. "/build/leaselua")

local counter = 0

-- tmp_space(base, prefix) -> tmpdir, cleanup: tmpdir() makes a fresh
-- numbered directory under one private root, made by mktemp in base (a
-- path, or a function giving one) on first use; cleanup() removes the
-- root, unless LEASELUA_KEEP is set.
function M.tmp_space(base, prefix)
  local root, n = nil, 0
  local function tmpdir()
    if not root then
      local p = io.popen("mktemp -d " .. (type(base) == "function" and base() or base) .. "/" .. prefix .. ".XXXXXX")
      root = p:read("l")
      p:close()
    end
    n = n + 1
    local d = string.format("%s/%d", root, n)
    os.execute("mkdir -p '" .. d .. "'")
    return d
  end
  local function cleanup()
    if root and not os.getenv("LEASELUA_KEEP") then os.execute("rm -rf '" .. root .. "'") end
    root = nil
  end
  return tmpdir, cleanup
end

-- A fresh private temporary directory, removed by M.cleanup().
M.tmpdir, M.cleanup = M.tmp_space("/tmp", "leaselua-spec")

-- How many times pattern matches in s.
function M.count(s, pattern)
  local n = 0
  for _ in s:gmatch(pattern) do n = n + 1 end
  return n
end

function M.write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
  return path
end

function M.read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

M.manifest_table = {
  resource_owner = "storage-team",
  ticket = "LAB-SPEC",
  permitted_actors = { "A", "B", "operator", "observer" },
  cleanup_authority = "storage-team",
}

function M.manifest_file(dir)
  return M.write(dir .. "/manifest.json",
    '{"resource_owner":"storage-team","ticket":"LAB-SPEC",' ..
    '"permitted_actors":["A","B","operator","observer"],"cleanup_authority":"storage-team"}')
end

-- A blob name nobody else in this run uses, so lifecycles never collide.
function M.unique_blob(prefix)
  counter = counter + 1
  return string.format("%s-%d-%d.json", prefix or "spec", os.time(), counter)
end

local function quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end
M.quote = quote

-- env_prefix(env) -> "env -u A ... B=... C=...": variables to set (false
-- to unset) for one command. env(1) takes -u only before the first
-- NAME=VALUE, so the unsets go first; both lists are sorted.
function M.env_prefix(env)
  local unsets, sets = {}, {}
  for k, v in pairs(env or {}) do
    if v == false then
      unsets[#unsets + 1] = "-u " .. k
    else
      sets[#sets + 1] = k .. "=" .. quote(v)
    end
  end
  table.sort(unsets)
  table.sort(sets)
  return "env " .. table.concat(unsets, " ") .. " " .. table.concat(sets, " ")
end

-- run(args, env) -> exit code, stdout, stderr. args is a list; env a table
-- of variables to set (false to unset) for this command only.
function M.run(args, env)
  local d = M.tmpdir()
  local cmd = { M.env_prefix(env), quote(M.host) }
  for _, a in ipairs(args) do cmd[#cmd + 1] = quote(a) end
  local line = table.concat(cmd, " ") .. " >" .. d .. "/out 2>" .. d .. "/err; echo $? >" .. d .. "/rc"
  os.execute(line)
  return tonumber(M.read(d .. "/rc")), M.read(d .. "/out") or "", M.read(d .. "/err") or ""
end

-- The target of the live Azurite started by tools/run-specs.sh.
function M.live_env(blob)
  return {
    AZURE_STORAGE_ACCOUNT_URL = os.getenv("AZURE_STORAGE_ACCOUNT_URL"),
    AZURE_STORAGE_CONTAINER = "lease-handoff-lab",
    AZURE_STORAGE_BLOB = blob or M.unique_blob(),
  }
end

function M.have_live()
  return os.getenv("AZURE_STORAGE_ACCOUNT_URL") ~= nil
end

-- killed_after(step, env, manifest[, dir]) -> evidence dir: runs the main
-- handoff in the background with LEASELUA_PAUSE_AFTER=step, waits for its
-- pause line, and kills it with SIGKILL (by its own PID).
function M.killed_after(step, env, manifest, dir)
  local d = dir or M.tmpdir()
  local ev = d .. "/ev-killed-" .. step
  local parts = { "LEASELUA_PAUSE_AFTER=" .. step }
  for k, v in pairs(env) do parts[#parts + 1] = k .. "=" .. quote(v) end
  local log = d .. "/killed-" .. step .. ".out"
  local cmd = "env " .. table.concat(parts, " ") .. " " .. quote(M.host) ..
    " scripts/main_handoff.lua --break-period 3 --manifest " .. quote(manifest) ..
    " --evidence " .. quote(ev) .. " >" .. quote(log) .. " 2>&1 & echo $!"
  local p = io.popen(cmd)
  local pid = p:read("l")
  p:close()
  for _ = 1, 300 do
    if (M.read(log) or ""):find("pausing 60 s after step " .. step, 1, true) then break end
    os.execute("sleep 0.1")
  end
  assert((M.read(log) or ""):find("pausing", 1, true), "the host never reached step " .. step)
  os.execute("kill -9 " .. pid)
  os.execute("sleep 0.2")
  return ev
end

-- Export rows of an evidence directory, as tables.
function M.rows(dir)
  local cjson = require "cjson"
  local out = {}
  for line in (M.read(dir .. "/export/ledger.jsonl") or ""):gmatch("[^\n]+") do
    out[#out + 1] = cjson.decode(line)
  end
  return out
end

function M.outcomes(rows)
  local out = {}
  for _, r in ipairs(rows) do
    if r.record == "outcome" then out[#out + 1] = r end
  end
  return out
end

-- A counting loopback server (spec/support/count_server.js) that lives at
-- most `seconds` (default 20). Returns {port, url, count(), connections(),
-- stop()}; url is an http account URL on it. bind_host (default 127.0.0.1)
-- may be another local address, to catch a connection that should never
-- have been made.
function M.count_server(seconds, bind_host)
  local d = M.tmpdir()
  local file = d .. "/count"
  local cmd = string.format("exec node %s %s %d %s", quote(M.root .. "/spec/support/count_server.js"),
    quote(file), seconds or 20, quote(bind_host or "127.0.0.1"))
  local p = assert(io.popen(cmd, "r"))
  local port = tonumber(p:read("l"))
  local pid = tonumber(p:read("l"))
  assert(port and pid, "count_server did not start")
  local s = { port = port, pid = pid, file = file }
  s.url = string.format("http://%s:%d/devstoreaccount1", bind_host or "127.0.0.1", port)
  function s.count() return tonumber(M.read(file)) end
  function s.connections() return tonumber(M.read(file .. ".conn")) end
  function s.stop()
    if p then
      os.execute("kill " .. pid .. " 2>/dev/null")
      p:close()
      p = nil
    end
  end
  return s
end

-- base64url without padding, as JWT segments are written.
function M.b64url(s)
  local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = s:byte(i, i + 2)
    local v = (a << 16) | ((b or 0) << 8) | (c or 0)
    local n = b == nil and 2 or (c == nil and 3 or 4)
    for k = 1, n do
      local idx = (v >> (18 - 6 * (k - 1))) & 63
      out[#out + 1] = alphabet:sub(idx + 1, idx + 1)
    end
  end
  return table.concat(out)
end

-- An unsigned JWT with the given payload JSON text (for tokens the host
-- must refuse, e.g. expired ones; `leaselua dev-token` only mints valid ones).
function M.jwt(payload_json)
  return M.b64url('{"alg":"RS256","typ":"JWT"}') .. "." .. M.b64url(payload_json) .. "." ..
    M.b64url("leaselua-spec-fake-signature")
end

-- The octal permission bits of path, as `stat -c %a` prints them ("600").
function M.mode(path)
  local p = assert(io.popen("stat -c %a " .. quote(path) .. " 2>/dev/null"))
  local m = p:read("l")
  p:close()
  return m
end

-- The name several specs use; M.run already puts the unsets first.
M.run_env = M.run

-- A valid bearer token for loopback test servers, from `leaselua dev-token
-- 3600`; minted once per busted process.
local dev_token
function M.dev_token()
  if not dev_token then
    local rc, out = M.run { "dev-token", "3600" }
    dev_token = rc == 0 and out:match("^(%S+)\n$") or nil
    assert(dev_token, "leaselua dev-token failed (exit " .. tostring(rc) .. ")")
  end
  return dev_token
end

-- The live server's view, outside leaselua: curl with the dev token and
-- LEASELUA_CA_FILE, to target (a whole URL), with extra header lines; a
-- body is sent as a BlockBlob. Returns status, headers (lowercase names)
-- and body.
function M.live_curl(method, target, body, headers)
  local d = M.tmpdir()
  local h = { "Authorization: Bearer " .. M.dev_token(), "x-ms-version: 2023-11-03" }
  for _, x in ipairs(headers or {}) do h[#h + 1] = x end
  M.write(d .. "/h", table.concat(h, "\n") .. "\n")
  local cmd = { "curl -sS --cacert", quote(os.getenv("LEASELUA_CA_FILE")), "-H @" .. quote(d .. "/h"), "-X", method,
    "-D", quote(d .. "/rh"), "-o", quote(d .. "/rb"), "-w '%{http_code}'" }
  if body then
    M.write(d .. "/body", body)
    cmd[#cmd + 1] = "-H 'x-ms-blob-type: BlockBlob' -H 'Content-Type: application/json' --data-binary @" ..
      quote(d .. "/body")
  elseif method == "PUT" then
    cmd[#cmd + 1] = "-H 'Content-Length: 0'"
  end
  cmd[#cmd + 1] = quote(target)
  local p = io.popen(table.concat(cmd, " "))
  local status = tonumber(p:read("a"))
  p:close()
  local out = {}
  for line in (M.read(d .. "/rh") or ""):gmatch("[^\r\n]+") do
    local k, v = line:match("^([^:]+):%s*(.*)$")
    if k then out[k:lower()] = v end
  end
  return status, out, M.read(d .. "/rb") or ""
end

return M
