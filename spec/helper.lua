-- Shared by the specs: paths, a fresh evidence directory, a manifest, and
-- running the host as a user would (capturing output and exit code).
local M = {}

M.root = os.getenv("PWD")
M.host = os.getenv("LEASELUA") or (M.root .. "/build/leaselua")

local counter = 0
local tmp_root

-- A fresh private temporary directory, removed by M.cleanup().
function M.tmpdir()
  if not tmp_root then
    local p = io.popen("mktemp -d /tmp/leaselua-spec.XXXXXX")
    tmp_root = p:read("l")
    p:close()
  end
  counter = counter + 1
  local d = string.format("%s/%d", tmp_root, counter)
  os.execute("mkdir -p '" .. d .. "'")
  return d
end

function M.cleanup()
  if tmp_root and not os.getenv("LEASELUA_KEEP") then os.execute("rm -rf '" .. tmp_root .. "'") end
  tmp_root = nil
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

-- run(args, env) -> exit code, stdout, stderr. args is a list; env a table
-- of variables to set (false to unset) for this command only.
function M.run(args, env)
  local d = M.tmpdir()
  local parts = {}
  for k, v in pairs(env or {}) do
    if v == false then
      parts[#parts + 1] = "-u " .. k
    else
      parts[#parts + 1] = k .. "=" .. quote(v)
    end
  end
  local cmd = { "env", table.concat(parts, " "), quote(M.host) }
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

return M
