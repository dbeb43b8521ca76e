-- `leaselua compare DIR_A DIR_B...`: a behavioural diff of verified
-- bundles (lib.bundle summaries), step by step: for each step in both, its
-- status, error code, lease state before and after, classification,
-- x-ms-version requested and returned, content revision and discrepancy;
-- then the steps only one bundle has. It says plainly when the bundles
-- differ in endpoint kind, and it is never a qualification.
local bundle = require "lib.bundle"

local M = {}

M.FORMAT = "leaselua-compare-v1"
M.NOT_QUALIFICATION = "a behavioural comparison, not a qualification: leaselua qualify decides that, " ..
  "for azure bundles only"

-- The fields compared, in order: {key in the step, label}.
M.FIELDS = {
  { "status", "status" }, { "code", "error code" }, { "before", "lease state before" },
  { "after", "lease state after" }, { "class", "classification" },
  { "requested", "x-ms-version requested" }, { "returned", "x-ms-version returned" },
  { "content", "content revision" }, { "disc", "unexplained discrepancy" }, { "expl", "explained by" },
}

local function val(st, k)
  local v
  if k == "disc" then
    v = #st.discrepancy > 0 and table.concat(st.discrepancy, "; ") or nil
  elseif k == "expl" then
    v = #st.explained > 0 and table.concat(st.explained, "; ") or nil
  else
    v = st[k]
  end
  if v == nil then return "-" end
  return tostring(math.type(v) == "float" and math.tointeger(v) or v)
end

local function header(s)
  return {
    dir = s.dir, consistent = s.consistent, problem = s.problem or s.error, endpoint_kind = s.endpoint_kind,
    fixture_label = s.fixture_label, kind = bundle.kind_label(s), account_host = s.account_host, flow = s.flow,
    api_version = s.api_version, returned_versions = s.returned_versions or {}, leaselua = s.leaselua,
    libcurl = s.libcurl, decision = s.decision, window = s.window, date = s.date,
  }
end

