-- Invariant 15 on the lease operations: the run's Lease Blob acquire and
-- break carry If-Match on the blob's ETag as the run's own writes left it,
-- chosen in C (core/run/run_request.c), so a blob replaced between the
-- run's last answer and its lease operation is refused 412
-- ConditionNotMet: no lease is taken on another writer's object and no
-- other party's lease is broken. The recorded Azurite run
-- (fixtures/emulator/main-handoff-accept.json) shows what was sent; a copy
-- of it with one lease answer turned into the refusal shows what C does
-- next.
local helper = require "helper"
local rp = require "support.replay"
local cjson = require "cjson"

local RECORDING = "emulator/main-handoff-accept"

local function recording()
  return cjson.decode((assert(helper.read(rp.fixture(RECORDING)))))
end

local function is_lease(x, action)
  return x.request.method == "PUT" and x.request.headers["x-ms-lease-action"] == action
end

-- The exchanges (1-based) of the recording whose lease action is action.
local function indices(f, action)
  local out = {}
  for i, x in ipairs(f.exchanges) do
    if is_lease(x, action) then out[#out + 1] = i end
  end
  return out
end

-- The fixture's first n exchanges, the last answered as Azurite answers a
-- write condition that failed (no ETag, no lease headers, no x-ms-version
-- on an error: docs/EVIDENCE.md).
local function refused_at(n)
  local f = recording()
  local r = f.exchanges[n].response
  local rid = r.headers["x-ms-request-id"]
  r.status = 412
  r.headers = {
    ["x-ms-request-id"] = rid,
    ["content-type"] = "application/xml",
    ["x-ms-error-code"] = "ConditionNotMet",
    server = r.headers.server,
    date = r.headers.date,
  }
  r.body = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Error>\n  <Code>ConditionNotMet</Code>\n'
    .. "  <Message>The condition specified using HTTP conditional header(s) is not met.\nRequestId:"
    .. rid .. "\nTime:2026-12-01T11:11:58.810Z</Message>\n</Error>"
  for i = #f.exchanges, n + 1, -1 do f.exchanges[i] = nil end
  local path = rp.tmpdir() .. "/refused-" .. n .. ".json"
  helper.write(path, cjson.encode(f))
  return path
end

describe("the run's acquire and break are conditioned on its own ETag", function()
  teardown(rp.cleanup)

  it("were sent on Azurite with If-Match on the ETag of the run's last accepted Put", function()
    local f = recording()
    local last_put, seen = nil, 0
    for _, x in ipairs(f.exchanges) do
      local q, r = x.request, x.response
      if (is_lease(x, "acquire") or is_lease(x, "break")) then
        seen = seen + 1
        assert.is_truthy(last_put, "a lease operation before any accepted Put")
        assert.are.equal(last_put, q.headers["if-match"])
      elseif q.method == "PUT" and not q.headers["x-ms-lease-action"] and r and r.status == 201
        and not q.path:find("restype=container", 1, true) then
        last_put = r.headers.etag
      end
      -- the lease operations that name the run's lease carry none
      if is_lease(x, "release") or is_lease(x, "renew") or is_lease(x, "change") then
        assert.is_nil(q.headers["if-match"])
      end
    end
    -- A's acquire, the operator's break, B's early and B's acquire
    assert.are.equal(4, seen)
    -- and a replay sends the same header (strict replay compares it)
    local dir = rp.tmpdir() .. "/ev-plain"
    local rc, out, err = rp.replay("main_handoff", RECORDING, dir)
    assert.are.equal(0, rc, out .. err)
    assert.are.equal("ACCEPT", rp.decision(dir).decision)
  end)

  local f = recording()
  local cases = {
    { title = "A's acquire, the blob replaced after its create was read back", n = indices(f, "acquire")[1],
      op = "Lease Acquire" },
    { title = "the operator's break, the blob replaced while A held the lease", n = indices(f, "break")[1],
      op = "Lease Break" },
  }
  for _, c in ipairs(cases) do
    it(c.title .. ": refused 412, HOLD, and nothing more is sent", function()
      local fx = refused_at(c.n)
      local dir = rp.tmpdir() .. "/ev-" .. c.n
      local rc, out, err = rp.replay("main_handoff", fx, dir)
      assert.are.equal(2, rc, out .. err)
      local d = rp.decision(dir)
      assert.are.equal("HOLD", d.decision)
      local rows = helper.rows(dir)
      local last
      for _, r in ipairs(rows) do
        if r.record == "outcome" then last = r end
      end
      assert.are.equal(c.op, last.operation)
      assert.are.equal(412, last.http_status)
      assert.are.equal("ConditionNotMet", last.azure_error_code)
      assert.are.equal("EXPECTED_REJECTION", last.result_classification)
      local why = "event " .. last.event_id .. " (" .. c.op .. "): refused 412 ConditionNotMet on If-Match "
      assert.truthy(table.concat(d.reasons, "\n"):find(why, 1, true), table.concat(d.reasons, "\n"))
      -- the refused request was the fixture's last: nothing after it
      local intents = 0
      for _, r in ipairs(rows) do
        if r.record == "intent" then intents = intents + 1 end
      end
      assert.are.equal(c.n, intents)
      rp.assert_verifies(dir)
    end)
  end
end)
