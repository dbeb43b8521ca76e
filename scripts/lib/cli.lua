-- The flows' own command-line options. The operator's options (target,
-- credential, files, --recover, --destructive --after) never reach a
-- script: the host reads them in C and takes them out of `arg`.
local ll = require "leaselua"
local wrap = require("lib.out").wrap

local M = {}

-- usage_error(msg): raises the usage error (exit 64) from C.
M.usage_error = ll.usage_error

M.EXIT = "Exit: the decision, 0 ACCEPT 1 WAIT 2 HOLD 3 RECONCILE; 64 usage or\n" ..
         "configuration, 70 internal error."

-- help_text(def) -> the usage a flow prints for --help, from its rows
-- (lib.flows has the shipped flows'). Lines fit 80 columns.
function M.help_text(def)
  local t = wrap("usage: " .. def.usage, 79, 9)
  for _, l in ipairs(def.about or {}) do t[#t + 1] = "  " .. l end
  if def.options and #def.options > 0 then t[#t + 1] = "flow options:" end
  for _, o in ipairs(def.options or {}) do
    local name, value, default, text = o[1], o[2], o[3], o[4]
    local left = "  --" .. name .. (value and (" " .. value) or "")
    if default then text = text .. " (default " .. tostring(default) .. ")" end
    if #left > 25 then
      t[#t + 1] = left
      left = ""
    end
    for k, l in ipairs(wrap(text, 79 - 26, 0)) do
      t[#t + 1] = string.format("%-26s%s", k == 1 and left or "", l)
    end
  end
  t[#t + 1] = M.EXIT
  return table.concat(t, "\n")
end

-- The old form, {name = "number" | "flag", defaults = {...}}, for scripts
-- written before lib.flows: the same rules, without option texts.
local function rows_of(spec)
  if spec.options then return spec.options end
  local rows = {}
  for name, kind in pairs(spec) do
    if name ~= "defaults" then
      local key = name:gsub("%-", "_")
      rows[#rows + 1] = { name, kind ~= "flag" and "N" or false, (spec.defaults or {})[key] or false, "" }
    end
  end
  return rows
end

-- scan(argv, by_name, into, from) -> false after --help, else true: each
-- option of argv into `into` by key; `from` names where argv came from in
-- messages ("" for the command line).
local function scan(argv, by_name, into, from)
  local i = 1
  while argv[i] do
    local a = argv[i]
    if a == "--help" or a == "-h" then return false end
    local name, inline = a:match("^%-%-([%w%-]+)=(.*)$")
    name = name or a:match("^%-%-([%w%-]+)$")
    local row = name and by_name[name]
    if not row then
      M.usage_error("unknown argument '" .. a .. "'" .. from .. ": see --help")
    end
    local key = name:gsub("%-", "_")
    if not row[2] then
      into[key] = true
    else
      local v = inline
      if v == nil then
        i = i + 1
        v = argv[i]
      end
      if v == nil then M.usage_error("--" .. name .. " needs a value" .. from) end
      local n = math.tointeger(tonumber(v))
      if not n then M.usage_error("--" .. name .. " must be an integer, got '" .. v .. "'" .. from) end
      into[key] = n
    end
    i = i + 1
  end
  return true
end

-- parse(argv, def [, help]) -> opts, or nil after printing help for --help.
-- def is a lib.flows table ({usage, about, options}) or the old form with
-- help as its usage text. Values are integers; flags are true. In a replay,
-- the flow arguments the fixture recorded (leaselua.fixture_args) count as
-- given; one given again with another value is a usage error (exit 64).
function M.parse(argv, def, help)
  local rows, by_name, opts = rows_of(def), {}, {}
  for _, o in ipairs(rows) do
    by_name[o[1]] = o
    if o[3] then opts[(o[1]:gsub("%-", "_"))] = o[3] end
  end
  local given = {}
  if not scan(argv, by_name, given, "") then
    ll.help(def.options and M.help_text(def) or help or "no usage text")
    return nil
  end
  local recorded_args = ll.fixture_args and ll.fixture_args()
  if recorded_args then
    local recorded = {}
    scan(recorded_args, by_name, recorded, " (recorded in the replayed fixture)")
    for key, v in pairs(recorded) do
      if given[key] ~= nil and given[key] ~= v then
        local name = key:gsub("_", "-")
        M.usage_error(string.format("--%s %s contradicts the replayed fixture's --%s %s: " ..
          "drop it to replay as recorded", name, tostring(given[key]), name, tostring(v)))
      end
      opts[key] = v
    end
  end
  for key, v in pairs(given) do opts[key] = v end
  return opts
end

return M
