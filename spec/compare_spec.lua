-- `leaselua compare`, offline: the documented 409 variant against the
-- azure-shaped accept (fixtures/documented), replayed into bundles, differ
-- in exactly one step that both have (13: A's stale Put answered 409, not
-- 412) and in the cleanup steps the HOLD run never reached; compare shows
-- exactly that, in text, JSON and HTML, and says plainly when endpoint
-- kinds differ without ever calling anything qualified.
local helper = require "helper"
local bd = require "support.bundles"
local cjson = require "cjson"

local B = {}

local function compare(args)
  local argv = { "compare" }
  for _, a in ipairs(args) do argv[#argv + 1] = a end
  return helper.run(argv)
end

local function compare_json(args)
  local a = { "--json" }
  for _, x in ipairs(args) do a[#a + 1] = x end
  local rc, out, err = compare(a)
  local list = {}
  for line in out:gmatch("[^\n]+") do list[#list + 1] = cjson.decode(line) end
  return rc, list, err
end

setup(function()
  local d = helper.tmpdir()
  B.accept = bd.replay("documented/azure-main-handoff-accept", d .. "/accept")
  B.p409 = bd.replay("documented/put-409-discrepancy", d .. "/put-409")
  B.copy = d .. "/accept-copy"
  assert(bd.sh(("cp -a %s %s"):format(helper.quote(B.accept), helper.quote(B.copy))) == 0)
  B.azure = bd.relabel(B.accept, d .. "/azure-accept")
  B.tampered = bd.relabel(B.accept, d .. "/tampered")
  local f = B.tampered .. "/export/ledger.jsonl"
  helper.write(f, (assert(helper.read(f)):gsub('"http_status":412', '"http_status":409', 1)))
  B.dir = d
end)

teardown(function()
  helper.cleanup()
end)

local CLEANUP = { "14 release B", "14 confirm release", "14 delete", "14 confirm absent" }

describe("leaselua compare", function()
  it("shows exactly the one step that differs, in text", function()
    local rc, out, err = compare { B.accept, B.p409 }
    assert.are.equal(1, rc, err)
    assert.are.equal(1, helper.count(out, "\nchanged  "))
    assert.matches("\nchanged  13 rev 6 with A: Put Blob (lifecycle 1)\n", out, 1, true)
    assert.matches("status +412 %-> 409\n", out)
    assert.matches("unexplained discrepancy +%- %-> documented 412 blob%-operation lease family, observed 409 " ..
      "LeaseIdMismatchWithBlobOperation\n", out)
    assert.matches("compare: 30 steps in both: 1 changed, 29 the same; 4 only in A, 0 only in B", out, 1, true)
    for _, step in ipairs(CLEANUP) do assert.matches("only A   " .. step, out, 1, true) end
    assert.matches("bundle   decision +ACCEPT %-> HOLD", out)
    assert.is_nil(out:find("QUALIFIED", 1, true))
    assert.matches("not a qualification", out, 1, true)
  end)

  it("shows exactly that step in JSON", function()
    local rc, list = compare_json { B.accept, B.p409 }
    assert.are.equal(1, rc)
    assert.are.equal(1, #list)
    local d = list[1]
    assert.are.equal("leaselua-compare-v1", d.format)
    assert.is_true(d.compared)
    assert.is_false(d.endpoint_kind_differs)
    assert.are.equal(1, #d.changed)
    local c = d.changed[1]
    assert.are.same({ "13 rev 6 with A", "Put Blob", 1 }, { c.step, c.operation, c.lifecycle })
    assert.are.same({
      { field = "status", a = "412", b = "409" },
      { field = "unexplained discrepancy", a = "-",
        b = "documented 412 blob-operation lease family, observed 409 LeaseIdMismatchWithBlobOperation" },
    }, c.fields)
    assert.are.equal(29, d.same)
    local only = {}
    for _, v in ipairs(d.only_a) do only[#only + 1] = v.step end
    assert.are.same(CLEANUP, only)
    assert.are.same({}, d.only_b)
    assert.are.same({ "ACCEPT", "HOLD" }, { d.a.decision, d.b.decision })
  end)

  -- Each run is a new Lua state with its own hash seed, so a table's
  -- traversal order differs from run to run; the printed JSON must not.
  it("prints the same JSON bytes every run, each object's keys in order", function()
    local first
    for _ = 1, 6 do
      local rc, out = compare { "--json", B.accept, B.p409 }
      assert.are.equal(1, rc)
      first = first or out
      assert.are.equal(first, out)
    end
    -- the top-level keys, read off the text at depth 1
    local keys, depth, i = {}, 0, 1
    while i <= #first do
      local ch = first:sub(i, i)
      if ch == "{" or ch == "[" then depth = depth + 1
      elseif ch == "}" or ch == "]" then depth = depth - 1
      elseif ch == '"' then
        local j = i + 1
        while first:sub(j, j) ~= '"' do j = j + (first:sub(j, j) == "\\" and 2 or 1) end
        if depth == 1 and first:sub(j + 1, j + 1) == ":" then keys[#keys + 1] = first:sub(i + 1, j - 1) end
        i = j
      end
      i = i + 1
    end
    assert.is_true(#keys > 5, first)
    local sorted = { table.unpack(keys) }
    table.sort(sorted)
    assert.are.same(sorted, keys)
  end)

  it("finds no behavioural difference between a bundle and its copy", function()
    local rc, out = compare { B.accept, B.copy }
    assert.are.equal(0, rc)
    assert.matches("0 changed, 34 the same; 0 only in A, 0 only in B", out, 1, true)
    assert.is_nil(out:find("differ in endpoint kind", 1, true))
  end)

  it("says plainly when the endpoint kinds differ, and never qualifies", function()
    local rc, out = compare { B.accept, B.azure }
    assert.are.equal(0, rc) -- the same behaviour, step by step
    assert.matches("compare: the bundles differ in endpoint kind: A is replay (documented), B is azure", out, 1, true)
    assert.matches("a behavioural comparison, not a qualification", out, 1, true)
    assert.is_nil(out:find("QUALIFIED", 1, true))
    local _, list = compare_json { B.accept, B.azure }
    assert.is_true(list[1].endpoint_kind_differs)
    assert.are.same({ { field = "account host", a = "replay.invalid", b = bd.AZURE_HOST } }, list[1].bundle)
  end)

  it("compares nothing of a bundle verify finds inconsistent: exit 2", function()
    local rc, out = compare { B.accept, B.tampered }
    assert.are.equal(2, rc)
    assert.matches("compare: B " .. B.tampered .. ": INCONSISTENT", out, 1, true)
    assert.matches("not compared step by step", out, 1, true)
    assert.is_nil(out:find("\nchanged ", 1, true))
    local _, list = compare_json { B.accept, B.tampered }
    assert.is_false(list[1].compared)
    assert.are.same({}, list[1].changed)
  end)

  it("compares the first bundle with each other one, one JSON line each", function()
    local rc, list = compare_json { B.accept, B.copy, B.p409 }
    assert.are.equal(1, rc)
    assert.are.equal(2, #list)
    assert.are.same({ B.copy, B.p409 }, { list[1].b.dir, list[2].b.dir })
    assert.are.same({ 0, 1 }, { #list[1].changed, #list[2].changed })
  end)

  it("writes the comparison as an HTML page and as a section of the report", function()
    local page = B.dir .. "/compare.html"
    local rc = compare { "--html", page, B.accept, B.p409 }
    assert.are.equal(1, rc)
    local html = assert(helper.read(page))
    assert.matches("<h2>Compared with another bundle</h2>", html, 1, true)
    assert.matches("<td>13 rev 6 with A: Put Blob (lifecycle 1)</td><td>status</td><td>412</td><td>409</td>", html,
      1, true)
    local out = B.dir .. "/report"
    local rrc, _, err = helper.run { "report", B.accept, "--out", out, "--compare", B.p409 }
    assert.are.equal(0, rrc, err)
    local report = assert(helper.read(out .. "/report.html"))
    assert.matches('<section class="compare"><h2>Compared with another bundle</h2>', report, 1, true)
    assert.matches("<td>13 rev 6 with A: Put Blob (lifecycle 1)</td><td>status</td>", report, 1, true)
    -- without --compare the report has no such section
    local rrc2 = helper.run { "report", B.accept, "--out", B.dir .. "/report2" }
    assert.are.equal(0, rrc2)
    assert.is_nil(assert(helper.read(B.dir .. "/report2/report.html")):find("Compared with another", 1, true))
  end)

  it("refuses bad input with one line and exit 64", function()
    local rc, _, err = compare { B.accept }
    assert.are.equal(64, rc)
    assert.matches("needs two bundles", err, 1, true)
    rc, _, err = compare { B.accept, B.dir }
    assert.are.equal(64, rc)
    assert.matches("not an evidence directory", err, 1, true)
    rc, _, err = helper.run { "report", B.accept, "--out", B.dir .. "/r3", "--compare", B.dir }
    assert.are.equal(64, rc)
    assert.matches("not an evidence directory", err, 1, true)
  end)
end)

describe("lib.compare.diff on two API versions", function()
  require "leaselua" -- lib.* in package.preload
  local cmp = require "lib.compare"
  local function summary(requested, returned, step_requested)
    return { dir = "d-" .. requested, consistent = true, endpoint_kind = "emulator", account_host = "127.0.0.1",
      api_version = requested, returned_versions = { returned }, decision = "ACCEPT", window = "REPRODUCED",
      steps = { { key = "1\31s\31Put Blob\31request\31" .. "1", kind = "request", epoch = 1, step = "s",
        operation = "Put Blob", n = 1, status = "201", class = "ACCEPTED_WRITE",
        requested = step_requested or requested, returned = returned, discrepancy = {}, explained = {} } } }
  end

  it("says the requested version once, per bundle, and the same returned version is no difference", function()
    local d = cmp.diff(summary("2021-12-02", "2025-01-05"), summary("2023-11-03", "2025-01-05"))
    assert.are.same({ { field = "API version requested", a = "2021-12-02", b = "2023-11-03" } }, d.bundle)
    assert.are.same({}, d.changed)
    assert.are.equal(1, d.same)
    assert.is_false(d.differs)
    assert.matches("bundle   API version requested      2021-12-02 -> 2023-11-03", cmp.text(d), 1, true)
  end)

  it("shows a step that did not send its bundle's version, and a returned version that changed", function()
    local d = cmp.diff(summary("2021-12-02", "2021-12-02"), summary("2023-11-03", "2023-11-03", "2020-02-10"))
    assert.are.same({
      { field = "x-ms-version requested", a = "2021-12-02", b = "2020-02-10" },
      { field = "x-ms-version returned", a = "2021-12-02", b = "2023-11-03" },
    }, d.changed[1].fields)
    assert.is_true(d.differs)
  end)

  it("shows a control byte of a script's label as \\xHH, never raw (helper-27)", function()
    -- a step label that would erase this output's line and forge another
    local forged = "s\27[2K\r\27[1A\27[2Kbundle   decision HOLD -> ACCEPT\n"
    local a, b = summary("2021-12-02", "2021-12-02"), summary("2021-12-02", "2021-12-02")
    b.steps[1].step, b.steps[1].key = forged, "1\31" .. forged .. "\31Put Blob\31request\31" .. "1"
    a.steps[1].step, a.steps[1].key = forged, b.steps[1].key
    b.steps[1].status = "412"
    local text = cmp.text(cmp.diff(a, b))
    assert.falsy(text:find("[\27\r]"), text)
    assert.truthy(text:find("s\\x1b[2K\\x0d\\x1b[1A", 1, true), text)
    for line in text:gmatch("[^\n]+") do assert.falsy(line:find("^bundle   decision"), text) end
  end)
end)
