-- Benchmark: how soon after the expected end of a break (break response
-- time + x-ms-lease-time) each polling cadence observes broken, and how
-- many properties requests it spends. Prints one line per trial (a JSON
-- line with --json). --warmup-period P runs one uncounted trial with a
-- P-second break first, per cadence.
-- Usage: leaselua bench/poller.lua --manifest F --evidence DIR
--          [--period 30] [--trials 1] [--modes adaptive,1000,100]
--          [--warmup-period 0] [--json]
local ll = require "leaselua"
local cli = require "lib.cli"

local opts = cli.parse(arg, cli.spec {
  period = "number", trials = "number", modes = "string",
  ["warmup-period"] = "number", json = "flag",
  defaults = { period = 30, trials = 1, modes = "adaptive,1000,100", warmup_period = 0 },
})
local run <close> = ll.open(cli.open_config(opts, { name = "bench-poller" }))
run:declare(0, "A")
local A, U = run:writer("A"), run:unbound("A")
run:create_container()

local function trial(mode, period)
  run:lifecycle { reason = "poller bench " .. mode }
  U:put(0)
  run:read()
  A:acquire { duration = -1 }
  run:break_lease { period = period }
  local f = run:wait_for_broken { fixed_ms = mode ~= "adaptive" and tonumber(mode) or nil, budget = 1000 }
  run:read()
  U:delete()
  return f
end

if not opts.json then
  print(string.format("%-10s %6s %6s %14s", "cadence", "trial", "polls", "lag_ms"))
end
for mode in opts.modes:gmatch("[^,]+") do
  if opts.warmup_period > 0 then trial(mode, opts.warmup_period) end
  for t = 1, opts.trials do
    local f = trial(mode, opts.period)
    if opts.json then
      print(string.format('{"cadence":"%s","trial":%d,"period_s":%d,"result":"%s","polls":%d,"lag_ms":%s}',
        mode, t, opts.period, f.result, f.polls,
        f.lag_after_hint_ms and string.format("%.3f", f.lag_after_hint_ms) or "null"))
    else
      print(string.format("%-10s %6d %6d %14.1f", mode, t, f.polls, f.lag_after_hint_ms or -1))
    end
  end
end
