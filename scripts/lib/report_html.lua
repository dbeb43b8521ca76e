-- report.html: one self-contained page (inline CSS and SVG, system fonts,
-- no script, no network) with the decision, the timeline, the content
-- history, the discrepancies, the environment and every export row.
local R = require "lib.report"
local S = require "lib.report_svg"
local X = require "lib.report_matrix"
local esc, fmt_ms = R.esc, R.fmt_ms

local H = {}

local CSS = [[
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--soft:#f6f8fa;
--sans:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans","Liberation Sans",
"DejaVu Sans",sans-serif;
--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono","DejaVu Sans Mono",monospace}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 var(--sans);color:var(--fg);background:var(--bg)}
main{max-width:1280px;margin:0 auto;padding:0 20px 40px}
h1{font-size:20px;margin:0}
h2{font-size:17px;margin:28px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:14px;margin:16px 0 6px}
code,.mono{font-family:var(--mono);font-size:12px}
.strip{position:sticky;top:0;z-index:2;background:#fff;border-bottom:1px solid var(--line);padding:6px 20px;
font-size:13px;display:flex;gap:14px;align-items:center}
.strip b{font-size:14px}
.banner{margin:16px 0 0;border:2px solid;border-radius:8px;padding:14px 18px;display:grid;
grid-template-columns:auto 1fr;gap:4px 24px;align-items:center}
.verdict{font-size:40px;font-weight:800;letter-spacing:.02em;line-height:1}
.kind{font-size:16px}
.kind .q{font-weight:700}
.banner dl{grid-column:1/3;display:grid;grid-template-columns:repeat(4,auto);gap:2px 14px;margin:10px 0 0;
font-size:13px;justify-content:start}
.banner dt{color:var(--muted)}
.banner dd{margin:0;overflow-wrap:anywhere}
.d-ACCEPT{border-color:#1a7f37;background:#f0fff4}.d-ACCEPT .verdict,.s-ACCEPT{color:#1a7f37}
.d-WAIT{border-color:#9a6700;background:#fff8e5}.d-WAIT .verdict,.s-WAIT{color:#9a6700}
.d-HOLD{border-color:#cf222e;background:#fff0f0}.d-HOLD .verdict,.s-HOLD{color:#cf222e}
.d-RECONCILE{border-color:#8250df;background:#fbf5ff}.d-RECONCILE .verdict,.s-RECONCILE{color:#8250df}
.d-NONE{border-color:#59636e;background:#f6f8fa}.d-NONE .verdict,.s-NONE{color:#59636e}
.notcloud{display:inline-block;background:#fff;border:1px solid #9a6700;color:#7d4e00;border-radius:4px;
padding:0 6px;font-weight:700}
.statement{margin:14px 0 0;padding:10px 14px;border-left:4px solid var(--line);background:var(--soft)}
.statement p{margin:0 0 6px}
.reasons li{margin:2px 0}
.warn{border:1px solid #cf222e;background:#fff0f0;padding:8px 12px;border-radius:6px;margin:12px 0}
.fig{overflow-x:auto;border:1px solid var(--line);border-radius:6px;padding:6px 0}
svg.timeline{display:block;max-width:100%;height:auto;font-family:var(--sans)}
.lane-bg.lane-0{fill:#f6f8fa}.lane-bg.lane-1{fill:#fff}.lane-state-bg{fill:#fff;stroke:#d1d9e0}
.lane-label{font-size:13px;font-weight:600;text-anchor:end;fill:#1f2328}
.lane-sub{font-size:9.5px;text-anchor:end;fill:#59636e}
.axis{stroke:#59636e}.tick{stroke:#59636e}.tick-label{font-size:10px;fill:#59636e}
.axis-title{font-size:10px;text-anchor:end;fill:#59636e}
.gap rect{opacity:.9}.gap-zig{fill:none;stroke:#59636e;stroke-width:1.2}
.gap-label{font-size:10px;text-anchor:middle;fill:#1f2328;font-weight:600}
.hatch-bg{fill:#eaeef2}.hatch-line{stroke:#d1d9e0;stroke-width:3}
.hatch-red-bg{fill:#ffebe9}.hatch-red-line{stroke:#cf222e;stroke-width:2}
.boundary line{stroke:#59636e;stroke-dasharray:2 3}.boundary text{font-size:10px;fill:#59636e}
.span{stroke-width:1}
.t-start,.t-end{stroke:#1f2328;stroke-width:1.2}
.c-ACCEPTED_WRITE .span,.sw.c-ACCEPTED_WRITE{fill:#2da44e;stroke:#1a7f37}
.c-EXPECTED_REJECTION .span,.sw.c-EXPECTED_REJECTION{fill:#fbefff;stroke:#8250df;stroke-width:2}
.c-STATE_OBSERVED .span,.sw.c-STATE_OBSERVED{fill:#8c959f;stroke:#6e7781}
.c-BREAK_ACCEPTED_NOT_COMPLETE .span,.sw.c-BREAK_ACCEPTED_NOT_COMPLETE{fill:#fb8f44;stroke:#bc4c00}
.c-UNKNOWN_OUTCOME .span,.sw.c-UNKNOWN_OUTCOME{fill:url(#hatch-red);stroke:#cf222e;stroke-width:2}
.c-EVIDENCE_ERROR .span,.sw.c-EVIDENCE_ERROR{fill:#82071e;stroke:#4c0014}
.c-NO_OUTCOME .span,.sw.c-NO_OUTCOME{fill:none;stroke:#cf222e;stroke-width:2;stroke-dasharray:4 3}
.mark-label{font-size:10px;fill:#1f2328}
.band{stroke:none}.band.join{opacity:.55}
.st-leased{fill:#54aeff}.st-breaking{fill:#eac54f}.st-broken{fill:#ff8182}.st-available{fill:#8ddb8c}
.st-expired{fill:#d0d7de}
.band-gap rect{fill:none;stroke:#59636e;stroke-dasharray:3 3}
.band-label{font-size:11px;font-weight:600;fill:#1f2328}
.band-label.none{font-weight:400;fill:#59636e}.band-label.in{text-anchor:middle}
.bracket-fill{fill:#8250df;opacity:.07}.bracket-line{fill:none;stroke:#8250df;stroke-width:2}
.bracket .leader{stroke:#8250df;stroke-width:1}
.ann{font-size:11px;fill:#1f2328}
.lease-time line,.lg-lt{stroke:#bc4c00;stroke-width:1.5;stroke-dasharray:5 3}
.first-broken line,.lg-fb{stroke:#cf222e;stroke-width:1.2}
.lg-gap{fill:none;stroke:#59636e;stroke-dasharray:3 3}.lg-hatch{stroke:#d1d9e0}
.legend{display:flex;flex-wrap:wrap;gap:4px 18px;font-size:12.5px;margin:8px 0}
.legend span{display:inline-flex;align-items:center;gap:5px}
.legend svg{flex:none}
.rule{font-size:12.5px;color:var(--fg);margin:6px 0}
table{border-collapse:collapse;width:100%;font-size:12.5px}
th,td{border:1px solid var(--line);padding:3px 6px;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.hash{font-family:var(--mono);font-size:11px;overflow-wrap:anywhere}
.verbatim{white-space:pre-wrap;font-family:var(--mono);font-size:11.5px;margin:0}
.badge{display:inline-block;padding:0 5px;border-radius:3px;font-size:11px;font-weight:600;white-space:nowrap}
.b-ACCEPTED_WRITE{background:#dafbe1;color:#116329}.b-EXPECTED_REJECTION{background:#fbefff;color:#6639ba}
.b-STATE_OBSERVED{background:#eaeef2;color:#424a53}.b-BREAK_ACCEPTED_NOT_COMPLETE{background:#fff1e5;color:#953800}
.b-UNKNOWN_OUTCOME,.b-EVIDENCE_ERROR,.b-NO_OUTCOME,.b-UNEXPLAINED{background:#ffebe9;color:#a40e26}
.rows td{font-size:11.5px}
.rows tr.r-intent td{color:#59636e}
.rows details summary{cursor:pointer;color:#0969da;white-space:nowrap}
.rows td:last-child{min-width:230px}.brief{overflow-wrap:anywhere}
.kv{font-family:var(--mono);font-size:11px;white-space:pre-wrap;overflow-wrap:anywhere;margin:0}
.muted{color:var(--muted)}
.kind-footer{display:none}
@media print{
@page{size:A4 landscape;margin:10mm}
body{font-size:11px}
main{max-width:none;padding:0}
.strip{position:static}
.fig{overflow:visible;border:none}
h2{break-after:avoid}
table,svg.timeline,.banner{break-inside:avoid}
.rows table{break-inside:auto}.rows tr{break-inside:avoid}
details>*:not(summary){display:block}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}
.kind-footer{display:block;position:fixed;bottom:0;left:0;right:0;font-size:9px;color:#59636e;
border-top:1px solid #d1d9e0;background:#fff}
}
]]

local function json(v, depth)
  depth = depth or 0
  local t = type(v)
  if t ~= "table" then
    if t == "string" then return '"' .. v .. '"' end
    if math.type(v) == "float" then return string.format("%.6g", v) end
    return tostring(v)
  end
  if depth > 4 then return "{...}" end
  if #v > 0 or next(v) == nil then
    local parts = {}
    for _, x in ipairs(v) do parts[#parts + 1] = json(x, depth + 1) end
    return "[" .. table.concat(parts, ", ") .. "]"
  end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = k .. ": " .. json(v[k], depth + 1) end
  return "{" .. table.concat(parts, ", ") .. "}"
end

local function badge(class)
  if not class then return "" end
  return string.format('<span class="badge b-%s">%s</span>', esc(class), esc(class))
end

local function td(v, cls)
  return string.format("<td%s>%s</td>", cls and (' class="' .. cls .. '"') or "", v == nil and "" or v)
end

local function dl(pairs_)
  local out = { "<dl>" }
  for _, p in ipairs(pairs_) do
    out[#out + 1] = string.format("<dt>%s</dt><dd>%s</dd>", esc(p[1]), p[2] or "")
  end
  out[#out + 1] = "</dl>"
  return table.concat(out)
end

local function banner(m)
  local d, mf = m.decision, m.manifest or {}
  local cls = R.DECISIONS[m.verdict] and m.verdict or "NONE"
  local q = R.qualification(m)
  local qhtml = m.cloud and esc(q) or ('<span class="notcloud">' .. esc(q) .. "</span>")
  local last_utc = "-"
  for i = #m.rows, 1, -1 do
    local r = m.rows[i]
    local u = r.response_received_utc or r.reopened_utc or r.request_started_utc
    if u then
      last_utc = u
      break
    end
  end
  return string.format('<header class="banner d-%s" id="decision"><div class="verdict" data-decision="%s">%s</div>' ..
    '<div class="kind">endpoint kind: <b class="q" data-endpoint-kind="%s">%s</b> · %s</div>%s</header>',
    cls, esc(m.verdict), esc(m.verdict), esc(m.endpoint_kind), esc(m.endpoint_kind), qhtml, dl {
      { "run", esc(mf.run_id) }, { "blob", "<code>" .. esc(mf.blob_path) .. "</code>" },
      { "account host", esc(mf.account_host) }, { "ticket", esc(mf.ticket) },
      { "resource owner", esc(mf.resource_owner) },
      { "breaking-window finding", esc(d and d.window_finding or "-") },
      { "export rows", string.format("%d (hash chain checked)", #m.rows) },
      { "signature", '<span data-signer>' .. esc(m.signer) .. "</span>" },
      { "last stamp (UTC)", esc(last_utc) },
    })
end

local function statement(m)
  local out = {}
  local d = m.decision
  if not d then
    local open = {}
    for _, q in ipairs(m.requests) do
      if not q.outcome then open[#open + 1] = q.event_id .. " (" .. q.operation .. ", " .. q.actor .. ")" end
    end
    if m.superseded then
      out[#out + 1] = '<div class="statement"><p><b>This run has no decision</b>: its last decision row (row ' ..
        esc(m.superseded.seq) .. ", " .. esc(m.superseded.decision) .. ") is followed by request row " ..
        esc(m.unseated_by.seq) .. ", so it does not stand. Nothing on this page is a decision: treat it as HOLD " ..
        "until <code>scripts/recovery.lua --recover --evidence DIR</code> reconciles the blob and records one.</p>"
    else
      out[#out + 1] = '<div class="statement"><p><b>This run recorded no decision row</b>: it was interrupted, ' ..
        "or is still running. Nothing on this page is a decision: treat it as HOLD until " ..
        "<code>scripts/recovery.lua --recover --evidence DIR</code> reconciles the blob and records one.</p>"
    end
    if #open > 0 then
      out[#out + 1] = "<p>Requests announced (intent row) with no outcome row: " .. esc(table.concat(open, "; ")) ..
        ". Their outcome is unknown.</p>"
    end
    out[#out + 1] = "</div>"
    return table.concat(out)
  end
  out[#out + 1] = '<div class="statement">'
  for _, st in ipairs(m.stops) do
    out[#out + 1] = '<p class="stop"><b>The run stopped on purpose</b> (' .. esc(st.kind) .. ", at " ..
      esc(st.step ~= "" and st.step or "the end") .. "): " .. esc(st.reason) .. "</p>"
  end
  if d.decision ~= "ACCEPT" and #(d.reasons or {}) > 0 then
    out[#out + 1] = "<p><b>Reasons for " .. esc(d.decision) .. "</b> (as recorded):</p><ul class=\"reasons\">"
    for _, r in ipairs(d.reasons) do out[#out + 1] = "<li>" .. esc(r) .. "</li>" end
    out[#out + 1] = "</ul>"
  end
  out[#out + 1] = '<p class="stmt">' .. esc(d.statement) .. "</p>"
  if d.decision == "ACCEPT" then out[#out + 1] = '<p class="muted">Scope (the playbook): ' .. esc(R.SCOPE) .. "</p>" end
  out[#out + 1] = "</div>"
  return table.concat(out)
end

local function legend()
  local out = { '<div class="legend">' }
  local names = {
    ACCEPTED_WRITE = "accepted", EXPECTED_REJECTION = "expected rejection", STATE_OBSERVED = "read",
    BREAK_ACCEPTED_NOT_COMPLETE = "break accepted, not complete", UNKNOWN_OUTCOME = "unknown outcome",
    EVIDENCE_ERROR = "evidence error", NO_OUTCOME = "intent, no outcome row",
  }
  for _, c in ipairs(R.CLASSES) do
    out[#out + 1] = string.format('<span><svg width="30" height="16" aria-hidden="true"><rect class="sw c-%s" ' ..
      'x="2" y="3" width="26" height="10"/></svg>%s <span class="muted">%s</span></span>', c, esc(names[c]), c)
  end
  for _, st in ipairs { "leased", "breaking", "broken", "available" } do
    out[#out + 1] = string.format('<span><svg width="30" height="16" aria-hidden="true"><rect class="st-%s" ' ..
      'x="2" y="2" width="26" height="12"/></svg>%s</span>', st, st)
  end
  out[#out + 1] = '<span><svg width="30" height="16" aria-hidden="true"><rect x="2" y="2" width="26" ' ..
    'height="12" class="lg-gap"/></svg>state changed, not observed</span>'
  out[#out + 1] = '<span><svg width="30" height="16" aria-hidden="true"><path class="bracket-line" ' ..
    'd="M6 1 h-4 v14 h4 M24 1 h4 v14 h-4"/></svg>probe bracket</span>'
  out[#out + 1] = '<span><svg width="30" height="16" aria-hidden="true"><line class="lg-lt" x1="15" y1="0" ' ..
    'x2="15" y2="16"/></svg>x-ms-lease-time estimate</span>'
  out[#out + 1] = '<span><svg width="30" height="16" aria-hidden="true"><line class="lg-fb" x1="15" y1="0" ' ..
    'x2="15" y2="16"/></svg>first broken read</span>'
  out[#out + 1] = '<span><svg width="30" height="16" aria-hidden="true"><rect x="2" y="1" width="26" ' ..
    'height="14" fill="url(#hatch)" class="lg-hatch"/></svg>idle time, compressed</span>'
  out[#out + 1] = "</div>"
  return table.concat(out)
end

local function timeline(m)
  local svg, info = S.timeline(m)
  local out = { '<section id="timeline"><h2>Timeline</h2>', legend(), '<div class="fig">', svg, "</div>" }
  local clock = m.endpoint_kind == "replay" and "the run's virtual clock (a replay takes the recorded times " ..
    "without sleeping)" or "the run's monotonic clock"
  out[#out + 1] = string.format('<p class="rule"><b>How to read it.</b> x is time from the first request, from ' ..
    "%s (mono_start_ns/mono_end_ns of each outcome row). Each request is one mark from " ..
    "its start tick to its end tick, in its actor's lane, coloured by class; marks narrower than %d px are " ..
    "drawn %d px wide. Time is linear at %s per 100 px inside each group of requests; an idle interval longer " ..
    "than %s is drawn compressed (hatched, %s) and labelled with its real length.</p>", clock, S.MIN_W, S.MIN_W,
    esc(fmt_ms(100 / info.k)), esc(fmt_ms(S.GAP_MS)), "about 46 px")
  out[#out + 1] = '<p class="rule"><b>Lease state band.</b> Built only from Get Blob Properties rows ' ..
    "(observed_lease_state). Each read is a solid block over its own request. A lighter band joins two " ..
    "consecutive reads of the same lifecycle that report the same state with no lease action or delete the " ..
    "service may have applied between them: it says the state was seen at both ends, not that anything was " ..
    "watched in between. Where consecutive reads differ, the interval between them is left empty (dashed " ..
    "outline): the change happened somewhere inside it, and nothing is interpolated. A read does not name " ..
    "the holder; \"leased (B, e0024)\" names the last accepted acquire before it.</p>"
  out[#out + 1] = '<p class="rule"><b>Probe bracket</b> (purple): the window finding\'s before and after ' ..
    "properties reads around the held writer's Put. <b>x-ms-lease-time</b> (dashed orange): the break " ..
    "response's estimate, placed at the end of the break request plus that many seconds; the red line is the " ..
    "first properties read that observed broken.</p></section>"
  return table.concat(out)
end

local function simple_table(headers, rows)
  local out = { "<table><thead><tr>" }
  for _, h in ipairs(headers) do out[#out + 1] = "<th>" .. esc(h) .. "</th>" end
  out[#out + 1] = "</tr></thead><tbody>"
  for _, r in ipairs(rows) do
    out[#out + 1] = "<tr>"
    for _, c in ipairs(r) do out[#out + 1] = type(c) == "table" and td(c[1], c[2]) or td(c) end
    out[#out + 1] = "</tr>"
  end
  out[#out + 1] = "</tbody></table>"
  return table.concat(out)
end

local function findings(m)
  local out = { '<section id="findings"><h2>Findings</h2>' }
  if #m.windows > 0 then
    local rows = {}
    for _, f in ipairs(m.windows) do
      rows[#rows + 1] = { esc(f.fixture_epoch), esc(f.before_event), esc(f.put_event), esc(f.after_event),
        { f.bracket_ms and string.format("%.3f ms", f.bracket_ms) or "", "num" }, "<b>" .. esc(f.result) .. "</b>",
        esc(f.reason) }
    end
    out[#out + 1] = "<h3>Breaking window (the bracketed probe)</h3>" .. simple_table({ "lifecycle", "before",
      "Put", "after", "bracket", "result", "reason" }, rows)
  end
  if #m.polls > 0 then
    local rows = {}
    for _, f in ipairs(m.polls) do
      rows[#rows + 1] = { esc(f.fixture_epoch), { esc(f.polls), "num" }, esc(f.last_event),
        { esc(f.hint_s), "num" }, { f.lag_after_hint_ms and string.format("%.3f ms", f.lag_after_hint_ms) or "",
        "num" }, esc(f.cadence), "<b>" .. esc(f.result) .. "</b>", esc(f.reason) }
    end
    out[#out + 1] = "<h3>Polling for broken</h3>" .. simple_table({ "lifecycle", "polls", "last read",
      "x-ms-lease-time (s)", "lag after estimate", "cadence", "result", "reason" }, rows)
  end
  if #m.reconciles > 0 then
    local rows = {}
    for _, r in ipairs(m.reconciles) do
      rows[#rows + 1] = { esc(r.fixture_epoch), esc(r.properties_event), esc(r.observed_lease_state),
        esc(r.content_event), esc(r.content_revision), esc(r.accepted_revision), esc(json(r.doubts or {})),
        "<b>" .. esc(r.result) .. "</b>" }
    end
    out[#out + 1] = "<h3>Reconciliations</h3>" .. simple_table({ "lifecycle", "properties", "state",
      "content read", "content revision", "accepted revision", "doubts", "result" }, rows)
  end
  local misc = {}
  for _, r in ipairs(m.recoveries) do
    misc[#misc + 1] = { esc(r.seq), "recovery", esc("reopened " .. tostring(r.reopened_utc) .. ", open intents: " ..
      tostring(r.open_intents)) }
  end
  for _, r in ipairs(m.notes) do misc[#misc + 1] = { esc(r.seq), "note", esc(tostring(r.step) .. ": " .. r.text) } end
  for _, r in ipairs(m.stops) do
    misc[#misc + 1] = { esc(r.seq), "stop (" .. esc(r.kind) .. ")", esc(tostring(r.step) .. ": " .. r.reason) }
  end
  for _, r in ipairs(m.refusals) do
    misc[#misc + 1] = { esc(r.seq), "refusal (nothing sent)", esc(string.format("%s (invariant %s) at %s %s: %s",
      tostring(r.code), tostring(r.invariant), tostring(r.step), tostring(r.operation), tostring(r.message))) }
  end
  table.sort(misc, function(a, b) return tonumber(a[1]) < tonumber(b[1]) end)
  if #misc > 0 then out[#out + 1] = "<h3>Recoveries, notes and refusals</h3>" .. simple_table({ "seq", "record",
    "text (verbatim)" }, misc) end
  if #out == 1 then out[#out + 1] = '<p class="muted">No finding, reconcile, note or refusal rows.</p>' end
  out[#out + 1] = "</section>"
  return table.concat(out)
end

local function content(m)
  local hist, final, strays = R.content_history(m)
  local rows = {}
  for _, h in ipairs(hist) do
    local puts, reads = {}, {}
    for _, q in ipairs(h.puts) do
      puts[#puts + 1] = esc(q.event_id) .. " " .. esc(q.outcome and q.outcome.http_status or "no outcome") ..
        " " .. badge(q.class)
    end
    for _, q in ipairs(h.reads) do reads[#reads + 1] = esc(q.event_id) end
    rows[#rows + 1] = { esc(h.rev), esc(h.writer), { esc(h.sha), "hash" }, esc("seq " .. tostring(h.seq)),
      table.concat(puts, "<br>"), h.accepted and "<b>accepted</b>" or (#h.puts == 0 and "not attempted" or
      "not accepted"),
      #reads > 0 and ("matched SHA-256: " .. table.concat(reads, ", ")) or "" }
  end
  local out = { '<section id="content"><h2>Content history</h2>',
    '<p class="rule">Declared payloads (before execution, with their SHA-256), the Put Blob attempts for each ' ..
    "revision, and the unconditioned content reads whose bytes hashed to that declaration.</p>",
    simple_table({ "revision", "writer", "declared SHA-256", "declared", "Put Blob attempts", "accepted",
      "read back" }, rows) }
  if final then
    local o = final.outcome
    out[#out + 1] = string.format("<p><b>Last content read:</b> %s returned revision %s, SHA-256 " ..
      '<code>%s</code>.</p>', esc(final.event_id), esc(o.content_revision or "(no declared revision)"),
      esc(o.content_sha256))
  end
  if #strays > 0 then
    local s = {}
    for _, q in ipairs(strays) do
      s[#s + 1] = esc(q.event_id) .. " <code>" .. esc(q.outcome.content_sha256) .. "</code>"
    end
    out[#out + 1] = '<p class="warn">Content reads that match no declared payload: ' .. table.concat(s, "; ") ..
      "</p>"
  end
  out[#out + 1] = "</section>"
  return table.concat(out)
end

-- known-deviation id -> its reviewed reason, from the table C passed in.
local function reasons(m)
  local out = {}
  for _, k in ipairs((m.opts and m.opts.known_deviations) or {}) do out[k.id] = k.reason end
  return out
end

local function discrepancies(m)
  local groups, order = {}, {}
  for _, d in ipairs(m.discrepancies) do
    local key = tostring(d.text) .. "\0" .. tostring(d.explained_by)
    if not groups[key] then
      groups[key] = { text = d.text, by = d.explained_by, events = {} }
      order[#order + 1] = key
    end
    local g = groups[key]
    g.events[#g.events + 1] = d.q.event_id
  end
  local why = reasons(m)
  local rows = {}
  for _, key in ipairs(order) do
    local g = groups[key]
    rows[#rows + 1] = { '<pre class="verbatim">' .. esc(g.text) .. "</pre>",
      g.by and ("<code>" .. esc(g.by) .. "</code>") or badge("UNEXPLAINED"),
      g.by and esc(why[g.by] or "(reason not in this binary's table)") or "",
      { string.format("%d: %s", #g.events, esc(table.concat(g.events, ", "))), "mono" } }
  end
  local out = { '<section id="discrepancies"><h2>Discrepancies and known deviations</h2>' }
  if #rows == 0 then
    out[#out + 1] = '<p class="muted">No row records a discrepancy.</p>'
  else
    out[#out + 1] = '<p class="rule">Each discrepancy text as the rows record it, verbatim, with the reviewed ' ..
      "known-deviation entry that explains it (an unexplained one is HOLD).</p>"
    out[#out + 1] = simple_table({ "discrepancy (verbatim)", "explained by", "reason (known deviations, verbatim)",
      "rows" }, rows)
  end
  out[#out + 1] = "</section>"
  return table.concat(out)
end

local function counted(m, field)
  local n, order = {}, {}
  for _, q in ipairs(m.requests) do
    local o = q.outcome
    if o then
      local v = o[field] == nil and "(none)" or tostring(o[field])
      if not n[v] then order[#order + 1] = v end
      n[v] = (n[v] or 0) + 1
    end
  end
  local parts = {}
  for _, v in ipairs(order) do parts[#parts + 1] = string.format("<code>%s</code> (%d rows)", esc(v), n[v]) end
  return #parts > 0 and table.concat(parts, ", ") or '<span class="muted">no outcome rows</span>'
end

-- The principals, one line per actor, and the sentence about them.
local function identities(m)
  local parts = { esc(m.identity) }
  for _, e in ipairs(m.identities) do
    parts[#parts + 1] = string.format("<br><code>%s</code> %s (%s, %s)%s", esc(e.fingerprint or "unknown"),
      esc(e.actor), esc(e.kind), esc(e.credential), e.idtyp and (" idtyp " .. esc(e.idtyp)) or "")
  end
  return table.concat(parts)
end

local function environment(m)
  local mf = m.manifest or {}
  local comps = {}
  local v = mf.versions or {}
  for _, k in ipairs { "leaselua", "lua", "libcurl", "openssl" } do
    if v[k] then comps[#comps + 1] = esc(k) .. " <code>" .. esc(v[k]) .. "</code>" end
  end
  local proxy = ""
  if type(mf.proxy) == "table" then
    proxy = table.concat { "<tr><th>proxy</th><td><code>", esc(mf.proxy.url), "</code> (from ",
      esc(mf.proxy.source), ")</td></tr>" }
  end
  return table.concat {
    '<section id="environment"><h2>Environment</h2><table><tbody>',
    "<tr><th>endpoint kind</th><td>", esc(m.endpoint_kind), " · ", esc(R.qualification(m)), "</td></tr>",
    "<tr><th>account host / container</th><td>", esc(mf.account_host), " / ", esc(mf.container), "</td></tr>",
    "<tr><th>API version in the manifest</th><td><code>", esc(mf.api_version), "</code></td></tr>",
    "<tr><th>API version requested</th><td>", counted(m, "requested_api_version"), "</td></tr>",
    "<tr><th>API version returned</th><td>", counted(m, "returned_api_version"), "</td></tr>",
    "<tr><th>server (as returned)</th><td>", counted(m, "server"), "</td></tr>",
    "<tr><th>components (manifest)</th><td>", table.concat(comps, " · "), "</td></tr>",
    "<tr><th>storage retries</th><td>", esc(mf.retries), "</td></tr>", proxy,
    "<tr><th>permitted actors</th><td>", esc(table.concat(mf.permitted_actors or {}, ", ")), "</td></tr>",
    "<tr><th>identities</th><td>", identities(m), "</td></tr>",
    "<tr><th>cleanup authority</th><td>", esc(mf.cleanup_authority), "</td></tr>",
    "</tbody></table></section>",
  }
end

local MAIN = {
  seq = true, record = true, event_id = true, step = true, operation = true, actor_alias = true,
  lease_alias_supplied = true, http_status = true, azure_error_code = true, result_classification = true,
  observed_lease_state = true, prev_hash = true, row_hash = true,
}

-- brief(r) -> one line on a row that is not a request, or nil.
local function brief(r)
  local rec = r.record
  if rec == "manifest" then return "run " .. tostring(r.run_id) .. ", " .. tostring(r.endpoint_kind) end
  if rec == "declare" then return string.format("revision %s by %s", tostring(r.revision), tostring(r.writer)) end
  if rec == "lease_bind" then return "lease alias " .. tostring(r.alias) end
  if rec == "lifecycle" then
    return string.format("lifecycle %s%s: %s", tostring(r.fixture_epoch), r.destructive and " (destructive)" or "",
      tostring(r.reason))
  end
  if rec == "finding" then return tostring(r.kind) .. ": " .. tostring(r.result) end
  if rec == "reconcile" then return "reconcile: " .. tostring(r.result) end
  if rec == "recovery" then return "reopened " .. tostring(r.reopened_utc) end
  if rec == "note" then return tostring(r.text) end
  if rec == "stop" then return tostring(r.kind) .. ": " .. tostring(r.reason) end
  if rec == "refusal" then return tostring(r.code) .. ": " .. tostring(r.message) end
  if rec == "cell" then
    return string.format("cell %s / %s: %s", tostring(r.state), tostring(r.op), tostring(r.verdict))
  end
  if rec == "decision" then return tostring(r.decision) .. " (" .. tostring(r.endpoint_kind) .. ")" end
  if rec == "outcome" and r.x_ms_request_id then return "request id " .. tostring(r.x_ms_request_id) end
  return nil
end

local function rows_table(m)
  local out = { '<section id="rows" class="rows"><h2>Export rows</h2>',
    string.format('<p class="rule">All %d rows of <code>export/ledger.jsonl</code>, in order (lease IDs are ' ..
      "aliases there; the hash chain was checked before this page was built). The remaining fields of each row " ..
      "are under \"fields\".</p>", #m.rows),
    "<table><thead><tr><th>seq</th><th>record</th><th>event</th><th>step</th><th>operation</th><th>actor</th>" ..
    "<th>lease sent</th><th>HTTP</th><th>error code</th><th>class / result</th><th>observed</th>" ..
    "<th>fields</th></tr></thead><tbody>" }
  for _, r in ipairs(m.rows) do
    local keys = {}
    for k, v in pairs(r) do if not MAIN[k] and v ~= nil then keys[#keys + 1] = k end end
    table.sort(keys)
    local kv = {}
    for _, k in ipairs(keys) do kv[#kv + 1] = k .. ": " .. json(r[k]) end
    local cls = r.result_classification or r.result or r.decision
    local b = brief(r)
    out[#out + 1] = table.concat {
      '<tr class="r-', esc(r.record), '" id="row-', esc(r.seq), '" data-seq="', esc(r.seq), '">', td(esc(r.seq), "num"),
      td(esc(r.record)),
      td(esc(r.event_id)), td(esc(r.step)), td(esc(r.operation)), td(esc(r.actor_alias)),
      td(esc(r.lease_alias_supplied)), td(esc(r.http_status), "num"), td(esc(r.azure_error_code)),
      td(r.result_classification and badge(cls) or esc(cls)), td(esc(r.observed_lease_state)),
      td((b and ('<div class="brief">' .. esc(b) .. "</div>") or "") .. (#kv > 0 and ("<details><summary>" .. #kv ..
        (#kv == 1 and " field" or " fields") .. '</summary><pre class="kv">' .. esc(table.concat(kv, "\n")) ..
        "</pre></details>") or "")), "</tr>" }
  end
  out[#out + 1] = "</tbody></table></section>"
  return table.concat(out)
end

-- page(m) -> the whole report.html text.
function H.page(m)
  local mf = m.manifest or {}
  local cls = R.DECISIONS[m.verdict] and m.verdict or "NONE"
  local kind_line = string.format("%s · endpoint kind: %s (%s) · run %s", m.verdict, m.endpoint_kind,
    R.qualification(m), tostring(mf.run_id))
  return table.concat {
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    "<title>leaselua report: ", esc(m.verdict), " (", esc(m.endpoint_kind), ") ", esc(mf.run_id), "</title>",
    "<style>", CSS, X.CSS, "</style></head><body>",
    '<div class="strip"><b class="s-', cls, '">', esc(m.verdict), "</b><span>endpoint kind: <b>",
    esc(m.endpoint_kind), "</b></span>", m.cloud and "" or ('<span class="notcloud">not a cloud qualification</span>'),
    '<span class="muted">leaselua evidence report · ', esc(mf.run_id), "</span></div>",
    "<main>", banner(m), statement(m), require("lib.report_corr").html(m, esc), X.html(m, esc, reasons(m)),
    timeline(m), content(m), findings(m),
    discrepancies(m), environment(m),
    m.compare_html or "", rows_table(m),
    '<p class="muted">Built by <code>leaselua report</code> from <code>export/ledger.jsonl</code> alone; ' ..
    "re-check the evidence with <code>leaselua verify DIR</code>.</p></main>",
    '<footer class="kind-footer">', esc(kind_line), "</footer></body></html>\n",
  }
end

return H
