-- The report's conformance matrix (issue 18): the lease-table flow's `cell`
-- rows as lease states against attempts, each cell coloured by its recorded
-- verdict with the observed status and code and links to its rows; the
-- cells whose sources disagree, quoted verbatim from the contract compiled
-- into this binary (leaselua.lease_contract). Reads the export rows only;
-- a bundle without cell rows gets no section. Every value is escaped.
local X = {}

X.VERDICTS = { "CONFORMS", "CONFORMS_ONE_SOURCE", "DEVIATES", "NOT_REACHED" }
-- the worst verdict colours a cell attempted more than once
local RANK = { CONFORMS = 1, CONFORMS_ONE_SOURCE = 2, NOT_REACHED = 3, DEVIATES = 4 }
local COUNT_KEY = { CONFORMS = "conforms", CONFORMS_ONE_SOURCE = "conforms_one_source", DEVIATES = "deviates",
  NOT_REACHED = "not_reached" }

local function str(v) return type(v) == "string" and v or nil end
local function int(v) return math.type(v) == "integer" and v or nil end

-- The contract as this binary holds it: nil when the module is not there.
local function contract()
  local ok, ll = pcall(require, "leaselua")
  if not ok or type(ll) ~= "table" or type(ll.lease_contract) ~= "function" then return nil end
  local ok2, c = pcall(ll.lease_contract)
  return ok2 and type(c) == "table" and c or nil
end

