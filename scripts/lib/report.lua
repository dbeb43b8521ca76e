-- The evidence report (`leaselua report DIR`): the facts a reviewer needs,
-- taken from the export rows alone, rendered as report.html and summary.md.
-- Pure Lua: the host hands the rows in and writes the two strings out.
local M = {}

M.DECISIONS = { ACCEPT = true, WAIT = true, HOLD = true, RECONCILE = true }
M.LANES = { "A", "B", "operator", "observer" }
M.CLASSES = {
  "ACCEPTED_WRITE", "EXPECTED_REJECTION", "STATE_OBSERVED", "BREAK_ACCEPTED_NOT_COMPLETE",
  "UNKNOWN_OUTCOME", "EVIDENCE_ERROR", "NO_OUTCOME",
}
M.SCOPE = "That statement does not qualify another blob, larger/multipart uploads, changed retry " ..
  "policies, another API version, an emulator, or application side effects outside the blob."

-- esc(v) -> text safe in HTML content and in quoted attributes. C0
-- controls other than tab and newline become U+FFFD.
function M.esc(v)
  if v == nil then return "" end
  local s = tostring(v)
  s = s:gsub("[%z\1-\8\11-\31\127]", "\u{FFFD}")
  return (s:gsub("[&<>\"']", {
    ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;",
  }))
end

-- fmt_ms(ms) -> "3.1 ms" or "10.014 s".
function M.fmt_ms(ms)
  if ms == nil then return "-" end
  local a = math.abs(ms)
  if a < 10 then return string.format("%.2f ms", ms) end
  if a < 1000 then return string.format("%.1f ms", ms) end
  return string.format("%.3f s", ms / 1000)
end

-- utc_ms("2026-11-30T07:09:49.977Z") -> milliseconds since 1970, or nil.
function M.utc_ms(s)
  if type(s) ~= "string" then return nil end
  local y, mo, d, h, mi, sec, frac = s:match("^(%d+)%-(%d+)%-(%d+)T(%d+):(%d+):(%d+)%.?(%d*)Z$")
  if not y then return nil end
  y, mo, d = tonumber(y), tonumber(mo), tonumber(d)
  -- days from civil (Howard Hinnant), proleptic Gregorian
  y = mo <= 2 and y - 1 or y
  local era = (y >= 0 and y or y - 399) // 400
  local yoe = y - era * 400
  local doy = (153 * (mo + (mo > 2 and -3 or 9)) + 2) // 5 + d - 1
  local doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
  local days = era * 146097 + doe - 719468
  local ms = frac ~= "" and tonumber((frac .. "00"):sub(1, 3)) or 0
  return ((days * 24 + tonumber(h)) * 60 + tonumber(mi)) * 60000 + tonumber(sec) * 1000 + ms
end

local function is_lease_change(r)
  -- a request after which an earlier properties observation may no
  -- longer hold: any lease action or delete the service may have applied
  if r.result_classification == "EXPECTED_REJECTION" or r.result_classification == "STATE_OBSERVED" then
    return false
  end
  return r.operation:match("^Lease ") ~= nil or r.operation == "Delete Blob"
end

