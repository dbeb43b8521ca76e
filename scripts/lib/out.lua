-- One printed line per step (step, status, error code, class), and the
-- closing decision. Honours NO_COLOR; colour only on a terminal.
local ll = require "leaselua"

local M = {}

local colour = ll.isatty() and not ll.getenv("NO_COLOR")
local paint = {
  ACCEPT = "32", WAIT = "33", HOLD = "31", RECONCILE = "35",
}

local function c(code, s)
  if colour and code then return "\27[" .. code .. "m" .. s .. "\27[0m" end
  return s
end

-- Crash drills pause the flow after a step so a test can kill the host.
local pause_after = tonumber(ll.getenv("LEASELUA_PAUSE_AFTER") or "")

local STOP = setmetatable({}, { __tostring = function() return "stopped by --stop-after" end })
M.STOP = STOP

-- step_line(label, status, code, class, width) -> the printed step: label,
-- status, error code and class in columns; when the error code does not
-- fit the width (80 columns and less), it goes on a line of its own below.
-- Nothing is cut: the code is printed as observed.
function M.step_line(label, status, code, class, width)
  local head = string.format("%-32s %-11s", label, status)
  local one = head .. " " .. code .. " " .. class
  if #one <= width then return one end
  local two = head .. " " .. class
  local code_line = code ~= "-" and ("error code: " .. code) or nil
  if #two <= width and (not code_line or 33 + #code_line <= width) then
    return two .. (code_line and ("\n" .. string.rep(" ", 33) .. code_line) or "")
  end
  -- narrow: the label alone, then the rest indented
  local t = { label, "    " .. status .. " " .. class }
  if code_line then t[#t + 1] = "    " .. code_line end
  return table.concat(t, "\n")
end

-- stepper(run, stop_after) -> step(label, method, obj, ...): labels the
-- rows with the seed's step, calls obj:method(...), prints one line and
-- returns the row. A transport failure prints and raises its error so the
-- flow stops and the decision is still recorded; so does --stop-after N
-- once step N is done.
function M.stepper(run, stop_after)
  return function(label, method, obj, ...)
    run:step(label)
    local row, err = method(obj, ...)
    run:step()
    local r = row or (err and err.row) or {}
    local status = r.http_status or r.result or (err and "no-response") or "-"
    local code = r.azure_error_code or "-"
    local class = r.result_classification or r.record or "-"
    print(M.step_line(label, tostring(status), code, class, ll.columns()))
    if err then
      -- the stop line names what the transport saw (a timeout, a reset...)
      if type(err) == "table" and r.transport_error and type(err.message) == "string" then
        err.message = err.message .. " (" .. r.transport_error .. ")"
      end
      error(err, 0)
    end
    local n = tonumber(label:match("^(%d+)"))
    if pause_after and n == pause_after then
      print("pausing 60 s after step " .. n .. " (LEASELUA_PAUSE_AFTER: crash drills)")
      run:sleep(60000)
    end
    if stop_after and n and n >= stop_after then
      run:step(label)
      run:stop("stop-after", "the operator asked to stop after step " .. stop_after .. " (--stop-after)")
      run:step()
      error(STOP, 0)
    end
    return r
  end
end

-- wrap(text, width, indent) -> lines of at most width columns (a word
-- longer than that stands alone); continuation lines start with indent
-- spaces. "[...]" groups stay on one line.
function M.wrap(text, width, indent)
  local lines, line = {}, ""
  text = text:gsub("%b[]", function(b) return (b:gsub(" ", "\0")) end)
  for word in text:gmatch("%S+") do
    word = word:gsub("%z", " ")
    if line ~= "" and #line + 1 + #word > width then
      lines[#lines + 1] = line
      line = string.rep(" ", indent) .. word
    else
      line = line == "" and word or (line .. " " .. word)
    end
  end
  lines[#lines + 1] = line
  return lines
end

local function say(text, indent, first)
  local width = math.max(40, math.min(ll.columns(), 100) - 1)
  for _, l in ipairs(M.wrap((first or "") .. text, width, indent)) do
    print(l)
  end
end

-- The playbook's finding, in words, from the breaking-window result.
local FINDING = {
  REPRODUCED = "stale A's write%s was accepted while the lease was " ..
    "breaking (documented behaviour): the break's 202 did not stop writer A, " ..
    "so a break alone is not a handoff.",
  INCONCLUSIVE_WINDOW = "the probe did not land inside the breaking window, " ..
    "so this run says nothing about writes while breaking.",
  NOT_ATTEMPTED = "no write was probed while the lease was breaking.",
}

-- decision(row, dir[, probe_revision]): prints the decision block and the
-- window finding in plain words, wrapped to the terminal (80 columns
-- without one).
function M.decision(row, dir, probe_revision)
  print("")
  print("DECISION: " .. c(paint[row.decision], row.decision) ..
        " (endpoint kind: " .. tostring(row.endpoint_kind) .. ")")
  -- on a terminal, wrapped to it; in a log or a pipe, one line each, as
  -- recorded, so that a ticket quotes them whole
  local tty = ll.isatty()
  if tty then say(tostring(row.statement), 0) else print(row.statement) end
  for _, why in ipairs(row.reasons or {}) do
    if tty then say(why, 4, "  - ") else print("  - " .. why) end
  end
  print("breaking-window finding: " .. tostring(row.window_finding))
  local f = FINDING[row.window_finding]
  local rev = probe_revision and (" of revision " .. tostring(probe_revision)) or ""
  if f then say((f:gsub("%%s", rev, 1)), 2, "finding: ") end
  print("evidence: " .. dir)
end

-- guarded(fn, run): runs fn, turning a stop or a refusal into a printed
-- line; the caller then records the decision.
function M.guarded(fn)
  local ok, e = pcall(fn)
  if not ok then
    if ll.isatty() then say(tostring(e), 2, "stopped: ") else print("stopped: " .. tostring(e)) end
  end
  return ok
end

return M