-- X.model(m) -> nil when no row is a cell row; else {states, ops, cells
-- (key -> entry), order (entries in row order), tally, recorded (the
-- decision row's lease_table), contract, by_key (contract cells)}.
function X.model(m)
  local list = {}
  for _, r in ipairs(m.rows) do
    if r.record == "cell" and str(r.state) and str(r.op) then list[#list + 1] = r end
  end
  if #list == 0 then return nil end
  local x = { n_rows = #list, states = {}, ops = {}, cells = {}, order = {}, by_key = {}, contract = contract(),
    tally = { CONFORMS = 0, CONFORMS_ONE_SOURCE = 0, DEVIATES = 0, NOT_REACHED = 0, other = 0 } }
  local seen_s, seen_o = {}, {}
  local function axis(s, o)
    if not seen_s[s] then
      seen_s[s] = true
      x.states[#x.states + 1] = s
    end
    if not seen_o[o] then
      seen_o[o] = true
      x.ops[#x.ops + 1] = o
    end
  end
  -- the axes in the contract's order, then any name only the rows use
  local cells = x.contract and type(x.contract.cells) == "table" and x.contract.cells or {}
  local states_first, ops_first = {}, {}
  for _, c in ipairs(cells) do
    if str(c.state) and str(c.op) then
      x.by_key[c.state .. "/" .. c.op] = c
      if not states_first[c.state] then
        states_first[c.state] = true
        states_first[#states_first + 1] = c.state
      end
      if not ops_first[c.op] then
        ops_first[c.op] = true
        ops_first[#ops_first + 1] = c.op
      end
    end
  end
  for _, s in ipairs(states_first) do
    seen_s[s] = true
    x.states[#x.states + 1] = s
  end
  for _, o in ipairs(ops_first) do
    seen_o[o] = true
    x.ops[#x.ops + 1] = o
  end
  for _, r in ipairs(list) do
    axis(r.state, r.op)
    local key = r.state .. "/" .. r.op
    local e = x.cells[key]
    if not e then
      e = { key = key, state = r.state, op = r.op, rows = {} }
      x.cells[key] = e
      x.order[#x.order + 1] = e
    end
    e.rows[#e.rows + 1] = r
    local v = str(r.verdict)
    if RANK[v] then
      x.tally[v] = x.tally[v] + 1
      if not e.verdict or RANK[v] > RANK[e.verdict] then e.verdict = v end
    else
      x.tally.other = x.tally.other + 1
      e.verdict = "UNKNOWN" -- no recorded verdict the report knows: never coloured as conforming
    end
  end
  x.recorded = m.decision and type(m.decision.lease_table) == "table" and m.decision.lease_table or nil
  return x
end

-- The seqs a cell row links to: itself, its attempt's intent and outcome,
-- and its observations' outcomes, each once.
function X.links(m, r)
  local out, seen = {}, {}
  local function add(label, seq)
    seq = int(seq)
    if seq and not seen[seq] then
      seen[seq] = true
      out[#out + 1] = { label = label, seq = seq }
    end
  end
  add("cell", r.seq)
  local q = str(r.attempt_event) and m.by_event[r.attempt_event]
  if q then
    add(r.attempt_event, q.outcome and q.outcome.seq or (q.intent and q.intent.seq))
  end
  for _, ev in ipairs(type(r.observe_events) == "table" and r.observe_events or {}) do
    local p = str(ev) and m.by_event[ev]
    if p then add(ev, p.outcome and p.outcome.seq or (p.intent and p.intent.seq)) end
  end
  return out
end

-- expected(e) -> "409 (family) leased (A)", as docs/LEASE_CONTRACT.md writes it.
function X.expected_text(e)
  if type(e) ~= "table" then return "?" end
  local parts = {}
  local st = int(e.status)
  if st and st ~= 0 then parts[#parts + 1] = tostring(st) end
  if str(e.family) then parts[#parts + 1] = "(" .. e.family .. ")" end
  local after = str(e.state_after) or "?"
  if str(e.holder) then after = after .. " (" .. e.holder .. ")" end
  parts[#parts + 1] = after
  return table.concat(parts, " ")
end

-- observed(r) -> "412 LeaseIdMissing → leased", or the reason it is absent.
function X.observed_text(r)
  local o = type(r.observed) == "table" and r.observed or {}
  local parts = {}
  if o.status ~= nil then parts[#parts + 1] = tostring(o.status) end
  if o.code ~= nil then parts[#parts + 1] = tostring(o.code) end
  if o.lease_state_after ~= nil then parts[#parts + 1] = "→ " .. tostring(o.lease_state_after) end
  if o.content_revision ~= nil then parts[#parts + 1] = "(content revision " .. tostring(o.content_revision) .. ")" end
  return #parts > 0 and table.concat(parts, " ") or "nothing observed"
end

-- The contract outcome an expected entry of a row refers to (same source,
-- section and status), for its verbatim text.
function X.source_outcome(x, key, e)
  local c = x.by_key[key]
  if not c or type(e) ~= "table" then return nil end
  for _, o in ipairs(type(c.outcomes) == "table" and c.outcomes or {}) do
    if o.source == e.source and o.section == e.section and o.status == e.status then return o end
  end
  return nil
end

-- Two or more expected outcomes naming different sources: the pages disagree.
function X.disagrees(r)
  local ex = type(r.expected) == "table" and r.expected or {}
  local first
  for _, e in ipairs(ex) do
    if type(e) == "table" then
      local s = tostring(e.source) .. "\0" .. tostring(e.section)
      if first and s ~= first then return true end
      first = first or s
    end
  end
  return false
end

-- The cells whose sources disagree: each once, the rows' first cell row.
function X.discrepant(x)
  local out = {}
  for _, e in ipairs(x.order) do
    for _, r in ipairs(e.rows) do
      if X.disagrees(r) then
        out[#out + 1] = { entry = e, row = r }
        break
      end
    end
  end
  return out
end

-- The source's title and address as this binary's contract names them.
function X.source(x, id)
  local s = x.contract and type(x.contract.sources) == "table" and x.contract.sources[id]
  return type(s) == "table" and s or nil
end

-- counts(x) -> the recorded counts, and whether the cell rows agree with them.
function X.counts(x)
  local rec = x.recorded
  if not rec then return nil, true end
  local same = int(rec.cells) == x.n_rows
  for v, k in pairs(COUNT_KEY) do
    if int(rec[k]) ~= x.tally[v] then same = false end
  end
  return rec, same
end

-- ---- HTML ---------------------------------------------------------------

local function anchors(m, r, esc)
  local out = {}
  for _, l in ipairs(X.links(m, r)) do
    out[#out + 1] = string.format('<a href="#row-%d" title="row %d">%s</a>', l.seq, l.seq, esc(l.label))
  end
  return table.concat(out, " ")
end

local function cell_html(m, e, esc)
  if not e then return '<td class="mx v-none"></td>' end
  local parts = {}
  for i, r in ipairs(e.rows) do
    local o = type(r.observed) == "table" and r.observed or {}
    parts[#parts + 1] = table.concat {
      i > 1 and "<hr>" or "", '<div class="mx-v">', (esc(str(r.verdict) or "no verdict"):gsub("_", "_<wbr>")),
      "</div>",
      '<div class="mx-o"><b>', esc(o.status), "</b> <code>", esc(o.code), "</code></div>",
      o.lease_state_after ~= nil and ('<div class="mx-s">→ ' .. esc(o.lease_state_after) .. "</div>") or "",
      str(r.known_deviation) and ('<div class="mx-k">known: <code>' .. esc(r.known_deviation) .. "</code></div>")
        or "",
      '<div class="mx-l">', anchors(m, r, esc), "</div>" }
  end
  return string.format('<td class="mx v-%s" data-cell="%s" data-verdict="%s">%s</td>', esc(e.verdict), esc(e.key),
    esc(e.verdict), table.concat(parts))
end

local function expected_list(r, esc)
  local out = {}
  for _, ex in ipairs(type(r.expected) == "table" and r.expected or {}) do
    out[#out + 1] = esc(X.expected_text(ex)) .. ' <span class="muted">(' .. esc(type(ex) == "table" and ex.source) ..
      ", " .. esc(type(ex) == "table" and ex.section) .. ")</span>"
  end
  return table.concat(out, "<br><b>or</b> ")
end

local function not_conforming(m, x, esc, reasons)
  local rows = {}
  for _, e in ipairs(x.order) do
    for _, r in ipairs(e.rows) do
      local v = str(r.verdict)
      if v ~= "CONFORMS" and v ~= "CONFORMS_ONE_SOURCE" then
        local kd = str(r.known_deviation)
        rows[#rows + 1] = table.concat {
          '<tr class="v-', esc(v or "UNKNOWN"), '" data-cell="', esc(e.key), '"><td>', esc(e.state), "</td><td>",
          esc(e.op), "</td><td><b>", esc(v or "no verdict"), "</b></td><td>", expected_list(r, esc),
          "</td><td>", esc(X.observed_text(r)), "</td><td>", esc(r.reason), "</td><td>",
          kd and ("<code>" .. esc(kd) .. "</code> " .. esc(reasons[kd] or "(reason not in this binary's table)")) or
            "", "</td><td>", anchors(m, r, esc), "</td></tr>" }
      end
    end
  end
  if #rows == 0 then return '<p class="muted">Every attempted cell conforms to at least one source.</p>' end
  return "<h3>Cells that do not conform</h3><table><thead><tr><th>state</th><th>attempt</th><th>verdict</th>" ..
    "<th>documented (as the row records it)</th><th>observed</th><th>reason (verbatim)</th>" ..
    "<th>known deviation</th><th>rows</th></tr></thead><tbody>" .. table.concat(rows) .. "</tbody></table>"
end

local function sources_disagree(m, x, esc)
  local list = X.discrepant(x)
  if #list == 0 then return "" end
  local out = { "<h3>Where the sources disagree</h3>", '<p class="rule">Each documented outcome of the cell with ' ..
    "its source, quoted verbatim from the lease contract compiled into this binary " ..
    "(docs/LEASE_CONTRACT.md). The verdict says which one the service matched.</p>" }
  for _, d in ipairs(list) do
    local e, r = d.entry, d.row
    out[#out + 1] = string.format('<div class="mx-disagree" data-cell="%s"><p><b>%s, %s</b>: <b>%s</b>; ' ..
      "observed %s (%s)</p><table><thead><tr><th>source</th><th>section</th><th>documented</th>" ..
      "<th>source text (verbatim)</th></tr></thead><tbody>", esc(e.key), esc(e.state), esc(e.op),
      esc(str(r.verdict) or "no verdict"), esc(X.observed_text(r)), anchors(m, r, esc))
    for _, ex in ipairs(r.expected) do
      if type(ex) == "table" then
        local so, src = X.source_outcome(x, e.key, ex), X.source(x, ex.source)
        out[#out + 1] = table.concat {
          '<tr data-source="', esc(ex.source), '"><td><code>', esc(ex.source), "</code>",
          src and ("<br>" .. esc(src.title) .. "<br><code>" .. esc(src.url) .. "</code>") or "", "</td><td>",
          esc(ex.section), "</td><td>", esc(X.expected_text(ex)), '</td><td><pre class="verbatim">',
          so and esc(so.source_text) or "(not in this binary's contract table)", "</pre></td></tr>" }
      end
    end
    out[#out + 1] = "</tbody></table></div>"
  end
  return table.concat(out)
end

-- The matrix's rules, added to the page's one <style> by report_html.
X.CSS = ".mx-wrap{overflow-x:auto;border:1px solid #d1d9e0;border-radius:6px}" ..
  ".mx-table{table-layout:fixed;min-width:2000px}.mx-table th:first-child{position:sticky;left:0;z-index:1;" ..
  "width:96px;background:#f6f8fa}.mx-table th.mx-op{font-size:11px}.mx-table td.mx{font-size:10.5px}" ..
  ".mx-v{font-weight:700;font-size:10px}.mx code{font-size:9.5px;overflow-wrap:anywhere}" ..
  ".mx hr{border:0;border-top:1px solid #d1d9e0;margin:3px 0}" ..
  ".v-CONFORMS{background:#dafbe1}.v-CONFORMS_ONE_SOURCE{background:#ddf4ff}" ..
  ".v-DEVIATES{background:#ffcecb}.v-DEVIATES .mx-v{color:#a40e26}.v-NOT_REACHED{background:#eaeef2}" ..
  ".v-UNKNOWN{background:#fff8c5}.v-none{background:#fff}" ..
  ".mx-swatch{display:inline-block;width:14px;height:12px;border:1px solid #d1d9e0;vertical-align:middle}" ..
  "@media print{.mx-wrap{overflow:visible;border:none}.mx-table{min-width:0;font-size:8px}}"

-- html(m, esc, reasons) -> the <section> text, or "" for a bundle without
-- cell rows. reasons: known-deviation id -> reason.
function X.html(m, esc, reasons)
  local x = X.model(m)
  if not x then return "" end
  local out = { '<section id="lease-table"><h2>Lease table: the documented contract, cell by cell</h2>' }
  local rec, same = X.counts(x)
  local t = x.tally
  out[#out + 1] = string.format('<p class="rule" data-lease-table-counts>%d cell rows: %d CONFORMS, %d ' ..
    "CONFORMS_ONE_SOURCE, %d DEVIATES, %d NOT_REACHED%s. Endpoint kind %s: a verdict says what this endpoint " ..
    "answered, not what Azure answers elsewhere.</p>", x.n_rows, t.CONFORMS, t.CONFORMS_ONE_SOURCE, t.DEVIATES,
    t.NOT_REACHED, t.other > 0 and string.format(", %d with no known verdict", t.other) or "",
    esc(m.endpoint_kind))
  if rec and not same then
    out[#out + 1] = string.format('<p class="warn">The decision row counts %s cells: %s CONFORMS, %s ' ..
      "CONFORMS_ONE_SOURCE, %s DEVIATES, %s NOT_REACHED, which is not what the cell rows say.</p>",
      esc(rec.cells), esc(rec.conforms), esc(rec.conforms_one_source), esc(rec.deviates), esc(rec.not_reached))
  elseif not rec then
    out[#out + 1] = '<p class="warn">No decision row records the lease table\'s counts: the run did not finish.</p>'
  end
  local legend = {}
  for _, v in ipairs(X.VERDICTS) do
    legend[#legend + 1] = string.format('<span><span class="mx-swatch v-%s"></span> %s</span>', v, v)
  end
  legend[#legend + 1] = '<span><span class="mx-swatch v-none"></span> not attempted in this run</span>'
  out[#out + 1] = '<div class="legend">' .. table.concat(legend) .. "</div>"
  out[#out + 1] = '<div class="mx-wrap"><table class="mx-table"><thead><tr><th>state</th>'
  for _, o in ipairs(x.ops) do out[#out + 1] = '<th class="mx-op">' .. esc(o) .. "</th>" end
  out[#out + 1] = "</tr></thead><tbody>"
  for _, s in ipairs(x.states) do
    out[#out + 1] = "<tr><th>" .. esc(s) .. "</th>"
    for _, o in ipairs(x.ops) do out[#out + 1] = cell_html(m, x.cells[s .. "/" .. o], esc) end
    out[#out + 1] = "</tr>"
  end
  out[#out + 1] = "</tbody></table></div>"
  out[#out + 1] = '<p class="rule">Each cell: the verdict the flow recorded, the observed HTTP status and error ' ..
    "code (verbatim), the lease state read after, and links to the cell row, its attempt and its observations " ..
    "among the export rows below.</p>"
  out[#out + 1] = not_conforming(m, x, esc, reasons or {})
  out[#out + 1] = sources_disagree(m, x, esc)
  out[#out + 1] = "</section>"
  return table.concat(out)
end

-- ---- Markdown -----------------------------------------------------------

local function md_links(m, r)
  local out = {}
  for _, l in ipairs(X.links(m, r)) do
    out[#out + 1] = string.format("[%d](report.html#row-%d)", l.seq, l.seq)
  end
  return table.concat(out, " ")
end

-- md(m, md) -> the summary's lines, or "" for a bundle without cell rows.
function X.md(m, md)
  local x = X.model(m)
  if not x then return "" end
  local out = { "## Lease table", "" }
  local function add(s) out[#out + 1] = s end
  local t = x.tally
  add(string.format("%d cell rows: %d CONFORMS, %d CONFORMS_ONE_SOURCE, %d DEVIATES, %d NOT_REACHED%s " ..
    "(endpoint kind %s). Row numbers link into report.html.", x.n_rows, t.CONFORMS, t.CONFORMS_ONE_SOURCE,
    t.DEVIATES, t.NOT_REACHED, t.other > 0 and string.format(", %d with no known verdict", t.other) or "",
    md(m.endpoint_kind)))
  local rec, same = X.counts(x)
  if rec and not same then
    add("")
    add(string.format("**The decision row's counts differ**: %s cells, %s CONFORMS, %s CONFORMS_ONE_SOURCE, " ..
      "%s DEVIATES, %s NOT_REACHED.", md(rec.cells), md(rec.conforms), md(rec.conforms_one_source),
      md(rec.deviates), md(rec.not_reached)))
  end
  add("")
  local head, rule = { "state" }, { "---" }
  for _, o in ipairs(x.ops) do
    head[#head + 1] = md(o)
    rule[#rule + 1] = "---"
  end
  add("| " .. table.concat(head, " | ") .. " |")
  add("| " .. table.concat(rule, " | ") .. " |")
  for _, s in ipairs(x.states) do
    local cells = { md(s) }
    for _, o in ipairs(x.ops) do
      local e = x.cells[s .. "/" .. o]
      local parts = {}
      for _, r in ipairs(e and e.rows or {}) do
        local ob = type(r.observed) == "table" and r.observed or {}
        parts[#parts + 1] = string.format("**%s** %s %s %s", md(str(r.verdict) or "no verdict"), md(ob.status),
          md(ob.code), md_links(m, r))
      end
      cells[#cells + 1] = table.concat(parts, "<br>")
    end
    add("| " .. table.concat(cells, " | ") .. " |")
  end
  local bad = {}
  for _, e in ipairs(x.order) do
    for _, r in ipairs(e.rows) do
      local v = str(r.verdict)
      if v ~= "CONFORMS" and v ~= "CONFORMS_ONE_SOURCE" then
        local ex = {}
        for _, x1 in ipairs(type(r.expected) == "table" and r.expected or {}) do
          ex[#ex + 1] = md(X.expected_text(x1)) .. " (" .. md(type(x1) == "table" and x1.source) .. ")"
        end
        bad[#bad + 1] = string.format("- **%s** %s, %s: documented %s; observed %s%s%s; rows %s", md(v or "no verdict"),
          md(e.state), md(e.op), table.concat(ex, " or "), md(X.observed_text(r)),
          r.reason ~= nil and ("; " .. md(r.reason)) or "",
          str(r.known_deviation) and ("; known deviation " .. md(r.known_deviation)) or "", md_links(m, r))
      end
    end
  end
  if #bad > 0 then
    add("")
    add("Cells that do not conform:")
    add("")
    for _, b in ipairs(bad) do add(b) end
  end
  local list = X.discrepant(x)
  if #list > 0 then
    add("")
    add("Where the sources disagree (verbatim, from the lease contract in this binary):")
    for _, d in ipairs(list) do
      local e, r = d.entry, d.row
      add("")
      add(string.format("- %s, %s: **%s**, observed %s (rows %s)", md(e.state), md(e.op),
        md(str(r.verdict) or "no verdict"), md(X.observed_text(r)), md_links(m, r)))
      for _, ex in ipairs(r.expected) do
        if type(ex) == "table" then
          local so, src = X.source_outcome(x, e.key, ex), X.source(x, ex.source)
          add(string.format("  - %s%s, %s: documented %s: \"%s\"", md(ex.source),
            src and (" (" .. md(src.title) .. ", " .. md(src.url) .. ")") or "", md(ex.section),
            md(X.expected_text(ex)), so and md(so.source_text) or "(not in this binary's contract table)"))
        end
      end
    end
  end
  add("")
  return table.concat(out, "\n")
end

return X
