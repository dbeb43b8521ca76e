-- The report's conformance matrix (issue 18), from lease-table cell rows
-- built by hand: each cell coloured by its recorded verdict with the
-- observed status and code and links to its rows, the two-source cell
-- quoted verbatim with both sources, the Markdown version, and no matrix
-- for a bundle without cell rows. Offline.
local helper = require "helper"
local B = require "support.ledger_builder"

-- Rows written by hand do not verify, and the host reports only what does:
-- they are rendered by the renderer itself (spec/support/render.lua);
-- report_spec shows what the host refuses.
local report = require("support.render").render

local PUT_BLOB_TEXT = "If the client doesn't specify a lease ID or specifies an invalid lease ID, Blob Storage " ..
  "returns status code 412 (Precondition Failed)."
local USE = "Outcomes of use attempts on blobs by lease state"

local function expected(status, family, after, holder, source, section)
  return B.obj { { "status", status }, { "family", family or B.null }, { "state_after", after },
    { "holder", holder or B.null }, { "source", source or "lease-blob" }, { "section", section or USE } }
end

-- A lease-table bundle: per cell an intent, an outcome (with `cell`), a
-- properties read, and the cell row. cells: {state, op, verdict, status,
-- code, after, expected = {...}, reason, known}.
local function bundle(cells, opts)
  opts = opts or {}
  local rows = {
    { { "record", "manifest" }, { "run_id", "run-matrix" }, { "endpoint_kind", "replay" },
      { "account_host", "example.invalid" }, { "blob_path", "/acct/lab/blob.json" }, { "api_version", "2023-11-03" },
      { "versions", B.obj { { "leaselua", "0.1.0" } } }, { "retries", 0 } },
    { { "record", "lifecycle" }, { "fixture_epoch", 1 }, { "destructive", false }, { "reason", "spec" } },
  }
  local n, t = 0, 1000000000
  local counts = { CONFORMS = 0, CONFORMS_ONE_SOURCE = 0, DEVIATES = 0, NOT_REACHED = 0 }
  local function outcome(ev, op, actor, status, code, cell, state)
    t = t + 2000000
    return { { "record", "outcome" }, { "run_id", "run-matrix" }, { "event_id", ev }, { "fixture_epoch", 1 },
      { "step", op }, { "operation", op }, { "actor_alias", actor }, { "http_status", status },
      { "azure_error_code", code or B.null }, { "result_classification", code and "EXPECTED_REJECTION" or
        "STATE_OBSERVED" }, { "endpoint_kind", "replay" }, { "mono_start_ns", t }, { "mono_end_ns", t + 1000000 },
      { "observed_lease_state", state or B.null }, { "cell", cell or B.null } }
  end
  for _, c in ipairs(cells) do
    local key = c.state .. "/" .. c.op
    n = n + 1
    local attempt = string.format("e%04d", 2 * n - 1)
    local observe = string.format("e%04d", 2 * n)
    if c.status then
      rows[#rows + 1] = { { "record", "intent" }, { "event_id", attempt }, { "fixture_epoch", 1 },
        { "operation", "Put Blob" }, { "actor_alias", "B" } }
      rows[#rows + 1] = outcome(attempt, "Put Blob", "B", c.status, c.code, key)
    end
    rows[#rows + 1] = outcome(observe, "Get Blob Properties", "observer", 200, nil, nil, c.after)
    counts[c.verdict] = counts[c.verdict] + 1
    rows[#rows + 1] = { { "record", "cell" }, { "state", c.state }, { "op", c.op }, { "lifecycle", 1 },
      { "attempt_event", c.status and attempt or B.null }, { "observe_events", { observe } },
      { "expected", c.expected }, { "observed", B.obj { { "status", c.status or B.null }, { "code", c.code or B.null },
        { "lease_state_after", c.after or B.null }, { "content_revision", B.null } } },
      { "verdict", c.verdict }, { "reason", c.reason or B.null }, { "known_deviation", c.known or B.null } }
  end
  if not opts.no_decision then
    local total = opts.cells_count or #cells
    rows[#rows + 1] = { { "record", "decision" }, { "fixture_epoch", 1 }, { "endpoint_kind", "replay" },
      { "decision", "HOLD" }, { "reasons", { "one cell deviates" } }, { "window_finding", "NOT_ATTEMPTED" },
      { "statement", "Lease table." }, { "lease_table", B.obj { { "conforms", counts.CONFORMS },
        { "conforms_one_source", counts.CONFORMS_ONE_SOURCE }, { "deviates", counts.DEVIATES },
        { "not_reached", counts.NOT_REACHED }, { "cells", total } } } }
  end
  return rows
end

local CELLS = {
  { state = "Available", op = "write with A", verdict = "DEVIATES", status = 412,
    code = "LeaseNotPresentWithBlobOperation", after = "available",
    expected = { expected(412, "blob-operation lease family", "available") },
    reason = "state <after> & code differ", known = "azurite-3.37-lease-lost-message" },
  { state = "Leased (A)", op = "write with B", verdict = "CONFORMS_ONE_SOURCE", status = 412,
    code = "LeaseIdMismatchWithBlobOperation", after = "leased",
    expected = { expected(409, "blob-operation lease family", "leased"),
      expected(412, "blob-operation lease family", "leased", nil, "put-blob", "Remarks") } },
  { state = "Leased (A)", op = "read, no lease", verdict = "CONFORMS", status = 200, after = "leased",
    expected = { expected(200, nil, "leased", "A") } },
  { state = "Expired (A)", op = "renew A", verdict = "NOT_REACHED",
    expected = { expected(200, nil, "leased", "A", "lease-blob",
      "Outcomes of lease operations on blobs by lease state") },
    reason = "the lease did not expire before the deadline" },
}

-- The seq of the row for which pred holds, from the export.
local function seq_of(dir, pred)
  for _, r in ipairs(helper.rows(dir)) do
    if pred(r) then return math.tointeger(r.seq) end
  end
end

describe("the report's conformance matrix", function()
  teardown(helper.cleanup)

  it("colours a deviating cell, shows its status and code, and links to its rows", function()
    local dir = B.write(helper.tmpdir() .. "/ev", bundle(CELLS))
    local rc, _, err, html = report(dir)
    assert.are.equal(0, rc, err)
    local section = assert(html:match('<section id="lease%-table">.-</section>'), "no lease-table section")
    local td = assert(section:match('<td class="mx v%-DEVIATES" data%-cell="Available/write with A" ' ..
      'data%-verdict="DEVIATES">.-</td>'), "the deviating cell is not coloured DEVIATES")
    assert.truthy(td:find('<div class="mx-v">DEVIATES</div>', 1, true))
    assert.truthy(td:find("<b>412</b> <code>LeaseNotPresentWithBlobOperation</code>", 1, true))
    assert.truthy(td:find("known: <code>azurite-3.37-lease-lost-message</code>", 1, true))
    -- links: the cell row, the attempt's outcome, the properties read; each
    -- target is a row of the page
    local cell_seq = seq_of(dir, function(r) return r.record == "cell" and r.op == "write with A" end)
    local put_seq = seq_of(dir, function(r) return r.record == "outcome" and r.event_id == "e0001" end)
    local read_seq = seq_of(dir, function(r) return r.record == "outcome" and r.event_id == "e0002" end)
    for _, s in ipairs { cell_seq, put_seq, read_seq } do
      assert.truthy(td:find(string.format('href="#row-%d"', s), 1, true), "no link to row " .. s)
      assert.truthy(html:find(string.format('<tr class="r%%-[a-z]+" id="row%%-%d" data%%-seq="%d">', s, s)),
        "no anchor for row " .. s)
    end
    assert.truthy(td:find('<a href="#row-' .. put_seq .. '" title="row ' .. put_seq .. '">e0001</a>', 1, true))
    -- the other verdicts, and blank cells for what the run did not attempt
    assert.are.equal(1, helper.count(section, 'data%-verdict="CONFORMS_ONE_SOURCE"'))
    assert.are.equal(1, helper.count(section, 'data%-verdict="CONFORMS"'))
    assert.are.equal(1, helper.count(section, 'data%-verdict="NOT_REACHED"'))
    assert.are.equal(5 * 19 - 4, helper.count(section, '<td class="mx v%-none"></td>'))
    -- states are rows, attempts are columns, in the contract's order
    local head = section:match("<thead><tr><th>state</th>(.-)</tr></thead>")
    assert.are.equal(19, helper.count(head, '<th class="mx%-op">'))
    assert.truthy(head:find('^<th class="mx%-op">write with A</th>'))
    assert.truthy(head:find('<th class="mx%-op">duration expires</th>$'))
    assert.truthy(section:find("<tr><th>Available</th>", 1, true))
    assert.truthy(section:find("<tr><th>Expired (A)</th>", 1, true))
    -- the reason is verbatim and escaped; the counts as the rows say
    assert.truthy(section:find("state &lt;after&gt; &amp; code differ", 1, true))
    assert.is_nil(section:find("<after>", 1, true))
    assert.truthy(section:find("4 cell rows: 1 CONFORMS, 1 CONFORMS_ONE_SOURCE, 1 DEVIATES, 1 NOT_REACHED", 1, true))
    assert.is_nil(section:find('class="warn"', 1, true))
    -- the not-conforming list holds the deviating and the unreached cell only
    local list = section:match("<h3>Cells that do not conform</h3>(.-)</table>")
    assert.are.equal(2, helper.count(list, "<tr class=\"v%-"))
    assert.truthy(list:find('data-cell="Expired (A)/renew A"', 1, true))
    assert.truthy(list:find("the lease did not expire before the deadline", 1, true))
  end)

  it("shows a two-source cell with both sources verbatim", function()
    local dir = B.write(helper.tmpdir() .. "/ev", bundle(CELLS))
    local rc, _, err, html = report(dir)
    assert.are.equal(0, rc, err)
    local block = assert(html:match('<div class="mx%-disagree" data%-cell="Leased %(A%)/write with B">.-</div>'))
    assert.truthy(block:find("<b>CONFORMS_ONE_SOURCE</b>", 1, true))
    local lb = assert(block:match('<tr data%-source="lease%-blob">.-</tr>'))
    local pb = assert(block:match('<tr data%-source="put%-blob">.-</tr>'))
    assert.truthy(lb:find('<pre class="verbatim">Fails (409)</pre>', 1, true))
    assert.truthy(lb:find(USE, 1, true))
    assert.truthy(lb:find("409 (blob-operation lease family) leased", 1, true))
    assert.truthy(pb:find('<pre class="verbatim">' .. PUT_BLOB_TEXT:gsub("'", "&#39;") .. "</pre>", 1, true))
    assert.truthy(pb:find("<td>Remarks</td>", 1, true))
    assert.truthy(pb:find("Put Blob (REST API) - Azure Storage", 1, true))
    assert.truthy(pb:find("412 (blob-operation lease family) leased", 1, true))
    -- only the cell whose sources disagree is listed
    assert.are.equal(1, helper.count(html, 'class="mx%-disagree"'))
  end)

  it("writes the matrix into summary.md for a ticket", function()
    local dir = B.write(helper.tmpdir() .. "/ev", bundle(CELLS))
    local rc, _, err, _, md = report(dir)
    assert.are.equal(0, rc, err)
    assert.truthy(md:find("## Lease table", 1, true))
    local header = assert(md:match("\n(| state | write with A |[^\n]*)\n"))
    assert.are.equal(19, helper.count(header, " | "))
    local put_seq = seq_of(dir, function(r) return r.record == "outcome" and r.event_id == "e0001" end)
    local line = assert(md:match("\n(| Available | [^\n]*)\n"))
    assert.truthy(line:find("| **DEVIATES** 412 LeaseNotPresentWithBlobOperation ", 1, true))
    assert.truthy(line:find(string.format("[%d](report.html#row-%d)", put_seq, put_seq), 1, true))
    assert.truthy(md:find("4 cell rows: 1 CONFORMS, 1 CONFORMS_ONE_SOURCE, 1 DEVIATES, 1 NOT_REACHED", 1, true))
    assert.truthy(md:find("- **DEVIATES** Available, write with A: documented 412 (blob-operation lease family) " ..
      "available (lease-blob); observed 412 LeaseNotPresentWithBlobOperation → available; state &lt;after&gt; " ..
      "&amp; code differ; known deviation azurite-3.37-lease-lost-message; rows", 1, true))
    assert.truthy(md:find('- lease-blob (Lease Blob (REST API) - Azure Storage, ' ..
      'https://learn.microsoft.com/en-us/rest/api/storageservices/lease-blob), ' .. USE ..
      ': documented 409 (blob-operation lease family) leased: "Fails (409)"', 1, true))
    assert.truthy(md:find(', Remarks: documented 412 (blob-operation lease family) leased: "' .. PUT_BLOB_TEXT .. '"',
      1, true))
  end)

  it("says when the decision row's counts are not what the cell rows say, or are missing", function()
    local dir = B.write(helper.tmpdir() .. "/ev", bundle(CELLS, { cells_count = 95 }))
    local _, _, _, html, md = report(dir)
    assert.truthy(html:find('<p class="warn">The decision row counts 95 cells', 1, true))
    assert.truthy(md:find("**The decision row's counts differ**: 95 cells", 1, true))
    dir = B.write(helper.tmpdir() .. "/ev2", bundle(CELLS, { no_decision = true }))
    _, _, _, html = report(dir)
    assert.truthy(html:find("No decision row records the lease table", 1, true))
  end)

  it("adds nothing to a bundle without cell rows", function()
    local dir = B.write(helper.tmpdir() .. "/ev", B.sample { decision = "HOLD" })
    local rc, _, err, html, md = report(dir)
    assert.are.equal(0, rc, err)
    assert.is_nil(html:find('id="lease-table"', 1, true))
    assert.is_nil(md:find("## Lease table", 1, true))
  end)
end)
