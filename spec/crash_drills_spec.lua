-- Crash drills: the host is killed with SIGKILL at each step of the main
-- handoff while that step's request is in flight. The fault proxy holds
-- the request (it is forwarded to Azurite at once: the server processes
-- it, the answer never comes), its log proves that the request arrived,
-- and the host is killed by its PID while it waits. Each time: the ledger
-- verifies; its last row is the step's intent; reopening turns it into
-- UNKNOWN_OUTCOME; recovery.lua decides what the seed gives for that
-- state; no ACCEPT is printed without the full chain; verify passes.
local helper = require "helper"
local fp = require "support.faultproxy"
local drills = require "support.drills"

local HOLD_MS = 30000 -- the proxy holds the answer longer than any drill

-- { step label (the intent row's step), proxy rule, seed decision after
-- recovery, waits_break, why[, divergence] }. A divergence is a cell where
-- leaselua decides otherwise than the seed today: { decision it reaches,
-- why }. The spec then expects that decision (so a change is noticed) and
-- the drill log reports both (docs/RELIABILITY.md).
local POINTS = {
  -- HEAD ordinal 1 is the preflight read C sends before the first mutation
  { "preflight: properties before 0 create container", { method = "HEAD", ordinal = 1 }, "HOLD", false,
    "killed during the preflight: nothing was mutated and the target stays unknown, so no mutation follows" },
  { "0 create container", { method = "PUT", query_contains = "restype=container" }, "HOLD", false,
    "no blob yet: the properties read fails (404), nothing to reconcile" },
  { "1 create rev 0", { method = "PUT", body_contains = '"revision":0,' }, "HOLD", false,
    "rev 0 committed, no lease: no handoff to prove" },
  { "1 read back rev 0", { method = "GET", ordinal = 1 }, "HOLD", false,
    "content rev 0 as accepted, no lease: no handoff to prove" },
  { "2 acquire A (infinite)", { lease_action = "acquire", ordinal = 1 }, "HOLD", false,
    "leased, but by whom is not proven: B's renew is refused" },
  { "3 rev 1 with A", { method = "PUT", body_contains = '"revision":1,' }, "HOLD", false,
    "rev 1 committed and explained; A holds the lease: no handoff" },
  { "3 read back rev 1", { method = "GET", ordinal = 2 }, "HOLD", false,
    "content rev 1 as accepted; A holds the lease: no handoff" },
  { "4 rev 2 without lease", { method = "PUT", body_contains = '"revision":2,' }, "RECONCILE", false,
    "the control's outcome is unknown and nothing settles it" },
  { "6 properties before break", { method = "HEAD", ordinal = 2 }, "HOLD", false,
    "A holds the lease: B's renew is refused" },
  { "6 break, period 2", { lease_action = "break" }, "HOLD", true,
    "the break took effect, but breaking was never observed" },
  { "7 probe rev 3 while breaking", { method = "HEAD", ordinal = 3 }, "HOLD", true,
    "killed during the probe's first read: breaking was never observed" },
  { "7 probe rev 3 while breaking", { method = "PUT", body_contains = '"revision":3,' }, "ACCEPT", true,
    "breaking observed, rev 3 reconciled as committed, then the whole chain" },
  { "7 probe rev 3 while breaking", { method = "HEAD", ordinal = 4 }, "ACCEPT", true,
    "killed during the probe's second read: rev 3 accepted, then the whole chain" },
  { "8 fresh properties", { method = "HEAD", ordinal = 5 }, "ACCEPT", true,
    "breaking observed before; recovery completes the chain" },
  { "8 B acquire while breaking", { lease_action = "acquire", ordinal = 2 }, "ACCEPT", true,
    "the early acquire was refused; recovery completes the chain" },
  { "9 wait for broken", { method = "HEAD", ordinal = 6 }, "ACCEPT", true,
    "killed while polling; recovery finds broken and completes the chain" },
  { "10 rev 4 with stale A", { method = "PUT", body_contains = '"revision":4,' }, "ACCEPT", false,
    "stale A sent again and rejected; rev 5 read back settles the content" },
  { "11 acquire B (infinite)", { lease_action = "acquire", ordinal = 3 }, "ACCEPT", false,
    "B's acquire took effect: proven by B's conditioned renew" },
  { "12 rev 5 with B", { method = "PUT", body_contains = '"revision":5,' }, "ACCEPT", false,
    "rev 5 is there: not written again; B proven by renew" },
  { "12 read back rev 5", { method = "GET", ordinal = 6 }, "ACCEPT", false,
    "rev 5 accepted, read back by the reconcile; B proven by renew" },
  { "13 rev 6 with A", { method = "PUT", body_contains = '"revision":6,' }, "RECONCILE", false,
    "the stale write's outcome is unknown and nothing settles it" },
  { "14 release B", { lease_action = "release" }, "ACCEPT", false,
    "the whole chain was observed before; the release took effect" },
  { "14 delete", { method = "DELETE" }, "HOLD", false,
    "the blob is gone: the properties read fails (404)" },
}

describe("crash drills #faults", function()
  local manifest

  setup(function()
    manifest = helper.manifest_file(helper.tmpdir())
  end)
  teardown(helper.cleanup)

  for i, pt in ipairs(POINTS) do
    local label, match, seed, waits, why, div = pt[1], pt[2], pt[3], pt[4], pt[5], pt[6]
    local want = div and div[1] or seed
    local what = match.method == "HEAD" and "properties read" or match.method == "GET" and "content read" or "mutation"
    it(string.format("SIGKILL #%d at %s (%s in flight): recovery decides %s", i, label, what, want), function()
      if not fp.have_live() then
        pending("needs the live Azurite of tools/run-specs.sh")
        return
      end
      local rule = { ordinal = 1, fault = "delay", delay_ms = HOLD_MS, forward = "before" }
      for k, v in pairs(match) do rule[k] = v end
      local d = drills.crash { manifest = manifest, label = label, rule = rule, waits_break = waits }
      d.point, d.seed, d.why, d.what, d.suite = i, seed, why, what, "crash"
      d.divergence = div and div[2] or nil
      fp.record(d)
      assert.is_true(d.arrived, "the request never reached the proxy")
      assert.is_true(d.alive_when_killed, "the host ended before it was killed")
      assert.is_true(d.killed)
      -- the ledger right after the kill: intact, the intent last
      assert.are.equal(0, d.verify_after_kill_rc, d.verify_after_kill_out)
      assert.are.equal("intent", d.last_record)
      assert.are.equal(label, d.last_step)
      assert.are.equal("intent", d.export_last_record)
      assert.is_true(d.rows_equal, "protected and export differ in length")
      -- reopened: the in-flight intent is UNKNOWN_OUTCOME
      assert.are.equal("UNKNOWN_OUTCOME", d.intent_class)
      assert.are.equal("UNKNOWN", d.intent_outcome)
      -- ...still naming the principal of the actor that sent it (each actor
      -- has its own token), as the manifest row recorded it
      local sender = d.row_actor == "observer" and "operator" or d.row_actor
      assert.are.equal(d.fp[sender], d.row_principal, d.row_actor)
      assert.are.equal(d.identities[d.row_actor].fingerprint, d.row_principal)
      assert.is_true(d.principals_ok, d.principal_bad)
      -- recovery decides, as the seed says, and verify agrees
      assert.are.equal(want, d.recovery_decision, d.recovery_out)
      assert.are.equal(want, d.recovery_printed)
      assert.is_true(d.accept_has_chain, "an ACCEPT was printed without the full chain")
      assert.are.equal(0, d.verify_rc, d.verify_out)
      assert.are.equal(0, d.recovery_duplicates, "recovery re-sent a mutation the server had applied")
      assert.are.equal(0, d.reused_mutations)
      -- breaking never observed, the lease now broken: ACCEPT is out of
      -- reach, so recovery sends no mutation at all
      drills.check_out_of_reach(d, label == "6 break, period 2" or
        (label == "7 probe rev 3 while breaking" and match.method == "HEAD" and match.ordinal == 3))
    end)
  end
end)
