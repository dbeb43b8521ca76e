-- One bundle as compare, qualify and the JUnit reports read it, made from
-- verify's report (facts, from C) and, only when verify proved them
-- consistent, the export rows: what it is (endpoint kind, host, versions,
-- flow), how it ended (decision, window, lease table, corroboration,
-- signature, date) and, when asked, its steps. Pure Lua; C passes it in.
local M = {}

local function str(v)
  return type(v) == "string" and v ~= "" and v or nil
end

local function num(v)
  return math.type(v) == "integer" and v or (type(v) == "number" and v or nil)
end

-- The step a row belongs to, and its place among rows of the same step and
-- operation in its lifecycle: the key two bundles are matched on.
local function keyed(counts, epoch, step, op, kind)
  local base = table.concat({ tostring(epoch), step, op, kind }, "\31")
  counts[base] = (counts[base] or 0) + 1
  return base .. "\31" .. counts[base], counts[base]
end

local function unexplained(list)
  local out, explained = {}, {}
  for _, d in ipairs(type(list) == "table" and list or {}) do
    if type(d) == "table" then
      if str(d.explained_by) then
        explained[#explained + 1] = d.explained_by
      else
        out[#out + 1] = str(d.text) or "(no text)"
      end
    end
  end
  return out, explained
end

local function outcome_step(r, counts)
  local epoch = num(r.fixture_epoch) or 0
  local step, op = str(r.step) or "(no step)", str(r.operation) or "(no operation)"
  local key, n = keyed(counts, epoch, step, op, "request")
  local disc, explained = unexplained(r.discrepancy)
  local ms
  if num(r.mono_start_ns) and num(r.mono_end_ns) then ms = (r.mono_end_ns - r.mono_start_ns) / 1e6 end
  return {
    key = key, kind = "request", epoch = epoch, step = step, operation = op, n = n,
    event = str(r.event_id), actor = str(r.actor_alias),
    status = num(r.http_status) and tostring(math.tointeger(r.http_status) or r.http_status)
      or str(r.outcome) or "NO_OUTCOME",
    code = str(r.azure_error_code), before = str(r.lease_state_before),
    after = str(r.lease_state_after) or str(r.observed_lease_state),
    class = str(r.result_classification) or "NO_OUTCOME",
    requested = str(r.requested_api_version), returned = str(r.returned_api_version),
    content = num(r.content_revision), revision = num(r.payload_revision),
    discrepancy = disc, explained = explained, ms = ms,
    error = str(r.error_message) or str(r.transport_error),
  }
end

local function refusal_step(r, counts)
  local epoch = num(r.fixture_epoch) or 0
  local step, op = str(r.step) or "(no step)", str(r.operation) or "(no operation)"
  local key, n = keyed(counts, epoch, step, op, "refusal")
  return {
    key = key, kind = "refusal", epoch = epoch, step = step, operation = op, n = n,
    status = "REFUSED", code = str(r.code), class = "REFUSED", discrepancy = {}, explained = {},
    error = str(r.message) or str(r.reason),
  }
end

local function cell(r)
  return {
    state = str(r.state) or "?", op = str(r.op) or "?", epoch = num(r.fixture_epoch),
    verdict = str(r.verdict) or "?", reason = str(r.reason), known_deviation = str(r.known_deviation),
  }
end

local function counts_of(t)
  if type(t) ~= "table" then return nil end
  local out = {}
  for _, k in ipairs { "conforms", "conforms_one_source", "deviates", "not_reached", "cells" } do
    out[k] = num(t[k]) or 0
  end
  return out
end

-- summarize(facts, rows, opts) -> the bundle's summary. facts: verify's
-- report as C built it (l_bundle.c); rows: nil unless verify found the
-- ledger consistent, and then only the records and outcome fields
-- l_bundle_lua.c passes (a field read here must be in its list);
-- opts.steps: keep the steps and cells.
function M.summarize(facts, rows, opts)
  local s = {
    dir = facts.dir, consistent = facts.consistent == true, ledger_consistent = facts.ledger_consistent == true,
    problem = str(facts.problem), error = str(facts.error), bad_row = num(facts.bad_row),
    export_only = facts.export_only == true, protected_checked = facts.protected_checked == true,
    endpoint_kind = str(facts.endpoint_kind), fixture_label = str(facts.fixture_label),
    account_host = str(facts.account_host), host_declared = facts.host_declared == true,
    decision = str(facts.decision), window = str(facts.window), identity = str(facts.identity),
    reasons = facts.reasons or {}, signature = facts.signature or { state = "unchecked" },
    corroboration = facts.corroboration,
  }
  if s.signature.problem and not s.problem then s.problem = "signature: " .. s.signature.problem end
  if type(rows) ~= "table" then return s end
  local counts, steps, cells, returned, seen = {}, {}, {}, {}, {}
  for _, r in ipairs(rows) do
    local rec = r.record
    if rec == "manifest" and not s.run_id then
      s.run_id, s.api_version = str(r.run_id), str(r.api_version)
      local v = type(r.versions) == "table" and r.versions or {}
      s.leaselua, s.libcurl = str(v.leaselua), str(v.libcurl)
    elseif rec == "flow" and not s.flow then
      s.flow = str(r.name)
    elseif rec == "outcome" then
      s.started = s.started or str(r.request_started_utc)
      s.date = str(r.response_received_utc) or str(r.request_started_utc) or s.date
      local rv = str(r.returned_api_version)
      if rv and not seen[rv] then
        seen[rv] = true
        returned[#returned + 1] = rv
      end
      if opts and opts.steps then steps[#steps + 1] = outcome_step(r, counts) end
    elseif rec == "refusal" and opts and opts.steps then
      steps[#steps + 1] = refusal_step(r, counts)
    elseif rec == "cell" and opts and opts.steps then
      cells[#cells + 1] = cell(r)
    elseif rec == "decision" and s.decision then
      -- a decision's counts only when one stands (verify's facts say so)
      s.lease_table = counts_of(r.lease_table) or s.lease_table
    end
  end
  s.returned_versions = returned
  if opts and opts.steps then
    s.steps, s.cells = steps, cells
  end
  return s
end

local context -- the first bundle's summary, for compare's workers

-- set_context(s): what process compares each bundle with, set once per
-- sandbox.
function M.set_context(s)
  context = s
end

-- process(facts, rows, opts) -> what a worker hands back for one bundle:
-- its summary, or with opts.map "compare" its diff against the context
-- (lib.compare.diff), or with "junit" {summary without its steps, suite}
-- (lib.junit.suite): the steps never cross back to the parent.
function M.process(facts, rows, opts)
  local s = M.summarize(facts, rows, opts)
  if opts.map == "compare" then return require("lib.compare").diff(assert(context, "no context"), s) end
  if opts.map == "junit" then
    local xml, counts = require("lib.junit").suite(s)
    s.steps, s.cells = nil, nil
    return { summary = s, suite = xml, counts = counts }
  end
  return s
end

-- kind_label(s) -> "azure", "emulator", "replay (documented)".
function M.kind_label(s)
  local k = s.endpoint_kind or "unknown"
  if s.fixture_label then k = k .. " (" .. s.fixture_label .. ")" end
  if s.host_declared then k = k .. " (host declared)" end
  return k
end

-- signer(s) -> one phrase: who signed, or why it does not count.
function M.signer(s)
  local g = s.signature or {}
  if g.state == "good" then return "signed by " .. tostring(g.principal) end
  if g.state == "unchecked" and g.key then
    return "signed with " .. tostring(g.key_type) .. " key " .. tostring(g.key) .. " (signer not checked)"
  end
  if g.state == "unsigned" then return "unsigned" end
  return "signature " .. tostring(g.state) .. (g.problem and (": " .. g.problem) or "")
end

return M
