-- The end of the handoff, shared by the main flow and recovery: from a
-- fresh broken observation to cleanup (the seed's steps 10 to 14).
local M = {}

-- leave(run, label, why[, kind]): records a stop row (kind
-- "left-for-operator" unless given) and prints why the flow stops here;
-- C sends no request after it.
function M.leave(run, label, why, kind)
  run:step(label)
  run:stop(kind or "left-for-operator", why .. "; the blob is left for the operator")
  run:step()
  print(label .. " " .. why .. "; the blob is left for the operator")
end
local leave = M.leave

-- out_of_reach(run, label) -> true when the C fold says no further step can
-- end in ACCEPT (the seed: HOLD means not enough trustworthy evidence to
-- act); it then notes and prints why, and the caller sends nothing more.
function M.out_of_reach(run, label)
  local d = run:decide()
  if d.accept_reachable then return false end
  leave(run, label, "ACCEPT is out of reach (" .. d.out_of_reach .. "): no further mutation",
    "out-of-reach")
  return true
end

-- after_broken(run, step, w): w holds A, B, A_unleased; opts.skip_rev5
-- when revision 5 is already committed (recovery never rewrites it);
-- opts.have_b when B already owns the lease.
function M.after_broken(run, step, w, opts)
  opts = opts or {}
  if M.out_of_reach(run, "10") then return end
  if not opts.have_b then
    step("10 rev 4 with stale A", w.A.put, w.A, 4)
    step("11 acquire B (infinite)", w.B.acquire, w.B, { duration = -1 })
  end
  if not opts.skip_rev5 then
    step("12 rev 5 with B", w.B.put, w.B, 5)
    step("12 read back rev 5", run.read, run)
  end
  step("13 rev 6 with A", w.A.put, w.A, 6)
  step("13 rev 5 still there", run.read, run)
  -- Cleanup only after ACCEPT: otherwise the blob (and B's lease, if B
  -- holds it) stays as it is for the operator, with the reason named.
  local d = run:decide()
  if d.decision ~= "ACCEPT" then
    leave(run, "14", string.format("cleanup skipped: the decision is %s (%s)", d.decision,
      d.reasons[1] or "no reason given"))
    return
  end
  step("14 release B", w.B.release, w.B)
  step("14 confirm release", run.properties, run)
  -- the next lifecycle, or the gap control, starts only from a blob
  -- confirmed absent by a read
  if step("14 delete", w.A_unleased.delete, w.A_unleased).http_status == 202 then
    step("14 confirm absent", run.properties, run)
  end
end

return M
