-- Recovery of an interrupted handoff, in the seed's order: preserve the
-- rows, read properties and content, compare them with the ledger, prove
-- the owner with a conditioned renew, and only then write. It never
-- restores a remembered payload and never writes without a lease.
-- Usage: leaselua scripts/recovery.lua --evidence DIR [--stop-after N]
--   (--stop-after 5: prove the owner, then stop before any write)
local ll = require "leaselua"
local cli = require "lib.cli"
local out = require "lib.out"
local handoff = require "lib.handoff"
local evidence = require "lib.evidence"

local opts = cli.parse(arg, cli.spec { ["stop-after"] = "number" })
if not opts.evidence then cli.usage_error("pass --evidence DIR naming the interrupted run") end
local run <close> = ll.open(cli.open_config(opts, { recover = true }))
local step = out.stepper(run, opts.stop_after)
local w = { A = run:writer("A"), B = run:writer("B"), A_unleased = run:unbound("A") }

out.guarded(function()
  local rows = evidence.load(opts.evidence)
  print(string.format("1 preserve: %d rows kept, %d unknown outcomes open", #rows,
    #evidence.open_unknown_outcomes(rows)))
  local r = step("2-4 reconcile with the ledger", run.reconcile, run)
  print("  content is revision " .. tostring(r.content_revision) .. ", lease " ..
    tostring(r.observed_lease_state) .. "/" .. tostring(r.observed_lease_status) .. ": " .. r.result)
  if r.result == "INCOMPLETE" or r.result == "MISMATCH" or r.result == "REJECTED_REVISION_FOUND" then
    print("5 content cannot be explained by the ledger: no mutation; the blob is left for the operator")
    return
  end
  if r.observed_lease_state == "breaking" then
    print("5 the lease is still breaking: nothing to do yet; run recovery again later")
    return
  end
  if handoff.out_of_reach(run, "5") then return end
  if r.observed_lease_state == "leased" then
    local renew = step("5 prove B owns the lease (renew)", w.B.renew, w.B)
    if renew.http_status ~= 200 then
      print("5 B's ownership is not proven: no mutation; the blob is left for the operator")
      return
    end
    handoff.after_broken(run, step, w, { have_b = true, skip_rev5 = r.content_revision == 5 })
  elseif r.observed_lease_state == "broken" then
    print("5 no owner yet: the handoff resumes after broken")
    handoff.after_broken(run, step, w, {})
  else
    print("5 lease state " .. tostring(r.observed_lease_state) ..
      ": no owner to prove; the blob is left for the operator")
  end
end)

local decision, code = run:finish()
out.decision(decision, run:state().evidence)
return code
