-- Invariant 15, do no harm to the target, against the live Azurite, with
-- the server's own view checked by curl before and after: a blob that
-- already exists is left byte for byte and ETag for ETag (through the
-- host, as issue #13 ran it); a blob created between the preflight and
-- the create is not overwritten; a cleanup whose If-Match fails leaves the
-- other writer's blob and ends RECONCILE; an acquire or a break on a blob
-- another writer replaced is refused by its If-Match and holds the run; a target that cannot be read
-- (no such host, a refused port, an unverified certificate, a refused
-- token) stops the run with exit 64 and no mutation.
local helper = require "helper"

local CONTAINER = "lease-handoff-lab"
local PRECIOUS = '{"important":"production data"}'

local function env(blob, extra)
  local e = helper.live_env(blob)
  e.LEASELUA_CA_FILE = os.getenv("LEASELUA_CA_FILE")
  for k, v in pairs(extra or {}) do e[k] = v end
  return e
end

local function mutation_intents(rows)
  local out = {}
  for _, r in ipairs(rows) do
    if r.record == "intent" and r.http_method ~= "GET" and r.http_method ~= "HEAD" then out[#out + 1] = r end
  end
  return out
end

local function last(rows, record)
  local found
  for _, r in ipairs(rows) do
    if r.record == record then found = r end
  end
  return found
end

local function verify_ok(dir)
  local rc, out = helper.run({ "verify", dir })
  assert.are.equal(0, rc, out)
  assert.matches("consistent", out)
end

describe("do no harm to the target #live", function()
  if not helper.have_live() then
    it("needs a live Azurite (tools/run-specs.sh)", function() pending("AZURE_STORAGE_ACCOUNT_URL is not set") end)
    return
  end

  local ll = require "leaselua"
  local url = os.getenv("AZURE_STORAGE_ACCOUNT_URL")
  local ca = os.getenv("LEASELUA_CA_FILE")
  local manifest, work

  -- The server's view, outside leaselua: curl with the lab's dev token
  -- (helper.live_curl).
  local function curl(method, blob, body)
    return helper.live_curl(method, url .. "/" .. CONTAINER .. (blob and ("/" .. blob) or "?restype=container"),
      body)
  end

  local function open(dir, blob)
    return ll.open { evidence = dir, manifest = helper.manifest_table, account_url = url, container = CONTAINER,
      blob = blob, ca_file = ca }
  end

  setup(function()
    work = helper.tmpdir()
    manifest = helper.manifest_file(work)
    local st = curl("PUT", nil)
    assert.is_true(st == 201 or st == 409, "create container: " .. tostring(st))
  end)
  teardown(helper.cleanup)

  it("leaves a blob that existed before the run byte for byte, ETag unchanged, and exits 64", function()
    local blob = helper.unique_blob("precious")
    assert.are.equal(201, (curl("PUT", blob, PRECIOUS)))
    local st, before, bytes = curl("GET", blob)
    assert.are.equal(200, st)
    assert.are.equal(PRECIOUS, bytes)

    local dir = work .. "/precious"
    local rc, out, err = helper.run({ "scripts/main_handoff.lua", "--break-period", "2", "--manifest", manifest,
      "--evidence", dir }, env(blob))
    assert.are.equal(64, rc, out .. err)
    local path = "/devstoreaccount1/" .. CONTAINER .. "/" .. blob
    assert.truthy(out:find("stopped: LL_E_TARGET_EXISTS: Create Container refused (invariant 15): the blob " ..
      path .. " already exists (preflight e0001: 200, ETag " .. before.etag .. ", 31 bytes, lease " ..
      "available/unlocked): leaselua only creates its own disposable blob; choose an unused AZURE_STORAGE_BLOB " ..
      "or delete it yourself if it is yours\n", 1, true), out)

    -- the server's view: the same bytes, the same ETag, the same time
    local st2, after, bytes2 = curl("GET", blob)
    assert.are.equal(200, st2)
    assert.are.equal(PRECIOUS, bytes2)
    assert.are.equal(before.etag, after.etag)
    assert.are.equal(before["last-modified"], after["last-modified"])

    -- the ledger: the preflight found it, and nothing was sent after
    local rows = helper.rows(dir)
    local pre = helper.outcomes(rows)[1]
    assert.is_true(pre.preflight)
    assert.are.equal("Get Blob Properties", pre.operation)
    assert.are.equal(200, pre.http_status)
    assert.are.equal(before.etag, pre.etag)
    assert.are.equal("31", pre.content_length)
    assert.are.equal(1, #helper.outcomes(rows))
    assert.are.same({}, mutation_intents(rows))
    assert.are.equal("LL_E_TARGET_EXISTS", last(rows, "refusal").code)
    local d = last(rows, "decision")
    assert.are.equal("HOLD", d.decision)
    assert.are.equal("target_exists", d.target_stop.kind)
    assert.are.equal(0, d.target_stop.mutations_sent)
    assert.are.equal(64, d.target_stop.exit)
    assert.are.equal("no mutation was sent: the target is as the run found it", d.reasons[2])
    verify_ok(dir)
  end)

  it("does not overwrite a blob created after the preflight: 409 BlobAlreadyExists, exit 64", function()
    local blob = helper.unique_blob("race")
    local dir = work .. "/race"
    local run = open(dir, blob)
    run:declare(0, "A")
    local U = run:unbound("A")
    run:create_container() -- the preflight goes first: 404 BlobNotFound
    run:lifecycle { reason = "create race" }
    -- another writer creates the blob now
    assert.are.equal(201, (curl("PUT", blob, PRECIOUS)))
    local _, before = curl("GET", blob)
    local put = U:put(0)
    assert.are.equal("*", put.if_none_match)
    assert.are.equal(409, put.http_status)
    assert.are.equal("BlobAlreadyExists", put.azure_error_code) -- Azurite's answer, verbatim
    assert.are.equal("The specified blob already exists.", put.error_message:match("^[^\n]*"))
    assert.are.equal("EXPECTED_REJECTION", put.result_classification)
    local ok, e = pcall(U.put, U, 0)
    assert.is_false(ok)
    assert.are.equal("LL_E_TARGET_EXISTS", e.code)
    assert.are.equal(15, e.invariant)
    local decision, code = run:finish()
    run:close()
    assert.are.equal(64, code)
    assert.are.equal("target_exists", decision.target_stop.kind)

    local st, after, bytes = curl("GET", blob)
    assert.are.equal(200, st)
    assert.are.equal(PRECIOUS, bytes)
    assert.are.equal(before.etag, after.etag)
    local rows = helper.rows(dir)
    local outs = helper.outcomes(rows)
    assert.is_true(outs[1].preflight)
    assert.are.equal(404, outs[1].http_status)
    assert.are.equal("BlobNotFound", outs[1].azure_error_code)
    local seen = outs[#outs]
    assert.are.equal("target exists: properties", seen.step)
    assert.are.equal(before.etag, seen.etag)
    verify_ok(dir)
  end)

  it("leaves the blob and ends RECONCILE when another writer changed it before cleanup", function()
    -- The cleanup of scripts/lib/handoff.lua: B releases its lease, a fresh
    -- read confirms the release, then the Delete. Between the two, another
    -- writer outside the run (curl, with no lease: B just gave it up)
    -- overwrites the blob. The Delete's If-Match names the ETag of B's
    -- accepted write that the run read back, so the service refuses it.
    local blob = helper.unique_blob("cleanup")
    local dir = work .. "/cleanup"
    local run = open(dir, blob)
    run:declare(0, "A")
    run:declare(1, "B")
    local U, B = run:unbound("A"), run:writer("B")
    run:create_container()
    run:lifecycle { reason = "cleanup race" }
    U:put(0)
    run:read()
    B:acquire { duration = -1 }
    local put = B:put(1)
    local back = run:read()
    assert.are.equal(1, back.content_revision)
    assert.are.equal(put.etag, back.etag)
    B:release()
    run:properties()
    local other = '{"owner":"another-app","seq":7}'
    assert.are.equal(201, (curl("PUT", blob, other)))
    local _, changed = curl("GET", blob)
    assert.are_not.equal(put.etag, changed.etag)

    local del = U:delete()
    assert.are.equal(put.etag, del.if_match)
    assert.matches("if_match=" .. put.etag:gsub("%p", "%%%0"), del.request_shape)
    assert.are.equal(412, del.http_status)
    assert.are.equal("ConditionNotMet", del.azure_error_code) -- Azurite's answer, verbatim
    assert.are.equal("EXPECTED_REJECTION", del.result_classification)
    local decision, code = run:finish()
    run:close()
    assert.are.equal(3, code)
    assert.are.equal("RECONCILE", decision.decision)
    assert.matches("the cleanup Delete was refused 412 ConditionNotMet: the blob changed after the run's last " ..
      "read%-back", decision.reasons[1])

    -- the server's view: the other writer's bytes are still there
    local st, after, bytes = curl("GET", blob)
    assert.are.equal(200, st)
    assert.are.equal(other, bytes)
    assert.are.equal(changed.etag, after.etag)
    verify_ok(dir)
  end)

  -- Another writer replaces the run's blob (curl, outside the run) after
  -- the run's last answer about it. The run's acquire and break carry
  -- If-Match on the ETag of its last accepted write, so the service refuses
  -- them: no lease on the other writer's object, and the other party's
  -- lease is not broken.
  local function replaced_lease_op(name, after_create, op, want_state)
    local blob = helper.unique_blob(name)
    local dir = work .. "/" .. name
    local run = open(dir, blob)
    run:declare(0, "A")
    local A = run:writer("A")
    run:create_container()
    run:lifecycle { reason = "replaced before a lease operation" }
    local put = run:unbound("A"):put(0)
    run:read()
    after_create(A, blob)
    local _, before = curl("GET", blob)
    assert.are_not.equal(put.etag, before.etag)
    local row = op(run, A)
    assert.are.equal(put.etag, row.if_match)
    assert.are.equal(412, row.http_status)
    assert.are.equal("ConditionNotMet", row.azure_error_code) -- Azurite's answer, verbatim
    assert.are.equal("EXPECTED_REJECTION", row.result_classification)
    local refused_ok, refused = pcall(run.break_lease, run, { period = 0 })
    assert.is_false(refused_ok)
    assert.are.equal("LL_E_HOLD", refused.code)
    local decision, code = run:finish()
    run:close()
    assert.are.equal(2, code)
    assert.are.equal("HOLD", decision.decision)
    assert.matches("refused 412 ConditionNotMet on If%-Match", table.concat(decision.reasons, "\n"))
    -- the server's view: the other writer's blob, as it left it
    local st, after = curl("GET", blob)
    assert.are.equal(200, st)
    assert.are.equal(before.etag, after.etag)
    assert.are.equal(want_state, after["x-ms-lease-state"])
    verify_ok(dir)
  end

  it("takes no lease on a blob replaced after its read-back: acquire refused 412, HOLD", function()
    replaced_lease_op("replaced-acquire", function(_, blob)
      assert.are.equal(201, (curl("PUT", blob, '{"owner":"another-app","seq":8}')))
    end, function(_, A) return A:acquire { duration = -1 } end, "available")
  end)

  it("breaks no other party's lease on a blob replaced under the run's lease: break refused 412, HOLD", function()
    replaced_lease_op("replaced-break", function(A, blob)
      A:acquire { duration = -1 }
      local target = url .. "/" .. CONTAINER .. "/" .. blob
      -- another party breaks A's lease, writes, and takes a lease of its own
      assert.are.equal(202, (helper.live_curl("PUT", target .. "?comp=lease", nil,
        { "x-ms-lease-action: break", "x-ms-lease-break-period: 0" })))
      assert.are.equal(201, (curl("PUT", blob, '{"owner":"another-app","seq":9}')))
      assert.are.equal(201, (helper.live_curl("PUT", target .. "?comp=lease", nil,
        { "x-ms-lease-action: acquire", "x-ms-lease-duration: -1" })))
    end, function(run) return run:break_lease { period = 0 } end, "leased")
  end)

  it("conditions a lease holder's Delete on its lease and the read-back ETag", function()
    local blob = helper.unique_blob("holder")
    local dir = work .. "/holder"
    local run = open(dir, blob)
    run:declare(0, "B")
    local B = run:writer("B")
    run:create_container()
    run:lifecycle { reason = "delete while leased" }
    local refused_ok, refused = pcall(B.delete, B) -- nothing of ours to delete yet
    assert.is_false(refused_ok)
    assert.are.equal("LL_E_DELETE_UNCONFIRMED", refused.code)
    run:unbound("B"):put(0)
    run:read()
    B:acquire { duration = -1 }
    local del = B:delete()
    assert.are.equal(202, del.http_status)
    assert.matches("lease_header=present if_match=\"0x%x+\"$", del.request_shape)
    run:finish()
    run:close()
    assert.are.equal(404, (curl("GET", blob)))
  end)

  -- what is wrong, and the cause as curl names it (Lua patterns)
  local unreachable = {
    { "an unresolvable host", { AZURE_STORAGE_ACCOUNT_URL = "https://nonexistent.invalid/devstoreaccount1" },
      manifest = '{"resource_owner":"storage-team","ticket":"LAB-SPEC","permitted_actors":["A","B","operator",' ..
        '"observer"],"cleanup_authority":"storage-team","endpoint_kind":"azure",' ..
        '"declared_azure_host":"nonexistent.invalid"}',
      "^cannot reach nonexistent%.invalid for the preflight read of [^\n]* %(Couldn't resolve host name: Could " ..
      "not resolve host: nonexistent%.invalid%): nothing was mutated; check AZURE_STORAGE_ACCOUNT_URL" },
    { "a refused loopback port", { AZURE_STORAGE_ACCOUNT_URL = "https://127.0.0.1:1/devstoreaccount1" },
      "^cannot reach 127%.0%.0%.1:1 for the preflight read of [^\n]*Failed to connect to 127%.0%.0%.1 port 1" },
    { "a certificate it cannot verify", { LEASELUA_CA_FILE = false },
      "^cannot reach 127%.0%.0%.1:%d+ for the preflight read of [^\n]*SSL certificate problem" },
    { "a token the service refuses", { AZURE_STORAGE_TOKEN = helper.jwt(string.format(
      '{"aud":"https://wrong.example","iss":"https://sts.windows.net/ab1f708d-50f6-404c-a006-d71b2ac7a606/",' ..
      '"nbf":%d,"exp":%d}', os.time() - 60, os.time() + 3600)) },
      "^the preflight read of [^\n]* was refused 403 AuthenticationFailed: nothing was mutated; check the " ..
      "credential" },
  }
  for i, u in ipairs(unreachable) do
    it("stops before any mutation on " .. u[1] .. ": exit 64, the cause in one line", function()
      local dir = work .. "/unreachable-" .. i
      -- the lab's manifest names the endpoint kind: a host like
      -- nonexistent.invalid says nothing about it
      local lab = helper.root .. "/tools/emulator/manifest.json"
      -- a name the lab's emulator manifest cannot cover: the operator
      -- declares it as an Azure host (a custom domain, a private endpoint)
      if u.manifest then lab = helper.write(helper.tmpdir() .. "/manifest.json", u.manifest) end
      local rc, out, err = helper.run({ "scripts/main_handoff.lua", "--manifest", lab, "--evidence", dir },
        env(helper.unique_blob("unreachable"), u[2]))
      assert.are.equal(64, rc, out .. err)
      local line = out:match("stopped: LL_E_PREFLIGHT: Create Container refused %(invariant 15%): ([^\n]*)\n")
      assert.is_string(line, out .. err)
      assert.matches(u[3], line)
      local rows = helper.rows(dir)
      assert.are.same({}, mutation_intents(rows))
      assert.are.equal(1, #helper.outcomes(rows))
      local d = last(rows, "decision")
      assert.are.equal("preflight_failed", d.target_stop.kind)
      assert.are.equal(0, d.target_stop.mutations_sent)
      verify_ok(dir)
    end)
  end
end)
