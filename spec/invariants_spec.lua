-- Each DESIGN.md section 2 invariant, attacked from a Lua script: C refuses,
-- records the refusal, and sends nothing.
local ll = require "leaselua"
local helper = require "helper"

local function open_live(extra)
  local cfg = {
    evidence = helper.tmpdir() .. "/ev",
    manifest = helper.manifest_table,
    account_url = os.getenv("AZURE_STORAGE_ACCOUNT_URL"),
    container = "lease-handoff-lab",
    blob = helper.unique_blob("inv"),
    ca_file = os.getenv("LEASELUA_CA_FILE"),
  }
  for k, v in pairs(extra or {}) do cfg[k] = v end
  return ll.open(cfg)
end

local function count(rows, record)
  local n = 0
  for _, r in ipairs(rows) do
    if r.record == record then n = n + 1 end
  end
  return n
end

-- refused(run, code, fn): fn must raise code; the last row is the refusal
-- and no intent row was added.
local function refused(run, code, fn, ...)
  local intents = count(run:rows(), "intent")
  local ok, err = pcall(fn, ...)
  assert.is_false(ok)
  assert.are.equal(code, err.code)
  assert.matches("%S", err.message)
  local rows = run:rows()
  local last = rows[#rows]
  assert.are.equal("refusal", last.record)
  assert.are.equal(code, last.code)
  assert.are.equal(intents, count(rows, "intent"))
  return err
end

local function leased_run()
  local run = open_live()
  for r = 0, 6 do run:declare(r, r == 5 and "B" or "A") end
  run:create_container()
  run:lifecycle { reason = "spec" }
  local A, U = run:writer("A"), run:unbound("A")
  assert.are.equal(201, U:put(0).http_status)
  run:read()
  assert.are.equal(201, A:acquire { duration = -1 }.http_status)
  return run, A, U
end

describe("invariants #live", function()
  teardown(helper.cleanup)

  it("5: a lease-bound writer cannot drop its lease, and an unleased write is refused once leased", function()
    local run, A, U = leased_run()
    assert.is_true(A.bound)
    assert.has_error(function() A.bound = false end)
    assert.are.equal("leaselua.Writer", getmetatable(A))
    local err = refused(run, "LL_E_LEASE_PRECONDITION", U.put, U, 1)
    assert.are.equal(5, err.invariant)
    -- the same write as a declared negative control is allowed, and rejected by the service
    local row = U:put(2, { control = true })
    assert.are.equal(412, row.http_status)
    assert.are.equal("LeaseIdMissing", row.azure_error_code)
    run:close()
  end)

  it("4: no mutation before the accepted write is read back", function()
    local run, A = leased_run()
    assert.are.equal(201, A:put(1).http_status)
    local err = refused(run, "LL_E_UNRECONCILED", A.put, A, 3)
    assert.are.equal(4, err.invariant)
    assert.are.equal(1, run:read().content_revision)
    assert.are.equal(201, A:put(3).http_status)
    run:close()
  end)

  it("6: an undeclared payload is never sent", function()
    local run, A = leased_run()
    local err = refused(run, "LL_E_UNDECLARED", A.put, A, 42)
    assert.are.equal(6, err.invariant)
    -- revision 5 is declared for B, not A
    refused(run, "LL_E_UNDECLARED", A.put, A, 5)
    run:close()
  end)

  it("5: a gap write outside a destructive lifecycle is refused", function()
    local run, A, U = leased_run()
    assert.are.equal(202, run:break_lease { period = 1 }.http_status)
    assert.are.equal("finding", run:probe(A, 3).record)
    run:read()
    assert.are.equal("BROKEN", run:wait_for_broken {}.result)
    refused(run, "LL_E_LEASE_PRECONDITION", U.put, U, 2, { control = true })
    refused(run, "LL_E_LEASE_PRECONDITION", U.put, U, 2)
    run:close()
  end)

  it("a destructive lifecycle needs an accepted main run (checked in C)", function()
    local run = open_live()
    local ok, err = pcall(run.lifecycle, run, { destructive = true })
    assert.is_false(ok)
    assert.are.equal("LL_E_USAGE", err.code)
    ok, err = pcall(run.lifecycle, run, { destructive = true, after = helper.tmpdir() })
    assert.is_false(ok)
    assert.matches("does not verify", err.message)
    run:close()
  end)

  it("the early B acquire is allowed only after the breaking probe", function()
    local run = leased_run()
    local B = run:writer("B")
    run:break_lease { period = 1 }
    refused(run, "LL_E_ORDER", B.acquire, B, { duration = -1 })
    run:close()
  end)

  it("11: actors outside the manifest are refused", function()
    local run = leased_run()
    local ok = pcall(run.writer, run, "C")
    assert.is_true(ok) -- binding is local; sending is what the guard stops
    local C = run:writer("C")
    refused(run, "LL_E_MANIFEST", C.put, C, 1)
    run:close()
  end)

  it("11: no request before a manifest, and an incomplete manifest is refused", function()
    local dir = helper.tmpdir() .. "/ev"
    local ok, err = pcall(ll.open, {
      evidence = dir, manifest = { resource_owner = "x", permitted_actors = { "A" }, cleanup_authority = "x" },
      account_url = os.getenv("AZURE_STORAGE_ACCOUNT_URL"), container = "c-x", blob = "b",
      ca_file = os.getenv("LEASELUA_CA_FILE"),
    })
    assert.is_false(ok)
    assert.are.equal("LL_E_MANIFEST", err.code)
    assert.matches("ticket", err.message)
    assert.is_nil(helper.read(dir .. "/export/ledger.jsonl"))
  end)
end)

describe("invariant 3: the HOLD latch", function()
  local port, log, pid
  setup(function()
    local d = helper.tmpdir()
    log = d .. "/requests.log"
    local p = io.popen("node spec/support/slow_server.js " .. log ..
      " --delay-put=3000 --lifetime=30000 & echo $!; wait", "r")
    pid = p:read("l")
    port = p:read("l")
    -- keep the pipe open: the server lives until its lifetime ends or we kill it
    helper.slow_pipe = p
  end)
  teardown(function()
    if pid then os.execute("kill " .. pid .. " 2>/dev/null") end
    if helper.slow_pipe then helper.slow_pipe:close() end
    helper.cleanup()
  end)

  it("after an unknown outcome every mutation raises until reconcile", function()
    local run = ll.open {
      evidence = helper.tmpdir() .. "/ev", manifest = helper.manifest_table,
      account_url = "http://127.0.0.1:" .. port .. "/devstoreaccount1",
      container = "lease-handoff-lab", blob = "hold.json", total_timeout_ms = 500,
      -- offline too: the slow server takes any bearer token
      auth = { kind = "command", token_command = helper.host .. " dev-token" }, -- no shell: no quotes
    }
    run:declare(0, "A")
    run:declare(1, "A")
    local U = run:unbound("A")
    local row, err = U:put(0)
    assert.is_nil(row)
    assert.are.equal("LL_E_TRANSPORT", err.code)
    assert.are.equal("UNKNOWN_OUTCOME", err.row.result_classification)
    local e = refused(run, "LL_E_HOLD", U.put, U, 1)
    assert.are.equal(3, e.invariant)
    local A = run:writer("A")
    refused(run, "LL_E_HOLD", A.acquire, A, { duration = -1 })
    local rec = run:reconcile()
    assert.are.equal("DOUBTFUL_WRITE_COMMITTED", rec.result)
    assert.are.equal(0, rec.content_revision)
    assert.are.equal(0, run:state().doubts)
    local d = run:finish()
    assert.are.equal("HOLD", d.decision) -- no handoff chain, but nothing doubtful left
    run:close()
  end)
end)

describe("invariant 3, run-wide: a doubt about the evidence", function()
  local slow = require "support.slow"
  local server
  setup(function()
    -- Get Blob answered as executed under another service version
    server = slow.start { get_version = "2021-12-02", lifetime_ms = 30000 }
  end)
  teardown(function()
    slow.stop(server)
    helper.cleanup()
  end)

  it("refuses every mutation for the rest of the run, even after a reconcile", function()
    local run = ll.open {
      evidence = helper.tmpdir() .. "/ev", manifest = helper.manifest_table,
      account_url = server.url, container = "lease-handoff-lab", blob = "doubt.json",
      auth = { kind = "command", token_command = helper.host .. " dev-token" }, -- no shell: no quotes
    }
    run:declare(0, "A")
    run:declare(1, "A")
    local U = run:unbound("A")
    assert.are.equal(201, U:put(0).http_status)
    local read = run:read()
    assert.are.equal("2021-12-02", read.returned_api_version)
    local e = refused(run, "LL_E_HOLD", U.put, U, 1)
    assert.are.equal(3, e.invariant)
    assert.matches("can only end HOLD %(event e%d+ %(Get Blob%).-2021%-12%-02%).-no reconcile lifts that", e.message)
    local A = run:writer("A")
    refused(run, "LL_E_HOLD", A.acquire, A, { duration = -1 })
    run:properties()
    run:reconcile()
    refused(run, "LL_E_HOLD", U.delete, U)
    run:properties() -- reads stay allowed
    assert.are.equal("HOLD", run:finish().decision)
    run:close()
    -- the server saw one Put, then nothing but reads
    local methods = {}
    for _, r in ipairs(slow.requests(server)) do methods[#methods + 1] = r.method end
    assert.are.same({ "PUT", "GET", "HEAD", "HEAD", "GET", "HEAD" }, methods)
  end)
end)
