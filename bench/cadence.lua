-- The request cadence from bench/cadence.c's "ns bytes" lines: the
-- requests are the longest run of consecutive sends of the most common
-- size (a kept-alive HEAD is one TLS record of one size; the handshake,
-- other requests and the close alert are not); the intervals between
-- them, after `warmup`, at most `n` of them. Prints
-- {"p50":..,"p90":..,"mean":..,"n":..,"requests":..,"record_bytes":..} in ms.
-- Where the file also holds receives ("ns r bytes" lines), each interval
-- is split at the first receive after its request left: "wait" (the
-- request leaving to the first bytes back: server, network, wake-up) and
-- "client" (those bytes to the next request leaving: all the client's
-- own work), their p50 and mean in ms as wait_p50, client_p50, wait_mean
-- and client_mean, over the wait_n intervals that hold a receive (the
-- means add up to those intervals' mean; the p50s need not).
-- Where the sends also carry the process's CPU time ("ns bytes cpu_ns"),
-- each interval's CPU time (what the client spent on the CPU from one
-- request leaving to the next, user and system) as cpu_p50 and cpu_mean
-- in ms, over cpu_n intervals.
-- Usage: lua5.4 bench/cadence.lua FILE WARMUP N
local path, warmup, n = arg[1], tonumber(arg[2]), tonumber(arg[3])
assert(path and warmup and n, "usage: lua5.4 bench/cadence.lua FILE WARMUP N")
local t, sz, rt, cpu = {}, {}, {}, {}
for line in io.lines(path) do
  local a, b, c = line:match("^(%d+) (%d+)$")
  if not a then a, b, c = line:match("^(%d+) (%d+) (%d+)$") end
  if a then
    t[#t + 1], sz[#sz + 1] = tonumber(a), tonumber(b)
    cpu[#t] = tonumber(c)
  else
    local r = line:match("^(%d+) r %d+$")
    if r then rt[#rt + 1] = tonumber(r) end
  end
end
local count, mode = {}, nil
for _, s in ipairs(sz) do
  count[s] = (count[s] or 0) + 1
  if not mode or count[s] > count[mode] then mode = s end
end
local best_i, best_len, i = 1, 0, 1
while i <= #sz do
  if sz[i] == mode then
    local j = i
    while j + 1 <= #sz and sz[j + 1] == mode do j = j + 1 end
    if j - i + 1 > best_len then best_i, best_len = i, j - i + 1 end
    i = j + 1
  else
    i = i + 1
  end
end
-- the first receive after ns, from index j on (receives are in time order)
local j = 1
local function first_recv_after(ns)
  while rt[j] and rt[j] <= ns do j = j + 1 end
  return rt[j]
end
local d, wait, client, on_cpu = {}, {}, {}, {}
for k = best_i + warmup, best_i + best_len - 2 do
  if #d >= n then break end
  d[#d + 1] = (t[k + 1] - t[k]) / 1e6
  if cpu[k] and cpu[k + 1] then on_cpu[#on_cpu + 1] = (cpu[k + 1] - cpu[k]) / 1e6 end
  local r = first_recv_after(t[k])
  if r and r < t[k + 1] then
    wait[#wait + 1], client[#client + 1] = (r - t[k]) / 1e6, (t[k + 1] - r) / 1e6
  end
end
if #d == 0 then
  print("null")
  return
end
local function q(v, p)
  table.sort(v)
  return v[math.max(1, math.ceil(p * #v))]
end
local function mean(v)
  local m = 0
  for _, x in ipairs(v) do m = m + x end
  return m / #v
end
local split = ""
if #wait > 0 then
  split = string.format(',"wait_p50":%.4f,"client_p50":%.4f,"wait_mean":%.4f,"client_mean":%.4f,"wait_n":%d',
    q(wait, 0.5), q(client, 0.5), mean(wait), mean(client), #wait)
end
if #on_cpu > 0 then
  split = split .. string.format(',"cpu_p50":%.4f,"cpu_mean":%.4f,"cpu_n":%d', q(on_cpu, 0.5), mean(on_cpu), #on_cpu)
end
print(string.format('{"p50":%.4f,"p90":%.4f,"mean":%.4f,"n":%d,"requests":%d,"record_bytes":%d%s}',
  q(d, 0.5), q(d, 0.9), mean(d), #d, best_len, mode or 0, split))
