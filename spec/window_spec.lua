-- The bracketed breaking probe on the live Azurite, and the evidence row's
-- fields against the seed's list.
local ll = require "leaselua"
local helper = require "helper"

local SEED_FIELDS = {
  "run_id", "event_id", "fixture_epoch", "operation", "actor_alias", "request_started_utc",
  "response_received_utc", "http_method", "blob_path", "requested_api_version", "returned_api_version",
  "lease_alias_supplied", "payload_revision", "payload_sha256", "http_status", "azure_error_code",
  "x_ms_request_id", "lease_state_before", "lease_status_before", "lease_state_after", "lease_status_after",
  "etag", "request_shape", "result_classification", "notes",
}

local function leased(period)
  local run = ll.open {
    evidence = helper.tmpdir() .. "/ev", manifest = helper.manifest_table,
    account_url = os.getenv("AZURE_STORAGE_ACCOUNT_URL"), container = "lease-handoff-lab",
    blob = helper.unique_blob("window"), ca_file = os.getenv("LEASELUA_CA_FILE"),
  }
  for r = 0, 3 do run:declare(r, "A") end
  run:create_container()
  run:lifecycle { reason = "window spec" }
  local A, U = run:writer("A"), run:unbound("A")
  U:put(0)
  run:read()
  A:acquire { duration = -1 }
  assert.are.equal(202, run:break_lease { period = period }.http_status)
  return run, A
end

describe("breaking window #live", function()
  teardown(helper.cleanup)

  it("a probe inside the break period reproduces A's breaking write", function()
    local run, A = leased(5)
    local f = run:probe(A, 3)
    assert.are.equal("REPRODUCED", f.result)
    -- in milliseconds, and inside the 5 s period both reads saw breaking in
    -- (not a wall-clock budget: a loaded machine may take a second or two)
    assert.is_true(f.bracket_ms > 0 and f.bracket_ms < 5000, tostring(f.bracket_ms))
    assert.are.equal(3, run:read().content_revision)
    assert.are.equal("REPRODUCED", run:decide().window_finding)
    run:close()
  end)

  it("a probe started when less of the period remains than a request takes is INCONCLUSIVE_WINDOW", function()
    local run, A = leased(1)
    run:sleep(999)
    local f = run:probe(A, 3)
    assert.are.equal("INCONCLUSIVE_WINDOW", f.result)
    assert.matches("breaking", f.reason)
    run:read()
    assert.are.equal("INCONCLUSIVE_WINDOW", run:decide().window_finding)
    run:close()
  end)

  it("outcome rows carry every seed field, and lease_real_id only in the protected ledger", function()
    local run = leased(0)
    local dir = run:state().evidence
    run:close()
    local n = 0
    for line in helper.read(dir .. "/export/ledger.jsonl"):gmatch("[^\n]+") do
      if line:find('"record":"outcome"', 1, true) then
        n = n + 1
        for _, f in ipairs(SEED_FIELDS) do assert.truthy(line:find('"' .. f .. '":', 1, true), f) end
        assert.falsy(line:find('"lease_real_id"', 1, true))
      end
    end
    assert.is_true(n >= 5)
    local prot = helper.read(dir .. "/protected/ledger.jsonl"):match('[^\n]*"record":"outcome"[^\n]*')
    assert.truthy(prot:find('"lease_real_id":', 1, true))
  end)
end)
