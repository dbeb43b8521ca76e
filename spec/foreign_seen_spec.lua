-- Invariant 15 from the shipped main handoff script: another writer's
-- object, or another party's lease, seen in an answer about the run's blob
-- holds the run at once (core/judgement/harm.c). The recorded Azurite run
-- (fixtures/emulator/main-handoff-accept.json) is replayed with one
-- answer changed, as a second writer would change it between two requests
-- of the run; C must send no mutation after it (no break, no acquire, no
-- Delete) and leave the blob for the operator.
local helper = require "helper"
local rp = require "support.replay"
local cjson = require "cjson"

local FOREIGN = '"0x8DC0FFEE0BADF00"'

-- The fixture's first n exchanges (1-based, in recorded order), the last
-- changed by edit.
local function edited(n, edit)
  local f = cjson.decode((assert(helper.read(rp.fixture("emulator/main-handoff-accept")))))
  edit(f.exchanges[n].response.headers, f.exchanges[n].request)
  -- strict replay: the run sends nothing after the changed answer
  for i = #f.exchanges, n + 1, -1 do f.exchanges[i] = nil end
  local path = rp.tmpdir() .. "/foreign-" .. n .. ".json"
  helper.write(path, cjson.encode(f))
  return path
end

-- The operations of the mutations sent after the outcome row event.
local function mutations_after(rows, event)
  local seen, out = false, {}
  for _, r in ipairs(rows) do
    if seen and r.record == "intent" and r.http_method ~= "GET" and r.http_method ~= "HEAD" then
      out[#out + 1] = r.operation
    end
    if r.record == "outcome" and r.event_id == event then seen = true end
  end
  return out
end

local function reasons(dir)
  return table.concat(rp.decision(dir).reasons or {}, "\n")
end

describe("another writer's object or lease, seen by the main handoff", function()
  teardown(rp.cleanup)

  local cases = {
    {
      title = "the blob replaced before the break: the read before it names another ETag",
      exchange = 11, -- HEAD before the operator's break
      edit = function(h) h.etag = FOREIGN end,
      operation = "Get Blob Properties",
      why = "the blob's ETag " .. FOREIGN .. " is none this run's writes were answered with: another writer " ..
        "replaced the blob; no mutation follows and the blob is left for the operator",
    },
    {
      title = "the blob leased by another party before A's acquire",
      exchange = 4, -- the read-back of the create
      edit = function(h)
        h["x-ms-lease-state"], h["x-ms-lease-status"] = "leased", "locked"
      end,
      operation = "Get Blob",
      why = "the blob is leased, but no lease of this run can be current (none was taken in this lifecycle): " ..
        "another party's lease",
    },
    {
      title = "the blob replaced after B's write: B's read-back names another ETag",
      exchange = 28,
      edit = function(h) h.etag = FOREIGN end,
      operation = "Get Blob",
      why = "is none this run's writes were answered with",
    },
  }

  for _, c in ipairs(cases) do
    it(c.title .. ": HOLD, and no mutation after it", function()
      local fx = edited(c.exchange, c.edit)
      local dir = rp.tmpdir() .. "/ev-" .. c.exchange
      local rc, out, err = rp.replay("main_handoff", fx, dir)
      assert.are.equal(2, rc, out .. err)
      assert.are.equal("HOLD", rp.decision(dir).decision)
      assert.truthy(reasons(dir):find(c.why, 1, true), reasons(dir))
      -- the edited answer (the fixture's last) is the row the reason names
      local rows = helper.rows(dir)
      local event
      for _, r in ipairs(rows) do
        if r.record == "outcome" then event = r.event_id end
      end
      assert.truthy(event, "no outcome row")
      assert.truthy(reasons(dir):find("event " .. event .. " (" .. c.operation .. ")", 1, true), reasons(dir))
      assert.are.same({}, mutations_after(rows, event))
      rp.assert_verifies(dir)
    end)
  end

  it("the unedited recording still ends ACCEPT (the rule holds only what it should)", function()
    local dir = rp.tmpdir() .. "/ev-plain"
    local rc, out, err = rp.replay("main_handoff", "emulator/main-handoff-accept", dir)
    assert.are.equal(0, rc, out .. err)
    assert.are.equal("ACCEPT", rp.decision(dir).decision)
  end)
end)
