-- Command-line options shared by the flows, and the leaselua.open config
-- built from them and from the AZURE_STORAGE_* variables.
local ll = require "leaselua"

local M = {}

local function usage_error(msg)
  error(setmetatable({ code = "LL_E_USAGE", message = msg, exit = 64 },
    { __tostring = function(e) return e.code .. ": " .. e.message end }), 0)
end
M.usage_error = usage_error

-- parse(argv, spec) -> opts. spec maps option names to "string", "number"
-- or "flag", and may hold defaults in spec.defaults.
function M.parse(argv, spec)
  local opts = {}
  for k, v in pairs(spec.defaults or {}) do opts[k] = v end
  local i = 1
  while argv[i] do
    local a = argv[i]
    local name, inline = a:match("^%-%-([%w%-]+)=(.*)$")
    name = name or a:match("^%-%-([%w%-]+)$")
    local kind = name and spec[name]
    if not kind then
      usage_error("unknown argument '" .. a .. "': see the script's header")
    end
    local key = name:gsub("%-", "_")
    if kind == "flag" then
      opts[key] = true
    else
      local v = inline
      if v == nil then
        i = i + 1
        v = argv[i]
      end
      if v == nil then usage_error("--" .. name .. " needs a value") end
      if kind == "number" then
        local n = math.tointeger(tonumber(v))
        if not n then usage_error("--" .. name .. " must be an integer, got '" .. v .. "'") end
        v = n
      end
      opts[key] = v
    end
    i = i + 1
  end
  return opts
end

-- A replay needs no endpoint: fixture paths are relative to the account,
-- and the .invalid name (RFC 2606) can never resolve, so nothing leaves.
M.REPLAY_ACCOUNT_URL = "https://replay.invalid"

-- open_config(opts, extra) -> table for leaselua.open
function M.open_config(opts, extra)
  local cfg = {
    evidence = opts.evidence,
    manifest = opts.manifest,
    account_url = ll.getenv("AZURE_STORAGE_ACCOUNT_URL") or (opts.replay and M.REPLAY_ACCOUNT_URL),
    container = ll.getenv("AZURE_STORAGE_CONTAINER") or "lease-handoff-lab",
    blob = ll.getenv("AZURE_STORAGE_BLOB") or "writer-handoff.json",
    ca_file = opts.ca_file or ll.getenv("LEASELUA_CA_FILE"),
    replay = opts.replay,
    record = opts.record,
    record_description = opts.record_description,
    total_timeout_ms = opts.timeout_ms, -- --timeout-ms: one request's whole budget
  }
  if opts.token_file then cfg.auth = { kind = "file", token_file = opts.token_file } end
  if opts.token_command then cfg.auth = { kind = "command", token_command = opts.token_command } end
  if opts.managed_identity then cfg.auth = { kind = "managed_identity" } end
  for k, v in pairs(extra or {}) do cfg[k] = v end
  if not cfg.evidence then
    local root = ll.getenv("LEASELUA_EVIDENCE_ROOT") or "evidence"
    cfg.evidence = root .. "/" .. (extra and extra.name or "run")
  end
  return cfg
end

-- Options every flow accepts.
M.common = {
  manifest = "string", evidence = "string", ["ca-file"] = "string",
  ["token-file"] = "string", ["token-command"] = "string",
  ["managed-identity"] = "flag", record = "string", replay = "string",
  ["record-description"] = "string", ["timeout-ms"] = "number",
}

function M.spec(extra)
  local s = { defaults = extra.defaults }
  for k, v in pairs(M.common) do s[k] = v end
  for k, v in pairs(extra) do if k ~= "defaults" then s[k] = v end end
  return s
end

return M
