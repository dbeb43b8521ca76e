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
    local l, t = {}, 0
    for i = 1, 25 do
      t = t + 1000000 -- a request every 1 ms
      l[#l + 1] = string.format("%d 600", t)
      -- its answer 0.7 ms later in two receives (record header, then body);
      -- a larger receive of another size never counts as a send
      l[#l + 1] = string.format("%d r 5", t + 700000)
      l[#l + 1] = string.format("%d r 760", t + 710000)
      if i == 12 then l[#l + 1] = string.format("%d r 9000", t + 800000) end
    end
    local d = cjson.decode(run_filter(l, 10, 100))
    assert.are.equal(600, d.record_bytes)
    assert.are.equal(25, d.requests)
    assert.are.equal(14, d.n)
    assert.are.equal(14, d.wait_n)
    assert.is_true(math.abs(d.p50 - 1) < 1e-6)
    assert.is_true(math.abs(d.wait_p50 - 0.7) < 1e-6)
    assert.is_true(math.abs(d.client_p50 - 0.3) < 1e-6)
  end)

  it("gives no split for a file without receives", function()
    local s = {}
    for i = 1, 30 do s[i] = { i * 1000000, 600 } end
    local d = cjson.decode(run_filter(lines_of(s), 10, 100))
    assert.are.equal(19, d.n)
    assert.is_nil(d.wait_p50)
    assert.is_nil(d.client_p50)
  end)

  it("says null when no interval is left after the warm-up", function()
    local out = run_filter(lines_of { { 1, 600 }, { 2, 600 } }, 10, 5)
    assert.are.equal("null", out:match("%S+"))
  end)
end)
