-- bench/cadence.lua: the filter that picks a client's requests out of the
-- sends bench/cadence.c recorded. The benchmark's request-to-request
-- figure for both curl and leaselua rests on it, so it is tried here on
-- sends whose answer is known: a handshake, other requests, the reads at
-- known intervals, a close alert.
local cjson = require "cjson"

local function run_filter(lines, warmup, n)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(table.concat(lines, "\n"), "\n")
  f:close()
  local p = assert(io.popen(string.format("lua5.4 bench/cadence.lua %s %d %d", path, warmup, n)))
  local out = p:read("a")
  p:close()
  os.remove(path)
  return out
end

-- sends: {ns, bytes}...
local function lines_of(sends)
  local l = {}
  for i, s in ipairs(sends) do l[i] = string.format("%d %d", s[1], s[2]) end
  return l
end

describe("bench/cadence.lua", function()
  it("takes the longest run of the modal record size, after the warm-up", function()
    local s, t = {}, 0
    local function send(dt_ms, bytes)
      t = t + math.floor(dt_ms * 1e6)
      s[#s + 1] = { t, bytes }
    end
    send(0, 517) -- ClientHello
    send(3, 80) -- Finished
    send(1, 900) -- a PUT of another size
    for i = 1, 30 do send(i <= 10 and 5 or (i % 2 == 0 and 1 or 2), 579) end
    send(50, 24) -- the close alert, long after
    local d = cjson.decode(run_filter(lines_of(s), 10, 100))
    assert.are.equal(579, d.record_bytes)
    assert.are.equal(30, d.requests)
    -- intervals from send 11 to send 30: 19 of them, ten of 1 ms and nine
    -- of 2 ms,
    -- the 5 ms warm-up and the 50 ms alert left out
    assert.are.equal(19, d.n)
    assert.is_true(math.abs(d.p90 - 2) < 1e-6)
    assert.is_true(math.abs(d.mean - (10 * 1 + 9 * 2) / 19) < 1e-3)
  end)

  it("caps the intervals at n", function()
    local s = {}
    for i = 1, 50 do s[i] = { i * 1000000, 600 } end
    local d = cjson.decode(run_filter(lines_of(s), 10, 5))
    assert.are.equal(5, d.n)
    assert.is_true(math.abs(d.p50 - 1) < 1e-6)
  end)

  it("splits each interval at the first receive after its request: the wait, then the client's own time", function()
    -- 25 requests at intervals of 1, 2 or 3 ms; request i answered after
    -- a wait of 0.3 to 0.9 ms, in two receives (the record's header, then
    -- its body); request 15 gets no answer before the next leaves, and a
    -- stray receive at the very ns request 13 leaves is not its answer
    local l, t, sends = {}, 0, {}
    local gap = { 1, 3, 2 }
    local function wait_of(i) return (3 + (i % 4) * 2) / 10 end
    for i = 1, 25 do
      t = t + gap[i % 3 + 1] * 1000000
      sends[i] = t
      l[#l + 1] = string.format("%d 600", t)
      if i == 13 then l[#l + 1] = string.format("%d r 31", t) end
      if i ~= 15 then
        local w = math.floor(wait_of(i) * 1e6)
        l[#l + 1] = string.format("%d r 5", t + w)
        l[#l + 1] = string.format("%d r 760", t + w + 10000)
      end
    end
    -- what the split must find, from how the trace was made: the intervals
    -- after the 10 warm-up requests, 11 to 24
    local waits, clients = {}, {}
    for i = 11, 24 do
      if i ~= 15 then
        local w = math.floor(wait_of(i) * 1e6)
        waits[#waits + 1] = w / 1e6
        clients[#clients + 1] = (sends[i + 1] - sends[i] - w) / 1e6
      end
    end
    local function mean(v)
      local m = 0
      for _, x in ipairs(v) do m = m + x end
      return m / #v
    end
    local function p50(v)
      local c = { table.unpack(v) }
      table.sort(c)
      return c[math.ceil(#c / 2)]
    end
    local d = cjson.decode(run_filter(l, 10, 100))
    assert.are.equal(600, d.record_bytes)
    assert.are.equal(25, d.requests)
    assert.are.equal(14, d.n)
    assert.are.equal(13, d.wait_n) -- request 15's interval holds no answer
    assert.is_true(math.abs(d.wait_mean - mean(waits)) < 1e-4, d.wait_mean .. " " .. mean(waits))
    assert.is_true(math.abs(d.client_mean - mean(clients)) < 1e-4, d.client_mean .. " " .. mean(clients))
    assert.is_true(math.abs(d.wait_p50 - p50(waits)) < 1e-4, d.wait_p50 .. " " .. p50(waits))
    assert.is_true(math.abs(d.client_p50 - p50(clients)) < 1e-4, d.client_p50 .. " " .. p50(clients))
  end)

  it("gives no split for a file without receives", function()
    local s = {}
    for i = 1, 30 do s[i] = { i * 1000000, 600 } end
    local d = cjson.decode(run_filter(lines_of(s), 10, 100))
    assert.are.equal(19, d.n)
    assert.is_nil(d.wait_p50)
    assert.is_nil(d.client_p50)
    assert.is_nil(d.wait_mean)
    assert.is_nil(d.wait_n)
  end)

  it("gives each interval's CPU time where the sends carry it, and none where they do not", function()
    -- a handshake of other sizes first, then 30 requests 1 ms apart, each
    -- answered by two receives; the process spends 0.1, 0.2 or 0.4 ms on
    -- the CPU between request i and i + 1 (cost[i % 3 + 1]), and every
    -- send, of any size, carries the CPU clock; request 20's clock could
    -- not be read, so neither interval around it has a CPU time
    local l, t, c, cost = {}, 0, 0, { 0.1, 0.2, 0.4 }
    l[#l + 1] = string.format("%d 517 %d", t, c) -- ClientHello
    l[#l + 1] = string.format("%d r 4000", t + 500000)
    c = c + 777000 -- the handshake's own CPU, in no interval
    l[#l + 1] = string.format("%d 80 %d", t + 600000, c) -- Finished
    local spent = {}
    for i = 1, 30 do
      t = t + 1000000
      if i == 20 then
        l[#l + 1] = string.format("%d 600", t)
      else
        l[#l + 1] = string.format("%d 600 %d", t, c)
      end
      l[#l + 1] = string.format("%d r 5", t + 300000)
      l[#l + 1] = string.format("%d r 760", t + 310000)
      spent[i] = cost[i % 3 + 1]
      c = c + math.floor(spent[i] * 1e6)
    end
    local want = {}
    for i = 11, 29 do
      if i ~= 19 and i ~= 20 then want[#want + 1] = spent[i] end
    end
    local m = 0
    for _, x in ipairs(want) do m = m + x end
    m = m / #want
    table.sort(want)
    local d = cjson.decode(run_filter(l, 10, 100))
    assert.are.equal(30, d.requests)
    assert.are.equal(19, d.n)
    assert.are.equal(17, d.cpu_n)
    assert.is_true(math.abs(d.cpu_mean - m) < 1e-4, d.cpu_mean .. " " .. m)
    assert.is_true(math.abs(d.cpu_p50 - want[math.ceil(#want / 2)]) < 1e-4, d.cpu_p50)
    assert.is_true(math.abs(d.p50 - 1) < 1e-6)
    assert.are.equal(19, d.wait_n)
    local bare = {}
    for i = 1, 30 do bare[i] = { i * 1000000, 600 } end
    local b = cjson.decode(run_filter(lines_of(bare), 10, 100))
    assert.is_nil(b.cpu_p50)
    assert.is_nil(b.cpu_n)
  end)

  it("says null when no interval is left after the warm-up", function()
    local out = run_filter(lines_of { { 1, 600 }, { 2, 600 } }, 10, 5)
    assert.are.equal("null", out:match("%S+"))
  end)
end)
