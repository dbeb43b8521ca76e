-- Fault drills: every mutation of the main handoff, under each fault the
-- proxy (tools/faultproxy) can inject, with real traffic to Azurite. For
-- each (step, fault) the spec checks that the proxy saw exactly one request
-- for that operation, that no mutation followed the doubt, that the row is
-- UNKNOWN_OUTCOME, that the run ends HOLD or RECONCILE (never ACCEPT), that
-- recovery.lua then reaches the decision the seed gives for that state, and
-- that verify passes. Results go to $LEASELUA_DRILL_LOG for
-- docs/RELIABILITY.md (tools/faultproxy/drills.sh).
local helper = require "helper"
local fp = require "support.faultproxy"
local drills = require "support.drills"

-- The faults. "processed": the server applied the request (its answer was
-- lost); otherwise it never reached the server (or was refused by the
-- proxy in its place).
local FAULTS = {
  { name = "drop", processed = true, rule = { fault = "drop" } },
  { name = "reset", processed = false, rule = { fault = "reset" } },
  { name = "delay", processed = true, rule = { fault = "delay", delay_ms = 4000 } },
  { name = "5xx", processed = false, rule = { fault = "status" } }, -- 500 or 503, alternating by step
  { name = "truncate", processed = true, rule = { fault = "truncate" } },
}

