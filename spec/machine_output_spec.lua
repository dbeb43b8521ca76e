-- Results for machines (issue 15): `leaselua verify DIR --json` prints one
-- JSON object and keeps its exit codes; `leaselua report DIR --out OUTDIR`
-- writes the two files elsewhere and leaves a read-only bundle as it was.
-- Offline: the bundle is a replay of the emulator's main handoff.
local helper = require "helper"
local cjson = require "cjson"

local root = os.getenv("PWD")
local fixture = root .. "/fixtures/emulator/main-handoff-accept.json"
local manifest = root .. "/tools/emulator/manifest.json"
local q = helper.quote
local no_target = {
  AZURE_STORAGE_ACCOUNT_URL = false, AZURE_STORAGE_TOKEN = false,
  AZURE_STORAGE_SAS = false, LEASELUA_CA_FILE = false,
}

local function sh(cmd)
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  p:close()
  return out
end

-- One replayed ACCEPT bundle for the whole file; tests copy it to change it.
local bundle
local function the_bundle()
  if bundle then return bundle end
  local d = helper.tmpdir() .. "/ev"
  local rc, out, err = helper.run({ "handoff", "--manifest", manifest, "--replay", fixture,
    "--evidence", d }, no_target)
  assert(rc == 0, "the replayed handoff failed: " .. tostring(rc) .. "\n" .. out .. err)
  bundle = d
  return d
end

local function copy(dir)
  local d = helper.tmpdir() .. "/copy"
  assert(os.execute(("cp -a %s %s"):format(q(dir), q(d))))
  return d
end

-- Every file under dir, with its mode, size and sha256: what "unchanged" means.
local function listing(dir)
  return sh(("cd %s && find . -printf '%%y %%m %%s %%p\\n' | sort && "
    .. "find . -type f -print0 | sort -z | xargs -0 sha256sum"):format(q(dir)))
end

local function lines(s)
  local n = 0
  for _ in s:gmatch("[^\n]*\n") do n = n + 1 end
  return n
end

-- The verdict object; fails unless stdout is exactly one JSON object line.
local function verdict(out)
  assert.are.equal(1, lines(out), "stdout is not one line: " .. out)
  assert.matches("^{.*}\n$", out)
  local ok, v = pcall(cjson.decode, out)
  assert.is_true(ok, "stdout is not JSON: " .. tostring(v) .. ": " .. out)
  assert.are.equal("table", type(v))
  return v
end

