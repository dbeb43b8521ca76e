-- Benchmark helper: figures of one finished lease-table run, read back from
-- its export ledger (chain checked). Prints one JSON line:
--   decision, cells, verdicts      the decision and the cell rows' verdicts
--   lifecycles, requests           lifecycle rows; outcome rows
--   span_ms                        first request start to last request end
--   wire_ms                        the sum of every exchange on the wire
--   idle_ms                        span_ms - wire_ms: waits and the tool's own time
--   waits_ms                       the idle intervals longer than 200 ms (the
--                                  break and expiry waits, the poller's sleeps)
--   tool_ms                        idle_ms - waits_ms: the tool between requests
-- Usage: LUA_CPATH="build/?.so;;" lua5.4 bench/lease_table.lua DIR
local ll = require "leaselua"

local dir = arg[1] or error("usage: lua5.4 bench/lease_table.lua DIR")
local rows = assert(ll.ledger(dir))
local f = { decision = "none", cells = 0, lifecycles = 0, requests = 0, wire_ms = 0, waits_ms = 0,
  verdicts = { CONFORMS = 0, CONFORMS_ONE_SOURCE = 0, DEVIATES = 0, NOT_REACHED = 0 } }
local first, last
for _, r in ipairs(rows) do
  if r.record == "outcome" and r.mono_start_ns and r.mono_end_ns then
    f.requests = f.requests + 1
    f.wire_ms = f.wire_ms + (r.mono_end_ns - r.mono_start_ns) / 1e6
    if last and (r.mono_start_ns - last) / 1e6 > 200 then f.waits_ms = f.waits_ms + (r.mono_start_ns - last) / 1e6 end
    first = first or r.mono_start_ns
    last = r.mono_end_ns
  elseif r.record == "cell" then
    f.cells = f.cells + 1
    f.verdicts[r.verdict] = (f.verdicts[r.verdict] or 0) + 1
  elseif r.record == "lifecycle" then
    f.lifecycles = f.lifecycles + 1
  elseif r.record == "decision" then
    f.decision = r.decision
  end
end
f.span_ms = first and (last - first) / 1e6 or 0
f.idle_ms = f.span_ms - f.wire_ms
f.tool_ms = f.idle_ms - f.waits_ms
local parts = {}
for _, k in ipairs { "decision", "cells", "lifecycles", "requests", "span_ms", "wire_ms", "idle_ms", "waits_ms",
  "tool_ms" } do
  local v = f[k]
  parts[#parts + 1] = string.format("%q:%s", k, type(v) == "string" and string.format("%q", v) or
    string.format("%.3f", v):gsub("%.000$", ""))
end
local vs = {}
for _, k in ipairs { "CONFORMS", "CONFORMS_ONE_SOURCE", "DEVIATES", "NOT_REACHED" } do
  vs[#vs + 1] = string.format("%q:%d", k, f.verdicts[k])
end
parts[#parts + 1] = '"verdicts":{' .. table.concat(vs, ",") .. "}"
print("{" .. table.concat(parts, ",") .. "}")
