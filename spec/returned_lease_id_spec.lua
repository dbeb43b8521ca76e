-- An answer whose headers say two things, or more than the row keeps, is
-- never positive evidence: the documented ACCEPT fixture, replayed with
-- one response edited. B's acquire answered with an x-ms-lease-id that is
-- not exactly one GUID (B's ID with A's after it, padded, sent twice with
-- different values) does not match the proposed ID and is an
-- EVIDENCE_ERROR; so is any judged header sent twice with different values
-- (header_problems names it), and Server, on which the known deviations
-- are matched (the row's server is then null). The same header twice with the same value
-- changes nothing. Offline: fixtures are written to a temporary directory.
local helper = require "helper"
local rp = require "support.replay"
local cjson = require "cjson"

local BASE = "documented/azure-main-handoff-accept"
local MARK = "@@edited@@"

-- The fixture with one response header of exchange `which` (a predicate
-- on the exchange) replaced by `raw`, JSON text put where the header was
-- (two keys for a duplicate). Returns the fixture's path.
local function edited(name, which, header, raw)
  local f = cjson.decode(helper.read(rp.fixture(BASE)))
  local hit = 0
  for _, x in ipairs(f.exchanges) do
    if which(x) then
      x.response.headers[header] = MARK
      hit = hit + 1
    end
  end
  assert(hit == 1, name .. ": " .. hit .. " exchanges edited, want 1")
  local text = cjson.encode(f)
  local quoted = '"' .. header .. '":"' .. MARK .. '"'
  local n
  text, n = text:gsub(quoted:gsub("%p", "%%%0"), (raw:gsub("%%", "%%%%")))
  assert(n == 1, name .. ": marker found " .. n .. " times")
  local path = rp.tmpdir() .. "/" .. name .. ".json"
  helper.write(path, text)
  return path
end

local function acquire_b(x)
  return x.request.headers["x-ms-lease-action"] == "acquire" and x.response.status == 201 and
    x.response.headers["x-ms-lease-id"] == "{{lease:B}}"
end

-- The first Put Blob after B's acquire: revision 5, written with B.
local function put_rev5(x)
  return x.request.method == "PUT" and x.request.headers["x-ms-lease-id"] == "{{lease:B}}" and
    not x.request.headers["x-ms-lease-action"] and x.response.status == 201
end

-- The properties read that confirms the release.
local function confirm_release(x)
  return x.request.method == "HEAD" and x.response.headers["x-ms-lease-state"] == "available" and
    x.response.status == 200 and x.request.headers["x-ms-lease-id"] == nil and
    x.response.headers["etag"] ~= nil and x.response.headers["etag"]:find("648", 1, true) ~= nil
end

local B, A = "{{lease:B}}", "{{lease:A}}"
local cases = {
  { name = "padded", title = "B's ID, 27 hyphens and A's ID in one x-ms-lease-id", which = acquire_b,
    header = "x-ms-lease-id", raw = '"x-ms-lease-id":"' .. B .. string.rep("-", 27) .. A .. '"',
    step = "11 acquire B", problems = "x-ms-lease-id: longer than 63 bytes", matches = false },
  { name = "hyphens", title = "B's ID followed by hyphens, short enough to be kept", which = acquire_b,
    header = "x-ms-lease-id", raw = '"x-ms-lease-id":"' .. B .. '---"',
    step = "11 acquire B", matches = false },
  { name = "dup", title = "two x-ms-lease-id headers, B's then A's", which = acquire_b,
    header = "x-ms-lease-id", raw = '"x-ms-lease-id":"' .. B .. '","x-ms-lease-id":"' .. A .. '"',
    step = "11 acquire B", problems = "x-ms-lease-id: different values in 2 headers", matches = false },
  { name = "dupcase", title = "x-ms-lease-id and X-MS-LEASE-ID, B's then A's", which = acquire_b,
    header = "x-ms-lease-id", raw = '"x-ms-lease-id":"' .. B .. '","X-MS-LEASE-ID":"' .. A .. '"',
    step = "11 acquire B", problems = "x-ms-lease-id: different values in 2 headers", matches = false },
  { name = "etag", title = "a B-conditioned Put answered with two ETags", which = put_rev5,
    header = "etag", raw = '"etag":"\\"0x8DEB611C52DA648\\"","ETag":"\\"0x1\\""',
    step = "12 rev 5 with B", problems = "ETag: different values in 2 headers" },
  { name = "state", title = "the release confirmed by a read with two lease states", which = confirm_release,
    header = "x-ms-lease-state", raw = '"x-ms-lease-state":"available","x-ms-lease-state":"leased"',
    step = "14 confirm release", problems = "x-ms-lease-state: different values in 2 headers" },
  -- the known deviations are matched on the responder's name
  { name = "server", title = "a B-conditioned Put answered by two differing Server headers", which = put_rev5,
    header = "server", raw = '"server":"Windows-Azure-Blob/1.0 Microsoft-HTTPAPI/2.0","Server":"Azurite-Blob/3.37.0"',
    step = "12 rev 5 with B", problems = "Server: different values in 2 headers", server = cjson.null },
}

describe("a returned lease ID or judged header that is not one value", function()
  teardown(rp.cleanup)

  for _, c in ipairs(cases) do
    describe(c.title, function()
      local dir, rc, out, err
      setup(function()
        local fx = edited(c.name, c.which, c.header, c.raw)
        dir = rp.tmpdir() .. "/ev-" .. c.name
        rc, out, err = rp.replay("main_handoff", fx, dir)
      end)

      it("is an EVIDENCE_ERROR row that says why", function()
        local r = rp.rows_of_step(dir, c.step)[1]
        assert(r, "no outcome row for step " .. c.step .. "\n" .. out .. err)
        assert.are.equal("EVIDENCE_ERROR", r.result_classification)
        if c.matches ~= nil then assert.are.equal(c.matches, r.returned_lease_matches_proposed) end
        if c.problems then
          assert.are.equal(c.problems, r.header_problems)
          assert.are.same({ { text = c.problems, explained_by = cjson.null } }, r.discrepancy)
        else
          assert.is_nil(r.header_problems)
        end
        if c.server ~= nil then assert.are.equal(c.server, r.server) end
      end)

      it("never decides ACCEPT, and verifies", function()
        assert.are_not.equal(0, rc, out .. err)
        assert.is_nil(out:find("DECISION: ACCEPT", 1, true), out)
        local d = rp.decision(dir)
        if d then assert.are_not.equal("ACCEPT", d.decision) end
        rp.assert_verifies(dir)
      end)
    end)
  end

  it("keeps a header sent twice with the same value, and still accepts", function()
    local fx = edited("same", acquire_b, "x-ms-lease-id",
      '"x-ms-lease-id":"' .. B .. '","X-MS-LEASE-ID":"' .. B .. '"')
    local dir = rp.tmpdir() .. "/ev-same"
    local rc, out, err = rp.replay("main_handoff", fx, dir)
    assert.are.equal(0, rc, out .. err)
    local r = rp.rows_of_step(dir, "11 acquire B")[1]
    assert.are.equal("ACCEPTED_WRITE", r.result_classification)
    assert.is_true(r.returned_lease_matches_proposed)
    assert.is_nil(r.header_problems)
    assert.are.equal("ACCEPT", rp.decision(dir).decision)
  end)
end)
