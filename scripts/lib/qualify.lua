-- `leaselua qualify DIR...`: the playbook's qualification table from
-- bundle summaries (lib.bundle): one row per endpoint kind, account host,
-- API version, leaselua version, libcurl version and flow. Azure rows and
-- emulator or replay rows are never merged: the latter sit in their own
-- section, headed as non-qualifying. A bundle verify did not prove
-- consistent is in no row. Rendered as text, Markdown, HTML, JSON, JUnit.
local bundle = require "lib.bundle"
local junit = require "lib.junit"

local M = {}

M.FORMAT = "leaselua-qualify-v1"

-- why_not(s, opts) -> the conditions a consistent bundle misses; empty
-- when it qualifies. The rule: endpoint kind azure, decision ACCEPT,
-- window REPRODUCED, verify consistent, and, when the operator asked with
-- --require-signature, a signature good for an allowed signer.
function M.why_not(s, opts)
  local why = {}
  if s.endpoint_kind ~= "azure" then
    why[#why + 1] = "endpoint kind " .. bundle.kind_label(s) .. ": not Azure evidence"
  end
  if s.decision ~= "ACCEPT" then why[#why + 1] = s.decision and "decision " .. tostring(s.decision) or "no decision" end
  if s.window ~= "REPRODUCED" then why[#why + 1] = "window " .. tostring(s.window or "none") end
  if not s.consistent then why[#why + 1] = "verify: " .. tostring(s.problem or s.error or "not consistent") end
  if opts.require_signature and (s.signature or {}).state ~= "good" then
    why[#why + 1] = "signature required: " .. bundle.signer(s)
  end
  return why
end

local function lt_text(t)
  if not t then return "-" end
  return string.format("%d conform, %d one source, %d deviate, %d not reached (%d cells)", t.conforms,
    t.conforms_one_source, t.deviates, t.not_reached, t.cells)
end

local function corr_text(c)
  return c and tostring(c.verdict) or "-"
end

-- table_of(summaries, opts) -> {qualifying, non_qualifying, unverified}:
-- rows in order of first appearance; a row's runs sorted by date, the
-- latest deciding its verdict.
function M.table_of(summaries, opts)
  local rows, index, unverified = {}, {}, {}
  for i, s in ipairs(summaries) do
    if not s.consistent then
      unverified[#unverified + 1] = { dir = s.dir, problem = s.problem or s.error or "not consistent",
        endpoint_kind = s.endpoint_kind, bad_row = s.bad_row }
    else
      local section = s.endpoint_kind == "azure" and "qualifying" or "non_qualifying"
      local k = table.concat({ section, bundle.kind_label(s), s.account_host or "-", s.api_version or "-",
        s.leaselua or "-", s.libcurl or "-", s.flow or "-" }, "\31")
      local r = index[k]
      if not r then
        r = { section = section, kind = bundle.kind_label(s), endpoint_kind = s.endpoint_kind,
          fixture_label = s.fixture_label, account_host = s.account_host, api_version = s.api_version,
          leaselua = s.leaselua, libcurl = s.libcurl, flow = s.flow, runs = {} }
        index[k] = r
        rows[#rows + 1] = r
      end
      local why = M.why_not(s, opts)
      r.runs[#r.runs + 1] = { dir = s.dir, order = i, date = s.date, decision = s.decision, window = s.window,
        qualified = #why == 0, why = why, signer = bundle.signer(s), lease_table = s.lease_table,
        corroboration = s.corroboration, returned_versions = s.returned_versions }
    end
  end
  local out = { qualifying = {}, non_qualifying = {}, unverified = unverified }
  for _, r in ipairs(rows) do
    table.sort(r.runs, function(a, b)
      if (a.date or "") ~= (b.date or "") then return (a.date or "") < (b.date or "") end
      return a.order < b.order
    end)
    local last = r.runs[#r.runs]
    r.latest, r.qualified_runs = last, 0
    for _, run in ipairs(r.runs) do
      if run.qualified then r.qualified_runs = r.qualified_runs + 1 end
    end
    r.decision, r.window, r.date, r.signer = last.decision, last.window, last.date, last.signer
    r.lease_table, r.corroboration = last.lease_table, last.corroboration
    if r.section == "qualifying" then
      r.verdict = last.qualified and "QUALIFIED" or "NOT QUALIFIED"
      r.why = last.why
    else
      r.verdict = "NOT QUALIFYING"
      r.why = { "endpoint kind " .. r.kind .. ": emulator and replay evidence never qualifies Azure" }
    end
    table.insert(out[r.section], r)
  end
  return out
end

local function row_json(r)
  local runs = {}
  for _, run in ipairs(r.runs) do
    runs[#runs + 1] = { dir = run.dir, date = run.date, decision = run.decision, window = run.window,
      qualified = run.qualified, why = run.why, signer = run.signer, lease_table = run.lease_table,
      corroboration = run.corroboration and run.corroboration.verdict, returned_versions = run.returned_versions }
  end
  return { verdict = r.verdict, why = r.why, endpoint_kind = r.endpoint_kind, fixture_label = r.fixture_label,
    account_host = r.account_host, api_version = r.api_version, leaselua = r.leaselua, libcurl = r.libcurl,
    flow = r.flow, decision = r.decision, window = r.window, lease_table = r.lease_table,
    corroboration = r.corroboration and r.corroboration.verdict, signer = r.signer, date = r.date,
    qualified_runs = r.qualified_runs, runs = runs }
end

-- exit(t) -> 0 every Azure row QUALIFIED (at least one) and every bundle
-- consistent; 1 no Azure row at all (nothing here can qualify); 2 an
-- Azure row NOT QUALIFIED, or a bundle verify did not prove consistent.
function M.exit(t)
  if #t.unverified > 0 then return 2 end
  for _, r in ipairs(t.qualifying) do
    if r.verdict ~= "QUALIFIED" then return 2 end
  end
  return #t.qualifying > 0 and 0 or 1
end

local HEAD_NQ = "Not qualifying: emulator and replay evidence (never merged with Azure rows; no row here can qualify)"
local HEAD_Q = "Qualifying section: endpoint kind azure"

local function ident(r)
  return table.concat({ r.kind, r.account_host or "-", "api " .. (r.api_version or "-"),
    "leaselua " .. (r.leaselua or "-"), r.libcurl or "-", r.flow or "-" }, "  ")
end

-- "decision X", or "no decision" (a run that recorded none, or whose last
-- decision a request follows), never "decision nil".
local function decision_text(r)
  return r.decision and ("decision " .. tostring(r.decision)) or "no decision"
end

local function detail(r)
  return string.format("%s, window %s, lease table %s, corroboration %s, %s, date %s, runs %d (%d qualified)",
    decision_text(r), tostring(r.window or "-"), lt_text(r.lease_table), corr_text(r.corroboration), r.signer,
    tostring(r.date or "-"), #r.runs, r.qualified_runs)
end

local function summary_line(t, n)
  local q = 0
  for _, r in ipairs(t.qualifying) do
    if r.verdict == "QUALIFIED" then q = q + 1 end
  end
  return string.format("qualify: %d bundles: %d Azure rows (%d QUALIFIED), %d non-qualifying rows, %d not verified",
    n, #t.qualifying, q, #t.non_qualifying, #t.unverified)
end

local function text(t, n, opts)
  local out = { summary_line(t, n) }
  if opts.require_signature then out[#out + 1] = "qualify: signatures required (--require-signature)" end
  out[#out + 1] = "== " .. HEAD_Q .. " =="
  if #t.qualifying == 0 then out[#out + 1] = "  (none: no Azure evidence was given)" end
  for _, r in ipairs(t.qualifying) do
    out[#out + 1] = string.format("%-14s %s", r.verdict, ident(r))
    out[#out + 1] = "  " .. detail(r)
    if #r.why > 0 then out[#out + 1] = "  not qualified: " .. table.concat(r.why, "; ") end
  end
  out[#out + 1] = "== " .. HEAD_NQ .. " =="
  if #t.non_qualifying == 0 then out[#out + 1] = "  (none)" end
  for _, r in ipairs(t.non_qualifying) do
    out[#out + 1] = string.format("%-14s %s", r.verdict, ident(r))
    out[#out + 1] = "  " .. detail(r)
  end
  if #t.unverified > 0 then
    out[#out + 1] = "== Not verified: in no row (leaselua verify DIR names the problem) =="
    for _, u in ipairs(t.unverified) do out[#out + 1] = "INCONSISTENT   " .. u.dir .. ": " .. u.problem end
  end
  return table.concat(out, "\n") .. "\n"
end

local function md_cell(v)
  return (tostring(v == nil and "-" or v):gsub("[%c]", " "):gsub("|", "\\|"))
end

local function md_table(rows)
  local out = {
    "| verdict | endpoint kind | account host | API version | leaselua | libcurl | flow | decision | window | "
      .. "lease table | corroboration | signer | date | runs |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  }
  for _, r in ipairs(rows) do
    -- packed: a cell may be nil (no decision, no date), which ipairs and
    -- table.concat would stop at
    local cells = table.pack(r.verdict, r.kind, r.account_host, r.api_version, r.leaselua, r.libcurl, r.flow,
      r.decision, r.window, lt_text(r.lease_table), corr_text(r.corroboration), r.signer, r.date,
      #r.runs .. " (" .. r.qualified_runs .. " qualified)")
    for i = 1, cells.n do cells[i] = md_cell(cells[i]) end
    out[#out + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  return table.concat(out, "\n")
end

local function md(t, n, opts)
  local out = { "# Qualification", "", md_cell(summary_line(t, n)), "" }
  if opts.require_signature then out[#out + 1] = "Signatures required (`--require-signature`).\n" end
  out[#out + 1] = "## " .. HEAD_Q .. "\n"
  out[#out + 1] = #t.qualifying > 0 and md_table(t.qualifying) or "None: no Azure evidence was given."
  for _, r in ipairs(t.qualifying) do
    if #r.why > 0 then
      out[#out + 1] = "\n- " .. md_cell(ident(r)) .. ": not qualified: " .. md_cell(table.concat(r.why, "; "))
    end
  end
  out[#out + 1] = "\n## " .. HEAD_NQ .. "\n"
  out[#out + 1] = #t.non_qualifying > 0 and md_table(t.non_qualifying) or "None."
  if #t.unverified > 0 then
    out[#out + 1] = "\n## Not verified: in no row\n"
    for _, u in ipairs(t.unverified) do out[#out + 1] = "- `" .. md_cell(u.dir) .. "`: " .. md_cell(u.problem) end
  end
  return table.concat(out, "\n") .. "\n"
end

local function esc(v)
  return require("lib.report").esc(v == nil and "-" or v)
end

local function html_table(rows)
  local out = { "<table><thead><tr><th>verdict</th><th>endpoint kind</th><th>account host</th><th>API version</th>"
    .. "<th>leaselua</th><th>libcurl</th><th>flow</th><th>decision</th><th>window</th><th>lease table</th>"
    .. "<th>corroboration</th><th>signer</th><th>date</th><th>runs</th><th>why not</th></tr></thead><tbody>" }
  for _, r in ipairs(rows) do
    local cls = r.verdict == "QUALIFIED" and "q" or (r.verdict == "NOT QUALIFIED" and "nq" or "nqs")
    local cells = table.pack(r.kind, r.account_host, r.api_version, r.leaselua, r.libcurl, r.flow, r.decision,
      r.window, lt_text(r.lease_table), corr_text(r.corroboration), r.signer, r.date,
      #r.runs .. " (" .. r.qualified_runs .. " qualified)", table.concat(r.why, "; "))
    local tds = {}
    for i = 1, cells.n do tds[i] = "<td>" .. esc(cells[i]) .. "</td>" end
    out[#out + 1] = '<tr class="' .. cls .. '"><td><b>' .. esc(r.verdict) .. "</b></td>" .. table.concat(tds) .. "</tr>"
  end
  out[#out + 1] = "</tbody></table>"
  return table.concat(out, "\n")
end

local function html(t, n, opts)
  local out = { "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    .. "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
    .. "<title>leaselua qualification"
    .. "</title><style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}"
    .. "td,th{border:1px solid #999;padding:.2em .4em;font-size:90%}tr.q td{background:#e4f5e4}"
    .. "tr.nq td{background:#fbe3e3}tr.nqs td{background:#eee;color:#444}section.nqs h2{color:#666}</style>"
    .. "</head><body>", "<h1>Qualification</h1>", "<p>" .. esc(summary_line(t, n)) .. "</p>" }
  if opts.require_signature then out[#out + 1] = "<p>Signatures required (--require-signature).</p>" end
  out[#out + 1] = "<section class=\"q\"><h2>" .. esc(HEAD_Q) .. "</h2>"
  out[#out + 1] = #t.qualifying > 0 and html_table(t.qualifying) or "<p>None: no Azure evidence was given.</p>"
  out[#out + 1] = "</section><section class=\"nqs\"><h2>" .. esc(HEAD_NQ) .. "</h2>"
  out[#out + 1] = #t.non_qualifying > 0 and html_table(t.non_qualifying) or "<p>None.</p>"
  out[#out + 1] = "</section>"
  if #t.unverified > 0 then
    out[#out + 1] = "<section><h2>Not verified: in no row</h2><ul>"
    for _, u in ipairs(t.unverified) do
      out[#out + 1] = "<li><code>" .. esc(u.dir) .. "</code>: " .. esc(u.problem) .. "</li>"
    end
    out[#out + 1] = "</ul></section>"
  end
  out[#out + 1] = "</body></html>\n"
  return table.concat(out, "\n")
end

-- render(items, opts) -> {text, md, html, junit, json, exit}; opts:
-- require_signature, html, junit (booleans: render those too). items:
-- the bundles' summaries, or with junit what lib.bundle.process made of
-- them in the workers: {summary, suite, counts}.
function M.render(items, opts)
  local summaries, suites_of = {}, {}
  for i, it in ipairs(items) do
    summaries[i] = it.summary or it
    suites_of[i] = it.suite and { it.suite, it.counts }
  end
  local t = M.table_of(summaries, opts)
  local n = #summaries
  local res = { exit = M.exit(t), text = text(t, n, opts), md = md(t, n, opts) }
  local q, nq = {}, {}
  for _, r in ipairs(t.qualifying) do q[#q + 1] = row_json(r) end
  for _, r in ipairs(t.non_qualifying) do nq[#nq + 1] = row_json(r) end
  res.json = { format = M.FORMAT, bundles = n, require_signature = opts.require_signature == true, exit = res.exit,
    qualifying = q, non_qualifying = nq, unverified = t.unverified }
  if opts.html then res.html = html(t, n, opts) end
  if opts.junit then
    local suites = {}
    local all = {}
    for _, r in ipairs(t.qualifying) do all[#all + 1] = r end
    for _, r in ipairs(t.non_qualifying) do all[#all + 1] = r end
    local x, c = junit.qualification(all)
    suites[1] = { x, c }
    for i, s in ipairs(summaries) do
      if suites_of[i] then
        suites[#suites + 1] = suites_of[i]
      else
        local sx, sc = junit.suite(s)
        suites[#suites + 1] = { sx, sc }
      end
    end
    res.junit = junit.document("leaselua qualify", suites)
  end
  return res
end

return M
