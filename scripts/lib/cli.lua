-- The flows' own command-line options. The operator's options (target,
-- credential, files, --recover, --destructive --after) never reach a
-- script: the host reads them in C and takes them out of `arg`.
local ll = require "leaselua"

local M = {}

-- usage_error(msg): raises the usage error (exit 64) from C.
M.usage_error = ll.usage_error

-- parse(argv, spec, help) -> opts, or nil after printing help for --help.
-- spec maps option names to "number" or "flag", and may hold defaults in
-- spec.defaults; help is the flow's usage text.
function M.parse(argv, spec, help)
  local opts = {}
  for k, v in pairs(spec.defaults or {}) do opts[k] = v end
  local i = 1
  while argv[i] do
    local a = argv[i]
    if a == "--help" or a == "-h" then
      ll.help(help or "no usage text")
      return nil
    end
    local name, inline = a:match("^%-%-([%w%-]+)=(.*)$")
    name = name or a:match("^%-%-([%w%-]+)$")
    local kind = name and spec[name]
    if not kind then
      M.usage_error("unknown argument '" .. a .. "': see --help")
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
      if v == nil then M.usage_error("--" .. name .. " needs a value") end
      local n = math.tointeger(tonumber(v))
      if not n then M.usage_error("--" .. name .. " must be an integer, got '" .. v .. "'") end
      opts[key] = n
    end
    i = i + 1
  end
  return opts
end

return M
