-- `leaselua verify DIR` against tampered copies of a real evidence
-- directory: every change is caught with exit 2 and the row it touched.
local helper = require "helper"
local slow = require "support.slow"
local ll = require "leaselua"

local SCRIPT = [[
local ll = require "leaselua"
local run = ll.open {}
run:declare(0, "A")
local A = run:writer("A")
A:acquire { duration = -1 }
A:put(0)
run:read()
print(run:finish().decision)
]]

local GENESIS = string.rep("0", 64)
local TAIL = #',"row_hash":"' + 64 + #'"}'

-- Rewrites prev_hash and row_hash of every line so the chain is valid
-- again (what a forger with write access could do).
local function rechain(lines)
  local prev = GENESIS
  for i, line in ipairs(lines) do
    line = line:gsub('"prev_hash":"%x+"', '"prev_hash":"' .. prev .. '"', 1)
    local head = line:sub(1, #line - TAIL)
    local hash = ll.sha256(prev .. head .. "}")
    lines[i] = head .. ',"row_hash":"' .. hash .. '"}'
    prev = hash
  end
  return lines
end

local function write_lines(path, lines)
  helper.write(path, table.concat(lines, "\n") .. "\n")
end

-- Changes one letter or digit at or after the middle of the line into
-- another of its kind, keeping the JSON well formed.
local function flip_byte(line)
  for i = #line // 2, #line do
    local c = line:sub(i, i)
    local repl
    if c:match("%d") then
      repl = tostring((tonumber(c) + 1) % 10)
    elseif c:match("[a-y]") or c:match("[A-Y]") then
      repl = string.char(c:byte() + 1)
    elseif c == "z" or c == "Z" then
      repl = string.char(c:byte() - 25)
    end
    if repl then return line:sub(1, i - 1) .. repl .. line:sub(i + 1) end
  end
  error("nothing to flip")
end

-- The index of the first line holding every needle.
local function index_of(lines, ...)
  local needles = { ... }
  for i, line in ipairs(lines) do
    local all = true
    for _, needle in ipairs(needles) do
      all = all and line:find(needle, 1, true) ~= nil
    end
    if all then return i end
  end
  error("no line holds " .. table.concat(needles, " and "))
end

local PUT_OUTCOME = { '"record":"outcome"', '"operation":"Put Blob"', '"result_classification":"ACCEPTED_WRITE"' }

-- Rewrites the Put Blob outcome's class in the ledger at path, and its
-- chain; returns the row number.
local function reclass(path)
  local lines = slow.lines(path)
  local n = index_of(lines, table.unpack(PUT_OUTCOME))
  lines[n] = lines[n]:gsub('"result_classification":"ACCEPTED_WRITE"',
    '"result_classification":"EXPECTED_REJECTION"', 1)
  write_lines(path, rechain(lines))
  return n
end

describe("verify on tampered evidence", function()
  local server, original, plines, elines, middle

  lazy_setup(function()
    server = slow.start { lifetime_ms = 40000 }
    original = helper.tmpdir() .. "/evidence"
    local args, env = slow.operator(server, { script = slow.script(SCRIPT), evidence = original,
      manifest = helper.manifest_table })
    local rc, out, err = slow.run_host(args, { env = env })
    assert(rc == 2 and out:find("HOLD", 1, true), "could not produce evidence: " .. rc .. " " .. out .. err)
    slow.stop(server)
    plines = slow.lines(original .. "/protected/ledger.jsonl")
    elines = slow.lines(original .. "/export/ledger.jsonl")
    assert(#plines == #elines and #plines >= 7, "unexpected ledger length " .. #plines)
    middle = #elines // 2 + 1
  end)

  lazy_teardown(function()
    slow.stop(server)
    helper.cleanup()
  end)

  local function copy()
    local dir = helper.tmpdir() .. "/copy"
    assert(os.execute("cp -a " .. helper.quote(original) .. " " .. helper.quote(dir)))
    return dir
  end

  local function verify(dir)
    return slow.run_host({ "verify", dir })
  end

  local function assert_row(rc, err, n, what)
    assert.equals(2, rc, err)
    assert.truthy(err:find("INCONSISTENT at row " .. n .. ":", 1, true), err)
    if what then assert.truthy(err:find(what, 1, true), err) end
  end

  it("accepts an untampered copy", function()
    local rc, out, err = verify(copy())
    assert.equals(0, rc, err)
    assert.truthy(out:find("export matches the protected ledger", 1, true), out)
    assert.truthy(out:find("decision HOLD", 1, true), out)
  end)

  it("the real evidence holds a lease ID in the protected ledger only", function()
    local p = helper.read(original .. "/protected/ledger.jsonl")
    local e = helper.read(original .. "/export/ledger.jsonl")
    assert.truthy(p:find('"lease_real_id":"%x+%-', 1))
    assert.falsy(e:find("lease_real_id", 1, true))
  end)

  it("catches one flipped byte in a middle export row", function()
    local dir = copy()
    local lines = slow.lines(dir .. "/export/ledger.jsonl")
    lines[middle] = flip_byte(lines[middle])
    write_lines(dir .. "/export/ledger.jsonl", lines)
    local rc, _, err = verify(dir)
    assert_row(rc, err, middle, "export: chain broken")
  end)

  it("catches one flipped byte in a middle protected row", function()
    local dir = copy()
    local lines = slow.lines(dir .. "/protected/ledger.jsonl")
    lines[middle] = flip_byte(lines[middle])
    write_lines(dir .. "/protected/ledger.jsonl", lines)
    local rc, _, err = verify(dir)
    assert_row(rc, err, middle, "protected: chain broken")
  end)

  it("catches a deleted middle export row", function()
    local dir = copy()
    local lines = slow.lines(dir .. "/export/ledger.jsonl")
    table.remove(lines, middle)
    write_lines(dir .. "/export/ledger.jsonl", lines)
    local rc, _, err = verify(dir)
    assert_row(rc, err, middle, "export: chain broken")
  end)

  it("catches a deleted last export row (the rest is still a valid chain)", function()
    local dir = copy()
    local lines = slow.lines(dir .. "/export/ledger.jsonl")
    table.remove(lines)
    write_lines(dir .. "/export/ledger.jsonl", lines)
    local rc, _, err = verify(dir)
    assert_row(rc, err, #elines, "differ in length")
  end)

  it("catches a torn last line", function()
    local dir = copy()
    local text = helper.read(dir .. "/export/ledger.jsonl")
    helper.write(dir .. "/export/ledger.jsonl", text:sub(1, #text - 40))
    local rc, _, err = verify(dir)
    assert_row(rc, err, #elines, "truncated last line")
  end)

  it("catches a class edited in the export only, even with its chain rewritten", function()
    local dir = copy()
    local n = reclass(dir .. "/export/ledger.jsonl")
    assert.is_table(ll.ledger(dir)) -- the export chain alone is valid again
    local rc, _, err = verify(dir)
    assert_row(rc, err, n, "not the sanitized protected row")
  end)

  it("catches a class edited in both ledgers with both chains rewritten", function()
    local dir = copy()
    local n = reclass(dir .. "/protected/ledger.jsonl")
    assert.equals(n, reclass(dir .. "/export/ledger.jsonl"))
    -- both chains and the sanitized comparison hold: re-deriving the
    -- classes from the rows catches it
    local rc, _, err = verify(dir)
    assert_row(rc, err, n, "re-derivation")
    assert.truthy(err:find("result_classification", 1, true), err)
  end)

  it("catches a rewritten class from the export alone", function()
    local dir = copy()
    assert(os.execute("rm -rf " .. helper.quote(dir .. "/protected")))
    local n = reclass(dir .. "/export/ledger.jsonl")
    local rc, _, err = verify(dir)
    assert_row(rc, err, n, "re-derivation")
  end)

  it("catches a duplicate key that hides a rewritten class from the export alone", function()
    local dir = copy()
    assert(os.execute("rm -rf " .. helper.quote(dir .. "/protected")))
    local path = dir .. "/export/ledger.jsonl"
    local lines = slow.lines(path)
    local n = index_of(lines, table.unpack(PUT_OUTCOME))
    -- cJSON reads the first of two equal keys, most JSON readers the last
    lines[n] = lines[n]:gsub(',"prev_hash"', ',"result_classification":"EXPECTED_REJECTION",' ..
      '"http_status":412,"prev_hash"', 1)
    write_lines(path, rechain(lines))
    -- the reader refuses such a row instead of picking one of the values
    local rows, lerr = ll.ledger(dir)
    assert.is_nil(rows)
    assert.truthy(tostring(lerr):find("twice", 1, true), tostring(lerr))
    local rc, _, err = verify(dir)
    assert_row(rc, err, n)
  end)

  it("checks the export alone when the protected ledger is gone", function()
    local dir = copy()
    assert(os.execute("rm -rf " .. helper.quote(dir .. "/protected")))
    local rc, out, err = verify(dir)
    assert.equals(0, rc, err)
    assert.truthy(out:find("export only", 1, true), out)
    -- and a flipped byte is still caught without it
    local lines = slow.lines(dir .. "/export/ledger.jsonl")
    lines[middle] = flip_byte(lines[middle])
    write_lines(dir .. "/export/ledger.jsonl", lines)
    local rc2, _, err2 = verify(dir)
    assert_row(rc2, err2, middle, "export: chain broken")
  end)
end)
