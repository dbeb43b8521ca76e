-- Benchmark helper: figures of one finished handoff, read back from its
-- export ledger (chain checked). Prints one JSON line:
--   decision, window, bracket_ms   the decision and the rev 3 probe finding
--   lag_ms, polls                  the poll finding (after x-ms-lease-time)
--   requests, mutations            outcome rows; PUT and DELETE among them
--   wire_ms                        the sum of every exchange on the wire
--   span_ms                        first request start to last request end
--   break_to_broken_ms             break response end to broken observed
--   wire_outside_wait_ms           the exchanges that add to the wall time: up
--                                  to the break response, and after broken
-- Usage: LUA_CPATH="build/?.so;;" lua5.4 bench/evidence.lua DIR
-- (an embedder of the stock-Lua module: a sandboxed script reads only its
-- own run's rows, never a directory it names).
local ll = require "leaselua"

local dir = arg[1] or error("usage: lua5.4 bench/evidence.lua DIR")
local rows = assert(ll.ledger(dir))
local f = {
  decision = "none", window = "none", requests = 0, mutations = 0, wire_ms = 0,
}
local first, last, break_end, broken_at
for _, r in ipairs(rows) do
  if r.record == "outcome" and r.mono_start_ns then
    f.requests = f.requests + 1
    if r.http_method == "PUT" or r.http_method == "DELETE" then f.mutations = f.mutations + 1 end
    f.wire_ms = f.wire_ms + (r.mono_end_ns - r.mono_start_ns) / 1e6
    first = first or r.mono_start_ns
    last = r.mono_end_ns
    if r.operation == "Lease Break" then break_end = r.mono_end_ns end
    if r.observed_lease_state == "broken" and break_end and not broken_at then broken_at = r.mono_end_ns end
  elseif r.record == "finding" and r.kind == "window" then
    f.window, f.bracket_ms = r.result, r.bracket_ms
  elseif r.record == "finding" and r.kind == "poll" then
    f.lag_ms, f.polls = r.lag_after_hint_ms, r.polls
  elseif r.record == "decision" then
    f.decision = r.decision
  end
end
f.span_ms = first and (last - first) / 1e6
if break_end and broken_at then
  f.wire_outside_wait_ms = 0
  for _, r in ipairs(rows) do
    if r.record == "outcome" and r.mono_start_ns and (r.mono_end_ns <= break_end or r.mono_start_ns >= broken_at) then
      f.wire_outside_wait_ms = f.wire_outside_wait_ms + (r.mono_end_ns - r.mono_start_ns) / 1e6
    end
  end
end
f.break_to_broken_ms = break_end and broken_at and (broken_at - break_end) / 1e6

local keys = {}
for k in pairs(f) do keys[#keys + 1] = k end
table.sort(keys)
local parts = {}
for _, k in ipairs(keys) do
  local v = f[k]
  parts[#parts + 1] = string.format('"%s":%s', k,
    type(v) == "number" and string.format("%.4f", v) or string.format("%q", tostring(v)))
end
print("{" .. table.concat(parts, ",") .. "}")
