-- Turns the drill log ($LEASELUA_DRILL_LOG, one JSON line per drill, written
-- by spec/support/drills.lua and the bad input specs) into the markdown
-- tables of docs/RELIABILITY.md.
-- usage: lua5.4 tools/faultproxy/report.lua DRILL_LOG
local cjson = require "cjson"

local path = arg[1]
if not path then
  io.stderr:write("usage: lua5.4 tools/faultproxy/report.lua DRILL_LOG\n")
  os.exit(64)
end
local f = assert(io.open(path, "r"))
local by = { matrix = {}, crash = {}, keepalive = {}, bad_input = {}, breaking = {} }
for line in f:lines() do
  local ok, d = pcall(cjson.decode, line)
  if ok and by[d.suite] then table.insert(by[d.suite], d) end
end
f:close()

local function p(...) print(string.format(...)) end
local function s(v)
  if v == nil or v == cjson.null then return "-" end
  if type(v) == "number" and math.tointeger(v) then return tostring(math.tointeger(v)) end
  return tostring(v)
end
local function cell(text)
  return (s(text):gsub("|", "\\|"):gsub("\n", " "))
end

-- Fault drill matrix ---------------------------------------------------
local m = by.matrix
if #m > 0 then
  local steps, faults, grid = {}, {}, {}
  local fault_order = { drop = 1, reset = 2, delay = 3, ["500"] = 4, ["503"] = 4, truncate = 5 }
  local tot = { drills = #m, dup = 0, after = 0, ok = 0, main_accept = 0, verify_bad = 0, resent = 0,
    applied_again = 0, unknown = 0, one = 0 }
  for _, d in ipairs(m) do
    if not grid[d.step] then
      grid[d.step] = {}
      steps[#steps + 1] = d.step
    end
    local col = (d.fault == "500" or d.fault == "503") and "5xx" or d.fault
    if not faults[col] then faults[col] = fault_order[d.fault] or 9 end
    grid[d.step][col] = d
    tot.dup = tot.dup + (d.duplicates or 0)
    tot.after = tot.after + (d.mutations_after_doubt or 0)
    tot.resent = tot.resent + (d.resent_after_reconcile or 0)
    tot.applied_again = tot.applied_again + (d.recovery_duplicates or 0)
    if d.recovery_decision == d.seed then tot.ok = tot.ok + 1 end
    if d.main_decision == "ACCEPT" then tot.main_accept = tot.main_accept + 1 end
    if d.verify_rc ~= 0 then tot.verify_bad = tot.verify_bad + 1 end
    if d.row_class == "UNKNOWN_OUTCOME" then tot.unknown = tot.unknown + 1 end
    if d.requests_for_op == 1 then tot.one = tot.one + 1 end
  end
  local cols = {}
  for k in pairs(faults) do cols[#cols + 1] = k end
  table.sort(cols, function(a, b) return faults[a] < faults[b] end)
  p("| step | " .. table.concat(cols, " | ") .. " |")
  p("|---|" .. string.rep("---|", #cols))
  for _, st in ipairs(steps) do
    local row = {}
    for _, c in ipairs(cols) do
      local d = grid[st][c]
      if d then
        row[#row + 1] = string.format("%s%s %s → %s%s", c == "5xx" and (d.fault .. ": ") or "",
          s(d.requests_for_op) .. " req",
          d.main_decision, d.recovery_decision,
          d.recovery_decision == d.seed and " ✓" or (" ✗ (seed " .. d.seed .. ")"))
      else
        row[#row + 1] = "-"
      end
    end
    p("| %s | %s |", cell(st), table.concat(row, " | "))
  end
  p("")
  p("Cells: requests the proxy saw for the faulted operation; the interrupted run's decision → the decision " ..
    "of recovery.lua; ✓ when it is the seed's.")
  p("")
  p("- drills: %d; faulted request seen exactly once: %d; row UNKNOWN_OUTCOME: %d", tot.drills, tot.one, tot.unknown)
  p("- **duplicate mutations observed: %d** (mutation requests on the wire beyond the ledger's intents, plus " ..
    "recovery re-sending a mutation the server had applied: %d of those)", tot.dup, tot.applied_again)
  p("- mutations sent after the doubt in the interrupted run: %d; interrupted runs that ended ACCEPT: %d",
    tot.after, tot.main_accept)
  p("- recovery decision equal to the seed's: %d of %d; verify failures: %d", tot.ok, tot.drills, tot.verify_bad)
  p("- negative controls or not-applied writes sent again by recovery after its reconcile (allowed by the seed): %d",
    tot.resent)
  p("")
  p("<details><summary>Every fault drill</summary>")
  p("")
  p("| step | fault | reqs for op | row | transport error or status | interrupted run | mutations after doubt " ..
    "| duplicates | reconcile | recovery | seed | verify | s |")
  p("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
  for _, d in ipairs(m) do
    p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", cell(d.step), d.fault,
      s(d.requests_for_op), s(d.row_class), cell(d.row_transport_error ~= nil and d.row_transport_error ~= cjson.null
        and d.row_transport_error or d.row_status), s(d.main_decision), s(d.mutations_after_doubt), s(d.duplicates),
      s(d.reconcile_result), s(d.recovery_decision), s(d.seed), d.verify_rc == 0 and "ok" or ("rc " .. s(d.verify_rc)),
      s(d.seconds))
  end
  p("")
  p("</details>")
  p("")
end

-- Recovery while breaking ------------------------------------------------
if #by.breaking > 0 then
  p("| case | reqs for op | row | recovery mutations | recovery | seed | note |")
  p("|---|---|---|---|---|---|---|")
  for _, d in ipairs(by.breaking) do
    p("| %s | %s | %s | %s | %s | %s | %s |", cell(d.case), s(d.requests_for_op), s(d.row_class),
      s(d.recovery_mutations), s(d.recovery_decision), s(d.seed), cell(d.divergence))
  end
  p("")
end

-- Keep-alive drills ------------------------------------------------------
if #by.keepalive > 0 then
  p("| keep-alive case | decision | requests | idle closes | rows with ≠ 1 request head | duplicate mutations " ..
    "| mutations on a reused connection | s |")
  p("|---|---|---|---|---|---|---|---|")
  for _, d in ipairs(by.keepalive) do
    p("| %s | %s | %s | %s | %s | %s | %s | %s |", cell(d.case), s(d.decision), s(d.requests),
      s(d.closed_connections), s(d.rows_not_one_emitted), s(d.duplicates), s(d.reused_mutations), s(d.seconds))
  end
  p("")
end

-- Crash drills -------------------------------------------------------------
if #by.crash > 0 then
  local ok, div = 0, 0
  p("| # | killed at (request in flight) | verify after kill | last row | reopened as | reconcile | recovery " ..
    "| seed | verify | s |")
  p("|---|---|---|---|---|---|---|---|---|---|")
  for _, d in ipairs(by.crash) do
    if d.recovery_decision == d.seed then ok = ok + 1 end
    if d.divergence and d.divergence ~= cjson.null then div = div + 1 end
    p("| %s | %s (%s %s) | %s | %s | %s | %s | %s | %s%s | %s | %s |", s(d.point), cell(d.step), s(d.held_method),
      s(d.held_action ~= cjson.null and d.held_action or d.held_query), d.verify_after_kill_rc == 0 and "ok" or "FAIL",
      s(d.last_record), s(d.intent_class), s(d.reconcile_result), s(d.recovery_decision), s(d.seed),
      (d.divergence and d.divergence ~= cjson.null) and " (divergence)" or "",
      d.verify_rc == 0 and "ok" or "FAIL", s(d.seconds))
  end
  p("")
  p("- kill points: %d; recovery equal to the seed: %d; known divergences: %d", #by.crash, ok, div)
  for _, d in ipairs(by.crash) do
    if d.divergence and d.divergence ~= cjson.null then
      p("- divergence at #%s %s: seed %s, leaselua %s: %s", s(d.point), d.step, d.seed, d.recovery_decision,
        cell(d.divergence))
    end
  end
  p("")
end

-- Bad input ----------------------------------------------------------------
if #by.bad_input > 0 then
  p("| case | exit | the one line | requests after the doubt |")
  p("|---|---|---|---|")
  for _, d in ipairs(by.bad_input) do
    local extra = d.requests
    if d.case and d.case:find("^server:") then extra = string.format("%s received, 0 after", s(d.requests)) end
    p("| %s | %s | `%s` | %s |", cell(d.case), s(d.rc), cell(d.line), s(extra))
  end
  p("")
end
