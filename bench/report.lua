-- Benchmark report (stock lua5.4 + lua-cjson): turns bench/out/raw.jsonl
-- and machine.json into the markdown table that bench/run.sh prints and
-- keeps in bench/out/latest.md. Each figure is the median over the measured
-- runs (run 0 is the warm-up and is left out) of the per-run value (for
-- reads: the per-run p50 of every request).
-- Usage: lua5.4 bench/report.lua RAW.jsonl MACHINE.json
local cjson = require "cjson"

local raw_path, machine_path = arg[1], arg[2]
assert(raw_path and machine_path, "usage: lua5.4 bench/report.lua RAW.jsonl MACHINE.json")
local function slurp(p)
  local f = assert(io.open(p))
  local s = f:read("a")
  f:close()
  return s
end
local machine = cjson.decode(slurp(machine_path))
local null = cjson.null

local rows = {}
for line in io.lines(raw_path) do
  if line:match("%S") then rows[#rows + 1] = cjson.decode(line) end
end

local function median(v)
  local s = {}
  for _, x in ipairs(v) do if type(x) == "number" then s[#s + 1] = x end end
  if #s == 0 then return nil end
  table.sort(s)
  local n = #s
  if n % 2 == 1 then return s[(n + 1) // 2] end
  return (s[n // 2] + s[n // 2 + 1]) / 2
end

-- collect(pred, getter) -> list of values from measured runs
local function collect(pred, get)
  local v = {}
  for _, r in ipairs(rows) do
    if pred(r) and (r.run == nil or r.run == null or r.run >= 1) then
      local ok, x = pcall(get, r)
      if ok and type(x) == "number" then v[#v + 1] = x end
    end
  end
  return v
end

local function fig(name) return function(r) return r.fig == name end end

-- ---- figures -------------------------------------------------------------
local F = {}
F.floor_read = median(collect(function(r) return r.fig == "read" and r.who == "floor" end,
  function(r) return r.e2e_ms.p50 end))
F.ours_read = median(collect(function(r) return r.fig == "read" and r.where == "disk" end,
  function(r) return r.data.e2e_ms.p50 end))
F.ours_wire = median(collect(function(r) return r.fig == "read" and r.where == "disk" end,
  function(r) return r.data.wire_ms.p50 end))
F.ours_read_tmpfs = median(collect(function(r) return r.fig == "read" and r.where == "tmpfs" end,
  function(r) return r.data.e2e_ms.p50 end))
F.ours_wire_tmpfs = median(collect(function(r) return r.fig == "read" and r.where == "tmpfs" end,
  function(r) return r.data.wire_ms.p50 end))
F.js_read = median(collect(function(r) return r.fig == "read" and r.data and r.data.who == "js" end,
  function(r) return r.data.e2e_ms.p50 end))
-- Request to request, both clients through bench/cadence.c's shim, and
-- the same intervals split at the answer's first bytes (its receives):
-- the wait, then the client's own time.
local function split(who_floor, key)
  local pred = who_floor and function(r) return r.fig == "read" and r.who == "floor" end
    or function(r) return r.fig == "read" and r.where == "disk" end
  return median(collect(pred, function(r) return r.cadence_ms[key] end))
end
F.floor_cadence, F.ours_cadence = split(true, "p50"), split(false, "p50")
F.floor_wait, F.ours_wait = split(true, "wait_p50"), split(false, "wait_p50")
F.floor_client, F.ours_client = split(true, "client_p50"), split(false, "client_p50")
-- the CPU time the client spent from one request leaving to the next
F.floor_cpu, F.ours_cpu = split(true, "cpu_p50"), split(false, "cpu_p50")
-- Paired: ours on disk against the floor of the same run, run by run, as
-- combine(ours, floor) (default: ours over the floor), sorted.
local function paired(get_ours, get_floor, combine)
  combine = combine or function(a, b) return a / b end
  local floor, v = {}, {}
  for _, r in ipairs(rows) do
    if r.fig == "read" and r.who == "floor" and r.run >= 1 then
      local ok, x = pcall(get_floor, r)
      floor[r.run] = ok and x or nil
    end
  end
  for _, r in ipairs(rows) do
    if r.fig == "read" and r.where == "disk" and r.run >= 1 and floor[r.run] then
      local ok, x = pcall(get_ours, r)
      if ok and type(x) == "number" and type(floor[r.run]) == "number" then v[#v + 1] = combine(x, floor[r.run]) end
    end
  end
  table.sort(v)
  return v
end
F.paired_total = paired(function(r) return r.data.e2e_ms.p50 end, function(r) return r.e2e_ms.p50 end)
F.paired_cadence = paired(function(r) return r.cadence_ms.p50 end, function(r) return r.cadence_ms.p50 end)
-- Each part run by run, ours less the floor of the same run (us): the
-- median and how many runs ours was the longer. Medians of the parts do
-- not add up to the median of the whole; these differences are the
-- comparable ones.
local function paired_diff(key)
  local get = function(r) return r.cadence_ms[key] end
  local v = paired(get, get, function(a, b) return (a - b) * 1000 end)
  local longer = 0
  for _, x in ipairs(v) do if x > 0 then longer = longer + 1 end end
  return { median = median(v), longer = longer, n = #v }
end
F.diff_wait, F.diff_client, F.diff_cpu = paired_diff("wait_p50"), paired_diff("client_p50"), paired_diff("cpu_p50")
F.paired_cpu = paired(function(r) return r.cadence_ms.cpu_p50 end, function(r) return r.cadence_ms.cpu_p50 end)

local function handoff(who, get)
  return median(collect(function(r) return r.fig == "handoff" and r.who == who end, get))
end
F.ours_bracket = handoff("ours", function(r) return r.data.bracket_ms end)
F.js_bracket = handoff("js", function(r) return r.data.bracket_ms end)
F.ours_wall = handoff("ours", function(r) return r.wall_ms end)
F.js_wall = handoff("js", function(r) return r.wall_ms end)
F.ours_rss = handoff("ours", function(r) return r.rss_kb end)
F.js_rss = handoff("js", function(r) return r.rss_kb end)
F.ours_wire_sum = handoff("ours", function(r) return r.data.wire_ms end)
F.ours_span = handoff("ours", function(r) return r.data.span_ms end)
F.ours_requests = handoff("ours", function(r) return r.data.requests end)
F.ours_mutations = handoff("ours", function(r) return r.data.mutations end)
F.ours_handoff_lag = handoff("ours", function(r) return r.data.lag_ms end)
F.js_handoff_lag = handoff("js", function(r) return r.data.lag_ms end)
F.js_require = handoff("js", function(r) return r.data.require_ms end)

local function ttfr(who)
  return median(collect(function(r) return r.fig == "ttfr" and r.data.who == who end,
    function(r) return r.data.ttfr_ms end))
end
F.ours_ttfr, F.js_ttfr, F.floor_ttfr = ttfr("ours"), ttfr("js"), ttfr("floor")
local function conns(who)
  return median(collect(function(r) return r.fig == "connections" and r.data.who == who end,
    function(r) return r.data.connections end))
end
F.ours_conns, F.js_conns = conns("ours"), conns("js")
local function fulls(who)
  return median(collect(function(r) return r.fig == "connections" and r.data.who == who end,
    function(r) return r.data.full_tls_handshakes end))
end
F.ours_fulls, F.js_fulls = fulls("ours"), fulls("js")

local lag = {}
for _, cadence in ipairs { "adaptive", "1000", "100" } do
  local pred = function(r) return r.fig == "lag" and r.data.cadence == cadence end
  local trials = collect(pred, function() return 1 end)
  local held = collect(function(r) return pred(r) and r.data.result ~= "BROKEN" end, function() return 1 end)
  lag[cadence] = {
    lag = median(collect(pred, function(r) return r.data.lag_ms end)),
    polls = median(collect(pred, function(r) return r.data.polls end)),
    max_polls = (function()
      local m
      for _, x in ipairs(collect(pred, function(r) return r.data.polls end)) do m = math.max(m or x, x) end
      return m
    end)(),
    trials = #trials, held = #held,
  }
end

F.floor_rss = median(collect(fig("rss_floor"), function(r) return r.curl_kb end))
F.version_rss = median(collect(fig("rss_floor"), function(r) return r.version_kb end))
F.ours_wire_outside = handoff("ours", function(r) return r.data.wire_outside_wait_ms end)
local cond = {}
for _, r in ipairs(rows) do if r.fig == "conditions" then cond[r.when] = r end end

-- the last row of a figure recorded once a bench (or {} when there is none)
local function last_fig(name)
  local last = {}
  for _, r in ipairs(rows) do if r.fig == name then last = r end end
  return last
end

local replay_runs = collect(function(r) return r.fig == "replay" end, function(r) return r.wall_ms end)
F.replay = median(replay_runs)
local last_replay = last_fig("replay")
local replay_fixtures, replay_failed = last_replay.fixtures, last_replay.failed

local hash_ns = 0
for _, r in ipairs(rows) do if r.fig == "hash" then hash_ns = hash_ns + r.data.ns_p50 end end
local trace = last_fig("trace").data
-- the emulator after a client's busy gap of none, the floor's own time and
-- ours': the same client's exchange after each, run by run; the charge for
-- a gap is its exchange less the one after none
local function gap_at(j) return function(r) return r.data.us_after[j] - r.data.us_after[1] end end
local gap_floor_runs, gap_ours_runs = collect(fig("gap"), gap_at(2)), collect(fig("gap"), gap_at(3))
local gap_diff_runs = collect(fig("gap"), function(r) return r.data.us_after[3] - r.data.us_after[2] end)
local gap_last = last_fig("gap").data
if type(gap_last) == "table" and type(gap_last.gaps_us) == "table" then
  F.gap_floor_us, F.gap_ours_us = gap_last.gaps_us[2], gap_last.gaps_us[3]
end
F.gap_floor, F.gap_ours, F.gap_diff = median(gap_floor_runs), median(gap_ours_runs), median(gap_diff_runs)
-- our transport's exchange less plain libcurl's, run by run
local transport_runs = collect(fig("transport"), function(r) return r.data.us_transport - r.data.us_libcurl end)
F.transport_diff = median(transport_runs)
-- the same answer waited for by spinning, less in poll(2), run by run
local wake_runs = collect(fig("wake"), function(r) return r.data.us_spin - r.data.us_poll end)
F.wake_diff = median(wake_runs)
local wake_last = last_fig("wake").data
if type(wake_last) == "table" then F.wake_poll, F.wake_gap = wake_last.us_poll, wake_last.gap_us end
-- an instruction profile that says what it counted, or nil
local function profile(name)
  local d = last_fig(name).data
  if type(d) == "table" and type(d.ir) == "table" and type(d.requests) == "number" and d.requests > 0 then
    return d
  end
end
local cg, cg_long = profile("callgrind"), profile("callgrind_long")

-- ---- formatting ------------------------------------------------------------
local function ms(x, d)
  if not x then return "n/a" end
  return string.format("%." .. (d or 2) .. "f ms", x)
end
local function ratio(a, b)
  if not a or not b or b == 0 then return nil end
  return a / b
end
local function int(x) return x and string.format("%d", math.floor(x + 0.5)) or "n/a" end
local function rx(x) return x and string.format("%.2fx", x) or "n/a" end
local function verdict(ok)
  if ok == nil then return "n/a" end
  return ok and "met" or "**missed**"
end
local out = {}
local function p(...) out[#out + 1] = string.format(...) end

local break_ms = machine.handoff_break * 1000
p("## leaselua benchmarks: %s", machine.date)
p("")
p("Machine: %d cores, %s, %.1f GiB, %s; idle CPUs: %s; evidence on %s. Mode: %s (%d measured runs after " ..
  "a warm-up, %d for the reads, the floor and ours on disk taking turns at going first; " ..
  "observation lag: %d s break x %d).", machine.nproc, machine.cpu, machine.mem_gib, machine.kernel,
  machine.cpu_idle or "unknown", machine.evidence_fs, machine.mode, machine.runs,
  machine.read_runs or machine.runs, machine.lag_period, machine.lag_runs)
p("Versions: %s; %s; node %s; Azurite %s; %s.", machine.leaselua, machine.curl, machine.node,
  machine.azurite, machine.sdk)
local function cond_text(c)
  if not c then return "n/a" end
  return string.format("load average %s, append + fsync p50 %.0f us (p90 %.0f us)", c.loadavg, c.fsync.us_p50,
    c.fsync.us_p90)
end
p("Conditions: at the start %s; at the end %s.", cond_text(cond.start), cond_text(cond["end"]))
p("")
p("| figure | ours | floor (curl) | JS SDK | ours vs peer | target | |")
p("|---|---|---|---|---|---|---|")
local r_floor, r_js = ratio(F.ours_read, F.floor_read), ratio(F.ours_read, F.js_read)
p("| Per-request p50, reads, end to end (durable ledger) | %s | %s | %s | %s floor, %s JS (the floor itself: %s JS)" ..
  " | <= 1.15x floor, <= 0.35x JS | %s |",
  ms(F.ours_read, 3), ms(F.floor_read, 3), ms(F.js_read, 3), rx(r_floor), rx(r_js), rx(ratio(F.floor_read, F.js_read)),
  verdict(r_floor and r_js and r_floor <= 1.15 and r_js <= 0.35))
local w_floor, w_js = ratio(F.ours_wire, F.floor_read), ratio(F.ours_wire, F.js_read)
p("| Per-request p50, reads, the exchange alone | %s | %s | %s | %s floor, %s JS | (same) | %s |",
  ms(F.ours_wire, 3), ms(F.floor_read, 3), ms(F.js_read, 3), rx(w_floor), rx(w_js),
  verdict(w_floor and w_js and w_floor <= 1.15 and w_js <= 0.35))
if F.ours_read_tmpfs then
  local t_floor, t_js = ratio(F.ours_read_tmpfs, F.floor_read), ratio(F.ours_read_tmpfs, F.js_read)
  p("| Per-request p50, reads, end to end, ledger on tmpfs (no fsync cost)" ..
    " | %s | %s | %s | %s floor, %s JS | (same) | %s |",
    ms(F.ours_read_tmpfs, 3), ms(F.floor_read, 3), ms(F.js_read, 3), rx(t_floor), rx(t_js),
    verdict(t_floor and t_js and t_floor <= 1.15 and t_js <= 0.35))
end
if F.ours_cadence and F.floor_cadence then
  local c_floor = ratio(F.ours_cadence, F.floor_cadence)
  p("| Per-request p50, reads, request to request (durable ledger), both clients timed by bench/cadence.c" ..
    " | %s | %s | - | %s floor | <= 1.15x floor | %s |",
    ms(F.ours_cadence, 3), ms(F.floor_cadence, 3), rx(c_floor), verdict(c_floor and c_floor <= 1.15))
end
if F.ours_client and F.floor_client and F.diff_wait.median and F.diff_client.median then
  local function pd(d)
    return string.format("run by run %+.0f us, ours the longer in %d of %d", d.median, d.longer, d.n)
  end
  p("| the same intervals split at the answer's first bytes: the wait (the request leaving to those bytes: mostly" ..
    " the emulator; also the wake-up, and for ours the intent's export line written while the request is out)" ..
    " | %s | %s | - | %s | (context) | |", ms(F.ours_wait, 3), ms(F.floor_wait, 3), pd(F.diff_wait))
  p("| the same intervals split at the answer's first bytes: the client's own time (those bytes to the next" ..
    " request leaving: all the client's work) | %s | %s | - | %s | (context) | |",
    ms(F.ours_client, 3), ms(F.floor_client, 3), pd(F.diff_client))
end
if F.ours_cpu and F.floor_cpu and F.diff_cpu.median then
  p("| the client's CPU time per request (user and system, all threads, from one request leaving to the next;" ..
    " not a wait, but a busy neighbour moves it too) | %s | %s | - | %s floor; run by run %+.0f us, ours the" ..
    " longer in %d of %d (%s) | (context) | |", ms(F.ours_cpu, 3), ms(F.floor_cpu, 3),
    rx(ratio(F.ours_cpu, F.floor_cpu)), F.diff_cpu.median, F.diff_cpu.longer, F.diff_cpu.n,
    #F.paired_cpu > 0 and string.format("%.2fx to %.2fx", F.paired_cpu[1], F.paired_cpu[#F.paired_cpu]) or "n/a")
end
local b_js = ratio(F.ours_bracket, F.js_bracket)
p("| Bracket width, rev 3 probe (Put on a fresh connection) | %s | - | %s | %s JS | <= 0.5x JS | %s |",
  ms(F.ours_bracket), ms(F.js_bracket), rx(b_js), verdict(b_js and b_js <= 0.5))
local names = { adaptive = "adaptive (ours)", ["1000"] = "fixed 1 s (the seed)", ["100"] = "fixed 100 ms" }
for _, cadence in ipairs { "adaptive", "1000", "100" } do
  local l = lag[cadence]
  local cell = l.lag and string.format("%s, %s polls (max %s)", ms(l.lag, 1), int(l.polls), int(l.max_polls))
    or "n/a"
  if l.held > 0 then cell = cell .. string.format(", %d of %d trials not BROKEN", l.held, l.trials) end
  if cadence == "adaptive" then
    p("| Observation lag p50 after the expected end, %d s break: %s" ..
      " | %s | - | - | - | <= 25 ms with <= 20 polls | %s |",
      machine.lag_period, names[cadence], cell, verdict(l.lag and l.lag <= 25 and l.max_polls <= 20))
  else
    p("| Observation lag p50, %d s break: %s | %s | - | - | %s | (comparison) | |", machine.lag_period,
      names[cadence], cell, l.lag and lag.adaptive.lag and
      string.format("adaptive lag %s, polls %s", rx(ratio(lag.adaptive.lag, l.lag)),
        rx(ratio(lag.adaptive.polls, l.polls))) or "n/a")
  end
end
local t_js = ratio(F.ours_ttfr, F.js_ttfr)
p("| Time to first request from process start | %s | %s | %s | %s JS | <= 20 ms, <= 0.1x JS | %s |",
  ms(F.ours_ttfr, 1), ms(F.floor_ttfr, 1), ms(F.js_ttfr, 1), rx(t_js),
  verdict(F.ours_ttfr and t_js and F.ours_ttfr <= 20 and t_js <= 0.1))
local m_js = ratio(F.ours_rss, F.js_rss)
p("| Peak RSS over a whole handoff (/usr/bin/time -v; floor: one HEAD) | %s | %s | %s | %s JS | <= 10 MB | %s |",
  F.ours_rss and string.format("%.1f MB", F.ours_rss / 1024) or "n/a",
  F.floor_rss and string.format("%.1f MB", F.floor_rss / 1024) or "n/a",
  F.js_rss and string.format("%.1f MB", F.js_rss / 1024) or "n/a", rx(m_js),
  verdict(F.ours_rss and F.ours_rss / 1024 <= 10))
p("| Wall time, handoff with a %d s break | %s (break + %s) | - | %s (break + %s) | %s JS | <= break + 60 ms | %s |",
  machine.handoff_break, ms(F.ours_wall, 0), ms(F.ours_wall and F.ours_wall - break_ms, 0), ms(F.js_wall, 0),
  ms(F.js_wall and F.js_wall - break_ms, 0), rx(ratio(F.ours_wall, F.js_wall)),
  verdict(F.ours_wall and F.ours_wall <= break_ms + 60))
if F.replay then
  p("| Offline replay of all fixtures (%d) | %s | - | - | - | <= 3 s | %s |", replay_fixtures or 0,
    ms(F.replay, 0), verdict(F.replay <= 3000))
elseif replay_failed then
  p("| Offline replay of all fixtures (%d) | n/a (the replay specs failed) | - | - | - | <= 3 s | n/a |",
    replay_fixtures or 0)
else
  p("| Offline replay of all fixtures | n/a (fixtures not built yet) | - | - | - | <= 3 s | n/a |")
end
p("")
p("Handoff context (ours): %s requests, %s of them mutations on fresh connections; %s on the wire in all, " ..
  "%s of it outside the break wait (up to the break response and after broken); first request to last " ..
  "response %s; lag after the expected end %s. `leaselua --version` alone peaks at %s RSS. JS peer: polls " ..
  "every %d ms (the seed's cadence), spends %s loading the SDK before its first request. TLS connections per " ..
  "handoff, counted by the relay: ours %s (%s full handshakes, the rest resumed), JS %s (%s full).",
  int(F.ours_requests), int(F.ours_mutations), ms(F.ours_wire_sum, 1), ms(F.ours_wire_outside, 1),
  ms(F.ours_span, 1), ms(F.ours_handoff_lag, 1),
  F.version_rss and string.format("%.1f MB", F.version_rss / 1024) or "n/a", machine.js_poll_ms,
  ms(F.js_require, 0), int(F.ours_conns), int(F.ours_fulls), int(F.js_conns), int(F.js_fulls))
local function spread(v)
  if #v == 0 then return "n/a" end
  return string.format("%.2fx to %.2fx (median %.2fx, %d runs)", v[1], v[#v], median(v), #v)
end
p("")
p("Reads, run by run (ours on disk over the floor of the same run): against curl's `time_total` %s; " ..
  "request to request, against curl's own request to request %s.", spread(F.paired_total), spread(F.paired_cadence))
p("")
p("### Overhead per read request (ours)")
p("")
p("| part | per read | how it is measured |")
p("|---|---|---|")
p("| the exchange on the wire | %s | the rows' mono_start_ns/mono_end_ns, ledger on disk |", ms(F.ours_wire, 3))
if F.ours_read_tmpfs and F.ours_read and F.ours_wire_tmpfs then
  p("| ledger writes to disk (2 rows, 4 write()s, the intent's export line while the read is on the wire;" ..
    " a read's intent is not fsync'd, see docs/EVIDENCE.md)" ..
    " | %s | end to end on disk minus on tmpfs |",
    ms(F.ours_read - F.ours_read_tmpfs, 3))
  p("| everything else in the process (guard, rows, JSON, sanitizer, scan, model fold, Lua)" ..
    " | %s | end to end minus the exchange, on tmpfs |",
    ms(F.ours_read_tmpfs - F.ours_wire_tmpfs, 3))
end
p("| of which hashing (SHA-256 chain of 2 rows in 2 files) | %s | bench/overhead.c hash, on the run's own rows |",
  hash_ns > 0 and string.format("%.1f us", hash_ns / 1000) or "n/a")
p("| of which tracing (CURLOPT_VERBOSE + the head-counting debug callback) | %s" ..
  " | bench/overhead.c trace: thread CPU with and without, alternating |",
  trace and string.format("%.1f us", trace.cpu_us_traced - trace.cpu_us_plain) or "n/a")
local function span(v)
  table.sort(v)
  return string.format("%+.0f to %+.0f over %d runs", v[1], v[#v], #v)
end
if F.gap_diff and F.gap_ours_us then
  p("| the emulator's charge for a client's own time: one client's exchange after %d us of busy work (the" ..
    " floor's own time, above) and after %d us (ours'), less after none | %+.1f us at ours' (%s), %+.1f us at" ..
    " the floor's (%s): %+.1f us more for ours' (%s) | bench/overhead.c gap: one client, the three gaps taking" ..
    " turns |",
    F.gap_floor_us, F.gap_ours_us, F.gap_ours, span(gap_ours_runs), F.gap_floor, span(gap_floor_runs),
    F.gap_diff, span(gap_diff_runs))
end
if F.transport_diff then
  p("| our transport's exchange (core/http.c, its on_wire hook writing a 1500-byte line) less a plain libcurl" ..
    " handle's, on the same emulator | %+.1f us (%s) | bench/overhead.c transport: the two taking turns in one" ..
    " process |",
    F.transport_diff, span(transport_runs))
end
if F.wake_diff and F.wake_gap then
  p("| the waiting CPU's wake-up: one client's exchange waited for by spinning (curl_multi_perform until done)" ..
    " less in poll(2), after %d us of busy work | %+.1f us (%s; the last run's poll exchange %.0f us) |" ..
    " bench/overhead.c wake: the two taking turns block by block; curl and leaselua both wait in poll, and" ..
    " leaselua never spins |",
    F.wake_gap, F.wake_diff, span(wake_runs), F.wake_poll or 0)
end
if cg and cg.ir.ll_run_request then
  local req = cg.ir.ll_run_request
  local function share(name) return cg.ir[name] and string.format("%.0f%%", 100 * cg.ir[name] / req) or "n/a" end
  local sha = (cg.ir.ll_sha256_update or 0) + (cg.ir.ll_sha256_final or 0) + (cg.ir.ll_sha256_new or 0) +
    (cg.ir.ll_sha256_free or 0)
  p("")
  p("Instruction profile (valgrind --tool=callgrind, %d requests, ledger on tmpfs): %.0f k instructions per " ..
    "request in C below the binding, of which the ledger append %s (printing each line once and sealing the " ..
    "row %s, the export form %s, the secret/lease-ID scan %s, SHA-256 %.0f%%: valgrind hides SHA extensions, " ..
    "see the microbenchmark above), the exchange (libcurl, TLS) %s, the model fold %s, the outcome row %s, " ..
    "the intent row %s; handing the row to Lua adds %s.",
    cg.requests, req / cg.requests / 1000,
    cg.ir.ll_ledger_append_row and string.format("%.1f%%", 100 * cg.ir.ll_ledger_append_row / req) or "n/a",
    cg.ir.ll_ledger_seal_spans and
      string.format("%.0f%%", 100 * (cg.ir.ll_ledger_seal_spans + (cg.ir.ll_ledger_print_spans or 0) - sha) / req)
      or "n/a",
    share("ll_sanitize_row_in_place_ids"), share("ll_ledger_scan_line"), 100 * sha / req, share("http_exchange"),
    share("ll_model_apply"), share("ll_row_outcome"), share("ll_row_intent"), share("ll_lua_push_json"))
end
-- What one more read costs, by difference of the two profiles: the run's
-- fixed costs (its TLS handshakes above all) spread over fewer requests
-- in the shorter one, so its shares are not a read's.
local function margin(name)
  local a, b = cg and cg.ir[name], cg_long and cg_long.ir[name]
  if type(a) ~= "number" or type(b) ~= "number" or cg_long.requests <= cg.requests then return nil end
  return (b - a) / (cg_long.requests - cg.requests)
end
local m_req, m_app, m_ex = margin("ll_run_request"), margin("ll_ledger_append_row"), margin("http_exchange")
if m_req and m_app and m_req > 0 then
  p("")
  p("At the margin (the %d-request profile less the %d-request one, over the %d requests between): one more read " ..
    "costs %.0f k instructions in C below the binding, of which the ledger append %.1f%% and the exchange %s; " ..
    "in the longer profile alone, %.0f k a request and %.1f%%.",
    cg_long.requests, cg.requests, cg_long.requests - cg.requests, m_req / 1000, 100 * m_app / m_req,
    m_ex and string.format("%.0f%%", 100 * m_ex / m_req) or "n/a",
    cg_long.ir.ll_run_request / cg_long.requests / 1000,
    100 * (cg_long.ir.ll_ledger_append_row or 0) / cg_long.ir.ll_run_request)
end
p("")
p("Reproduce: `make bench` (full) or `BENCH_QUICK=1 make bench`; raw figures in bench/out/raw.jsonl.")
print(table.concat(out, "\n"))
