-- Benchmark: N back-to-back Get Blob Properties reads by the leaselua host,
-- on its one kept-alive connection, each with its durable intent and
-- outcome rows. Prints one JSON line:
--   wire_ms   the exchange alone (the row's mono_end_ns - mono_start_ns)
--   e2e_ms    start to start of consecutive reads: everything one read costs
--             (guard, intent row + fsync, exchange, outcome row + fsync, Lua)
-- as p50, p90 and mean, after `warmup` reads that are not counted.
local HELP = [[
usage: leaselua bench/reads.lua --manifest FILE --evidence DIR [operator options]
         [--n 200] [--warmup 10]
  A benchmark proves no handoff: its run records HOLD, and the exit is
  that decision (2).]]
local ll = require "leaselua"
local cli = require "lib.cli"

local opts = cli.parse(arg, { n = "number", warmup = "number", defaults = { n = 200, warmup = 10 } }, HELP)
if not opts then return end
local run <close> = ll.open { name = "bench-reads", actors = { "A", "operator", "observer" }, window_attempts = 1 }
run:declare(0, "A")
local U = run:unbound("A")
run:create_container()
run:lifecycle { reason = "bench: back-to-back properties reads" }
U:put(0)
run:read()

local starts, wire = {}, {}
for i = 1, opts.warmup + opts.n + 1 do
  local row = run:properties()
  if row.http_status ~= 200 then error("properties read answered " .. tostring(row.http_status)) end
  if i > opts.warmup then
    starts[#starts + 1] = row.mono_start_ns
    wire[#wire + 1] = (row.mono_end_ns - row.mono_start_ns) / 1e6
  end
end
U:delete()
run:finish()

local e2e = {}
for i = 1, #starts - 1 do e2e[i] = (starts[i + 1] - starts[i]) / 1e6 end
wire[#wire] = nil -- the same n reads for both figures

local function summary(v)
  local s = {}
  for i, x in ipairs(v) do s[i] = x end
  table.sort(s)
  local sum = 0
  for _, x in ipairs(s) do sum = sum + x end
  local function q(p) return s[math.max(1, math.ceil(p * #s))] end
  return string.format('{"p50":%.4f,"p90":%.4f,"mean":%.4f,"n":%d}', q(0.5), q(0.9), sum / #s, #s)
end

print(string.format('{"who":"ours","wire_ms":%s,"e2e_ms":%s}', summary(wire), summary(e2e)))
