-- The request cadence from bench/cadence.c's "ns bytes" lines: the
-- requests are the longest run of consecutive sends of the most common
-- size (a kept-alive HEAD is one TLS record of one size; the handshake,
-- other requests and the close alert are not); the intervals between
-- them, after `warmup`, at most `n` of them. Prints
-- {"p50":..,"p90":..,"mean":..,"n":..,"requests":..,"record_bytes":..} in ms.
-- Usage: lua5.4 bench/cadence.lua FILE WARMUP N
local path, warmup, n = arg[1], tonumber(arg[2]), tonumber(arg[3])
assert(path and warmup and n, "usage: lua5.4 bench/cadence.lua FILE WARMUP N")
local t, sz = {}, {}
for line in io.lines(path) do
  local a, b = line:match("^(%d+) (%d+)$")
  if a then
    t[#t + 1], sz[#sz + 1] = tonumber(a), tonumber(b)
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
local d = {}
for k = best_i + warmup, best_i + best_len - 2 do
  if #d >= n then break end
  d[#d + 1] = (t[k + 1] - t[k]) / 1e6
end
if #d == 0 then
  print("null")
  return
end
local sum = 0
for _, x in ipairs(d) do sum = sum + x end
table.sort(d)
local function q(p) return d[math.max(1, math.ceil(p * #d))] end
print(string.format('{"p50":%.4f,"p90":%.4f,"mean":%.4f,"n":%d,"requests":%d,"record_bytes":%d}',
  q(0.5), q(0.9), sum / #d, #d, best_len, mode or 0))
