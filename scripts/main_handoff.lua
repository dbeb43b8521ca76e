-- The seed's main handoff: break A's lease, prove B owns the blob, and
-- reconcile the bytes.
local ll = require "leaselua"
local cli = require "lib.cli"
local out = require "lib.out"
local handoff = require "lib.handoff"

local opts = cli.parse(arg, require("lib.flows").handoff)
if not opts then return end
local first_period = opts.first_break_period or opts.break_period
local run <close> = ll.open {
  name = "main-handoff", actors = { "A", "B", "operator", "observer" },
  break_periods = { first_period, opts.break_period }, window_attempts = opts.window_attempts,
}
local step = out.stepper(run, opts.stop_after)
for _, d in ipairs { { 0, "A" }, { 1, "A" }, { 2, "A" }, { 3, "A" }, { 4, "A" }, { 5, "B" }, { 6, "A" } } do
  run:declare(d[1], d[2])
end
local A, B, A_unleased = run:writer("A"), run:writer("B"), run:unbound("A")

out.guarded(function()
  step("0 create container", run.create_container, run)
  for attempt = 1, opts.window_attempts do
    run:lifecycle { reason = "main handoff, window attempt " .. attempt }
    step("1 create rev 0", A_unleased.put, A_unleased, 0)
    step("1 read back rev 0", run.read, run)
    step("2 acquire A (infinite)", A.acquire, A, { duration = -1 })
    step("3 rev 1 with A", A.put, A, 1)
    step("3 read back rev 1", run.read, run)
    step("4 rev 2 without lease", A_unleased.put, A_unleased, 2, { control = true })
    step("4 rev 1 still there", run.read, run)
    step("5 unconditioned read", run.read, run)
    step("6 properties before break", run.properties, run)
    local period = attempt == 1 and first_period or opts.break_period
    step("6 break, period " .. period, run.break_lease, run, { period = period })
    local window = step("7 probe rev 3 while breaking", run.probe, run, A, 3)
    step("7 read back after probe", run.read, run)
    if window.result == "REPRODUCED" or attempt == opts.window_attempts then break end
    step("7 finish lifecycle: wait broken", run.wait_for_broken, run, { progress = true })
    step("7 finish lifecycle: delete", A_unleased.delete, A_unleased)
    step("7 confirm absent", run.properties, run)
  end
  if step("8 fresh properties", run.properties, run).observed_lease_state == "breaking" then
    step("8 B acquire while breaking", B.acquire, B, { duration = -1 })
  else
    run:note("8", "the lease left breaking before B's early acquire; not attempted")
  end
  local polled = step("9 wait for broken", run.wait_for_broken, run, { progress = true })
  if polled.result ~= "BROKEN" then return end
  handoff.after_broken(run, step, { A = A, B = B, A_unleased = A_unleased })
end)

out.decision(run:finish(), run:state().evidence, 3)