-- The decision the seed gives after recovery.lua, for each step, when the
-- faulted request was processed (P) or not (N). Recovery runs once the
-- lease has left breaking (the drill waits out the break), so the state it
-- finds is settled. `divergence` names a cell where leaselua decides
-- otherwise today: the spec then expects leaselua's current decision and
-- the drill log reports both (see docs/RELIABILITY.md).
local SEED = {
  ["1 create rev 0"] = {
    -- P: content rev 0 (the doubtful write committed), no lease: the
    --    handoff never started, ownership is not proven: HOLD.
    -- N: no blob at all: the properties read fails (404), the content
    --    cannot be read: "a failed properties read when the state was
    --    needed": HOLD.
    P = "HOLD", N = "HOLD" },
  ["2 acquire A (infinite)"] = {
    -- P: leased, but an observation of leased does not say who holds it;
    --    B's renew is refused: ownership cannot be proven: HOLD.
    -- N: available: no owner to prove, no handoff: HOLD.
    P = "HOLD", N = "HOLD" },
  ["3 rev 1 with A"] = {
    -- P: content is rev 1: the doubtful write committed and is explained;
    --    the handoff never started (A holds the lease): HOLD.
    -- N: content is still rev 0: the doubtful rev 1 is not there and no
    --    later accepted write settles it ("continue investigating rather
    --    than assuming the timed-out write was never processed"): RECONCILE.
    P = "HOLD", N = "RECONCILE" },
  ["4 rev 2 without lease"] = {
    -- The negative control's outcome is unknown; content still rev 1, the
    -- doubtful rev 2 is not there and nothing settles it: RECONCILE.
    P = "RECONCILE", N = "RECONCILE" },
  ["6 break, period 2"] = {
    -- P: the break took effect but was never acknowledged and breaking was
    --    never observed: the chain lacks the observed transition: HOLD.
    --    Recovery finds broken, is told by the fold that ACCEPT is out of
    --    reach, and sends no mutation (checked below).
    -- N: A still holds the lease; B's renew is refused: HOLD.
    P = "HOLD", N = "HOLD" },
  ["7 probe rev 3 while breaking"] = {
    -- Breaking was observed by the probe's first read; recovery finds
    -- broken, reconciles the doubtful rev 3 (committed or not), rejects
    -- stale A, captures B's acquire, writes and reads back rev 5, rejects
    -- A under B: the whole chain: ACCEPT.
    P = "ACCEPT", N = "ACCEPT" },
  ["8 B acquire while breaking"] = {
    -- The early acquire can only have been refused while breaking; the
    -- content is rev 3 as accepted; recovery completes the chain: ACCEPT.
    P = "ACCEPT", N = "ACCEPT" },
  ["10 rev 4 with stale A"] = {
    -- The stale write's outcome is unknown and rev 4 is not in the
    -- content; recovery sends the stale control again (rejected), captures
    -- B, and B's accepted rev 5, read back, settles the content: ACCEPT.
    P = "ACCEPT", N = "ACCEPT" },
  ["11 acquire B (infinite)"] = {
    -- P: leased: B's ownership is proven by a conditioned renew (the
    --    seed: a conditioned operation that only B's lease ID passes).
    -- N: still broken: recovery acquires B afresh, captured. Both: ACCEPT.
    P = "ACCEPT", N = "ACCEPT" },
  ["12 rev 5 with B"] = {
    -- The seed's own example. P: rev 5 is there: not written again,
    --    B proven by renew: ACCEPT. N: rev 3 remains: B retries rev 5 with
    --    the confirmed B lease, reads it back: ACCEPT.
    P = "ACCEPT", N = "ACCEPT" },
  ["13 rev 6 with A"] = {
    -- The stale write under B's lease has an unknown outcome; content is
    -- rev 5 and no later accepted write settles the doubt: RECONCILE.
    P = "RECONCILE", N = "RECONCILE" },
  ["14 release B"] = {
    -- The whole chain was observed before the release. P: available: the
    --    release took effect: ACCEPT (the blob is left for the operator).
    -- N: still leased, B proven by renew, chain redone: ACCEPT and cleanup.
    P = "ACCEPT", N = "ACCEPT" },
  ["14 delete"] = {
    -- P: the blob is gone: the properties read fails (404): HOLD.
    -- N: the blob is there, lease available, chain complete: ACCEPT.
    P = "HOLD", N = "ACCEPT" },
}

-- Which request each step sends, as proxy rule fields (ordinal 1 unless
-- said). Acquires are told apart by their order: A, B early, B.
local STEPS = {
  { "1 create rev 0", { method = "PUT", body_contains = '"revision":0,' } },
  { "2 acquire A (infinite)", { lease_action = "acquire", ordinal = 1 } },
  { "3 rev 1 with A", { method = "PUT", body_contains = '"revision":1,' } },
  { "4 rev 2 without lease", { method = "PUT", body_contains = '"revision":2,' } },
  { "6 break, period 2", { lease_action = "break" }, waits_break = true },
  { "7 probe rev 3 while breaking", { method = "PUT", body_contains = '"revision":3,' }, waits_break = true },
  { "8 B acquire while breaking", { lease_action = "acquire", ordinal = 2 }, waits_break = true },
  { "10 rev 4 with stale A", { method = "PUT", body_contains = '"revision":4,' } },
  { "11 acquire B (infinite)", { lease_action = "acquire", ordinal = 3 } },
  { "12 rev 5 with B", { method = "PUT", body_contains = '"revision":5,' } },
  { "13 rev 6 with A", { method = "PUT", body_contains = '"revision":6,' } },
  { "14 release B", { lease_action = "release" } },
  { "14 delete", { method = "DELETE" } },
}

local function rule_for(match, fault, i)
  local r = { ordinal = 1 }
  for k, v in pairs(match) do r[k] = v end
  for k, v in pairs(fault.rule) do r[k] = v end
  if fault.name == "5xx" then r.status = i % 2 == 1 and 500 or 503 end
  return r
end

describe("fault drills #faults", function()
  local manifest

  setup(function()
    manifest = helper.manifest_file(helper.tmpdir())
  end)
  teardown(helper.cleanup)

  for i, s in ipairs(STEPS) do
    local label, match = s[1], s[2]
    for _, fault in ipairs(FAULTS) do
      local class = fault.processed and "P" or "N"
      local want = SEED[label][class]
      local name = fault.name == "5xx" and (i % 2 == 1 and "500" or "503") or fault.name
      it(string.format("%s / %s: one request, UNKNOWN_OUTCOME, no ACCEPT; recovery decides %s", label, name, want),
        function()
          if not fp.have_live() then
            pending("needs the live Azurite of tools/run-specs.sh")
            return
          end
          local d = drills.run {
            manifest = manifest, label = label, rule = rule_for(match, fault, i),
            waits_break = s.waits_break, fault = name, processed = fault.processed,
          }
          d.seed = want
          d.suite = "matrix"
          fp.record(d)
          -- the proxy saw exactly one request for that operation
          assert.are.equal(1, d.faulted, "requests faulted")
          assert.are.equal(1, d.requests_for_op, "requests for the faulted operation")
          -- the row of that request
          assert.are.equal("UNKNOWN_OUTCOME", d.row_class, d.row_step)
          assert.are.equal(label, d.row_step)
          -- with one credential per actor, the doubtful row still names the
          -- principal that sent it, the one the manifest row recorded
          local sender = d.row_actor == "observer" and "operator" or d.row_actor
          assert.are.equal(d.fp[sender], d.row_principal, d.row_actor)
          assert.are.equal(d.identities[d.row_actor].fingerprint, d.row_principal)
          if label == "11 acquire B (infinite)" then assert.are.equal("B", d.row_actor) end
          assert.is_true(d.principals_ok, d.principal_bad)
          assert.is_false(d.shared_identity)
          -- nothing mutated after the doubt, nothing sent twice
          assert.are.equal(0, d.mutations_after_doubt, "mutations sent after the doubt")
          assert.are.equal(0, d.duplicates, "duplicate mutations")
          assert.are.equal(0, d.reused_mutations, "mutations on a reused connection")
          -- the interrupted run never accepts
          assert.is_true(d.main_decision == "HOLD" or d.main_decision == "RECONCILE", d.main_decision)
          assert.are.equal(d.main_decision == "HOLD" and 2 or 3, d.main_rc)
          -- recovery reaches the seed's decision, and verify agrees
          assert.are.equal(want, d.recovery_decision, d.recovery_out)
          assert.are.equal(0, d.verify_rc, d.verify_out)
          assert.is_true(d.accept_has_chain, "an ACCEPT was printed without the full chain")
          -- once breaking can no longer be observed, recovery mutates nothing
          drills.check_out_of_reach(d, label == "6 break, period 2" and fault.processed)
        end)
    end
  end
end)

describe("recovery while the lease is still breaking #faults", function()
  local manifest

  setup(function()
    manifest = helper.manifest_file(helper.tmpdir())
  end)
  teardown(helper.cleanup)

  it("after the break's answer was lost, a fresh breaking read decides WAIT, as the seed says", function()
    if not fp.have_live() then
      pending("needs the live Azurite of tools/run-specs.sh")
      return
    end
    -- Recovery runs at once, inside the 2 s break: it reads breaking/locked.
    -- The seed: "breaking/locked means WAIT", even when the break's own
    -- answer was lost (the observation shows a break in effect).
    local d = drills.run {
      manifest = manifest, label = "6 break, period 2", rule = { lease_action = "break", fault = "drop", ordinal = 1 },
      waits_break = false, fault = "drop", processed = true,
    }
    d.suite, d.seed, d.case = "breaking", "WAIT", "break answer dropped, recovery at once (still breaking)"
    fp.record(d)
    assert.are.equal(1, d.requests_for_op)
    assert.are.equal("UNKNOWN_OUTCOME", d.row_class)
    assert.are.equal(0, d.duplicates)
    assert.is_truthy(d.recovery_out:find("still breaking", 1, true), d.recovery_out)
    assert.are.equal(0, d.recovery_mutations, "recovery mutated while breaking")
    assert.are.equal("WAIT", d.recovery_decision, d.recovery_out)
    assert.are.equal(0, d.verify_rc, d.verify_out)
  end)
end)

-- What every keep-alive drill whose fault is only idle closes must show:
-- no mutation twice or on a reused connection, and every request head the
-- proxy received is in the ledger. The ledger may count more only when a
-- close raced a read on a reused connection: libcurl sent the head into a
-- socket the proxy had just closed (so the proxy never read it) and sent it
-- again; that row then says emitted_requests > 1, and the run never
-- accepts. Otherwise the handoff ends ACCEPT.
local function keepalive_clean(d)
  assert.are.equal(0, d.duplicates, "duplicate mutations")
  assert.are.equal(0, d.reused_mutations, "mutations on a reused connection")
  assert.is_true(d.emitted_total >= d.requests, "a request head the ledger does not count")
  assert.is_true(d.emitted_total - d.requests <= d.extra_heads,
    string.format("%d heads counted, %d received, %d on flagged rows", d.emitted_total, d.requests, d.extra_heads))
  if d.rows_not_one_emitted == 0 then
    assert.are.equal("ACCEPT", d.decision, d.out)
  else
    assert.are.equal("HOLD", d.decision, d.out)
  end
end

describe("keep-alive drills #faults", function()
  local manifest

  setup(function()
    manifest = helper.manifest_file(helper.tmpdir())
  end)
  teardown(helper.cleanup)

  it("a proxy that closes every idle keep-alive connection causes no second request", function()
    if not fp.have_live() then
      pending("needs the live Azurite of tools/run-specs.sh")
      return
    end
    local d = drills.full_run { manifest = manifest, idle_close_ms = 20 }
    d.suite = "keepalive"
    d.case = "every connection closed after 20 ms idle"
    fp.record(d)
    assert.is_true(d.closed_connections > 0, "the proxy closed no idle connection")
    keepalive_clean(d)
  end)

  it("the read before each mutation leaves a connection that is closed idle: still one request each", function()
    if not fp.have_live() then
      pending("needs the live Azurite of tools/run-specs.sh")
      return
    end
    local rules = {}
    for _, m in ipairs { "GET", "HEAD" } do rules[#rules + 1] = { method = m, fault = "close_idle", idle_ms = 5 } end
    local d = drills.full_run { manifest = manifest, rules = rules }
    d.suite = "keepalive"
    d.case = "each read's connection closed 5 ms after its answer"
    fp.record(d)
    keepalive_clean(d)
  end)

  it("a read dropped on a reused connection after it was read is caught, never accepted", function()
    if not fp.have_live() then
      pending("needs the live Azurite of tools/run-specs.sh")
      return
    end
    -- DESIGN.md 2.1: libcurl 7.88 silently re-sends a request whose reused
    -- connection closed after the server read it. Mutations never reuse a
    -- connection; a read that is re-sent is caught by the count of request
    -- heads (EVIDENCE_ERROR), one that is not is a transport failure.
    local d = drills.full_run {
      manifest = manifest, rules = { { method = "GET", reused = true, fault = "drop", ordinal = 1 } },
    }
    d.suite = "keepalive"
    d.case = "first GET on a reused connection: read, forwarded, connection closed without an answer"
    fp.record(d)
    assert.are.equal(0, d.duplicates, "duplicate mutations")
    assert.are.equal(0, d.reused_mutations)
    if d.faulted == 0 then
      pending("no GET came on a reused connection in this run")
      return
    end
    assert.is_true(d.rows_not_one_emitted >= 1 or d.transport_rows >= 1, d.out)
    assert.are.equal(d.requests, d.emitted_total)
    assert.are_not.equal("ACCEPT", d.decision)
  end)
end)

describe("lease table #faults", function()
  local manifest

  setup(function()
    manifest = helper.manifest_file(helper.tmpdir())
  end)
  teardown(helper.cleanup)

  it("a lost response on a state-changing cell is UNKNOWN_OUTCOME, and the flow stops mutating until reconciled",
    function()
      if not fp.have_live() then
        pending("needs the live Azurite of tools/run-specs.sh")
        return
      end
      -- The first Lease Acquire of the table is lifecycle 1's last cell,
      -- Available/acquire, no ID: the proxy forwards it (the service
      -- applies it) and drops the answer.
      local p = fp.start({ { lease_action = "acquire", ordinal = 1, fault = "drop" } }, 120000)
      local ev = helper.tmpdir() .. "/table"
      local ok, err = pcall(function()
        local rc, out = fp.run_host({ "lease-table", "--manifest", manifest, "--evidence", ev,
          "--timeout-ms", tostring(drills.TIMEOUT_MS) }, fp.env(p, helper.unique_blob("drill-table")))
        assert.are.equal(2, rc, out)
        assert.matches("DECISION: HOLD", out)
        local reqs = fp.log(p, "request")
        local faulted
        for _, r in ipairs(reqs) do
          if r.rule == 0 and r.fault ~= "forward" then faulted = faulted or r end
        end
        assert.is_not_nil(faulted, "the acquire was faulted")
        -- nothing at all after the lost answer: no mutation, no cleanup,
        -- not the acquire again (a deviation or a doubt is never retried)
        local after = 0
        for _, r in ipairs(reqs) do if r.n > faulted.n then after = after + 1 end end
        assert.are.equal(0, after, "requests after the lost answer")
        local rows = fp.rows(ev)
        local attempt, cellrow, stop, decision
        local cells, reached = 0, 0
        for _, r in ipairs(rows) do
          if r.record == "outcome" and r.cell == "Available/acquire, no ID" then attempt = r end
          if r.record == "cell" then
            cells = cells + 1
            if r.state == "Available" and r.op == "acquire, no ID" then cellrow = r end
            if r.verdict ~= "NOT_REACHED" then reached = reached + 1 end
          end
          if r.record == "stop" then stop = r end
          if r.record == "decision" then decision = r end
        end
        assert.are.equal("UNKNOWN_OUTCOME", attempt.result_classification)
        assert.are.equal("NOT_REACHED", cellrow.verdict)
        assert.are.equal(attempt.event_id, cellrow.attempt_event)
        assert.matches("UNKNOWN_OUTCOME", cellrow.reason)
        assert.are.equal("unknown-outcome", stop.kind)
        -- every cell still has its row: the ones before the loss were
        -- judged, all after it are NOT_REACHED with the stop's reason
        assert.are.equal(95, cells)
        assert.are.equal(15, reached)
        assert.are.equal(95 - 15, decision.lease_table.not_reached)
        assert.are.equal(1, decision.open_doubts)
        local vrc, vout = helper.run({ "verify", ev })
        assert.are.equal(0, vrc, vout)
      end)
      fp.stop(p)
      if not ok then error(err, 0) end
    end)
end)
