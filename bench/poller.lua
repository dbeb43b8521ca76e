-- Benchmark: how soon after the expected end of a break (break response
-- time + x-ms-lease-time) one polling cadence observes broken, and how
-- many properties requests it spends. Prints one line per trial (a JSON
-- line with --json).
local HELP = [[
usage: leaselua bench/poller.lua --manifest FILE --evidence DIR [operator options]
         [--period 30] [--trials 1] [--fixed-ms N] [--warmup-period 0] [--json]
  --period S         the break period of each counted trial, 0..60 s (30)
  --trials N         counted trials, each a fresh lifecycle (1)
  --fixed-ms N       poll every N ms (default: the adaptive cadence)
  --warmup-period P  first one uncounted trial with a P-second break
  --json             one JSON line per trial
  At most 10 lifecycles: trials plus the warm-up. A benchmark proves no
  handoff: its run records HOLD, and the exit is that decision (2).]]
local ll = require "leaselua"
local cli = require "lib.cli"

local opts = cli.parse(arg, {
  period = "number", trials = "number", ["fixed-ms"] = "number",
  ["warmup-period"] = "number", json = "flag",
  defaults = { period = 30, trials = 1, warmup_period = 0 },
}, HELP)
if not opts then return end
local mode = opts.fixed_ms and tostring(opts.fixed_ms) or "adaptive"
local lifecycles = opts.trials + (opts.warmup_period > 0 and 1 or 0)
if opts.trials < 1 or lifecycles > 10 then
  cli.usage_error("--trials is 1..10 lifecycles, the warm-up included")
end
local run <close> = ll.open {
  name = "bench-poller", actors = { "A", "operator", "observer" },
  break_periods = opts.warmup_period > 0 and { opts.period, opts.warmup_period } or { opts.period },
  window_attempts = lifecycles,
}
run:declare(0, "A")
local A, U = run:writer("A"), run:unbound("A")
run:create_container()

local function trial(period)
  run:lifecycle { reason = "poller bench " .. mode }
  U:put(0)
  run:read()
  A:acquire { duration = -1 }
  run:break_lease { period = period }
  local f = run:wait_for_broken { fixed_ms = opts.fixed_ms, budget = 1000 }
  run:read()
  U:delete()
  run:read() -- the 404 that confirms the delete: the next lifecycle needs it (invariant 14)
  return f
end

if not opts.json then
  print(string.format("%-10s %6s %6s %14s", "cadence", "trial", "polls", "lag_ms"))
end
if opts.warmup_period > 0 then trial(opts.warmup_period) end
for t = 1, opts.trials do
  local f = trial(opts.period)
  if opts.json then
    print(string.format('{"cadence":"%s","trial":%d,"period_s":%d,"result":"%s","polls":%d,"lag_ms":%s}',
      mode, t, opts.period, f.result, f.polls,
      f.lag_after_hint_ms and string.format("%.3f", f.lag_after_hint_ms) or "null"))
  else
    print(string.format("%-10s %6d %6d %14.1f", mode, t, f.polls, f.lag_after_hint_ms or -1))
  end
end
run:finish()
