-- `leaselua verify DIR` against tampered copies of a real evidence
-- directory: every change is caught with exit 2 and the row it touched.
local helper = require "helper"
local slow = require "support.slow"
local ll = require "leaselua"

local SCRIPT = [[
local ll = require "leaselua"
local run = ll.open {}
run:declare(0, "A")
run:declare(1, "A")
local A = run:writer("A")
run:unbound("A"):put(0)
run:read()
A:acquire { duration = -1 }
A:put(1)
run:read()
print(run:finish().decision)
]]

-- Rewrites prev_hash and row_hash of every line so the chain is valid
-- again (what a forger with write access could do).
local rechain = require("support.ledger_builder").rechain

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

  local function verify(dir, flag)
    return slow.run_host(flag and { "verify", flag, dir } or { "verify", dir })
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
    local rc, _, err = verify(dir, "--export-only")
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
    local rc, _, err = verify(dir, "--export-only")
    assert_row(rc, err, n)
  end)

  it("checks the export alone only when asked (--export-only), and says the protected ledger was not checked",
    function()
      local dir = copy()
      assert(os.execute("rm -rf " .. helper.quote(dir .. "/protected")))
      -- not asked for: a missing protected ledger is no silent downgrade
      local rc0, out0, err0 = verify(dir)
      assert.equals(64, rc0, out0 .. err0)
      assert.truthy(err0:find("no protected ledger", 1, true), err0)
      assert.truthy(err0:find("--export-only", 1, true), err0)
      assert.equals("", out0)
      local rc, out, err = verify(dir, "--export-only")
      assert.equals(0, rc, err)
      assert.truthy(out:find("export only: the protected ledger was not checked", 1, true), out)
      assert.falsy(out:find("matches the protected ledger", 1, true), out)
      -- and a flipped byte is still caught without it
      local lines = slow.lines(dir .. "/export/ledger.jsonl")
      lines[middle] = flip_byte(lines[middle])
      write_lines(dir .. "/export/ledger.jsonl", lines)
      local rc2, _, err2 = verify(dir, "--export-only")
      assert_row(rc2, err2, middle, "export: chain broken")
    end)

  -- The protected ledger must be the run's own: a real file, holding the
  -- real lease IDs that the export replaced.
  local function refused(dir, what)
    local rc, out, err = verify(dir)
    assert.equals(2, rc, out .. err)
    assert.truthy(err:find("INCONSISTENT", 1, true), err)
    assert.truthy(err:find(what, 1, true), err)
    assert.falsy(out:find("matches the protected ledger", 1, true), out)
  end

  it("refuses a copy of the export standing in for the protected ledger", function()
    local dir = copy()
    assert(os.execute(string.format("cp %s %s", helper.quote(dir .. "/export/ledger.jsonl"),
      helper.quote(dir .. "/protected/ledger.jsonl"))))
    refused(dir, "holds no real lease ID: this is not the run's protected ledger (a copy of the export?)")
  end)

  it("refuses a copy of the export even when its lease_bind rows are dropped from both", function()
    -- no binding left to miss: the request rows still lack the real IDs
    local dir = copy()
    for _, f in ipairs { "/export/ledger.jsonl", "/protected/ledger.jsonl" } do
      local kept = {}
      for _, line in ipairs(slow.lines(dir .. "/export/ledger.jsonl")) do
        if not line:find('"record":"lease_bind"', 1, true) then
          kept[#kept + 1] = line:gsub('"seq":%d+', '"seq":' .. (#kept + 1), 1)
        end
      end
      write_lines(dir .. f, rechain(kept))
    end
    refused(dir, "has no lease_real_id field: this is not the run's protected ledger")
  end)

  it("catches decision.json edited to ACCEPT beside a HOLD ledger (helper-26)", function()
    local dir = copy()
    local text = helper.read(dir .. "/decision.json")
    local edited, n = text:gsub('("decision":%s*)"HOLD"', '%1"ACCEPT"', 1)
    assert.are.equal(1, n, text)
    helper.write(dir .. "/decision.json", edited)
    local rc, out, err = verify(dir)
    assert.equals(2, rc, out .. err)
    assert.truthy(err:find("decision.json is not the export's last decision row", 1, true), err)
    rc, out, err = verify(dir, "--export-only")
    assert.equals(2, rc, out .. err)
    -- and one left where the ledger holds no decision at all
    dir = copy()
    for _, f in ipairs { "/export/ledger.jsonl", "/protected/ledger.jsonl" } do
      local kept = {}
      for _, line in ipairs(slow.lines(dir .. f)) do
        if not line:find('"record":"decision"', 1, true) then kept[#kept + 1] = line end
      end
      write_lines(dir .. f, rechain(kept))
    end
    rc, out, err = verify(dir)
    assert.equals(2, rc, out .. err)
    assert.truthy(err:find("decision.json is present, but the ledger holds no decision row", 1, true), err)
  end)

  it("never prints a lease ID it quotes from a tampered protected row", function()
    -- the real ID written where verify quotes an alias: refused, and no
    -- 16 digits of it on stderr, in --json or in the JUnit file
    local dir = copy()
    local path = dir .. "/protected/ledger.jsonl"
    local lines = slow.lines(path)
    local n, id
    for i, line in ipairs(lines) do
      id = line:find('"record":"intent"', 1, true) and line:match('"lease_real_id":"([%x%-]+)"')
      if id then n = i break end
    end
    assert(n, "no intent row with a lease ID")
    lines[n] = lines[n]:gsub('"lease_alias_supplied":"[^"]*"', '"lease_alias_supplied":"' .. id .. '"', 1)
    write_lines(path, rechain(lines))
    local junit = dir .. "/verify.xml"
    local rc, out, err = slow.run_host { "verify", "--json", "--junit", junit, dir }
    assert.equals(2, rc, out .. err)
    assert.truthy(err:find("INCONSISTENT at row " .. n .. ":", 1, true), err)
    assert.truthy(err:find("alias <withheld>", 1, true), err)
    local flat = id:gsub("%-", ""):lower()
    for _, text in ipairs { out, err, helper.read(junit) } do
      local digits = text:lower():gsub("%-", "")
      for k = 1, #flat - 15 do
        assert.falsy(digits:find(flat:sub(k, k + 15), 1, true), "16 digits of the lease ID printed")
      end
    end
  end)

  it("refuses a symbolic link to the export as the protected ledger", function()
    local dir = copy()
    assert(os.execute("ln -sf ../export/ledger.jsonl " .. helper.quote(dir .. "/protected/ledger.jsonl")))
    refused(dir, "is a symbolic link")
  end)

  it("refuses a protected directory that is a link to the export directory", function()
    local dir = copy()
    assert(os.execute("rm -rf " .. helper.quote(dir .. "/protected") .. " && ln -s export " ..
      helper.quote(dir .. "/protected")))
    refused(dir, "is a symbolic link")
  end)

  it("refuses a hard link of the export as the protected ledger", function()
    local dir = copy()
    assert(os.execute(string.format("ln -f %s %s", helper.quote(dir .. "/export/ledger.jsonl"),
      helper.quote(dir .. "/protected/ledger.jsonl"))))
    refused(dir, "is the export file itself (a hard link)")
  end)

  -- Relabels every endpoint_kind in both ledgers, rewriting both chains:
  -- the rows, the sanitized comparison and the classes still agree.
  local function relabel(dir, kind, extra)
    for _, f in ipairs { "/export/ledger.jsonl", "/protected/ledger.jsonl" } do
      local lines = slow.lines(dir .. f)
      for i, line in ipairs(lines) do
        lines[i] = line:gsub('"endpoint_kind":"emulator"', '"endpoint_kind":"' .. kind .. '"' .. (i == 1 and
          extra or ""))
      end
      write_lines(dir .. f, rechain(lines))
    end
    assert.is_table(ll.ledger(dir)) -- the export chain is valid again
  end

  it("refuses an emulator bundle relabelled azure in both ledgers, chains rewritten", function()
    local dir = copy()
    relabel(dir, "azure")
    local rc, out, err = verify(dir)
    assert_row(rc, err, 1, "endpoint_kind is azure but account host 127.0.0.1 is not an Azure Storage blob host")
    assert.equals("", out)
  end)

  it("refuses a relabelled bundle whose manifest declares its loopback host as Azure", function()
    local dir = copy()
    relabel(dir, "azure", ',"declared_azure_host":"127.0.0.1"')
    local _, _, err0 = verify(dir)
    assert.truthy(err0:find("INCONSISTENT at row 1: manifest: declared_azure_host 127.0.0.1", 1, true), err0)
  end)

  it("refuses an emulator bundle relabelled replay (the host is not the replay placeholder)", function()
    local dir = copy()
    relabel(dir, "replay", ',"fixture_label":"emulator"')
    local rc, _, err = verify(dir)
    assert_row(rc, err, 1, "endpoint_kind is replay but account host 127.0.0.1 is not the replay placeholder")
  end)

  it("refuses a bundle relabelled in the manifest row only", function()
    local dir = copy()
    for _, f in ipairs { "/export/ledger.jsonl", "/protected/ledger.jsonl" } do
      local lines = slow.lines(dir .. f)
      lines[1] = lines[1]:gsub('"endpoint_kind":"emulator"', '"endpoint_kind":"azure"', 1)
        :gsub('"account_host":"[^"]*"', '"account_host":"acct.blob.core.windows.net"', 1)
      write_lines(dir .. f, rechain(lines))
    end
    local rc, _, err = verify(dir)
    assert.equals(2, rc, err)
    assert.truthy(err:find("says endpoint_kind emulator, the manifest azure", 1, true), err)
  end)
end)

-- A genuine run with many lease bindings: verify had room for 16, so the
-- 17th ID was never replaced and a real run was called INCONSISTENT.
describe("verify on a genuine run with 20 lease changes #live", function()
  teardown(helper.cleanup)

  it("verifies all 41 lease bindings (the first, and a proposed and an active one per change)", function()
    if not helper.have_live() then
      pending("needs the live Azurite of tools/run-specs.sh")
      return
    end
    local dir = helper.tmpdir() .. "/changes"
    local run = ll.open {
      evidence = dir, manifest = helper.manifest_table,
      account_url = os.getenv("AZURE_STORAGE_ACCOUNT_URL"), container = "lease-handoff-lab",
      blob = helper.unique_blob("changes"), ca_file = os.getenv("LEASELUA_CA_FILE"),
    }
    run:create_container()
    run:declare(0, "A")
    run:lifecycle { reason = "spec: 20 lease changes" }
    local A, U = run:writer("A"), run:unbound("A")
    assert.are.equal(201, U:put(0).http_status)
    run:read()
    assert.are.equal(201, A:acquire { duration = -1 }.http_status)
    for i = 1, 20 do
      local row = A:change()
      assert.are.equal(200, row.http_status, "change " .. i)
    end
    assert.are.equal(200, A:release().http_status)
    run:properties()
    U:delete()
    run:finish()
    run:close()
    local binds, ids = 0, {}
    for _, r in ipairs(helper.rows(dir)) do
      if r.record == "lease_bind" then binds = binds + 1 end
    end
    for id in helper.read(dir .. "/protected/ledger.jsonl"):gmatch('"lease_real_id":"([%x%-]+)"') do ids[id] = true end
    local distinct = 0
    for _ in pairs(ids) do distinct = distinct + 1 end
    assert.are.equal(41, binds)
    assert.are.equal(21, distinct) -- the first ID and one per change
    local rc, out, err = slow.run_host({ "verify", dir })
    assert.are.equal(0, rc, out .. err)
    assert.truthy(out:find("export matches the protected ledger (41 lease bindings)", 1, true), out)
    -- the last ID (the 21st) planted as text in the same row of both
    -- ledgers, chains rewritten: every binding is known, so the sanitized
    -- protected row holds the alias where the export holds the raw ID
    local last
    for id in helper.read(dir .. "/protected/ledger.jsonl"):gmatch('"lease_real_id":"([%x%-]+)"') do last = id end
    local planted = helper.tmpdir() .. "/planted"
    assert(os.execute("cp -a " .. helper.quote(dir) .. " " .. helper.quote(planted)))
    local row
    for _, f in ipairs { "/export/ledger.jsonl", "/protected/ledger.jsonl" } do
      local lines = slow.lines(planted .. f)
      row = #lines - 1
      lines[row] = lines[row]:gsub('"step":"[^"]*"', '"step":"' .. last .. '"', 1)
      helper.write(planted .. f, table.concat(rechain(lines), "\n") .. "\n")
    end
    rc, out, err = slow.run_host({ "verify", planted })
    assert.are.equal(2, rc, out .. err)
    assert.truthy(err:find("INCONSISTENT at row " .. row .. ": export row " .. row ..
      " is not the sanitized protected row", 1, true), err)
  end)
end)
