-- Bad input from the server: a loopback server (spec/support/
-- garbage_server.js) answers the first request of the main handoff with
-- something that is not a usable answer. Each case: one clear line says
-- why the run stopped, the exit code is HOLD's (2), the server received
-- exactly one request (none after the doubt), and the ledger holds the
-- row and verifies (nothing recorded was lost). Offline: no Azurite.
local helper = require "helper"
local fp = require "support.faultproxy"

local SCRIPT = helper.root .. "/scripts/main_handoff.lua"
local JS = helper.root .. "/spec/support/garbage_server.js"

local function start(mode)
  local d = helper.tmpdir()
  local file = d .. "/count"
  local p = assert(io.popen(string.format("exec env -u NODE_EXTRA_CA_CERTS node %s %s %s 20",
    helper.quote(JS), mode, helper.quote(file)), "r"))
  local port, pid = tonumber(p:read("l")), tonumber(p:read("l"))
  assert(port and pid, "garbage_server did not start")
  return {
    url = string.format("http://127.0.0.1:%d/devstoreaccount1", port),
    count = function() return tonumber(helper.read(file)) end,
    stop = function()
      fp.kill(pid, "TERM")
      p:close()
    end,
  }
end

local CASES = {
  { "not-http", "a server that does not speak HTTP", "UNKNOWN_OUTCOME", "Received HTTP/0%.9 when not allowed" },
  { "huge-headers", "100 KB of response headers", "UNKNOWN_OUTCOME", "response headers exceed 65536 bytes" },
  { "huge-body", "a 10 MB response body", "UNKNOWN_OUTCOME", "response body exceeds 4194304 bytes" },
  -- the doubt of step 0 already stops the first lifecycle (invariant 14)
  { "bad-xml", "an XML error body that is not well formed", "EVIDENCE_ERROR",
    "LL_E_HOLD: new lifecycle refused: 1 mutation%(s%) of lifecycle 0 have an unknown outcome %(invariant 3%)" },
}

describe("a server answering garbage", function()
  local token, manifest

  setup(function()
    token = helper.dev_token()
    manifest = helper.manifest_file(helper.tmpdir())
  end)
  teardown(helper.cleanup)

  for _, c in ipairs(CASES) do
    local mode, what, class, why = c[1], c[2], c[3], c[4]
    it(what .. ": one request, one stop line naming it, exit 2 (HOLD), the ledger verifies", function()
      local srv = start(mode)
      local ev = helper.tmpdir() .. "/ev"
      local ok, err = pcall(function()
        local rc, out, stderr = helper.run_env({ SCRIPT, "--manifest", manifest, "--evidence", ev }, {
          AZURE_STORAGE_ACCOUNT_URL = srv.url, AZURE_STORAGE_CONTAINER = "lease-handoff-lab",
          AZURE_STORAGE_BLOB = helper.unique_blob("garbage"), AZURE_STORAGE_TOKEN = token,
          AZURE_STORAGE_SAS = false, LEASELUA_CA_FILE = false, LEASELUA_EVIDENCE_ROOT = false,
        })
        local stops = {}
        for line in out:gmatch("[^\n]+") do
          if line:find("^stopped: ") then stops[#stops + 1] = line end
        end
        local rows = helper.outcomes(helper.rows(ev))
        local vrc, vout = helper.run { "verify", ev }
        fp.record {
          suite = "bad_input", case = "server: " .. what, rc = rc, line = stops[1], stderr = stderr,
          requests = srv.count(), row_class = rows[1] and rows[1].result_classification,
          transport_error = rows[1] and rows[1].transport_error, verify_rc = vrc,
        }
        assert.are.equal(2, rc, out .. stderr)
        assert.are.equal(1, #stops, out)
        assert.matches(why, stops[1])
        assert.matches("DECISION: HOLD", out)
        assert.are.equal(1, srv.count(), "requests the server received")
        assert.are.equal(1, #rows, "outcome rows")
        assert.are.equal(class, rows[1].result_classification)
        if mode == "bad-xml" then assert.is_true(rows[1].error_body_malformed) end
        assert.are.equal(1, rows[1].emitted_requests)
        assert.are.equal(0, vrc, vout)
        assert.matches("decision HOLD", vout)
      end)
      srv.stop()
      if not ok then error(err, 0) end
    end)
  end
end)
