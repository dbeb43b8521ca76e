-- summary.md: the decision, the handoff's requests, the content history,
-- the discrepancies and the environment, short enough to paste into a
-- ticket. Every value from the rows is escaped for Markdown and HTML.
local R = require "lib.report"

local D = {}

-- md(v) -> text that renders as itself in Markdown (also in a table cell).
local function md(v)
  if v == nil then return "" end
  local s = tostring(v):gsub("[%z\1-\31\127]", " ")
  s = s:gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;")
  s = s:gsub("([\\`*%[%]|#~])", "\\%1")
  -- "_" only starts emphasis at a word edge: STATE_OBSERVED stays readable
  return (s:gsub("()_", function(i)
    local before, after = s:sub(i - 1, i - 1), s:sub(i + 1, i + 1)
    if i > 1 and before:match("%w") and after:match("%w") then return "_" end
    return "\\_"
  end))
end

local function row(cells) return "| " .. table.concat(cells, " | ") .. " |" end

function D.summary(m)
  local out = {}
  local function add(s) out[#out + 1] = s end
  local mf, d = m.manifest or {}, m.decision
  add(string.format("# leaselua evidence: %s (endpoint kind: %s)", md(m.verdict), md(m.endpoint_kind)))
  add("")
  add("**" .. md(R.qualification(m)) .. "**")
  add("")
  add(string.format("- Run %s, ticket %s, resource owner %s", md(mf.run_id), md(mf.ticket), md(mf.resource_owner)))
  add(string.format("- Blob %s on %s", md(mf.blob_path), md(mf.account_host)))
  add(string.format("- Decision: **%s**; breaking-window finding: %s", md(m.verdict),
    md(d and d.window_finding or "-")))
  add(string.format("- %d export rows (hash chain checked), %d requests", #m.rows, #m.requests))
  add("- Signature: " .. md(m.signer))
  add("")
  if not d and m.superseded then
    add(string.format("This run's last decision row (row %s, %s) is followed by request row %s: it does not " ..
      "stand, and this run has **no decision**: treat it as HOLD until recovery records one.",
      md(m.superseded.seq), md(m.superseded.decision), md(m.unseated_by.seq)))
  elseif not d then
    add("This run recorded **no decision row** (interrupted, or still running): treat it as HOLD until " ..
      "recovery records one.")
  else
    for _, st in ipairs(m.stops) do
      add("The run **stopped on purpose** (" .. md(st.kind) .. ", at " ..
        md(st.step ~= "" and st.step or "the end") .. "): " .. md(st.reason))
      add("")
    end
    if d.decision ~= "ACCEPT" and #(d.reasons or {}) > 0 then
      add("Reasons for " .. md(d.decision) .. ":")
      add("")
      for _, r in ipairs(d.reasons) do add("- " .. md(r)) end
      add("")
    end
    add("> " .. md(d.statement))
    if d.decision == "ACCEPT" then
      add(">")
      add("> " .. md(R.SCOPE))
    end
  end
  add("")
  add("## Identities")
  add("")
  add(md(m.identity))
  if #m.identities > 0 then
    add("")
    add(row { "actor", "credential", "kind", "principal fingerprint", "idtyp" })
    add(row { "---", "---", "---", "---", "---" })
    for _, e in ipairs(m.identities) do
      add(row { md(e.actor), md(e.credential), md(e.kind), md(e.fingerprint or "unknown"), md(e.idtyp or "-") })
    end
  end
  add("")
  add(require("lib.report_corr").md(m, md))
  local matrix = require("lib.report_matrix").md(m, md)
  if matrix ~= "" then add(matrix) end
  add("## Requests")
  add("")
  add(row { "event", "step", "operation", "actor", "lease sent", "HTTP", "error code", "observed", "class" })
  add(row { "---", "---", "---", "---", "---", "---:", "---", "---", "---" })
  for _, q in ipairs(m.requests) do
    local o, r = q.outcome, q.row
    add(row { md(q.event_id), md(r.step), md(q.operation), md(q.actor), md(r.lease_alias_supplied),
      md(o and o.http_status or (o and o.outcome) or "no outcome"), md(o and o.azure_error_code or ""),
      md(o and o.observed_lease_state or ""), md(q.class) })
  end
  for _, f in ipairs(m.windows) do
    add("")
    add(string.format("Probe bracket (lifecycle %s): %s, Put %s, %s: %s%s", md(f.fixture_epoch),
      md(f.before_event), md(f.put_event), md(f.after_event), md(f.result),
      f.bracket_ms and string.format(" (%.1f ms)", f.bracket_ms) or ""))
  end
  add("")
  add("## Content")
  add("")
  local hist, final = R.content_history(m)
  add(row { "revision", "writer", "declared SHA-256", "accepted", "read back" })
  add(row { "---:", "---", "---", "---", "---" })
  for _, h in ipairs(hist) do
    local reads = {}
    for _, q in ipairs(h.reads) do reads[#reads + 1] = md(q.event_id) end
    local accepted = h.accepted and "yes" or (#h.puts == 0 and "not attempted" or "no")
    add(row { md(h.rev), md(h.writer), md(h.sha), accepted, table.concat(reads, ", ") })
  end
  if final then
    add("")
    add(string.format("Last content read: %s, revision %s.", md(final.event_id),
      md(final.outcome.content_revision or "(not a declared payload)")))
  end
  add("")
  add("## Discrepancies")
  add("")
  local seen, n_unexplained = {}, 0
  for _, x in ipairs(m.discrepancies) do
    local key = tostring(x.text) .. "\0" .. tostring(x.explained_by)
    if not x.explained_by then n_unexplained = n_unexplained + 1 end
    if seen[key] then
      seen[key].n = seen[key].n + 1
    else
      seen[key] = { n = 1, text = x.text, by = x.explained_by }
      seen[#seen + 1] = seen[key]
    end
  end
  if #seen == 0 then add("None recorded.") end
  for _, g in ipairs(seen) do
    add(string.format("- %s: %s (%d rows)", g.by and ("explained by " .. md(g.by)) or "**UNEXPLAINED**",
      md(g.text), g.n))
  end
  if n_unexplained > 0 then add(string.format("- %d unexplained", n_unexplained)) end
  add("")
  add("## Environment")
  add("")
  local v = mf.versions or {}
  add(string.format("- API version requested %s; returned: %s", md(mf.api_version), (function()
    local c, order = {}, {}
    for _, q in ipairs(m.requests) do
      local rv = q.outcome and (q.outcome.returned_api_version or "(none)")
      if rv then
        if not c[rv] then order[#order + 1] = rv end
        c[rv] = (c[rv] or 0) + 1
      end
    end
    local parts = {}
    for _, k in ipairs(order) do parts[#parts + 1] = string.format("%s (%d)", md(k), c[k]) end
    return #parts > 0 and table.concat(parts, ", ") or "-"
  end)()))
  add(string.format("- leaselua %s, %s, %s, %s; retries %s", md(v.leaselua), md(v.lua), md(v.libcurl),
    md(v.openssl), md(mf.retries)))
  if type(mf.proxy) == "table" then
    add(string.format("- proxy %s (from %s)", md(mf.proxy.url), md(mf.proxy.source)))
  end
  add("")
  add("Full report with the timeline: `report.html` in the same evidence directory.")
  return table.concat(out, "\n") .. "\n"
end

return D