-- Times of the requests, in ms from the first outcome's mono_start_ns.
-- Within one process the monotonic clock orders everything. After a
-- recovery row, a clock that went backwards (another boot, a replay) is
-- re-anchored on the UTC stamps, and the discontinuity is recorded.
local function place(m)
  local t0_ns, off, last, recovered = nil, 0, nil, false
  for _, q in ipairs(m.requests) do
    local o = q.outcome
    if q.after_recovery then recovered = true end
    if o and o.mono_start_ns and o.mono_end_ns then
      if not t0_ns then t0_ns = o.mono_start_ns end
      local s = (o.mono_start_ns - t0_ns) / 1e6 + off
      if recovered and last and s < last.t_end then
        local du = (M.utc_ms(o.request_started_utc) or 0) - (M.utc_ms(last.utc) or 0)
        local want = last.t_end + math.max(du, 0)
        off = off + (want - s)
        s = want
        m.discontinuities[#m.discontinuities + 1] = { t = s, event = q.event_id }
      end
      recovered = false
      q.t_start = s
      q.t_end = s + (o.mono_end_ns - o.mono_start_ns) / 1e6
      q.timed_by = "monotonic clock"
      last = { t_end = q.t_end, t_start = q.t_start, utc = o.request_started_utc }
    end
  end
  -- requests without an outcome: from their UTC stamp, next to the last
  -- timed request before them
  local prev
  for _, q in ipairs(m.requests) do
    if q.t_start then
      prev = q
    else
      local u = M.utc_ms(q.intent and q.intent.request_started_utc)
      local pu = prev and M.utc_ms(prev.outcome.request_started_utc)
      if u and pu then
        q.t_start = prev.t_start + math.max(u - pu, 0)
      else
        q.t_start = prev and prev.t_end or 0
      end
      q.timed_by = "UTC stamp (no outcome recorded)"
    end
  end
end

-- model(rows, opts) -> the facts the renderers share.
function M.model(rows, opts)
  opts = opts or {}
  local m = {
    rows = rows, opts = opts, declares = {}, declared = {}, requests = {}, by_event = {},
    findings = {}, windows = {}, polls = {}, reconciles = {}, notes = {}, refusals = {}, stops = {},
    recoveries = {}, lifecycles = {}, decisions = {}, observations = {}, discontinuities = {},
    discrepancies = {},
    signer = type(opts.signer) == "string" and opts.signer or "unsigned",
    compare_html = type(opts.compare_html) == "string" and opts.compare_html or nil,
  }
  local pending_recovery = false
  for _, r in ipairs(rows) do
    local rec = r.record
    if rec == "manifest" and not m.manifest then
      m.manifest = r
    elseif rec == "declare" then
      m.declares[#m.declares + 1] = r
      m.declared[r.revision] = r
    elseif rec == "intent" or rec == "outcome" then
      if m.decision and not m.unseated_by then m.unseated_by = r end
      local q = m.by_event[r.event_id]
      if not q then
        q = { event_id = r.event_id, index = #m.requests + 1 }
        m.by_event[r.event_id] = q
        m.requests[#m.requests + 1] = q
        if pending_recovery then q.after_recovery = true end
        pending_recovery = false
      end
      q[rec] = r
    elseif rec == "finding" then
      m.findings[#m.findings + 1] = r
      if r.kind == "window" then m.windows[#m.windows + 1] = r end
      if r.kind == "poll" then m.polls[#m.polls + 1] = r end
    elseif rec == "reconcile" then
      m.reconciles[#m.reconciles + 1] = r
    elseif rec == "note" then
      m.notes[#m.notes + 1] = r
    elseif rec == "stop" then
      m.stops[#m.stops + 1] = r
    elseif rec == "refusal" then
      m.refusals[#m.refusals + 1] = r
    elseif rec == "recovery" then
      if m.decision and not m.unseated_by then m.unseated_by = r end
      m.recoveries[#m.recoveries + 1] = r
      pending_recovery = true
    elseif rec == "lifecycle" then
      m.lifecycles[#m.lifecycles + 1] = r
    elseif rec == "decision" then
      m.decisions[#m.decisions + 1] = r
      m.decision, m.unseated_by = r, nil
    end
  end
  -- A decision stands only while no request (or reopened session) follows
  -- it, as verify and the lock read it (core/run/verify_stands.c): one that
  -- does is kept as m.superseded, and the run has no decision.
  if m.unseated_by then
    m.superseded, m.decision = m.decision, nil
  end
  for _, q in ipairs(m.requests) do
    local r = q.outcome or q.intent
    q.row = r
    q.actor = r.actor_alias or "?"
    q.operation = r.operation or "?"
    q.epoch = r.fixture_epoch
    q.class = q.outcome and q.outcome.result_classification or "NO_OUTCOME"
    q.changes_lease = q.outcome and is_lease_change(q.outcome) or (not q.outcome)
  end
  place(m)
  for _, q in ipairs(m.requests) do
    local o = q.outcome
    if o and o.operation == "Get Blob Properties" and o.observed_lease_state then
      m.observations[#m.observations + 1] = q
    end
    for _, d in ipairs(o and o.discrepancy or {}) do
      m.discrepancies[#m.discrepancies + 1] = { q = q, text = d.text, explained_by = d.explained_by }
    end
  end
  m.endpoint_kind = (m.decision and m.decision.endpoint_kind) or (m.manifest and m.manifest.endpoint_kind)
    or "unknown"
  m.verdict = m.decision and m.decision.decision or "NO DECISION"
  m.identities = M.identities(m.manifest)
  m.identity = opts.identity or "identities not recorded: the evidence does not distinguish principals"
  m.cloud = m.endpoint_kind == "azure"
  return m
end

-- identities(manifest) -> a list of {actor, credential, kind, fingerprint,
-- idtyp}, in the lanes' order then any other actor's; {} when the manifest
-- records none (a replay, an older bundle: unknown, never distinct).
function M.identities(mf)
  local ids, out, seen = mf and mf.identities, {}, {}
  if type(ids) ~= "table" then return out end
  local function add(a)
    local e = ids[a]
    if type(e) == "table" and not seen[a] then
      seen[a] = true
      out[#out + 1] = { actor = a, credential = e.credential, kind = e.kind,
        fingerprint = type(e.fingerprint) == "string" and e.fingerprint or nil, idtyp = e.idtyp }
    end
  end
  for _, a in ipairs(M.LANES) do add(a) end
  local rest = {}
  for a in pairs(ids) do
    if not seen[a] then rest[#rest + 1] = a end
  end
  table.sort(rest)
  for _, a in ipairs(rest) do add(a) end
  return out
end

-- qualification(m) -> the line that must stand next to the endpoint kind.
function M.qualification(m)
  local k = m.endpoint_kind
  if k == "azure" then return "Azure endpoint: the narrow statement below applies to this blob and run only" end
  if k == "emulator" then return "emulator evidence: not a cloud qualification" end
  if k == "replay" then
    local label = m.manifest and m.manifest.fixture_label
    return "replay of recorded " .. (label and (tostring(label) .. " ") or "") .. "evidence: not a cloud qualification"
  end
  return "endpoint kind " .. tostring(k) .. ": not a cloud qualification"
end

-- The holder a leased observation refers to: the last accepted acquire,
-- renew or change before it in the same lifecycle (a properties read does
-- not name the holder).
function M.holder_before(m, q)
  local who
  for i = 1, q.index - 1 do
    local p = m.requests[i]
    local o = p.outcome
    if o and p.epoch == q.epoch and o.result_classification == "ACCEPTED_WRITE" then
      if o.operation == "Lease Acquire" or o.operation == "Lease Renew" or o.operation == "Lease Change" then
        who = { actor = o.actor_alias, event = o.event_id }
      elseif o.operation == "Lease Release" or o.operation == "Delete Blob" then
        who = nil
      end
    end
  end
  return who
end

-- The content history: per declared revision, the Put attempts, whether
-- one was accepted, and the content reads that returned its bytes.
function M.content_history(m)
  local hist, final = {}, nil
  for _, d in ipairs(m.declares) do
    hist[#hist + 1] = { rev = d.revision, writer = d.writer, sha = d.payload_sha256, seq = d.seq,
      puts = {}, reads = {}, accepted = false }
  end
  local by_rev = {}
  for _, h in ipairs(hist) do by_rev[h.rev] = h end
  local strays = {}
  for _, q in ipairs(m.requests) do
    local o = q.outcome
    if q.operation == "Put Blob" then
      local h = by_rev[q.row.payload_revision]
      if h then
        h.puts[#h.puts + 1] = q
        if q.class == "ACCEPTED_WRITE" then h.accepted = true end
      end
    elseif o and o.operation == "Get Blob" and o.content_sha256 then
      local h = by_rev[o.content_revision]
      if h and h.sha == o.content_sha256 then
        h.reads[#h.reads + 1] = q
      else
        strays[#strays + 1] = q
      end
      final = q
    end
  end
  return hist, final, strays
end

-- render(rows, opts) -> html, markdown. opts: dir,
-- known_deviations (the reviewed table, for the reasons), signer (the
-- host's line on the bundle's signature: "unsigned" or the signing key),
-- corroboration (DIR/corroboration.json) and corroboration_query
-- (--print-query), from C.
function M.render(rows, opts)
  local m = M.model(rows, opts)
  local html = require("lib.report_html").page(m)
  local md = require("lib.report_md").summary(m)
  return html, md
end

return M
