-- Invariant 15, the run touches only the object it created, against the
-- live Azurite, with another writer played by curl and the server's view
-- read by curl before and after:
-- - a hostile script orders lease operations before the lifecycle's own
--   create was accepted and read back: C refuses each, nothing is sent;
-- - the same order when another writer's leased blob appeared after the
--   preflight: the run neither breaks nor takes the other writer's lease;
-- - a recovery whose reconcile reads another writer's object (the very
--   bytes the run wrote, under another ETag) does not adopt its ETag: the
--   Delete a script then orders is refused, the run ends HOLD and says why,
--   and the other writer's blob is left as it was.
local helper = require "helper"
local cjson = require "cjson"

local CONTAINER = "lease-handoff-lab"
local OTHER_LEASE = "6f1c2b4a-8d3e-4f5a-9b7c-0e1d2c3b4a59"
local INVARIANT = { LL_E_HOLD = 3, LL_E_NOT_CREATED = 15 }

local function count(rows, record, pred)
  local n = 0
  for _, r in ipairs(rows) do
    if r.record == record and (not pred or pred(r)) then n = n + 1 end
  end
  return n
end

local function mutation(r)
  return r.http_method ~= "GET" and r.http_method ~= "HEAD"
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
  -- the lab's dev token (helper.live_curl).
  local function curl(method, blob, body, headers)
    return helper.live_curl(method, url .. "/" .. CONTAINER .. (blob and ("/" .. blob) or "?restype=container"),
      body, headers)
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

  it("a hostile script's lease operations before the create: each refused, none sent", function()
    local blob = helper.unique_blob("order")
    local dir = work .. "/order"
    local script = helper.write(helper.tmpdir() .. "/hostile.lua", [[
local ll = require "leaselua"
local run = ll.open { name = "lease-before-create", actors = { "A", "B", "operator", "observer" } }
run:declare(0, "A")
local A, B = run:writer("A"), run:writer("B")
run:create_container()
run:lifecycle { reason = "lease operations before the create" }
local function try(what, fn, ...)
  local ok, e = pcall(fn, ...)
  print(what .. " " .. (ok and "SENT" or (e.code .. " " .. tostring(e.invariant) .. " " .. e.message)))
end
try("acquire", A.acquire, A, { duration = -1 })
try("break", run.break_lease, run, { period = 0 })
try("change", A.change, A)
try("release", A.release, A)
try("renew", A.renew, A)
try("delete", B.delete, B)
run:finish()
]])
    local rc, out, err = helper.run({ script, "--manifest", helper.manifest_file(helper.tmpdir()), "--evidence", dir },
      helper.live_env(blob))
    assert.are.equal(2, rc, out .. err)
    for _, op in ipairs { "acquire", "break", "change", "release", "renew" } do
      local line = ("\n" .. out):match("\n" .. op .. " ([^\n]*)")
      assert.is_string(line, out)
      assert.matches("^LL_E_NOT_CREATED 15 Lease %a+ refused %(invariant 15%): the lifecycle's own create " ..
        "%(If%-None%-Match: %*%) has not been accepted and read back", line)
    end
    assert.matches("\ndelete LL_E_DELETE_UNCONFIRMED 15 delete refused %(invariant 15%)", out)
    local rows = helper.rows(dir)
    -- the preflight and the Create Container are the only requests
    assert.are.equal(2, count(rows, "intent"))
    assert.are.equal(1, count(rows, "intent", mutation))
    assert.are.equal(6, count(rows, "refusal"))
    assert.are.equal(404, (curl("HEAD", blob)))
    local vrc, vout = helper.run({ "verify", dir })
    assert.are.equal(0, vrc, vout)
  end)

  it("does not break or take another writer's lease on a blob created after the preflight", function()
    local blob = helper.unique_blob("foreign-lease")
    local run = open { evidence = work .. "/foreign-lease", manifest = helper.manifest_table, blob = blob }
    run:declare(0, "A")
    local A = run:writer("A")
    run:create_container() -- the preflight goes first: 404 BlobNotFound
    run:lifecycle { reason = "another writer's lease appears" }
    -- another writer creates the blob now and leases it
    local precious = '{"important":"production data"}'
    assert.are.equal(201, (curl("PUT", blob, precious)))
    assert.are.equal(201, (curl("PUT", blob .. "?comp=lease", nil, { "x-ms-lease-action: acquire",
      "x-ms-lease-duration: -1", "x-ms-proposed-lease-id: " .. OTHER_LEASE })))
    refused(run, "LL_E_NOT_CREATED", run.break_lease, run, { period = 0 })
    refused(run, "LL_E_NOT_CREATED", A.acquire, A, { duration = -1 })
    refused(run, "LL_E_NOT_CREATED", A.release, A)
    run:finish()
    run:close()
    -- the server's view: the other writer still holds its lease on its bytes
    local st, h, bytes = curl("GET", blob)
    assert.are.equal(200, st)
    assert.are.equal(precious, bytes)
    assert.are.equal("leased", h["x-ms-lease-state"])
    assert.are.equal("locked", h["x-ms-lease-status"])
  end)

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
