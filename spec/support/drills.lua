-- One fault drill or crash drill: the main handoff through the fault proxy,
-- then recovery.lua and verify, with every figure the drill tables of
-- docs/RELIABILITY.md need. Used by spec/faults_spec.lua and
-- spec/crash_drills_spec.lua.
local helper = require "helper"
local fp = require "support.faultproxy"
local actors = require "support.actors"
local cjson = require "cjson"

local M = {}

M.BREAK = 2 -- seconds: a short break keeps each drill to a few seconds
M.TIMEOUT_MS = 1500 -- the client's whole budget per request in the drills

-- Seconds since boot, with sub-second resolution (for the drill's time).
local function now()
  local up = helper.read("/proc/uptime") or "0"
  return tonumber(up:match("^([%d%.]+)")) or 0
end
M.now = now

local function decision(dir)
  local text = helper.read(dir .. "/decision.json")
  if not text then return nil end
  local ok, d = pcall(cjson.decode, text)
  return ok and d or nil
end

-- Every drill runs with one credential per actor (support.actors): A, B
-- and the operator each their own dev token, no default token at all.
local function with_actors(env, d)
  local tokens = actors.mint(helper.tmpdir())
  env.AZURE_STORAGE_TOKEN = false
  d.fp = tokens.fp -- fingerprints only: d is written to the drill log
  return actors.args(tokens)
end

local function append(args, more)
  for _, a in ipairs(more or {}) do args[#args + 1] = a end
  return args
end

local function main_args(manifest, ev, timeout_ms, creds)
  local args = { "scripts/main_handoff.lua", "--manifest", manifest, "--evidence", ev, "--break-period",
    tostring(M.BREAK), "--window-attempts", "1" }
  if timeout_ms then
    args[#args + 1] = "--timeout-ms"
    args[#args + 1] = tostring(timeout_ms)
  end
  return append(args, creds)
end

-- Every request row's principal is its sender's fingerprint (the
-- observer reads with the operator's token); d.principals_ok says so,
-- d.principal_of(row) gives what a row carries.
local function principal_figures(ev, d)
  d.principals_ok, d.principal_rows = true, 0
  for _, r in ipairs(fp.rows(ev)) do
    if r.record == "intent" or r.record == "outcome" then
      d.principal_rows = d.principal_rows + 1
      if r.principal ~= d.fp[actors.sender(r.actor_alias)] then
        d.principals_ok = false
        d.principal_bad = (r.step or "?") .. " " .. tostring(r.actor_alias)
      end
    end
  end
  local m = fp.rows(ev)[1]
  d.identities = m and m.identities or {}
  d.shared_identity = m and m.shared_identity
end

local READS = { ["Get Blob"] = true, ["Get Blob Properties"] = true }

-- Mutation intents in the ledger: each is one request the run meant to send.
local function intents(ev)
  local n = 0
  for _, r in ipairs(fp.rows(ev)) do
    if r.record == "intent" and not READS[r.operation] then n = n + 1 end
  end
  return n
end

-- Mutation figures of the requests the proxy logged: duplicates (more
-- mutation requests on the wire than the ledger has mutation intents: a
-- hidden re-send), mutations on a reused connection.
local function mutation_figures(reqs, ev, d)
  d.reused_mutations, d.mutations = 0, 0
  for _, r in ipairs(reqs) do
    if fp.is_mutation(r) then
      d.mutations = d.mutations + 1
      if r.conn_seq ~= 1 then d.reused_mutations = d.reused_mutations + 1 end
    end
  end
  d.mutation_intents = intents(ev)
  d.duplicates = d.mutations - d.mutation_intents
end

-- After recovery: a recovery mutation equal to one the server already
-- applied in the main run is a duplicate mutation; one equal to a main-run
-- mutation that was not applied is a re-send after reconcile (allowed by
-- the seed once ownership and content are reconciled).
local function recovery_figures(p, main_n, d)
  local applied = {}
  local by_n = {}
  for _, r in ipairs(fp.log(p)) do
    if r.kind == "request" then by_n[r.n] = r end
    if r.kind == "upstream" and r.upstream_status >= 200 and r.upstream_status < 300 and r.n <= main_n then
      applied[fp.key(by_n[r.n])] = true
    end
  end
  local main_keys = {}
  for n = 1, main_n do
    if by_n[n] and fp.is_mutation(by_n[n]) then main_keys[fp.key(by_n[n])] = true end
  end
  d.recovery_duplicates, d.resent_after_reconcile, d.recovery_mutations = 0, 0, 0
  local main_intents = d.mutation_intents
  for n, r in pairs(by_n) do
    if n > main_n and fp.is_mutation(r) then
      d.recovery_mutations = d.recovery_mutations + 1
      local k = fp.key(r)
      if applied[k] then
        d.recovery_duplicates = d.recovery_duplicates + 1
      elseif main_keys[k] then
        d.resent_after_reconcile = d.resent_after_reconcile + 1
      end
      if r.conn_seq ~= 1 then d.reused_mutations = d.reused_mutations + 1 end
    end
  end
  -- hidden re-sends during recovery: wire requests beyond its intents
  local hidden = d.recovery_mutations - (intents(d.ev) - main_intents)
  d.duplicates = d.duplicates + hidden + d.recovery_duplicates
end

-- Recovery through the same proxy (its fault rule is spent), then verify.
local function recover_and_verify(p, ev, env, d, creds)
  local main_n = #fp.log(p, "request")
  local rc, out = fp.run_host(append({ "scripts/recovery.lua", "--recover", "--evidence", ev, "--timeout-ms",
    "10000" }, creds), env)
  d.recovery_rc, d.recovery_out = rc, out
  local dec = decision(ev)
  d.recovery_decision = dec and dec.decision or "none"
  d.recovery_reasons = dec and dec.reasons or {}
  for _, r in ipairs(fp.rows(ev)) do
    if r.record == "reconcile" then d.reconcile_result = r.result end
  end
  recovery_figures(p, main_n, d)
  principal_figures(ev, d)
  local vrc, vout, verr = fp.run_host({ "verify", ev }, {})
  d.verify_rc, d.verify_out = vrc, vout .. verr
  -- An ACCEPT is printed only with the full chain: verify re-derives the
  -- decision from the export alone, and the decision row lists no reason.
  d.accept_has_chain = true
  if out:find("DECISION: ACCEPT", 1, true) then
    d.accept_has_chain = vrc == 0 and vout:find("decision ACCEPT", 1, true) ~= nil and
        #d.recovery_reasons == 0 and d.recovery_decision == "ACCEPT"
  end
  -- the recovery output names the decision it recorded
  d.recovery_printed = out:match("DECISION: (%u+)")
end

-- The end of every drill: the proxy is stopped whatever happened, the
-- drill's wall time goes into d, and an error raised inside the drill is
-- raised again only then.
local function finish(p, t0, d, ok, err)
  fp.stop(p)
  d.seconds = math.floor((now() - t0) * 10 + 0.5) / 10
  if not ok then error(err, 0) end
  return d
end

-- After recovery: wherever it found ACCEPT out of reach it sent no mutation
-- at all; `expected` says this drill must find it out of reach.
function M.check_out_of_reach(d, expected)
  local assert = require "luassert" -- busted's assert reaches spec files, not this module
  local said = d.recovery_out:find("ACCEPT is out of reach", 1, true) ~= nil
  if expected then assert.is_true(said, d.recovery_out) end
  if said then assert.are.equal(0, d.recovery_mutations, "recovery mutated with ACCEPT out of reach") end
end

-- run{manifest, label, rule, waits_break, fault, processed} -> figures.
function M.run(o)
  local t0 = now()
  local blob = helper.unique_blob("drill")
  local p = fp.start({ o.rule }, 120000)
  local ev = helper.tmpdir() .. "/ev"
  local env = fp.env(p, blob)
  local d = { step = o.label, fault = o.fault, processed = o.processed, blob = blob, ev = ev }
  local creds = with_actors(env, d)
  local ok, err = pcall(function()
    local rc, out = fp.run_host(main_args(o.manifest, ev, M.TIMEOUT_MS, creds), env)
    d.main_rc, d.main_out = rc, out
    local reqs = fp.log(p, "request")
    local faulted
    d.faulted = 0
    for _, r in ipairs(reqs) do
      if r.rule == 0 and r.fault ~= "forward" then
        d.faulted = d.faulted + 1
        faulted = faulted or r
      end
    end
    mutation_figures(reqs, ev, d)
    -- the faulted request and any copy of it after (earlier steps may send
    -- the same request on purpose: B's acquire while breaking, then after)
    d.requests_for_op, d.mutations_after_doubt = 0, 0
    for _, r in ipairs(reqs) do
      if faulted and r.n >= faulted.n and fp.key(r) == fp.key(faulted) then
        d.requests_for_op = d.requests_for_op + 1
      end
      if faulted and fp.is_mutation(r) and r.n > faulted.n then
        d.mutations_after_doubt = d.mutations_after_doubt + 1
      end
    end
    for _, r in ipairs(fp.rows(ev)) do
      if r.record == "outcome" and r.result_classification == "UNKNOWN_OUTCOME" and not d.row_class then
        d.row_class, d.row_step, d.row_status = r.result_classification, r.step, r.http_status
        d.row_transport_error = r.transport_error
        d.row_actor, d.row_principal = r.actor_alias, r.principal
      end
      if r.record == "finding" and r.kind == "window" then d.window = r.result end
    end
    if not d.row_class then
      for _, r in ipairs(fp.rows(ev)) do
        if r.record == "outcome" and r.step == o.label then
          d.row_class, d.row_step = r.result_classification, r.step
        end
      end
    end
    local dec = decision(ev)
    d.main_decision = dec and dec.decision or "none"
    -- Let the break settle, so that recovery meets a definite state.
    if o.waits_break then fp.sleep(M.BREAK + 0.6) end
    recover_and_verify(p, ev, env, d, creds)
  end)
  return finish(p, t0, d, ok, err)
end

-- full_run{manifest, rules, idle_close_ms} -> figures of a whole main
-- handoff through the proxy, no recovery.
function M.full_run(o)
  local t0 = now()
  local blob = helper.unique_blob("keepalive")
  local p = fp.start(o.rules or {}, 120000, o.idle_close_ms)
  local ev = helper.tmpdir() .. "/ev"
  local d = { blob = blob, ev = ev }
  local env = fp.env(p, blob)
  local creds = with_actors(env, d)
  local ok, err = pcall(function()
    local rc, out = fp.run_host(main_args(o.manifest, ev, nil, creds), env)
    d.rc, d.out = rc, out
    local dec = decision(ev)
    d.decision = dec and dec.decision or "none"
    local reqs = fp.log(p, "request")
    d.requests = #reqs
    mutation_figures(reqs, ev, d)
    d.faulted = 0
    for _, r in ipairs(reqs) do
      if r.fault ~= "forward" then d.faulted = d.faulted + 1 end
    end
    d.closed_connections = #fp.log(p, "close")
    d.rows_not_one_emitted, d.transport_rows, d.emitted_total, d.extra_heads = 0, 0, 0, 0
    for _, r in ipairs(fp.rows(ev)) do
      if r.record == "outcome" then
        d.emitted_total = d.emitted_total + (r.emitted_requests or 0)
        d.extra_heads = d.extra_heads + math.max(0, (r.emitted_requests or 0) - 1)
        if r.emitted_requests ~= 1 then d.rows_not_one_emitted = d.rows_not_one_emitted + 1 end
        if r.outcome ~= "RESPONSE" then d.transport_rows = d.transport_rows + 1 end
      end
    end
    principal_figures(ev, d)
    local vrc = fp.run_host({ "verify", ev }, {})
    d.verify_rc = vrc
  end)
  return finish(p, t0, d, ok, err)
end

-- crash{manifest, label, rule, waits_break} -> figures: the main handoff
-- runs until the proxy holds the step's request (the delay fault), the
-- host is killed with SIGKILL while it waits, then verify, recovery,
-- verify.
function M.crash(o)
  local t0 = now()
  local blob = helper.unique_blob("crash")
  local p = fp.start({ o.rule }, 120000)
  local ev = helper.tmpdir() .. "/ev"
  local env = fp.env(p, blob)
  local d = { step = o.label, blob = blob, ev = ev }
  local creds = with_actors(env, d)
  local host
  local ok, err = pcall(function()
    host = fp.spawn_host(main_args(o.manifest, ev, nil, creds), env)
    local held = fp.wait_until(function()
      for _, r in ipairs(fp.log(p, "request")) do
        if r.rule == 0 and r.fault == "delay" then return r end
      end
      return nil
    end, 30)
    d.arrived = held ~= nil
    d.alive_when_killed = fp.alive(host.pid)
    fp.kill(host.pid, "KILL")
    d.killed = not fp.alive(host.pid)
    assert(held, "the step's request never reached the proxy: " .. (helper.read(host.out) or ""))
    d.held_method, d.held_query, d.held_action = held.method, held.query, held.lease_action
    mutation_figures(fp.log(p, "request"), ev, d)
    -- the ledger after the kill
    local prot, exp = fp.rows(ev, "protected"), fp.rows(ev, "export")
    local last = prot[#prot]
    d.last_record, d.last_step, d.last_event = last and last.record, last and last.step, last and last.event_id
    d.export_last_record = exp[#exp] and exp[#exp].record
    d.rows_equal = #prot == #exp
    local vrc, vout, verr = fp.run_host({ "verify", ev }, {})
    d.verify_after_kill_rc, d.verify_after_kill_out = vrc, vout .. verr
    if o.waits_break then fp.sleep(M.BREAK + 0.6) end
    recover_and_verify(p, ev, env, d, creds)
    -- the in-flight intent became UNKNOWN_OUTCOME on reopen
    for _, r in ipairs(fp.rows(ev)) do
      if r.record == "outcome" and r.event_id == d.last_event then
        d.intent_class, d.intent_outcome = r.result_classification, r.outcome
        d.row_actor, d.row_principal = r.actor_alias, r.principal
      end
    end
  end)
  if host then fp.kill(host.pid, "KILL") end
  return finish(p, t0, d, ok, err)
end

return M