local function brief(st)
  local parts = { st.status }
  if st.code then parts[#parts + 1] = st.code end
  parts[#parts + 1] = st.class
  return parts
end

local function step_view(st)
  return { key = st.key, lifecycle = st.epoch, step = st.step, operation = st.operation, n = st.n,
    kind = st.kind, summary = table.concat(brief(st), " ") }
end

-- diff(a, b) -> one comparison of two summaries.
function M.diff(a, b)
  local d = { format = M.FORMAT, a = header(a), b = header(b), not_a_qualification = M.NOT_QUALIFICATION,
    changed = {}, only_a = {}, only_b = {}, same = 0, both = 0, bundle = {} }
  d.endpoint_kind_differs = d.a.kind ~= d.b.kind
  if d.endpoint_kind_differs then
    d.endpoint_kind_note = "the bundles differ in endpoint kind: A is " .. d.a.kind .. ", B is " .. d.b.kind ..
      ": what differs between them is not evidence about either service alone"
  end
  for _, f in ipairs { { "decision", "decision" }, { "window", "window" }, { "api_version", "API version requested" },
    { "account_host", "account host" }, { "flow", "flow" }, { "leaselua", "leaselua" }, { "libcurl", "libcurl" } } do
    local x, y = tostring(d.a[f[1]] or "-"), tostring(d.b[f[1]] or "-")
    if x ~= y then d.bundle[#d.bundle + 1] = { field = f[2], a = x, b = y } end
  end
  local ra, rb = table.concat(d.a.returned_versions, ","), table.concat(d.b.returned_versions, ",")
  if ra ~= rb then d.bundle[#d.bundle + 1] = { field = "x-ms-version returned", a = ra, b = rb } end
  if not (a.consistent and b.consistent) then
    d.compared = false
    return d
  end
  d.compared = true
  local in_b = {}
  for _, st in ipairs(b.steps or {}) do in_b[st.key] = st end
  local in_a = {}
  for _, st in ipairs(a.steps or {}) do
    in_a[st.key] = true
    local o = in_b[st.key]
    if not o then
      d.only_a[#d.only_a + 1] = step_view(st)
    else
      d.both = d.both + 1
      local fields = {}
      for _, f in ipairs(M.FIELDS) do
        local x, y = val(st, f[1]), val(o, f[1])
        -- each step sent its own bundle's version: that difference is the
        -- bundle's, said once above, not again at every step
        local own = f[1] == "requested" and x == tostring(d.a.api_version) and y == tostring(d.b.api_version)
        if x ~= y and not own then fields[#fields + 1] = { field = f[2], a = x, b = y } end
      end
      if #fields == 0 then
        d.same = d.same + 1
      else
        local v = step_view(st)
        v.fields = fields
        d.changed[#d.changed + 1] = v
      end
    end
  end
  for _, st in ipairs(b.steps or {}) do
    if not in_a[st.key] then d.only_b[#d.only_b + 1] = step_view(st) end
  end
  d.differs = #d.changed > 0 or #d.only_a > 0 or #d.only_b > 0 or d.a.decision ~= d.b.decision
    or d.a.window ~= d.b.window
  return d
end

local function step_name(v)
  return v.step .. ": " .. v.operation .. (v.n > 1 and (" #" .. v.n) or "") .. " (lifecycle " .. v.lifecycle .. ")"
end

local function head_line(tag, h)
  if not h.consistent then
    return "compare: " .. tag .. " " .. tostring(h.dir) .. ": INCONSISTENT (" .. tostring(h.problem) ..
      "): its rows are not compared"
  end
  -- a bundle with no standing decision says so, never "decision nil"
  return string.format("compare: %s %s: %s, %s, %s, API %s (returned %s), %s, window %s", tag, h.dir,
    h.kind, tostring(h.account_host), tostring(h.flow), tostring(h.api_version),
    #h.returned_versions > 0 and table.concat(h.returned_versions, ",") or "-",
    h.decision and ("decision " .. tostring(h.decision)) or "no decision", tostring(h.window or "-"))
end

-- The lines, joined, each control byte of a value (a step label, a note:
-- a script's text) shown as \xHH: never a terminal's escape, carriage
-- return or line of its own that could forge a line of this output.
local function lines(out)
  for i, l in ipairs(out) do
    out[i] = l:gsub("[%c\127]", function(c) return string.format("\\x%02x", c:byte()) end)
  end
  return table.concat(out, "\n") .. "\n"
end

-- text(d) -> the comparison in lines.
function M.text(d)
  local out = { head_line("A", d.a), head_line("B", d.b) }
  if d.endpoint_kind_differs then out[#out + 1] = "compare: " .. d.endpoint_kind_note end
  out[#out + 1] = "compare: " .. d.not_a_qualification
  for _, f in ipairs(d.bundle) do
    out[#out + 1] = string.format("bundle   %-26s %s -> %s", f.field, f.a, f.b)
  end
  if not d.compared then
    out[#out + 1] = "compare: not compared step by step: only what verify proves consistent is read"
    return lines(out)
  end
  out[#out + 1] = string.format("compare: %d steps in both: %d changed, %d the same; %d only in A, %d only in B",
    d.both, #d.changed, d.same, #d.only_a, #d.only_b)
  for _, v in ipairs(d.changed) do
    out[#out + 1] = "changed  " .. step_name(v)
    for _, f in ipairs(v.fields) do
      out[#out + 1] = string.format("         %-26s %s -> %s", f.field, f.a, f.b)
    end
  end
  for _, v in ipairs(d.only_a) do out[#out + 1] = "only A   " .. step_name(v) .. ": " .. v.summary end
  for _, v in ipairs(d.only_b) do out[#out + 1] = "only B   " .. step_name(v) .. ": " .. v.summary end
  return lines(out)
end

local function esc(v)
  return require("lib.report").esc(v)
end

-- section(d) -> the comparison as an HTML section (also the report's).
function M.section(d)
  local out = { '<section class="compare"><h2>Compared with another bundle</h2>' }
  local function hrow(tag, h)
    return "<tr><th>" .. tag .. "</th><td><code>" .. esc(h.dir) .. "</code></td><td>" .. esc(h.kind) .. "</td><td>"
      .. esc(h.account_host) .. "</td><td>" .. esc(h.api_version) .. "</td><td>"
      .. esc(table.concat(h.returned_versions, ",")) .. "</td><td>" .. esc(h.decision or "no decision") .. "</td><td>"
      .. esc(h.window) .. "</td><td>" .. (h.consistent and "consistent" or ("INCONSISTENT: " .. esc(h.problem)))
      .. "</td></tr>"
  end
  out[#out + 1] = "<table><thead><tr><th></th><th>bundle</th><th>endpoint kind</th><th>account host</th>"
    .. "<th>API version</th><th>returned</th><th>decision</th><th>window</th><th>verify</th></tr></thead><tbody>"
    .. hrow("A", d.a) .. hrow("B", d.b) .. "</tbody></table>"
  if d.endpoint_kind_differs then out[#out + 1] = '<p class="kind"><b>' .. esc(d.endpoint_kind_note) .. "</b></p>" end
  out[#out + 1] = "<p>" .. esc(d.not_a_qualification) .. ".</p>"
  if not d.compared then
    out[#out + 1] = "<p>Not compared step by step: only what verify proves consistent is read.</p></section>"
    return table.concat(out, "\n")
  end
  out[#out + 1] = "<p>" .. esc(string.format("%d steps in both: %d changed, %d the same; %d only in A, %d only in B",
    d.both, #d.changed, d.same, #d.only_a, #d.only_b)) .. "</p>"
  out[#out + 1] = "<table><thead><tr><th>step</th><th>field</th><th>A</th><th>B</th></tr></thead><tbody>"
  for _, f in ipairs(d.bundle) do
    out[#out + 1] = "<tr><td>(bundle)</td><td>" .. esc(f.field) .. "</td><td>" .. esc(f.a) .. "</td><td>" .. esc(f.b)
      .. "</td></tr>"
  end
  for _, v in ipairs(d.changed) do
    for _, f in ipairs(v.fields) do
      out[#out + 1] = "<tr><td>" .. esc(step_name(v)) .. "</td><td>" .. esc(f.field) .. "</td><td>" .. esc(f.a)
        .. "</td><td>" .. esc(f.b) .. "</td></tr>"
    end
  end
  for _, v in ipairs(d.only_a) do
    out[#out + 1] = "<tr><td>" .. esc(step_name(v)) .. "</td><td>only in A</td><td>" .. esc(v.summary)
      .. "</td><td>-</td></tr>"
  end
  for _, v in ipairs(d.only_b) do
    out[#out + 1] = "<tr><td>" .. esc(step_name(v)) .. "</td><td>only in B</td><td>-</td><td>" .. esc(v.summary)
      .. "</td></tr>"
  end
  out[#out + 1] = "</tbody></table></section>"
  return table.concat(out, "\n")
end

-- report_section(a, b) -> the section `leaselua report A --compare B`
-- adds to report.html.
function M.report_section(a, b)
  return M.section(M.diff(a, b))
end

M.STYLE = "body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;margin:.5em 0}"
  .. "td,th{border:1px solid #999;padding:.2em .4em;font-size:90%;vertical-align:top}p.kind{color:#a00}"

-- render(diffs, opts) -> {text, html, json (a list: one per
-- comparison), exit}: diffs made by the workers (lib.bundle.process), the
-- first bundle against each other one. exit: 0 no behavioural difference,
-- 1 a difference, 2 a bundle verify did not prove consistent (not
-- compared).
function M.render(diffs, opts)
  local texts, sections, json, exit = {}, {}, {}, 0
  for _, d in ipairs(diffs) do
    texts[#texts + 1] = M.text(d)
    if opts.html then sections[#sections + 1] = M.section(d) end
    json[#json + 1] = d
    if not d.compared then
      exit = 2
    elseif d.differs and exit == 0 then
      exit = 1
    end
  end
  local res = { text = table.concat(texts, "\n"), json = json, exit = exit }
  if opts.html then
    res.html = '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
      .. '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'">'
      .. "<title>leaselua compare</title>"
      .. "<style>" .. M.STYLE .. "</style></head><body><h1>leaselua compare</h1>\n"
      .. table.concat(sections, "\n") .. "\n</body></html>\n"
  end
  return res
end

return M
