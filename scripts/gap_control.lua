-- The unlocked-gap control: after a break reaches broken, an UNCONDITIONED
-- writer can overwrite the blob.
local ll = require "leaselua"
local cli = require "lib.cli"
local out = require "lib.out"

local opts = cli.parse(arg, require("lib.flows")["gap-control"])
if not opts then return end
local run <close> = ll.open {
  name = "gap-control", actors = { "A", "B", "operator", "observer" },
  break_period = opts.break_period, window_attempts = 1, destructive = true,
}
local step = out.stepper(run)
run:declare(100, "A")
run:declare(101, "A")
run:declare(102, "B")
run:lifecycle { destructive = true, reason = "unlocked-gap control" }
local A, A_unleased, B_unleased = run:writer("A"), run:unbound("A"), run:unbound("B")

out.guarded(function()
  step("1 create rev 100", A_unleased.put, A_unleased, 100)
  step("1 read back rev 100", run.read, run)
  step("2 acquire A (infinite)", A.acquire, A, { duration = -1 })
  step("3 rev 101 with A", A.put, A, 101)
  step("3 read back rev 101", run.read, run)
  step("4 break, period " .. opts.break_period, run.break_lease, run, { period = opts.break_period })
  step("4 wait for broken", run.wait_for_broken, run, { progress = true })
  step("5 rev 102 WITHOUT a lease", B_unleased.put, B_unleased, 102)
  step("6 read back rev 102", run.read, run)
  if step("7 delete", B_unleased.delete, B_unleased).http_status == 202 then
    step("7 confirm absent", run.properties, run)
  end
end)

local decision = run:finish()
out.decision(decision, run:state().evidence)
if decision.decision == "ACCEPT" then
  print("An unconditioned writer (B, no lease ID) entered the unlocked gap and committed revision 102.")
end