describe("machine output", function()
  teardown(function()
    os.execute("chmod -R u+w " .. q(helper.tmpdir()) .. "/.. 2>/dev/null")
    helper.cleanup()
  end)

  it("verify --json on a consistent bundle: one object, the verdict's fields, exit 0", function()
    local d = the_bundle()
    for _, args in ipairs { { "verify", d, "--json" }, { "verify", "--json", d } } do
      local rc, out, err = helper.run(args)
      assert.are.equal(0, rc, err)
      local v = verdict(out)
      assert.is_true(v.consistent)
      assert.are.equal("ACCEPT", v.decision)
      assert.are.equal("REPRODUCED", v.window)
      assert.are.equal("table", type(v.reasons))
      assert.are.equal(0, #v.reasons)
      assert.matches('"reasons":%[%]', out)
      assert.matches('"problems":%[%]', out)
      assert.are.equal("replay", v.endpoint_kind)
      assert.are.equal("emulator", v.fixture_label)
      assert.is_true(v.protected_checked)
      -- the counts are the files' own
      assert.are.equal(#helper.rows(d), v.export_rows)
      local binds = 0
      for _, r in ipairs(helper.rows(d)) do
        if r.record == "lease_bind" then binds = binds + 1 end
      end
      assert.is_true(binds > 0)
      assert.are.equal(binds, v.lease_bindings)
    end
    -- and the text line says the same
    local rc, out = helper.run({ "verify", d })
    assert.are.equal(0, rc)
    assert.matches("decision ACCEPT, window REPRODUCED", out, 1, true)
  end)

  it("verify --json on a HOLD bundle carries the decision row's reasons in order", function()
    local d = helper.tmpdir() .. "/hold"
    local rc = helper.run({ "scripts/main_handoff.lua", "--replay", root .. "/fixtures/documented/target-exists.json",
      "--manifest", manifest, "--evidence", d }, no_target)
    assert.are.equal(64, rc) -- the target exists: refused before any mutation
    local want
    for _, r in ipairs(helper.rows(d)) do
      if r.record == "decision" then want = r.reasons end
    end
    assert.is_true(want and #want >= 2)
    local vrc, out, err = helper.run({ "verify", "--json", d })
    assert.are.equal(0, vrc, err)
    local v = verdict(out)
    assert.is_true(v.consistent)
    assert.are.equal("HOLD", v.decision)
    assert.are.equal("NOT_ATTEMPTED", v.window)
    assert.are.same(want, v.reasons)
    assert.are.equal(0, v.reasons_omitted)
  end)

  it("verify --json --export-only says the protected ledger was not checked", function()
    local rc, out, err = helper.run({ "verify", "--json", "--export-only", the_bundle() })
    assert.are.equal(0, rc, err)
    local v = verdict(out)
    assert.is_true(v.consistent)
    assert.is_true(v.export_only)
    assert.is_false(v.protected_checked)
  end)

  it("verify --json on a bundle with one export byte changed: consistent false, exit 2, problems", function()
    local d = copy(the_bundle())
    local path = d .. "/export/ledger.jsonl"
    local text = helper.read(path)
    local n, at = 0, nil
    for s, _ in text:gmatch("()[^\n]*\n") do
      n = n + 1
      if n == 10 then at = s break end
    end
    local i = assert(text:find('"record":"%l', at)) + #'"record":"'
    local f = assert(io.open(path, "wb"))
    f:write(text:sub(1, i - 1), text:sub(i, i):upper(), text:sub(i + 1))
    f:close()
    assert.are.equal("1\n", sh(("cmp -l %s %s | wc -l"):format(q(the_bundle() .. "/export/ledger.jsonl"), q(path))))
    local rc, out, err = helper.run({ "verify", d, "--json" })
    assert.are.equal(2, rc, out .. err)
    local v = verdict(out)
    assert.is_false(v.consistent)
    assert.are.equal("table", type(v.problems))
    assert.is_true(#v.problems >= 1, out)
    local p = v.problems[1]
    assert.are.equal(10, p.row)
    assert.are.equal("string", type(p.problem))
    assert.is_true(#p.problem > 0)
    -- the problem is the one the text output names on stderr
    assert.matches("INCONSISTENT at row 10: " .. p.problem, err, 1, true)
  end)

  it("verify --json with no evidence: exit 64 and nothing on stdout", function()
    local rc, out, err = helper.run({ "verify", "--json", helper.tmpdir() .. "/none" })
    assert.are.equal(64, rc)
    assert.are.equal("", out)
    assert.matches("no export ledger", err)
  end)

  it("verify --help lists --json", function()
    local rc, out = helper.run({ "verify", "--help" })
    assert.are.equal(0, rc)
    assert.matches("--json", out, 1, true)
  end)

  it("report DIR --out OUT writes both files into OUT and leaves a read-only bundle unchanged", function()
    local d = copy(the_bundle())
    assert(os.execute("chmod -R a-w " .. q(d)))
    local before = listing(d)
    assert.matches("export/ledger.jsonl", before, 1, true)
    local o = helper.tmpdir() .. "/out"
    local rc, out, err = helper.run({ "report", d, "--out", o })
    assert.are.equal(0, rc, out .. err)
    assert.are.equal(before, listing(d))
    assert.are.equal("700", helper.mode(o))
    local html, md = helper.read(o .. "/report.html"), helper.read(o .. "/summary.md")
    assert.truthy(html and md, sh("ls -la " .. q(o)))
    assert.matches("ACCEPT", html, 1, true)
    assert.matches("ACCEPT", md, 1, true)
    assert.are.equal(("report: %s/report.html\nreport: %s/summary.md\n"):format(o, o), out)
    assert.are.equal("report.html\nsummary.md\n", sh("ls -A " .. q(o)))
  end)

  it("report --out pointing at a regular file exits 64 with one line and writes nothing", function()
    local d = copy(the_bundle())
    local before = listing(d)
    local f = helper.tmpdir() .. "/a-file"
    helper.write(f, "x")
    local rc, out, err = helper.run({ "report", "--out", f, d })
    assert.are.equal(64, rc)
    assert.are.equal("", out)
    assert.are.equal(1, lines(err), err)
    assert.matches("not a directory", err, 1, true)
    assert.are.equal("x", helper.read(f))
    assert.are.equal(before, listing(d))
  end)

  it("report without --out still writes into DIR", function()
    local d = copy(the_bundle())
    local rc, out = helper.run({ "report", d })
    assert.are.equal(0, rc)
    assert.are.equal(("report: %s/report.html\nreport: %s/summary.md\n"):format(d, d), out)
    assert.truthy(helper.read(d .. "/report.html"))
  end)
end)
