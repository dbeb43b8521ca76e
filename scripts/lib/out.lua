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
    print(string.format("%-34s %-8s %-36s %s", label, tostring(status), code, class))
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

-- decision(row, dir): prints the decision block and returns nothing.
function M.decision(row, dir)
  print("")
  print("DECISION: " .. c(paint[row.decision], row.decision) ..
        " (endpoint kind: " .. tostring(row.endpoint_kind) .. ")")
  print(row.statement)
  for _, why in ipairs(row.reasons or {}) do print("  - " .. why) end
  print("breaking-window finding: " .. tostring(row.window_finding))
  print("evidence: " .. dir)
end

-- guarded(fn, run): runs fn, turning a stop or a refusal into a printed
-- line; the caller then records the decision.
function M.guarded(fn)
  local ok, e = pcall(fn)
  if not ok then print("stopped: " .. tostring(e)) end
  return ok
end

return M
