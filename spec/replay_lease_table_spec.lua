-- The lease table (leaselua lease-table) replayed strictly and offline from
-- its three fixtures: the documented table (every cell CONFORMS, the one
-- cell whose pages disagree CONFORMS_ONE_SOURCE), its variant with one cell
-- answered differently (exactly that cell DEVIATES, and the report shows
-- it), and the Azurite recording (its deviations as recorded). Each replays
-- on the evidence of a main-handoff-accept replay (--destructive --after).
local helper = require "helper"
local rp = require "support.replay"
local cjson = require "cjson"

local CELLS = 95
-- The one cell two Microsoft pages answer differently (Lease Blob 409, Put
-- Blob 412); the documented fixture answers Put Blob's 412.
local TWO_SOURCES = "Leased (A)/write with B"
local VARIANT_CELL = "Broken (A)/renew B"

local function cells(dir)
  local out, order = {}, {}
  for _, r in ipairs(helper.rows(dir)) do
    if r.record == "cell" then
      local key = r.state .. "/" .. r.op
      assert.is_nil(out[key], key .. " has two cell rows")
      out[key] = r
      order[#order + 1] = key
    end
  end
  return out, order
end

local function verdicts(c)
  local n = { CONFORMS = 0, CONFORMS_ONE_SOURCE = 0, DEVIATES = 0, NOT_REACHED = 0 }
  for _, r in pairs(c) do n[r.verdict] = n[r.verdict] + 1 end
  return n
end

-- The decision row's counts, as the rows say them.
local function assert_counts(dir, c)
  local d = rp.decision(dir)
  assert.is_table(d, "no decision row")
  local t = d.lease_table
  local n = verdicts(c)
  assert.are.same({ cells = CELLS, conforms = n.CONFORMS, conforms_one_source = n.CONFORMS_ONE_SOURCE,
    deviates = n.DEVIATES, not_reached = n.NOT_REACHED },
    { cells = t.cells, conforms = t.conforms, conforms_one_source = t.conforms_one_source, deviates = t.deviates,
      not_reached = t.not_reached })
end

describe("the lease table, replayed", function()
  local after
  setup(function()
    after = rp.tmpdir() .. "/ev-main"
    local rc, out, err = rp.replay("main_handoff", "emulator/main-handoff-accept", after)
    assert(rc == 0, "the main handoff replay that authorises the table failed: " .. out .. err)
  end)
  teardown(rp.cleanup)

  local function replay(fixture)
    local dir = rp.tmpdir() .. "/ev-table"
    local rc, out, err = rp.replay("lease_table", fixture, dir, { "--destructive", "--after", after })
    return rc, out, err, dir
  end

  it("documented/lease-table: every cell CONFORMS, the two-source cell CONFORMS_ONE_SOURCE", function()
    local rc, out, err, dir = replay("documented/lease-table")
    assert.are.equal(0, rc, out .. err)
    local c, order = cells(dir)
    assert.are.equal(CELLS, #order)
    for key, r in pairs(c) do
      local want = key == TWO_SOURCES and "CONFORMS_ONE_SOURCE" or "CONFORMS"
      assert.are.equal(want, r.verdict, key .. ": " .. tostring(r.reason))
      assert.are.equal(cjson.null, r.known_deviation, key)
    end
    -- the two-source cell: both pages expected, Put Blob's 412 observed
    local two = c[TWO_SOURCES]
    assert.are.equal(2, #two.expected)
    assert.are.same({ "lease-blob", "put-blob" }, { two.expected[1].source, two.expected[2].source })
    assert.are.equal(412, math.tointeger(two.observed.status))
    assert.are.equal("LeaseIdMismatchWithBlobOperation", two.observed.code)
    assert_counts(dir, c)
    assert.matches("94 CONFORMS, 1 CONFORMS_ONE_SOURCE, 0 DEVIATES, 0 NOT_REACHED", out)
    rp.assert_verifies(dir)
  end)

  it("documented/lease-table-one-cell: exactly that one cell DEVIATES, and the report shows it", function()
    local rc, out, err, dir = replay("documented/lease-table-one-cell")
    assert.are.equal(0, rc, out .. err)
    local c, order = cells(dir)
    assert.are.equal(CELLS, #order)
    local deviating = {}
    for key, r in pairs(c) do
      if r.verdict ~= "CONFORMS" and key ~= TWO_SOURCES then deviating[#deviating + 1] = key .. " " .. r.verdict end
    end
    assert.are.same({ VARIANT_CELL .. " DEVIATES" }, deviating)
    assert.are.equal("CONFORMS_ONE_SOURCE", c[TWO_SOURCES].verdict)
    local v = c[VARIANT_CELL]
    assert.are.equal(412, math.tointeger(v.observed.status))
    assert.are.equal("broken", v.observed.lease_state_after)
    assert.are.equal(409, math.tointeger(v.expected[1].status))
    assert.is_string(v.reason)
    assert_counts(dir, c)
    rp.assert_verifies(dir)

    local rrc, _, rerr = helper.run({ "report", dir })
    assert.are.equal(0, rrc, rerr)
    local html, md = helper.read(dir .. "/report.html"), helper.read(dir .. "/summary.md")
    local section = assert(html:match('<section id="lease%-table">.-</section>'))
    assert.are.equal(1, helper.count(section, '<td class="mx v%-DEVIATES"'))
    local td = assert(section:match('<td class="mx v%-DEVIATES" data%-cell="Broken %(A%)/renew B" ' ..
      'data%-verdict="DEVIATES">.-</td>'))
    assert.truthy(td:find("<b>412</b> <code>LeaseIdMismatchWithLeaseOperation</code>", 1, true))
    local href = assert(td:match('href="#row%-(%d+)"'))
    assert.truthy(html:find('id="row-' .. href .. '"', 1, true), "the cell's link has no row to land on")
    assert.are.equal(1, helper.count(section, '<td class="mx v%-CONFORMS_ONE_SOURCE"'))
    assert.are.equal(CELLS - 2, helper.count(section, '<td class="mx v%-CONFORMS"'))
    assert.are.equal(0, helper.count(section, '<td class="mx v%-none">'))
    assert.truthy(section:find("95 cell rows: 93 CONFORMS, 1 CONFORMS_ONE_SOURCE, 1 DEVIATES, 0 NOT_REACHED", 1, true))
    assert.truthy(md:find("- **DEVIATES** Broken (A), renew B: documented 409 (lease-operation family) broken " ..
      "(lease-blob); observed 412 LeaseIdMismatchWithLeaseOperation → broken", 1, true))
    -- the two sources of the two-source cell, verbatim
    assert.truthy(section:find('<pre class="verbatim">Fails (409)</pre>', 1, true))
    assert.truthy(section:find("returns status code 412 (Precondition Failed).</pre>", 1, true))
  end)

  -- helper-32: Leased (A)/acquire B answered 201 still reads "leased",
  -- and the later cells of that lifecycle conformed under B's lease (the
  -- run ACCEPT). A success where only rejections are documented now moves
  -- the later cells to a fresh lifecycle: the edited fixture, which
  -- recorded them on the old one, no longer matches what is sent.
  it("a success where a rejection is documented moves the later cells off that lifecycle", function()
    local f = cjson.decode(helper.read(rp.fixture("documented/lease-table")))
    local hit
    for i, x in ipairs(f.exchanges) do
      local h = x.request.headers or {}
      if h["x-ms-lease-action"] == "acquire" and h["x-ms-proposed-lease-id"] == "{{lease:B}}" and x.response and
          x.response.status == 409 then
        hit = i
        break
      end
    end
    assert.truthy(hit, "the documented table has no acquire B answered 409")
    local x = f.exchanges[hit]
    x.response.status = 201
    x.response.headers["x-ms-error-code"] = nil
    x.response.headers["content-type"] = nil
    x.response.headers["content-length"] = "0"
    x.response.headers["x-ms-lease-id"] = "{{lease:B}}"
    x.response.body = ""
    local path = helper.write(rp.tmpdir() .. "/acquired.json", cjson.encode(f))
    local rc, out, err, dir = replay(path)
    assert.are.equal(64, rc, out .. err)
    assert.truthy(err:find("LL_E_REPLAY", 1, true), err)
    local c = cells(dir)
    local cell = assert(c["Leased (A)/acquire B"], "no row for the edited cell")
    assert.are.equal("DEVIATES", cell.verdict)
    for key, r in pairs(c) do
      assert.is_false(r.lifecycle == cell.lifecycle and key ~= "Leased (A)/acquire B" and
        r.attempt_event ~= cjson.null and r.attempt_event > cell.attempt_event and r.verdict == "CONFORMS",
        key .. " conformed after the lease changed hands")
    end
  end)

  -- helper-32: a cell was judged on status, code and state alone, so a
  -- rejected write whose revision the content read then showed still
  -- conformed. The rows beside the status are now judged too.
  it("a rejected write whose revision is read back DEVIATES, whatever its status", function()
    local f = cjson.decode(helper.read(rp.fixture("documented/lease-table")))
    local hit
    for i, x in ipairs(f.exchanges) do
      local q = x.request
      if q.method == "PUT" and not q.query and (q.headers or {})["x-ms-lease-id"] == "{{lease:B}}" and x.response and
          x.response.status == 412 then
        hit = i
        break
      end
    end
    assert.truthy(hit, "the documented table has no write with B answered 412")
    local write, get = f.exchanges[hit], f.exchanges[hit + 2]
    assert.are.equal("GET", get.request.method)
    local rev = assert(tonumber(write.request.body:match('"revision":(%d+)')))
    get.response.body = write.request.body
    get.response.headers["content-length"] = tostring(#write.request.body)
    local path = helper.write(rp.tmpdir() .. "/landed.json", cjson.encode(f))
    local rc, out, err, dir = replay(path)
    assert.are_not.equal(0, rc, out .. err)
    local deviating = {}
    for key, r in pairs(cells(dir)) do
      if r.verdict == "DEVIATES" then deviating[#deviating + 1] = key .. ": " .. tostring(r.reason) end
    end
    assert.are.equal(1, #deviating, table.concat(deviating, "\n"))
    assert.truthy(deviating[1]:find("write with B: the write of revision " .. rev .. " was answered 412, but the " ..
      "content read after it is that revision", 1, true), deviating[1])
    rp.assert_verifies(dir)
  end)

  it("emulator/lease-table: the Azurite recording replays offline, its deviations as recorded", function()
    local rc, out, err, dir = replay("emulator/lease-table")
    assert.are.equal(0, rc, out .. err)
    local c, order = cells(dir)
    assert.are.equal(CELLS, #order)
    local n = verdicts(c)
    assert.are.equal(0, n.NOT_REACHED)
    local deviating = {}
    for key, r in pairs(c) do
      if r.verdict == "DEVIATES" then
        deviating[#deviating + 1] = key
        assert.is_string(r.reason, key)
      end
    end
    table.sort(deviating)
    assert.are.same({ "Breaking (A)/read with B", "Expired (A)/renew B", "Leased (A)/read with B" }, deviating)
    -- Azurite answers read with B on a locked lease 412 where Lease Blob says 409
    assert.are.equal(412, math.tointeger(c["Leased (A)/read with B"].observed.status))
    assert.are.equal(412, math.tointeger(c["Breaking (A)/read with B"].observed.status))
    assert.are.equal("CONFORMS_ONE_SOURCE", c[TWO_SOURCES].verdict)
    assert_counts(dir, c)
    rp.assert_verifies(dir)
    -- the cells' acquires and breaks carry no condition (what is measured
    -- is Lease Blob's own outcome); the set-up's and cleanup's carry the
    -- run's ETag (invariant 15)
    local rows, outcome = helper.rows(dir), {}
    for _, r in ipairs(rows) do
      if r.record == "outcome" then outcome[r.event_id] = r end
    end
    local sent = { cell = 0, other = 0 }
    for _, r in ipairs(rows) do
      if r.record == "intent" and (r.operation == "Lease Acquire" or r.operation == "Lease Break") then
        local o = assert(outcome[r.event_id], r.event_id)
        if o.cell then
          sent.cell = sent.cell + 1
          assert.is_nil(r.if_match, o.cell)
        else
          sent.other = sent.other + 1
          assert.matches('^"0x%x+"$', r.if_match)
        end
      end
    end
    assert.is_true(sent.cell > 0 and sent.other > 0, sent.cell .. " cell, " .. sent.other .. " other")
  end)
end)
