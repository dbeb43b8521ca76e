-- Recovery of an interrupted handoff, in the seed's order: preserve the
-- rows, read properties and content, compare them with the ledger, prove
-- the owner with a conditioned renew, and only then write. It never
-- restores a remembered payload and never writes without a lease.
local ll = require "leaselua"
local cli = require "lib.cli"
local out = require "lib.out"
local handoff = require "lib.handoff"

local opts = cli.parse(arg, require("lib.flows").recover)
if not opts then return end
local run <close> = ll.open { name = "recovery", actors = { "A", "B", "operator", "observer" }, recover = true }
local step = out.stepper(run, opts.stop_after)
local w = { A = run:writer("A"), B = run:writer("B"), A_unleased = run:unbound("A") }

local function leave(label, why)
  handoff.leave(run, label, why)
end

out.guarded(function()
  print(string.format("1 preserve: %d rows kept, %d unknown outcomes open", #run:rows(), run:state().doubts))
  local r = step("2-4 reconcile with the ledger", run.reconcile, run)
  print("  content is revision " .. tostring(r.content_revision) .. ", lease " ..
    tostring(r.observed_lease_state) .. "/" .. tostring(r.observed_lease_status) .. ": " .. r.result)
  if not run:state().reconciled then -- the fold in C says whether r settled the doubts
    return leave("5", "content cannot be explained by the ledger: no mutation")
  end
  if r.observed_lease_state == "breaking" then
    return leave("5", "the lease is still breaking: nothing to do yet; run recovery again later")
  end
  if handoff.out_of_reach(run, "5") then return end
  if r.observed_lease_state == "leased" then
    local renew = step("5 prove B owns the lease (renew)", w.B.renew, w.B)
    if renew.http_status ~= 200 then
      return leave("5", "B's ownership is not proven: no mutation")
    end
    handoff.after_broken(run, step, w, { have_b = true, skip_rev5 = r.content_revision == 5 })
  elseif r.observed_lease_state == "broken" then
    print("5 no owner yet: the handoff resumes after broken")
    handoff.after_broken(run, step, w, {})
  else
    leave("5", "lease state " .. tostring(r.observed_lease_state) .. ": no owner to prove")
  end
end)

out.decision(run:finish(), run:state().evidence, 3) -- the main handoff probes revision 3
