-- Benchmark: how soon after the expected end of a break (break response
-- time + x-ms-lease-time) each polling cadence observes broken, and how
-- many properties requests it spends. Prints one line per trial.
-- Usage: leaselua bench/poller.lua --manifest F --evidence DIR
--          [--period 30] [--trials 1] [--modes adaptive,1000,100]
local ll = require "leaselua"
local cli = require "lib.cli"

local opts = cli.parse(arg, cli.spec {
  period = "number", trials = "number", modes = "string",
  defaults = { period = 30, trials = 1, modes = "adaptive,1000,100" },
})
local run <close> = ll.open(cli.open_config(opts, { name = "bench-poller" }))
run:declare(0, "A")
local A, U = run:writer("A"), run:unbound("A")
run:create_container()
print(string.format("%-10s %6s %6s %14s", "cadence", "trial", "polls", "lag_ms"))
for mode in opts.modes:gmatch("[^,]+") do
  for trial = 1, opts.trials do
    run:lifecycle { reason = "poller bench " .. mode }
    U:put(0)
    run:read()
    A:acquire { duration = -1 }
    run:break_lease { period = opts.period }
    local f = run:wait_for_broken { fixed_ms = mode ~= "adaptive" and tonumber(mode) or nil, budget = 1000 }
    print(string.format("%-10s %6d %6d %14.1f", mode, trial, f.polls, f.lag_after_hint_ms or -1))
    run:read()
    U:delete()
  end
end
