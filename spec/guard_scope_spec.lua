-- Invariant 14, the guard's scope is the blob (#12, item 3): each attack of
-- the issue against the live Azurite, through the fault proxy, whose log is
-- the server's view of what arrived. C refuses with a refusal row, and the
-- proxy log shows that no unconditioned or un-read-back mutation reached
-- the server; the blob's state is read from Azurite directly.
local ll = require "leaselua"
local helper = require "helper"
local fp = require "support.faultproxy"
local slow = require "support.slow"
local cjson = require "cjson"

local CONTAINER = "lease-handoff-lab"

local function open_via(proxy, extra)
  local cfg = {
    evidence = helper.tmpdir() .. "/ev",
    manifest = helper.manifest_table,
    account_url = proxy.url,
    container = CONTAINER,
    blob = helper.unique_blob("scope"),
    ca_file = os.getenv("LEASELUA_CA_FILE"),
  }
  for k, v in pairs(extra or {}) do cfg[k] = v end
  return ll.open(cfg), cfg
end

local function count(rows, record)
  local n = 0
  for _, r in ipairs(rows) do
    if r.record == record then n = n + 1 end
  end
  return n
end

-- refused(run, code, fn, ...): fn raises code, the last row is the refusal
-- and no intent row was added (nothing was sent).
local function refused(run, code, fn, ...)
  local intents = count(run:rows(), "intent")
  local ok, err = pcall(fn, ...)
  assert.is_false(ok)
  assert.are.equal(code, err.code, tostring(err))
  local rows = run:rows()
  local last = rows[#rows]
  assert.are.equal("refusal", last.record)
  assert.are.equal(code, last.code)
  assert.are.equal(err.invariant, last.invariant)
  assert.are.equal(intents, count(rows, "intent"))
  return err, last
end

local function set(v)
  return v ~= nil and v ~= cjson.null
end

-- The mutations that reached the server, in order, as the proxy logged
-- them on arrival (before forwarding).
local function mutations(proxy)
  local out = {}
  for _, r in ipairs(fp.log(proxy, "request")) do
    if fp.is_mutation(r) then
      local q = set(r.query) and r.query or ""
      local what
      if q:find("restype=container", 1, true) then
        what = "create container"
      elseif set(r.lease_action) then
        what = "lease " .. r.lease_action
      elseif r.method == "DELETE" then
        what = "delete " .. (set(r.lease) and "with a lease" or "unconditioned")
      else
        what = string.format("put rev %d %s", r.revision, set(r.lease) and "with a lease" or "unconditioned")
      end
      out[#out + 1] = what
    end
  end
  return out
end

-- Azurite's own access log (tools/emulator/start writes it beside the
-- certificate): the methods and statuses of the mutations of blob, in
-- order. It names no header, so it corroborates the proxy's count and
-- order, and the proxy's log says which carried a lease.
local function azurite_mutations(blob)
  local log = os.getenv("LEASELUA_CA_FILE"):gsub("cert%.pem$", "azurite.log")
  local out = {}
  local tail = "/" .. CONTAINER .. "/" .. blob
  for line in (helper.read(log) or ""):gmatch("[^\n]+") do
    local method, path, status = line:match('"(%u+) (%S+) HTTP/[%d.]+" (%d+)')
    local bare, query = (path or ""):match("^([^?]*)(.*)$")
    if (method == "PUT" or method == "DELETE") and bare:sub(-#tail) == tail then
      out[#out + 1] = method .. query .. " " .. status
    end
  end
  return out
end

-- The blob as Azurite itself answers a plain GET: status, lease state,
-- body. The token goes through curl's stdin, never its argv.
local function server_blob(blob)
  local url = os.getenv("AZURE_STORAGE_ACCOUNT_URL") .. "/" .. CONTAINER .. "/" .. blob
  local cmd = "printf 'Authorization: Bearer %s\\n' \"$AZURE_STORAGE_TOKEN\" | curl -s -i --max-time 10 " ..
    "--cacert " .. helper.quote(os.getenv("LEASELUA_CA_FILE")) .. " -H @- -H 'x-ms-version: 2023-11-03' " ..
    helper.quote(url)
  local p = assert(io.popen(cmd))
  local text = p:read("a")
  p:close()
  local head, body = text:match("^(.-)\r\n\r\n(.*)$")
  head = head or text
  return {
    status = tonumber(head:match("^HTTP/[%d.]+ (%d+)")),
    lease_state = head:lower():match("\nx%-ms%-lease%-state: ([%w]+)"),
    body = body,
  }
end

local function have_live()
  return fp.have_live() and os.getenv("AZURE_STORAGE_TOKEN") ~= nil
end

describe("the guard's scope is the blob #live", function()
  local proxy
  before_each(function()
    if have_live() then proxy = fp.start({}) end
  end)
  after_each(function()
    fp.stop(proxy)
    proxy = nil
  end)
  teardown(helper.cleanup)

  it("a new lifecycle after an accepted write not read back is refused; the next Put never arrives", function()
    if not have_live() then return pending("needs the live Azurite of tools/run-specs.sh") end
    local run, cfg = open_via(proxy)
    run:declare(0, "A")
    run:declare(1, "A")
    run:create_container()
    run:lifecycle { reason = "spec" }
    local U = run:unbound("A")
    assert.are.equal(201, U:put(0).http_status)
    local err, row = refused(run, "LL_E_UNRECONCILED", run.lifecycle, run, { reason = "attack: skip the read-back" })
    assert.are.equal(4, err.invariant)
    assert.are.equal("Lifecycle", row.operation)
    assert.matches("a new lifecycle does not waive that", err.message)
    refused(run, "LL_E_UNRECONCILED", U.put, U, 1)
    assert.are.equal(0, run:read().content_revision)
    -- read back, the blob is still there: its lifecycle did not end
    err = refused(run, "LL_E_SCOPE", run.lifecycle, run, { reason = "attack: no known end" })
    assert.are.equal(14, err.invariant)
    assert.are.equal(1, count(run:rows(), "lifecycle"))
    run:finish()
    run:close()
    -- the server: one Put, and no mutation after it
    assert.are.same({ "create container", "put rev 0 unconditioned" }, mutations(proxy))
    assert.are.same({ "PUT 201" }, azurite_mutations(cfg.blob))
    local s = server_blob(cfg.blob)
    assert.are.equal(200, s.status)
    assert.are.equal(ll.payload(0, "A"), s.body)
  end)

  it("after a lease taken and a break sent, no new lifecycle and no unconditioned Put or Delete", function()
    if not have_live() then return pending("needs the live Azurite of tools/run-specs.sh") end
    local run, cfg = open_via(proxy)
    for r = 0, 2 do run:declare(r, "A") end
    run:create_container()
    run:lifecycle { reason = "spec" }
    local A, U = run:writer("A"), run:unbound("A")
    assert.are.equal(201, U:put(0).http_status)
    run:read()
    assert.are.equal(201, A:acquire { duration = -1 }.http_status)
    assert.are.equal(202, run:break_lease { period = 20 }.http_status)
    local err = refused(run, "LL_E_SCOPE", run.lifecycle, run, { reason = "attack: reset the lease" })
    assert.are.equal(14, err.invariant)
    assert.matches("lifecycle 1 did not end in a known state %(lease break%-sent%)", err.message)
    refused(run, "LL_E_LEASE_PRECONDITION", U.put, U, 2)
    refused(run, "LL_E_LEASE_PRECONDITION", U.delete, U)
    run:finish()
    run:close()
    assert.are.same({ "create container", "put rev 0 unconditioned", "lease acquire", "lease break" },
      mutations(proxy))
    assert.are.same({ "PUT 201", "PUT?comp=lease 201", "PUT?comp=lease 202" }, azurite_mutations(cfg.blob))
    local s = server_blob(cfg.blob)
    assert.are.equal(200, s.status)
    assert.are.equal("breaking", s.lease_state)
    assert.are.equal(ll.payload(0, "A"), s.body)
  end)

  it("after broken, a lifecycle starts only once a read shows the blob deleted; the run stays leased", function()
    if not have_live() then return pending("needs the live Azurite of tools/run-specs.sh") end
    local run, cfg = open_via(proxy)
    for r = 0, 2 do run:declare(r, "A") end
    run:create_container()
    run:lifecycle { reason = "spec" }
    local A, U = run:writer("A"), run:unbound("A")
    assert.are.equal(201, U:put(0).http_status)
    run:read()
    assert.are.equal(201, A:acquire { duration = -1 }.http_status)
    assert.are.equal(202, run:break_lease { period = 1 }.http_status)
    assert.are.equal("BROKEN", run:wait_for_broken {}.result)
    local err = refused(run, "LL_E_SCOPE", run.lifecycle, run, { reason = "attack: reset the lease" })
    assert.matches("%(lease broken%)", err.message)
    refused(run, "LL_E_LEASE_PRECONDITION", U.put, U, 2)
    -- the flow's way out: delete (unlocked now), then a read confirming it
    assert.are.equal(202, U:delete().http_status)
    err = refused(run, "LL_E_SCOPE", run.lifecycle, run, {})
    assert.matches("deleted but not yet confirmed absent", err.message)
    local gone = run:properties()
    assert.are.equal(404, gone.http_status)
    assert.are.equal("BlobNotFound", gone.azure_error_code) -- verbatim, as the service sent it
    assert.are.equal("STATE_OBSERVED", gone.result_classification)
    assert.are.equal("404 BlobNotFound", gone.expectation)
    for _, d in ipairs(gone.discrepancy) do assert.is_string(d.explained_by, d.text) end
    assert.are.equal(2, run:lifecycle { reason = "after the blob was confirmed absent" })
    -- the create is the one unconditioned Put the new lifecycle allows
    assert.are.equal(201, U:put(0).http_status)
    run:read()
    err = refused(run, "LL_E_LEASE_PRECONDITION", U.put, U, 2)
    assert.matches("the run has leased this blob", err.message)
    assert.are.equal("HOLD", run:finish().decision)
    run:close()
    assert.are.same({ "create container", "put rev 0 unconditioned", "lease acquire", "lease break",
      "delete unconditioned", "put rev 0 unconditioned" }, mutations(proxy))
    assert.are.same({ "PUT 201", "PUT?comp=lease 201", "PUT?comp=lease 202", "DELETE 202", "PUT 201" },
      azurite_mutations(cfg.blob))
    local s = server_blob(cfg.blob)
    assert.are.equal(200, s.status)
    assert.are.equal("available", s.lease_state)
    assert.are.equal(ll.payload(0, "A"), s.body)
  end)

  it("a second run on the blob is refused while the first holds an UNKNOWN_OUTCOME, and after it is gone", function()
    if not have_live() then return pending("needs the live Azurite of tools/run-specs.sh") end
    fp.stop(proxy)
    -- the service applies the Put; its answer never comes back
    proxy = fp.start({ { method = "PUT", body_contains = '"revision":0,', fault = "drop", ordinal = 1 } })
    local root = helper.tmpdir()
    local blob = helper.unique_blob("scope-second")
    local base = {
      manifest = helper.manifest_table, account_url = proxy.url, container = CONTAINER, blob = blob,
      ca_file = os.getenv("LEASELUA_CA_FILE"),
    }
    local function cfg(extra)
      local c = {}
      for k, v in pairs(base) do c[k] = v end
      for k, v in pairs(extra) do c[k] = v end
      return c
    end
    -- the first run, in a process of its own (the stock module), holds
    -- the doubt and stays open
    local first = root .. "/first"
    local build = helper.host:match("^(.*)/[^/]+$")
    local script = helper.write(helper.tmpdir() .. "/first.lua", string.format([[
package.cpath = %q .. "/?.so;" .. package.cpath
local ll = require "leaselua"
local run = ll.open(%s)
run:declare(0, "A")
local row, err = run:unbound("A"):put(0)
print("doubts " .. run:state().doubts .. " " .. tostring(row == nil and err.row.result_classification))
io.stdout:flush()
os.execute("sleep 60")
]], build, slow.literal(cfg { evidence = first })))
    local d = helper.tmpdir()
    local pid = slow.spawn("lua5.4 " .. helper.quote(script), d .. "/out", d .. "/err")
    local said = slow.wait_until(function() return (helper.read(d .. "/out") or ""):match("doubts %d+ %S+") end, 20)
    assert.are.equal("doubts 1 UNKNOWN_OUTCOME", said, helper.read(d .. "/err"))
    -- a second run on the blob, in the same evidence root or another: the lock
    for _, ev in ipairs { root .. "/second", helper.tmpdir() .. "/elsewhere" } do
      local ok, err = pcall(ll.open, cfg { evidence = ev })
      assert.is_false(ok)
      assert.are.equal("LL_E_SCOPE", err.code)
      assert.matches("is in use by another run %(pid " .. pid .. ", evidence " .. first:gsub("%p", "%%%0"), err.message)
      assert.matches(blob:gsub("%p", "%%%0"), err.message)
      assert.is_nil(helper.read(ev .. "/export/ledger.jsonl"))
    end
    -- the first process ends without a decision
    slow.kill(pid, "KILL")
    local ok, err = pcall(ll.open, cfg { evidence = root .. "/second" })
    assert.is_false(ok)
    assert.are.equal("LL_E_SCOPE", err.code)
    assert.matches("previous run on it in this evidence root, " .. first:gsub("%p", "%%%0") ..
      ", ended without a decision", err.message)
    assert.matches("scripts/recovery.lua %-%-evidence " .. first:gsub("%p", "%%%0"), err.message)
    -- so far the server saw the doubtful Put and no other mutation
    assert.are.same({ "put rev 0 unconditioned" }, mutations(proxy))
    -- recovery of that very run is allowed; it keeps the latch until reconciled
    local rec = ll.open(cfg { evidence = first, recover = true, manifest = false })
    rec:declare(1, "A")
    assert.are.equal(1, rec:state().doubts)
    local U = rec:unbound("A")
    refused(rec, "LL_E_HOLD", U.put, U, 1)
    local r = rec:reconcile()
    assert.are.equal("DOUBTFUL_WRITE_COMMITTED", r.result)
    assert.are.equal(0, rec:finish().open_doubts)
    rec:close()
    -- settled: a fresh run in the same root may start
    local again = ll.open(cfg { evidence = root .. "/second" })
    assert.are.equal(200, again:properties().http_status)
    again:close()
    assert.are.same({ "put rev 0 unconditioned" }, mutations(proxy))
    -- Azurite applied that one Put (its answer was dropped on the way back)
    assert.are.same({ "PUT 201" }, azurite_mutations(blob))
    local s = server_blob(blob)
    assert.are.equal(200, s.status)
    assert.are.equal(ll.payload(0, "A"), s.body)
  end)

  it("in one process: a second handle on the blob is refused until the first is closed", function()
    if not have_live() then return pending("needs the live Azurite of tools/run-specs.sh") end
    local run, cfg = open_via(proxy)
    local ok, err = pcall(ll.open, { evidence = helper.tmpdir() .. "/ev", manifest = helper.manifest_table,
      account_url = proxy.url, container = CONTAINER, blob = cfg.blob, ca_file = os.getenv("LEASELUA_CA_FILE") })
    assert.is_false(ok)
    assert.are.equal("LL_E_SCOPE", err.code)
    assert.matches(cfg.evidence:gsub("%p", "%%%0"), err.message)
    assert.are.equal("HOLD", run:finish().decision)
    -- after finish nothing is sent, no lifecycle starts, no second decision
    refused(run, "LL_E_ORDER", run.properties, run)
    refused(run, "LL_E_ORDER", run.lifecycle, run, {})
    assert.is_false(pcall(run.finish, run))
    assert.are.equal(1, count(run:rows(), "decision"))
    run:close()
    local other = ll.open { evidence = helper.tmpdir() .. "/ev", manifest = helper.manifest_table,
      account_url = proxy.url, container = CONTAINER, blob = cfg.blob, ca_file = os.getenv("LEASELUA_CA_FILE") }
    other:close()
    assert.are.same({}, mutations(proxy))
    assert.are.same({}, azurite_mutations(cfg.blob))
  end)
end)
