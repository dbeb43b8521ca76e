-- JUnit XML from `verify --junit` and `qualify --junit`, offline, checked
-- against schemas/junit.xsd with Debian's xmllint (libxml2-utils): each
-- step a test case, an unexplained discrepancy a failure with its reason,
-- a WAIT skipped with its reason; reports deliberately broken fail the
-- schema, so the check can fail; hostile text stays well-formed XML.
local helper = require "helper"
local bd = require "support.bundles"

local q = helper.quote
local XSD = helper.root .. "/schemas/junit.xsd"

local B = {}

-- xmllint's verdict on a file: exit code (0 valid) and its output.
local function validate(path)
  return bd.sh(("xmllint --noout --schema %s %s"):format(q(XSD), q(path)))
end

local function count_outcomes(dir)
  return #helper.outcomes(helper.rows(dir))
end

local function junit_of(dir, extra)
  local path = helper.tmpdir() .. "/junit.xml"
  local argv = { "verify", "--junit", path }
  for _, a in ipairs(extra or {}) do argv[#argv + 1] = a end
  argv[#argv + 1] = dir
  local rc, out, err = helper.run(argv)
  return rc, path, helper.read(path), out, err
end

setup(function()
  local d = helper.tmpdir()
  B.accept = bd.replay("documented/azure-main-handoff-accept", d .. "/accept")
  B.p409 = bd.replay("documented/put-409-discrepancy", d .. "/put-409")
  B.wait = bd.replay("emulator/wait-while-breaking", d .. "/wait", { "--stop-after", "8" })
  B.azure = bd.relabel(B.accept, d .. "/azure")
  B.tampered = bd.relabel(B.accept, d .. "/tampered")
  local f = B.tampered .. "/export/ledger.jsonl"
  helper.write(f, (assert(helper.read(f)):gsub('"ticket":"LAB%-DEMO"', '"ticket":"LAB-DEMX"', 1)))
end)

teardown(function()
  helper.cleanup()
end)

describe("verify --junit", function()
  it("is installed: xmllint is there to check it", function()
    local rc, out = bd.sh("xmllint --version")
    assert.are.equal(0, rc, "xmllint missing: tools/deps.sh installs libxml2-utils\n" .. out)
  end)

  it("writes one test case per step, plus verify and the decision, valid against the XSD", function()
    local rc, path, xml = junit_of(B.accept)
    assert.are.equal(0, rc)
    local vrc, vout = validate(path)
    assert.are.equal(0, vrc, vout)
    local n = count_outcomes(B.accept)
    assert.are.equal(n + 2, helper.count(xml, "<testcase "))
    assert.matches('<testsuites name="leaselua verify" tests="' .. (n + 2) .. '" failures="0" errors="0" skipped="0">',
      xml, 1, true)
    assert.matches('<testcase name="12 rev 5 with B: Put Blob" classname="leaselua.main-handoff.lifecycle1"', xml, 1,
      true)
    assert.matches('<property name="endpoint_kind" value="replay"/>', xml, 1, true)
    assert.is_nil(xml:find("<failure", 1, true))
  end)

  it("makes an unexplained discrepancy a failure with its reason, and HOLD a failed decision", function()
    local rc, path, xml = junit_of(B.p409)
    assert.are.equal(0, rc) -- verify: the evidence is consistent; the run decided HOLD
    assert.are.equal(0, (validate(path)))
    assert.are.equal(2, helper.count(xml, "<failure "))
    local head = '<testcase name="13 rev 6 with A: Put Blob" classname="leaselua.main-handoff.lifecycle1" '
    local at = assert(xml:find(head, 1, true))
    local fail = '<failure message="unexplained discrepancy: documented 412 blob-operation lease family, ' ..
      'observed 409 LeaseIdMismatchWithBlobOperation"'
    -- the failure is that case's first child: after its time="s.mmm">
    assert.are.equal(at + #head + #'time="0.000">\n      ', (xml:find(fail, at, true)))
    assert.matches('<testcase name="decision" classname="leaselua.main-handoff" time="0.000">\n      ' ..
      '<failure message="HOLD: event e0029 (Put Blob): unexplained discrepancy', xml, 1, true)
  end)

  it("reports a WAIT as skipped, with its reason", function()
    local rc, path, xml = junit_of(B.wait)
    assert.are.equal(0, rc)
    assert.are.equal(0, (validate(path)))
    assert.matches('<testcase name="decision" classname="leaselua.main-handoff" time="0.000">\n      ' ..
      '<skipped message="WAIT: latest fresh observation (event e0017) is breaking/locked; the flow needs broken"/>',
      xml, 1, true)
    assert.matches('skipped="1"', xml, 1, true)
  end)

  it("makes an inconsistent bundle one failed case and no steps (exit 2)", function()
    local rc, path, xml = junit_of(B.tampered)
    assert.are.equal(2, rc)
    assert.are.equal(0, (validate(path)))
    assert.are.equal(1, helper.count(xml, "<testcase "))
    assert.matches('<testcase name="verify" classname="leaselua.verify" time="0.000">\n      ' ..
      '<failure message="INCONSISTENT: ', xml, 1, true)
  end)
end)

describe("verify --junit --allowed-signers", function()
  it("agrees with verify: an unsigned bundle is a failed verify case, exit 2", function()
    local _, allowed = bd.keypair(helper.tmpdir(), "alice")
    local rc, path, xml = junit_of(B.accept, { "--allowed-signers", allowed })
    assert.are.equal(2, rc)
    assert.are.equal(0, (validate(path)))
    assert.matches('<failure message="INCONSISTENT: signature: unsigned: ', xml, 1, true)
  end)
end)

describe("qualify --junit", function()
  it("writes the qualification rows and every bundle's steps, valid against the XSD", function()
    local path = helper.tmpdir() .. "/q.xml"
    local rc = helper.run { "qualify", "--junit", path, B.accept, B.azure, B.p409, B.tampered }
    assert.are.equal(2, rc)
    local xml = assert(helper.read(path))
    local vrc, vout = validate(path)
    assert.are.equal(0, vrc, vout)
    assert.matches('<testsuite name="qualification" tests="2" failures="0" errors="0" skipped="1"', xml, 1, true)
    assert.matches('<testcase name="azure | ' .. bd.AZURE_HOST .. ' | 2023-11-03 | leaselua 0.1.0 | ', xml, 1, true)
    assert.matches('<skipped message="non-qualifying: endpoint kind replay (documented) is never Azure qualification '
      .. 'evidence"/>', xml, 1, true)
    -- one suite per bundle besides the qualification's
    assert.are.equal(5, helper.count(xml, "<testsuite "))
  end)
end)

describe("the XSD", function()
  local good
  setup(function()
    local _, path = junit_of(B.p409)
    good = assert(helper.read(path))
  end)

  local function check_broken(edit, what)
    local bad = edit(good)
    assert.are_not.equal(good, bad, what .. ": the edit changed nothing")
    local path = helper.tmpdir() .. "/bad.xml"
    helper.write(path, bad)
    local rc, out = validate(path)
    assert.are_not.equal(0, rc, what .. " validated:\n" .. out)
  end

  it("rejects a deliberately malformed report, so the check can fail", function()
    check_broken(function(x) return (x:gsub('<testcase name="verify"', "<testcase", 1)) end, "a case without a name")
    check_broken(function(x) return (x:gsub('tests="%d+"', 'tests="many"', 1)) end, "a count that is no number")
    check_broken(function(x) return (x:gsub('time="0%.000"', 'time="-1"', 1)) end, "a negative time")
    check_broken(function(x)
      return (x:gsub("(<failure message=[^>]*>[^<]*</failure>)", '%1\n      <skipped message="x"/>', 1))
    end, "a case both failed and skipped")
    check_broken(function(x) return (x:gsub("<failure message=", "<failure reason=", 1)) end,
      "a failure without its message")
    check_broken(function(x) return (x:gsub("<properties>", "<props>", 1):gsub("</properties>", "</props>", 1)) end,
      "an unknown element")
    check_broken(function(x) return (x:gsub('timestamp="[^"]*"', 'timestamp="yesterday"', 1)) end, "a bad timestamp")
    check_broken(function(x) return (x:gsub("LeaseIdMismatch", "Lease\1IdMismatch", 1)) end,
      "a control character XML 1.0 forbids")
    check_broken(function(x) return (x:gsub("</testsuites>", "", 1)) end, "a truncated file")
  end)
end)

describe("the XML escaper", function()
  require "leaselua"
  local junit = require "lib.junit"

  it("writes only characters XML 1.0 allows, as well-formed UTF-8", function()
    local hostile = "a\0b\1c\8d\11e\12f\27g\127h\t\n\r & <x> \"q\" 'a' ]]> \xff\xfe \xed\xa0\x80 \xef\xbf\xbe "
      .. "\xc0\xaf \xf4\x90\x80\x80 ok\u{10FFFF}\u{FFFD}é"
    local clean = junit.clean(hostile)
    assert.is_truthy(utf8.len(clean))
    for _, c in utf8.codes(clean) do
      local ok = c == 0x9 or c == 0xA or c == 0xD or (c >= 0x20 and c <= 0xD7FF) or (c >= 0xE000 and c <= 0xFFFD)
        or (c >= 0x10000 and c <= 0x10FFFF)
      assert.is_true(ok, string.format("U+%04X", c))
    end
    assert.matches("é$", clean)
    assert.are.equal("a\u{FFFD}b", junit.clean("a\0b"))
    assert.are.equal("&amp;&lt;&gt;&quot;&apos;&#9;&#10;&#13;", junit.attr("&<>\"'\t\n\r"))
    assert.are.equal("&amp;&lt;&gt;\"'\t\n&#13;", junit.text("&<>\"'\t\n\r"))
    -- in a document, as attribute and as text: xmllint parses and validates it
    local s = { flow = hostile, dir = hostile, consistent = true, decision = "HOLD", reasons = { hostile },
      steps = { { kind = "request", epoch = 1, step = hostile, operation = "Put Blob", n = 1, status = "409",
        class = "EXPECTED_REJECTION", discrepancy = { hostile }, explained = {}, ms = 1 } } }
    local xml, c = junit.suite(s)
    local path = helper.tmpdir() .. "/hostile.xml"
    helper.write(path, junit.document(hostile, { { xml, c } }))
    local rc, out = validate(path)
    assert.are.equal(0, rc, out)
    -- the attribute's tab, newline and carriage return survive a parser
    local arc, aout = bd.sh(("xmllint --xpath 'string(/testsuites/testsuite/testcase[2]/failure/@message)' %s")
      :format(q(path)))
    assert.are.equal(0, arc, aout)
    assert.matches("h\t\n\r & <x> \"q\" 'a' ]]>", aout, 1, true)
  end)
end)
