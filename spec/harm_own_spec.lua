-- Invariant 15, the run touches only the object it created, against the
-- live Azurite, with another writer played by curl and the server's view
-- read by curl before and after:
-- - a recovery whose reconcile reads another writer's object (the very
--   bytes the run wrote, under another ETag) does not adopt its ETag: the
--   Delete a script then orders is refused, the run ends HOLD and says why,
--   and the other writer's blob is left as it was.
local helper = require "helper"
local cjson = require "cjson"

local CONTAINER = "lease-handoff-lab"
local INVARIANT = { LL_E_HOLD = 3 }

local function count(rows, record, pred)
  local n = 0
  for _, r in ipairs(rows) do
    if r.record == record and (not pred or pred(r)) then n = n + 1 end
  end
  return n
end

describe("the run touches only the object it created #live", function()
  if not helper.have_live() then
    it("needs a live Azurite (tools/run-specs.sh)", function() pending("AZURE_STORAGE_ACCOUNT_URL is not set") end)
    return
  end

  local ll = require "leaselua"
  local url = os.getenv("AZURE_STORAGE_ACCOUNT_URL")
  local ca = os.getenv("LEASELUA_CA_FILE")
  local work

  -- The server's view and the other writer, outside leaselua: curl with
  -- the lab's dev token. Returns status, headers (lowercase names), body.
  local function curl(method, blob, body, headers)
    local d = helper.tmpdir()
    local h = { "Authorization: Bearer " .. helper.dev_token(), "x-ms-version: 2023-11-03" }
    for _, x in ipairs(headers or {}) do h[#h + 1] = x end
    helper.write(d .. "/h", table.concat(h, "\n") .. "\n")
    local cmd = { "curl -sS --cacert", helper.quote(ca), "-H @" .. helper.quote(d .. "/h"), "-X", method,
      "-D", helper.quote(d .. "/rh"), "-o", helper.quote(d .. "/rb"), "-w '%{http_code}'" }
    if body then
      helper.write(d .. "/body", body)
      cmd[#cmd + 1] = "-H 'x-ms-blob-type: BlockBlob' -H 'Content-Type: application/json' --data-binary @" ..
        helper.quote(d .. "/body")
    elseif method == "PUT" then
      cmd[#cmd + 1] = "-H 'Content-Length: 0'"
    end
    local target = blob and ("/" .. blob) or "?restype=container"
    cmd[#cmd + 1] = helper.quote(url .. "/" .. CONTAINER .. target)
    local p = io.popen(table.concat(cmd, " "))
    local status = tonumber(p:read("a"))
    p:close()
    local out = {}
    for line in (helper.read(d .. "/rh") or ""):gmatch("[^\r\n]+") do
      local k, v = line:match("^([^:]+):%s*(.*)$")
      if k then out[k:lower()] = v end
    end
    return status, out, helper.read(d .. "/rb") or ""
  end

  local function open(cfg)
    local c = { account_url = url, container = CONTAINER, ca_file = ca }
    for k, v in pairs(cfg) do c[k] = v end
    return ll.open(c)
  end

  -- refused(run, code, fn, ...): fn raises code, the last row is its
  -- refusal, and no intent was added (nothing was sent).
  local function refused(run, code, fn, ...)
    local intents = count(run:rows(), "intent")
    local ok, err = pcall(fn, ...)
    assert.is_false(ok, "not refused")
    assert.are.equal(code, err.code, tostring(err))
    assert.are.equal(INVARIANT[code], err.invariant)
    local rows = run:rows()
    assert.are.equal("refusal", rows[#rows].record)
    assert.are.equal(code, rows[#rows].code)
    assert.are.equal(intents, count(rows, "intent"))
    return err
  end

  setup(function()
    work = helper.tmpdir()
    local st = curl("PUT", nil)
    assert.is_true(st == 201 or st == 409, "create container: " .. tostring(st))
  end)
  teardown(helper.cleanup)

  it("a recovery that reads another writer's object leaves it: no ETag adopted, no Delete, HOLD", function()
    local blob = helper.unique_blob("adopt")
    local dir = work .. "/adopt"
    local run = open { evidence = dir, manifest = helper.manifest_table, blob = blob }
    run:declare(0, "A")
    local U = run:unbound("A")
    run:create_container()
    run:lifecycle { reason = "recovery reads another object" }
    local put = U:put(0)
    assert.are.equal(201, put.http_status)
    local back = run:read()
    assert.are.equal(put.etag, back.etag)
    run:close() -- ends without a decision: a recovery goes on from here

    -- another writer replaces the blob with the very bytes the run wrote
    assert.are.equal(202, (curl("DELETE", blob)))
    assert.are.equal(201, (curl("PUT", blob, ll.payload(0, "A"))))
    local _, other = curl("GET", blob)
    assert.are_not.equal(put.etag, other.etag)

    local rec = open { evidence = dir, recover = true, blob = blob }
    local r = rec:reconcile()
    assert.are.equal(0, r.content_revision)
    assert.are.equal("MATCH", r.result) -- the bytes are explained, the object is not the run's
    local W = rec:unbound("A")
    local e = refused(rec, "LL_E_HOLD", W.delete, W)
    assert.matches("leave the blob for the operator", e.message)
    assert.are.equal(other.etag, r.etag_not_adopted)
    assert.is_false(rec:state().reconciled)
    local d = rec:finish()
    rec:close()
    assert.are.equal("HOLD", d.decision)
    local why = table.concat(d.reasons, "\n")
    assert.truthy(why:find("the blob's ETag " .. other.etag .. " is none this run's writes were answered with", 1,
      true), why)
    assert.truthy(why:find("the blob is left for the operator", 1, true), why)

    -- the server's view: the other writer's object, untouched
    local st, after, bytes = curl("GET", blob)
    assert.are.equal(200, st)
    assert.are.equal(ll.payload(0, "A"), bytes)
    assert.are.equal(other.etag, after.etag)
    local rows = helper.rows(dir)
    assert.are.equal(0, count(rows, "intent", function(x) return x.http_method == "DELETE" end))
    local vrc, vout = helper.run({ "verify", dir })
    assert.are.equal(0, vrc, vout)
    assert.are.equal("HOLD", cjson.decode(helper.read(dir .. "/decision.json")).decision)
  end)
end)
