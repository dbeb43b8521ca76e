-- The report's corroboration section (docs/CORROBORATION.md): the run's
-- own decision beside what Azure Storage's logs say of the run, from
-- DIR/corroboration.json when `leaselua corroborate` wrote one; and, in
-- every report, the query that fetches the logs. Reads only what C passed
-- (opts.corroboration, opts.corroboration_query); every value escaped.
local C = {}

local function str(v) return type(v) == "string" and v or nil end

local function decisions(c)
  local run = type(c.decision_run) == "table" and str(c.decision_run.decision) or "none recorded"
  local with = type(c.decision_with_logs) == "table" and str(c.decision_with_logs.decision) or nil
  return run, with or "(nothing settled)"
end

local function items(list)
  local out = {}
  for _, e in ipairs(type(list) == "table" and list or {}) do
    if type(e) == "table" and str(e.text) then out[#out + 1] = { check = str(e.check) or "?", text = e.text } end
  end
  return out
end

local function listed(c)
  local out = {}
  for _, e in ipairs(type(c.unrecorded) == "table" and c.unrecorded or {}) do
    if type(e) == "table" then
      out[#out + 1] = string.format("%s %s at %s by %s (%s)", str(e.operation) or "?", str(e.status) or "?",
        str(e.logged_utc) or "?", str(e.principal) or "no principal", str(e.source) or "?")
    end
  end
  return out
end

-- html(m, esc) -> the <section> text.
function C.html(m, esc)
  local c, q = m.opts.corroboration, m.opts.corroboration_query
  local out = { '<section id="corroboration"><h2>Corroboration by the service\'s logs</h2>' }
  if type(c) ~= "table" then
    out[#out + 1] = "<p>Not corroborated. Azure Storage's own logs of this run can be fetched with the command " ..
      "below and checked with <code>leaselua corroborate DIR --logs FILE...</code> (Azurite writes no such logs).</p>"
  else
    local run, with = decisions(c)
    out[#out + 1] = '<table><thead><tr><th>the run\'s decision</th><th>with the service\'s logs</th>' ..
      "<th>corroboration</th></tr></thead><tbody><tr><td>" .. esc(run) .. "</td><td>" .. esc(with) ..
      "</td><td><b>" .. esc(str(c.verdict) or "?") .. "</b></td></tr></tbody></table>"
    out[#out + 1] = "<p class=\"muted\">" .. esc(str(c.corroborated_utc) or "") .. " · identities: " ..
      esc(type(c.identity) == "table" and str(c.identity.status) or "?") ..
      " · the run's decision is never changed by a corroboration</p>"
    for _, part in ipairs({ { "contradictions", "Contradictions" }, { "missing", "Missing" } }) do
      local list = items(c[part[1]])
      if #list > 0 then
        out[#out + 1] = "<h3>" .. part[2] .. "</h3><ul>"
        for _, e in ipairs(list) do
          out[#out + 1] = "<li><code>" .. esc(e.check) .. "</code> " .. esc(e.text) .. "</li>"
        end
        out[#out + 1] = "</ul>"
      end
    end
    local l = listed(c)
    if #l > 0 then
      out[#out + 1] = "<h3>Unrecorded records of the blob</h3><ul>"
      for _, t in ipairs(l) do out[#out + 1] = "<li>" .. esc(t) .. "</li>" end
      out[#out + 1] = "</ul>"
    end
  end
  if type(q) == "string" then
    out[#out + 1] = "<details><summary>Fetching the logs (KQL, az command, blob prefixes)</summary><pre>" ..
      esc(q) .. "</pre></details>"
  end
  out[#out + 1] = "</section>"
  return table.concat(out)
end

-- md(m, md) -> the summary's lines.
function C.md(m, md)
  local c = m.opts.corroboration
  local out = { "## Corroboration", "" }
  if type(c) ~= "table" then
    out[#out + 1] = "Not corroborated: `leaselua corroborate DIR --print-query` prints the command that fetches " ..
      "the service's logs (Azurite writes none)."
  else
    local run, with = decisions(c)
    out[#out + 1] = "| the run's decision | with the service's logs | corroboration |"
    out[#out + 1] = "|---|---|---|"
    out[#out + 1] = string.format("| %s | %s | **%s** |", md(run), md(with), md(str(c.verdict) or "?"))
    out[#out + 1] = ""
    for _, part in ipairs({ "contradictions", "missing" }) do
      for _, e in ipairs(items(c[part])) do out[#out + 1] = string.format("- %s `%s` %s", part, e.check, md(e.text)) end
    end
    for _, t in ipairs(listed(c)) do out[#out + 1] = "- unrecorded: " .. md(t) end
  end
  out[#out + 1] = ""
  return table.concat(out, "\n")
end

return C
