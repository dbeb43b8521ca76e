-- Bundles for the compare, qualify and JUnit specs, made offline: a
-- documented fixture replayed into a real bundle (endpoint kind replay,
-- fixture label documented), and an "azure-labelled" copy of one. No
-- legitimate offline run produces endpoint kind azure (a replay is always
-- replay.invalid; a live run needs an Azure host), so the copy is made the
-- way a forger would: the manifest row and every row's endpoint_kind
-- rewritten to azure with an Azure account host, the decision's kind
-- sentence with them, both ledgers re-chained, and, when the original was
-- signed, SHA256SUMS recomputed and signed again with the spec's own key.
-- `leaselua verify` is unchanged and accepts such a copy: what it proves is
-- that the files agree with each other, not where they came from; that is
-- what --require-signature (a key the operator allows) adds.
local helper = require "helper"
local rp = require "support.replay"
local rechain = require("support.ledger_builder").rechain

local q = helper.quote
local NOPRELOAD = "env -u LD_PRELOAD "

local M = {}

M.AZURE_HOST = "qualtest.blob.core.windows.net"

function M.sh(cmd)
  local p = assert(io.popen(NOPRELOAD .. "sh -c " .. q(cmd) .. " 2>&1; echo \"rc=$?\""))
  local out = p:read("a")
  p:close()
  local rc = tonumber(out:match("rc=(%d+)\n$"))
  return rc, (out:gsub("rc=%d+\n$", ""))
end

-- replay(fixture, dir[, args]) -> dir: the main handoff replayed from
-- fixtures/<fixture>.json into dir (its exit code is the decision's).
function M.replay(fixture, dir, args)
  local rc, out, err = rp.replay("main_handoff", fixture, dir, args)
  assert(rc == 0 or rc == 1 or rc == 2 or rc == 3, "replay of " .. fixture .. " exited " .. tostring(rc) .. ": "
    .. out .. err)
  return dir
end

-- A fresh ed25519 key and its allowed-signers file.
function M.keypair(dir, principal)
  local key = dir .. "/key-" .. principal
  local rc, out = M.sh(("ssh-keygen -q -t ed25519 -N '' -C %s -f %s </dev/null"):format(q(principal), q(key)))
  assert(rc == 0, out)
  local pub = assert(helper.read(key .. ".pub")):match("^(%S+ %S+)")
  local allowed = dir .. "/allowed-" .. principal
  helper.write(allowed, principal .. " " .. pub .. "\n")
  return key, allowed
end

local function lines_of(path)
  local t = {}
  for l in assert(helper.read(path)):gmatch("[^\n]+") do t[#t + 1] = l end
  return t
end

local function plain(s)
  return (s:gsub("[%p]", "%%%0"))
end

-- sync_decision(dir): decision.json made the export's last decision row
-- again after the ledgers were edited (verify checks that it is), or
-- removed when no decision row is left, as a forger thorough enough to
-- fool the chains would do.
function M.sync_decision(dir)
  local last
  for _, l in ipairs(lines_of(dir .. "/export/ledger.jsonl")) do
    if l:find('"record":"decision"', 1, true) then last = l end
  end
  if last then
    helper.write(dir .. "/decision.json", last .. "\n")
  else
    os.remove(dir .. "/decision.json")
  end
end

-- relabel(src, dst[, opts]) -> dst: a copy of the replayed bundle src
-- whose evidence says endpoint kind opts.kind (default azure), host
-- opts.host (default M.AZURE_HOST, or 127.0.0.1 for an emulator);
-- opts.key re-signs it; opts.edit(text) -> text changes both ledgers
-- further before they are re-chained.
function M.relabel(src, dst, opts)
  opts = opts or {}
  local kind = opts.kind or "azure"
  local host = opts.host or (kind == "emulator" and "127.0.0.1" or M.AZURE_HOST)
  local sentence = kind == "azure" and "Endpoint kind: azure." or
    "Endpoint kind: emulator: emulator evidence, not a cloud qualification."
  assert(M.sh(("cp -a %s %s"):format(q(src), q(dst))) == 0)
  for _, f in ipairs { "/export/ledger.jsonl", "/protected/ledger.jsonl" } do
    local t = table.concat(lines_of(dst .. f), "\n")
    local n
    t, n = t:gsub(plain('"endpoint_kind":"replay","fixture_label":"documented","account_host":"replay.invalid"'),
      '"endpoint_kind":"' .. kind .. '","account_host":"' .. host .. '"')
    assert(n == 1, f .. ": no replay manifest row to relabel")
    t = t:gsub(plain('"endpoint_kind":"replay"'), '"endpoint_kind":"' .. kind .. '"')
    t = t:gsub(plain("Endpoint kind: replay of a documented fixture: not a cloud qualification."), sentence)
    if opts.edit then t = opts.edit(t) end
    local lines = {}
    for l in t:gmatch("[^\n]+") do lines[#lines + 1] = l end
    helper.write(dst .. f, table.concat(rechain(lines), "\n") .. "\n")
  end
  M.sync_decision(dst)
  for _, f in ipairs { "/manifest.json", "/environment.json" } do
    local t = helper.read(dst .. f)
    if t then
      t = t:gsub('"replay.invalid"', '"' .. host .. '"'):gsub('"replay"', '"' .. kind .. '"')
      helper.write(dst .. f, t)
    end
  end
  if opts.key then M.resign(dst, opts.key) end
  return dst
end

-- resign(dir, key): SHA256SUMS over every other file, signed with key in
-- the namespace the host signs in, as `leaselua --sign-key` writes them.
function M.resign(dir, key)
  local sums = helper.tmpdir() .. "/SHA256SUMS"
  local rc, out = M.sh(("cd %s && rm -f SHA256SUMS SHA256SUMS.sig && find . -type f | sed 's|^./||' | LC_ALL=C sort"
    .. " | xargs sha256sum > %s && mv %s SHA256SUMS && ssh-keygen -q -Y sign -f %s"
    .. " -n leaselua-evidence SHA256SUMS </dev/null"):format(q(dir), q(sums), q(sums), q(key)))
  assert(rc == 0, out)
end

return M
