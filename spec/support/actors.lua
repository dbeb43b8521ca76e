-- One dev token per actor (`leaselua dev-token --actor NAME`: a distinct
-- oid each), in files of mode 0600, and what a spec compares them by,
-- never printing one: the 12-hex tag the fault proxy logs for the token a
-- request carried, and the principal fingerprint computed the way
-- docs/EVIDENCE.md tells a reviewer to (printf | sha256sum | cut -c1-16).
local helper = require "helper"
local cjson = require "cjson"

local M = {}
M.ACTORS = { "A", "B", "operator" }

local function b64url_decode(s)
  local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
  local bits, n, out = 0, 0, {}
  for i = 1, #s do
    local v = alphabet:find(s:sub(i, i), 1, true)
    assert(v, "not base64url")
    bits = (bits << 6) | (v - 1)
    n = n + 6
    if n >= 8 then
      n = n - 8
      out[#out + 1] = string.char((bits >> n) & 0xff)
    end
  end
  return table.concat(out)
end

-- The claims of a JWT, unverified (as the host reads them).
function M.claims(token)
  return cjson.decode(b64url_decode(token:match("^[^.]+%.([^.]+)%.")))
end

local function shell_line(cmd)
  local p = assert(io.popen(cmd))
  local line = p:read("l")
  p:close()
  return line
end

-- The fingerprint of tid and oid by the documented reviewer's command.
function M.fingerprint(tid, oid)
  return shell_line(string.format("printf 'leaselua-principal-v1:%%s:%%s' %s %s | sha256sum | cut -c1-16",
    helper.quote(tid:lower()), helper.quote(oid:lower())))
end

-- The fault proxy's tag of a token file's token (faultproxy.js, authTag).
local function tag_of(path)
  return shell_line("tr -d '\\n' <" .. helper.quote(path) .. " | sha256sum | cut -c1-12")
end

-- mint(dir) -> {files = {A=path,...}, tag = {...}, fp = {...}, oid = {...},
-- tid = {...}, token = {...}}: the token text stays in this table only.
function M.mint(dir)
  local t = { files = {}, tag = {}, fp = {}, oid = {}, tid = {}, token = {} }
  for _, a in ipairs(M.ACTORS) do
    local path = dir .. "/token-" .. a
    local rc = os.execute("umask 077 && " .. helper.quote(helper.host) .. " dev-token 3600 --actor " .. a ..
      " >" .. helper.quote(path))
    assert(rc, "leaselua dev-token --actor " .. a .. " failed")
    local token = assert(helper.read(path)):match("^(%S+)\n$")
    local c = M.claims(token)
    t.files[a], t.token[a], t.tag[a] = path, token, tag_of(path)
    t.oid[a], t.tid[a] = c.oid, c.tid
    t.fp[a] = M.fingerprint(c.tid, c.oid)
  end
  return t
end

-- The operator options that give each actor its own token (the observer
-- reads with the operator's).
function M.args(t)
  return { "--credential-a", "token-file:" .. t.files.A, "--credential-b", "token-file:" .. t.files.B,
    "--credential-operator", "token-file:" .. t.files.operator }
end

-- The actor whose credential a request of actor carries.
function M.sender(actor)
  return actor == "observer" and "operator" or actor
end

return M
