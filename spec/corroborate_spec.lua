-- `leaselua corroborate` (issue 17): a replayed run's export joined with
-- documented-format service logs the generator makes from the run itself
-- (spec/support/logs_gen.lua), in all three formats, and the variants the
-- issue lists, each with its verdict and exit code; verify still passes
-- on the bundle afterwards, and the run's ledgers are never touched.
local helper = require "helper"
local rp = require "support.replay"
local gen = require "support.logs_gen"
local cjson = require "cjson"

local FORMATS = { "diagnostic", "analytics", "classic" }

local function sh(cmd)
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  p:close()
  return out
end

local function sha(path) return sh("sha256sum " .. helper.quote(path)):match("^(%x+)") end

-- a fresh bundle: main run (and recovery phases) replayed offline
local cache = {}
local function bundle(fixture, recovery)
  local key = fixture .. (recovery or "")
  if not cache[key] then
    local dir = rp.tmpdir() .. "/ev"
    local rc, out, err = rp.replay("main_handoff", "documented/" .. fixture, dir)
    assert(rc == 0 or rc == 2, "replay failed: " .. out .. err)
    if recovery then
      rc, out, err = rp.replay("recovery", "documented/" .. recovery, dir)
      assert(rc == 0, "recovery failed: " .. out .. err)
    end
    cache[key] = dir
  end
  local copy = rp.tmpdir() .. "/ev"
  os.execute("cp -a " .. helper.quote(cache[key]) .. " " .. helper.quote(copy))
  return copy
end

local function corroborate(dir, files, extra)
  local args = { "corroborate", dir, "--json" }
  for _, a in ipairs(extra or {}) do args[#args + 1] = a end
  args[#args + 1] = "--logs"
  for _, f in ipairs(files) do args[#args + 1] = f end
  local rc, out, err = helper.run(args, rp.OFFLINE)
  local ok, res = pcall(cjson.decode, out)
  return rc, ok and res or nil, err, out
end

local function log_file(_, name, text) return gen.write(rp.tmpdir() .. "/" .. name, text) end

-- the checks every corroboration must pass, whatever its verdict
local function after(dir, ledgers)
  rp.assert_verifies(dir)
  assert.are.equal(ledgers.export, sha(dir .. "/export/ledger.jsonl"), "the export ledger changed")
  assert.are.equal(ledgers.protected, sha(dir .. "/protected/ledger.jsonl"), "the protected ledger changed")
  local json = helper.read(dir .. "/corroboration.json")
  local jsonl = helper.read(dir .. "/corroboration.jsonl")
  assert.truthy(json and jsonl, "corroboration.json and corroboration.jsonl are written")
  for _, oid in pairs(gen.OID) do
    assert.is_nil(json:find(oid, 1, true), "a raw object ID reached corroboration.json")
    assert.is_nil(jsonl:find(oid, 1, true), "a raw object ID reached corroboration.jsonl")
  end
end

local function ledgers(dir)
  return { export = sha(dir .. "/export/ledger.jsonl"), protected = sha(dir .. "/protected/ledger.jsonl") }
end

local function texts(list)
  local t = {}
  for _, e in ipairs(list or {}) do t[#t + 1] = e.check .. ": " .. e.text end
  return table.concat(t, "\n")
end

-- the principal fingerprint of the shared contract, as a reviewer
-- computes it with coreutils
local function fingerprint(tid, oid)
  return sh(string.format("printf 'leaselua-principal-v1:%%s:%%s' %s %s | sha256sum | cut -c1-16",
    helper.quote(tid), helper.quote(oid))):match("%x+")
end

describe("leaselua corroborate", function()
  teardown(rp.cleanup)

  for _, format in ipairs(FORMATS) do
    it("corroborates a run with its own " .. format .. " log (exit 0)", function()
      local dir = bundle("azure-main-handoff-accept")
      local l = ledgers(dir)
      local f = log_file(dir, "clean." .. format, gen.text(gen.records(dir), format))
      local rc, res, err = corroborate(dir, { f })
      assert.are.equal(0, rc, err)
      assert.are.equal("CORROBORATED", res.verdict, texts(res.contradictions) .. texts(res.missing))
      assert.are.equal(0, res.contradictions_total)
      assert.are.equal(0, res.missing_total)
      assert.are.equal(res.requests, res.log_records)
      assert.are.equal("ACCEPT", res.decision_run.decision)
      assert.are.equal("identities not recorded", res.identity.status)
      after(dir, l)
    end)
  end

  it("reads a mix of the three formats in one call", function()
    local dir = bundle("azure-main-handoff-accept")
    local recs = gen.records(dir)
    local parts = { {}, {}, {} }
    for i, r in ipairs(recs) do table.insert(parts[i % 3 + 1], r) end
    local files = {}
    for i, format in ipairs(FORMATS) do files[i] = log_file(dir, "mix." .. format, gen.text(parts[i], format)) end
    local rc, res = corroborate(dir, files)
    assert.are.equal(0, rc)
    assert.are.equal("CORROBORATED", res.verdict)
    assert.are.equal(3, #res.logs)
    after(dir, ledgers(dir))
  end)

  it("names a PutBlob logged twice as a hidden re-send (CONTRADICTED, exit 2)", function()
    local dir = bundle("azure-main-handoff-accept")
    local l = ledgers(dir)
    local recs = gen.records(dir)
    for i, r in ipairs(recs) do
      if r.op == "PutBlob" then
        table.insert(recs, i + 1, r)
        break
      end
    end
    local rc, res = corroborate(dir, { log_file(dir, "twice.json", gen.text(recs, "diagnostic")) })
    assert.are.equal(2, rc)
    assert.are.equal("CONTRADICTED", res.verdict)
    assert.matches("hidden re%-send: seq %d+ Put Blob's client request ID .* is logged 2 times",
      texts(res.contradictions))
    after(dir, l)
  end)

  it("names an accepted PutBlob by another principal inside the window (CONTRADICTED)", function()
    local dir = bundle("azure-main-handoff-accept")
    local l = ledgers(dir)
    local recs = gen.records(dir)
    gen.stranger(recs, "PutBlob", 201)
    local rc, res = corroborate(dir, { log_file(dir, "stale.log", gen.text(recs, "classic")) })
    assert.are.equal(2, rc)
    local fp = fingerprint(gen.TENANT, gen.OID.stranger)
    assert.matches("unrecorded accepted PutBlob 201 at .* by " .. fp, texts(res.contradictions))
    assert.are.equal(1, res.unrecorded_total)
    assert.are.equal(fp, res.unrecorded[1].principal)
    after(dir, l)
  end)

  it("names an accepted lease operation by another principal whatever category the log gives it", function()
    local dir = bundle("azure-main-handoff-accept")
    local recs = gen.records(dir)
    local r = gen.stranger(recs, "BreakBlobLease", 202)
    r.category = "StorageRead"
    local rc, res = corroborate(dir, { log_file(dir, "break.json", gen.text(recs, "diagnostic")) })
    assert.are.equal(2, rc)
    assert.matches("unrecorded accepted BreakBlobLease 202", texts(res.contradictions))
    after(dir, ledgers(dir))
  end)

  it("lists a GetBlob by another principal and still corroborates (a reader is allowed)", function()
    local dir = bundle("azure-main-handoff-accept")
    local l = ledgers(dir)
    local recs = gen.records(dir)
    gen.stranger(recs, "GetBlob", 200)
    local rc, res = corroborate(dir, { log_file(dir, "reader.azjson", gen.text(recs, "analytics")) })
    assert.are.equal(0, rc, texts(res.contradictions))
    assert.are.equal("CORROBORATED", res.verdict)
    assert.are.equal(1, res.unrecorded_total)
    assert.are.equal("GetBlob", res.unrecorded[1].operation)
    assert.are.equal(fingerprint(gen.TENANT, gen.OID.stranger), res.unrecorded[1].principal)
    after(dir, l)
  end)

  it("names a request the logs lack (INCOMPLETE, exit 1)", function()
    local dir = bundle("azure-main-handoff-accept")
    local l = ledgers(dir)
    local recs = gen.records(dir)
    local gone = table.remove(recs, 5)
    local rc, res = corroborate(dir, { log_file(dir, "gap.json", gen.text(recs, "diagnostic")) })
    assert.are.equal(1, rc)
    assert.are.equal("INCOMPLETE", res.verdict)
    assert.matches("no log record of seq " .. math.tointeger(gone.seq) .. " " .. gone.operation, texts(res.missing))
    after(dir, l)
  end)

  it("names a status that differs from the ledger's, never normalised (CONTRADICTED)", function()
    local dir = bundle("azure-main-handoff-accept")
    local l = ledgers(dir)
    local recs = gen.records(dir)
    for _, r in ipairs(recs) do
      if r.op == "PutBlob" and r.status == 201 then
        r.status, r.text = 500, "InternalError"
        break
      end
    end
    local rc, res = corroborate(dir, { log_file(dir, "status.log", gen.text(recs, "classic")) })
    assert.are.equal(2, rc)
    assert.matches("status: seq %d+ Put Blob: the ledger holds 201, the service logged 500", texts(res.contradictions))
    after(dir, l)
  end)

  it("says the logs end before the run did (INCOMPLETE, coverage)", function()
    local dir = bundle("azure-main-handoff-accept")
    local l = ledgers(dir)
    local recs = gen.records(dir)
    for _ = 1, 6 do table.remove(recs) end
    local rc, res = corroborate(dir, { log_file(dir, "short.json", gen.text(recs, "diagnostic")) })
    assert.are.equal(1, rc)
    assert.matches("coverage: the logs end at .*, before the run's last request at", texts(res.missing))
    after(dir, l)
  end)

  it("says which category is missing when the run used it", function()
    local dir = bundle("azure-main-handoff-accept")
    local recs, kept = gen.records(dir), {}
    for _, r in ipairs(recs) do
      if r.op ~= "DeleteBlob" then kept[#kept + 1] = r end
    end
    local rc, res = corroborate(dir, { log_file(dir, "nodelete.json", gen.text(kept, "diagnostic")) })
    assert.are.equal(1, rc)
    assert.matches("no StorageDelete records in the logs", texts(res.missing))
  end)

  it("settles an UNKNOWN_OUTCOME Put the log shows as 201: a settlement row, the decision re-derived beside the run's",
    function()
      local dir = bundle("rev5-lost")
      local l = ledgers(dir)
      local rc, res = corroborate(dir, { log_file(dir, "set.json", gen.text(gen.records(dir, { unknown = "201" }),
        "diagnostic")) })
      assert.are.equal(0, rc, texts(res.missing) .. texts(res.contradictions))
      assert.are.equal(1, res.settlements_total)
      local s = res.settlements[1]
      assert.are.equal("Put Blob", s.operation)
      assert.are.equal("UNKNOWN", s.ledger_outcome)
      assert.are.equal("201", s.logged_status)
      assert.are.equal("HOLD", res.decision_run.decision, "the run's own decision is never changed")
      assert.are.equal("HOLD", rp.decision(dir).decision)
      assert.is_table(res.decision_with_logs)
      assert.matches("final content not read back", table.concat(res.decision_with_logs.reasons, "\n"))
      -- the settlement is a row of its own, before the corroboration row
      local rows = {}
      for line in io.lines(dir .. "/corroboration.jsonl") do rows[#rows + 1] = cjson.decode(line) end
      assert.are.equal("settlement", rows[1].record)
      assert.are.equal(s.outcome_seq, rows[1].outcome_seq)
      assert.are.equal("corroboration", rows[2].record)
      assert.are.equal(1, rows[2].settlement_seq_first)
      after(dir, l)
    end)

  it("re-derives ACCEPT for a settled Put that a recovery read back", function()
    local dir = bundle("rev5-lost", "rev5-lost.recovery-committed")
    local rc, res = corroborate(dir, { log_file(dir, "set.log", gen.text(gen.records(dir, { unknown = "201" }),
      "classic")) })
    assert.are.equal(0, rc, texts(res.missing) .. texts(res.contradictions))
    assert.are.equal("ACCEPT", res.decision_with_logs.decision)
    after(dir, ledgers(dir))
  end)

  it("names an UNKNOWN_OUTCOME Put the logs do not hold (INCOMPLETE)", function()
    local dir = bundle("rev5-lost")
    local l = ledgers(dir)
    local rc, res = corroborate(dir, { log_file(dir, "absent.azjson", gen.text(gen.records(dir), "analytics")) })
    assert.are.equal(1, rc)
    assert.matches("settled: seq %d+ Put Blob %(UNKNOWN outcome%)", texts(res.missing))
    assert.are.equal(0, res.settlements_total)
    assert.are.equal(cjson.null, res.decision_with_logs)
    after(dir, l)
  end)

  it("refuses a file in none of the formats with one line naming it (exit 64)", function()
    local dir = bundle("azure-main-handoff-accept")
    local f = log_file(dir, "notes.txt", "these are not logs\n")
    local rc, _, err = corroborate(dir, { f })
    assert.are.equal(64, rc)
    assert.matches("^leaselua: corroborate: [^\n]*/notes%.txt: not a log leaselua reads: expected", err)
    assert.are.equal(1, helper.count(err, "\n"))
    assert.is_nil(helper.read(dir .. "/corroboration.json"), "nothing is written for bad input")
  end)

  it("refuses truncated JSON in either JSON form (exit 64)", function()
    local dir = bundle("azure-main-handoff-accept")
    local recs = gen.records(dir)
    for _, format in ipairs({ "diagnostic", "analytics" }) do
      local text = gen.text(recs, format)
      local rc, _, err = corroborate(dir, { log_file(dir, "cut." .. format, text:sub(1, #text // 2)) })
      assert.are.equal(64, rc, err)
      assert.matches("cut%." .. format .. ": .*truncated or malformed", err)
    end
    local text = gen.text(recs, "classic")
    local rc, _, err = corroborate(dir, { log_file(dir, "cut.classic", text:sub(1, #text // 2)) })
    assert.are.equal(64, rc)
    assert.matches("cut%.classic: line %d+", err)
    assert.is_nil(helper.read(dir .. "/corroboration.json"))
  end)

  it("appends to its own hash chain each time, and refuses a broken one", function()
    local dir = bundle("azure-main-handoff-accept")
    local f = log_file(dir, "clean.json", gen.text(gen.records(dir), "diagnostic"))
    assert.are.equal(0, (corroborate(dir, { f })))
    assert.are.equal(0, (corroborate(dir, { f })))
    local rows = {}
    for line in io.lines(dir .. "/corroboration.jsonl") do rows[#rows + 1] = cjson.decode(line) end
    assert.are.equal(2, #rows)
    assert.are.equal(rows[1].row_hash, rows[2].prev_hash)
    assert.are.equal(2, cjson.decode(helper.read(dir .. "/corroboration.json")).corroboration_seq)
    local text = helper.read(dir .. "/corroboration.jsonl"):gsub("CORROBORATED", "CONTRADICTED", 1)
    helper.write(dir .. "/corroboration.jsonl", text)
    local rc, _, err = corroborate(dir, { f })
    assert.are.equal(64, rc)
    assert.matches("corroboration%.jsonl.*chain broken at row 1", err)
    -- and verify sees the broken chain too
    local vrc, vout, verr = helper.run({ "verify", dir })
    assert.are.equal(2, vrc)
    assert.matches("corroboration%.jsonl: chain broken at row 1", vout .. verr)
  end)

  it("--print-query prints the KQL, the az command and the blob prefixes (golden file)", function()
    local dir = bundle("azure-main-handoff-accept")
    local rc, out, err = helper.run({ "corroborate", dir, "--print-query" }, rp.OFFLINE)
    assert.are.equal(0, rc, err)
    local rows = gen.rows(dir)
    -- every column corroborate reads, the blob and the window
    for _, col in ipairs({ "TimeGenerated", "Category", "OperationName", "StatusCode", "StatusText", "CorrelationId",
      "ClientRequestId", "Uri", "CallerIpAddress", "AuthenticationType", "RequesterObjectId",
      "RequesterTenantId" }) do
      assert.truthy(out:find("| project [^\n]*" .. col), col .. " is not projected")
    end
    assert.truthy(out:find('Uri contains "' .. rows[1].blob_path .. '"', 1, true))
    assert.truthy(out:find("datetime(2026-12-01T08:55:00.000Z) .. datetime(", 1, true))
    assert.truthy(out:find("az monitor log-analytics query --workspace", 1, true))
    assert.truthy(out:find("insights-logs-storagewrite/resourceId=/SUBSCRIPTIONS/", 1, true))
    local n = 0
    for _, r in ipairs(rows) do
      if r.record == "intent" then
        n = n + 1
        assert.truthy(out:find('"' .. r.client_request_id .. '"', 1, true), "a client request ID is not queried")
      end
    end
    -- the golden file: the run's own IDs and directory replaced
    local norm = out:gsub(rows[1].run_id:gsub("%p", "%%%0"), "RUN_ID"):gsub(dir:gsub("%p", "%%%0"), "DIR")
    norm = norm:gsub('"%x+%-%x+%-%x+%-%x+%-%x+"', '"CLIENT-REQUEST-ID"')
    local golden = helper.read("fixtures/logs/print-query.golden")
    assert.are.equal(golden, norm)
    assert.are.equal(n, helper.count(norm, '"CLIENT%-REQUEST%-ID"'))
  end)

  it("ships log fixtures that read as their formats, each labelled documented with its source", function()
    local dir = bundle("rev5-lost")
    local readme = helper.read("fixtures/logs/README.md")
    for _, name in ipairs({ "rev5-lost.diagnostic.jsonl", "rev5-lost.storagebloblogs.azjson",
      "rev5-lost.classic.log" }) do
      local rc, res, err = corroborate(dir, { "fixtures/logs/" .. name })
      assert.is_true(rc == 1 or rc == 2, name .. ": " .. tostring(rc) .. " " .. err)
      assert.are.equal(27, res.log_records, name) -- the run's 27 requests, rev 5 logged
      assert.truthy(readme:find("| `" .. name .. "` | documented |", 1, true), name .. " is not labelled in the README")
    end
    assert.matches("Azurite writes none", readme)
  end)

  it("the report shows the run's decision and the corroboration side by side, and the query", function()
    local dir = bundle("rev5-lost")
    local out = rp.tmpdir() .. "/report"
    local rc0, _, err0 = helper.run({ "report", dir, "--out", out }, rp.OFFLINE)
    assert.are.equal(0, rc0, err0)
    assert.matches("Not corroborated", helper.read(out .. "/summary.md"))
    assert.truthy(helper.read(out .. "/report.html"):find("StorageBlobLogs", 1, true), "the query is in the report")
    corroborate(dir, { log_file(dir, "set.json", gen.text(gen.records(dir, { unknown = "201" }), "diagnostic")) })
    local rc, _, err = helper.run({ "report", dir, "--out", out }, rp.OFFLINE)
    assert.are.equal(0, rc, err)
    local md = helper.read(out .. "/summary.md")
    assert.truthy(md:find("| the run's decision | with the service's logs | corroboration |", 1, true), md)
    assert.truthy(md:find("| HOLD | HOLD | **CORROBORATED** |", 1, true), md)
    local html = helper.read(out .. "/report.html")
    assert.truthy(html:find('<section id="corroboration">', 1, true))
    assert.truthy(html:find("<td>HOLD</td><td>HOLD</td><td><b>CORROBORATED</b></td>", 1, true))
  end)

  it("the report reads each file of the bundle once, so what it draws is what verify checked (strace)", function()
    local dir = bundle("rev5-lost")
    corroborate(dir, { log_file(dir, "set.json", gen.text(gen.records(dir, { unknown = "201" }), "diagnostic")) })
    local log = rp.tmpdir() .. "/strace.log"
    -- every open of the run's files: a second one is a window in which a
    -- file swapped in after the check would be drawn unchecked
    local args = { "strace", "-f", "-qq", "-e", "trace=open,openat", "-o", log, helper.host, "report", dir,
      "--out", rp.tmpdir() .. "/report" }
    for i, a in ipairs(args) do args[i] = helper.quote(a) end
    local rc = os.execute(helper.env_prefix(rp.OFFLINE) .. " " .. table.concat(args, " ") .. " >/dev/null 2>&1")
    assert.is_true(rc, "the report under strace failed")
    local trace = assert(helper.read(log), "strace wrote nothing")
    assert.are.equal(1, helper.count(trace, '/corroboration%.json"'), trace)
    assert.are.equal(1, helper.count(trace, '/export/ledger%.jsonl"'), trace)
  end)

  it("never writes a raw object ID, even one a log puts in another field (secret scan, exit 70)", function()
    local dir = bundle("azure-main-handoff-accept")
    local recs = gen.records(dir)
    recs[3].crid = recs[3].oid -- the request is then found only by its request ID, under this "ID"
    local rc, _, err = corroborate(dir, { log_file(dir, "oid.json", gen.text(recs, "diagnostic")) })
    assert.are.equal(70, rc, err)
    assert.matches("would hold", err)
    assert.is_nil(helper.read(dir .. "/corroboration.json"))
  end)

  -- The manifest row given an identity record (actors16's contract), the
  -- export re-chained: what a bundle with identities looks like to the join.
  local function with_identities(dir, ids)
    local path = dir .. "/export/ledger.jsonl"
    local lines = {}
    for l in io.lines(path) do lines[#lines + 1] = l end
    local parts = {}
    for actor, fp in pairs(ids) do parts[#parts + 1] = string.format('"%s":{"fingerprint":"%s"}', actor, fp) end
    lines[1] = lines[1]:gsub('"record":"manifest",', '"record":"manifest","identities":{' .. table.concat(parts, ",")
      .. "},", 1)
    lines = require("support.ledger_builder").rechain(lines)
    helper.write(path, table.concat(lines, "\n") .. "\n")
  end

  it("checks each request's requester against its actor's recorded fingerprint", function()
    local dir = bundle("azure-main-handoff-accept")
    local ids = {}
    for _, actor in ipairs({ "A", "B", "operator", "observer" }) do
      ids[actor] = fingerprint(gen.TENANT, gen.OID[actor])
    end
    with_identities(dir, ids)
    local f = log_file(dir, "ids.json", gen.text(gen.records(dir), "diagnostic"))
    local rc, res = corroborate(dir, { f })
    assert.are.equal(0, rc, texts(res.contradictions))
    assert.are.equal("checked", res.identity.status)
    assert.are.equal(res.requests, res.identity.checked)
    -- B's requests logged under A's principal: each one named
    ids.B = fingerprint(gen.TENANT, gen.OID.stranger)
    local dir2 = bundle("azure-main-handoff-accept")
    with_identities(dir2, ids)
    rc, res = corroborate(dir2, { log_file(dir2, "ids2.json", gen.text(gen.records(dir2), "diagnostic")) })
    assert.are.equal(2, rc)
    assert.matches("identity: seq %d+ [%w ]+ by B: the service logged principal " ..
      fingerprint(gen.TENANT, gen.OID.B) .. ", not the actor's " .. ids.B, texts(res.contradictions))
  end)

  it("--sign-key re-signs the bundle so that SHA256SUMS covers the corroboration", function()
    local dir = bundle("azure-main-handoff-accept")
    local keys = rp.tmpdir()
    local key = keys .. "/key"
    assert.truthy(os.execute(("ssh-keygen -q -t ed25519 -N '' -C corroborator -f %s </dev/null >/dev/null"):format(
      helper.quote(key))))
    local pub = assert(helper.read(key .. ".pub")):match("^(%S+ %S+)")
    local allowed = helper.write(keys .. "/allowed", "corroborator " .. pub .. "\n")
    local f = log_file(dir, "clean.json", gen.text(gen.records(dir), "diagnostic"))
    local rc, res, err = corroborate(dir, { f }, { "--sign-key", key })
    assert.are.equal(0, rc, err)
    assert.are.equal("CORROBORATED", res.verdict)
    local sums = helper.read(dir .. "/SHA256SUMS")
    assert.truthy(sums:find("  corroboration.json\n", 1, true), sums)
    assert.truthy(sums:find("  corroboration.jsonl\n", 1, true), sums)
    local vrc, vout, verr = helper.run({ "verify", dir, "--allowed-signers", allowed })
    assert.are.equal(0, vrc, vout .. verr)
    -- a key that is not one is refused before anything is written
    local d2 = bundle("azure-main-handoff-accept")
    local rc2 = corroborate(d2, { f }, { "--sign-key", allowed })
    assert.are.equal(64, rc2)
    assert.is_nil(helper.read(d2 .. "/corroboration.json"))
  end)

  it("refuses a directory that holds no run, before reading any log (exit 64)", function()
    local rc, _, err = helper.run({ "corroborate", rp.tmpdir(), "--logs", "/nonexistent" }, rp.OFFLINE)
    assert.are.equal(64, rc)
    assert.matches("not an evidence directory", err)
  end)

  -- The hostile review's repros (corrfix): CORROBORATED only from positive
  -- evidence that each record is the run's own request on the run's blob.
  local function run_clean(dir, recs, name, format)
    return corroborate(dir, { log_file(dir, name, gen.text(recs, format or "diagnostic")) })
  end

  for _, case in ipairs({
    { "another account", function(r) r.host = "otheraccount.blob.core.windows.net" end },
    { "another container", function(r) r.path = r.path:gsub("^/[^/]+", "/othercontainer") end },
    { "another blob", function(r) r.path = r.path .. "-other" end },
  }) do
    it("names every record for " .. case[1] .. " under the run's client request IDs (CONTRADICTED)", function()
      local dir = bundle("azure-main-handoff-accept")
      local l = ledgers(dir)
      local recs = gen.records(dir)
      for _, r in ipairs(recs) do case[2](r) end
      for _, format in ipairs(FORMATS) do
        local rc, res = run_clean(dir, recs, "other." .. format, format)
        assert.are.equal(2, rc, format)
        assert.are.equal("CONTRADICTED", res.verdict)
        assert.matches("target: seq %d+ [%w ]+: the record with its client request ID %(.-%) is for ",
          texts(res.contradictions))
        assert.is_true(res.missing_total >= res.requests, "each request is missing its record")
        assert.matches("seen%-once: no log record of seq", texts(res.missing))
      end
      after(dir, l)
    end)
  end

  it("decodes percent-escapes before comparing paths: an encoded stale writer is named", function()
    local dir = bundle("azure-main-handoff-accept")
    local recs = gen.records(dir)
    local s = gen.stranger(recs, "PutBlob", 201)
    -- every character of the blob's last segment percent-encoded
    s.path = s.path:gsub("([^/]+)$", function(seg)
      return (seg:gsub(".", function(c) return string.format("%%%02X", c:byte()) end))
    end)
    local rc, res = run_clean(dir, recs, "enc.json")
    assert.are.equal(2, rc)
    assert.matches("unrecorded%-actor: unrecorded accepted PutBlob 201", texts(res.contradictions))
  end)

  for _, case in ipairs({
    { "a malformed percent-escape", function(r) r.path = r.path .. "%zz" end, "malformed percent%-escape" },
    { "a truncated percent-escape", function(r) r.path = r.path .. "%4" end, "malformed percent%-escape" },
    { "an empty uri", function(r) r.uri = "" end, "has no uri" },
  }) do
    it("names a record with " .. case[1] .. " inside the window (INCOMPLETE, never skipped)", function()
      local dir = bundle("azure-main-handoff-accept")
      local recs = gen.records(dir)
      case[2](gen.stranger(recs, "PutBlob", 201))
      for _, format in ipairs({ "diagnostic", "analytics" }) do
        local rc, res = run_clean(dir, recs, "bad." .. format, format)
        assert.are.equal(1, rc, format)
        assert.are.equal("INCOMPLETE", res.verdict)
        assert.matches("target: PutBlob 201 at .- " .. case[3], texts(res.missing))
      end
    end)
  end

  it("counts a client request ID in other case or with blanks as the same request", function()
    local dir = bundle("azure-main-handoff-accept")
    local recs = gen.records(dir)
    for _, r in ipairs(recs) do r.crid = " " .. r.crid:upper() end
    local rc, res = run_clean(dir, recs, "case.json")
    assert.are.equal(0, rc, texts(res.contradictions) .. texts(res.missing))
    assert.are.equal("CORROBORATED", res.verdict)
    assert.matches("logs its client request ID as", texts(res.inferred_key_notes))
    -- a re-send under the upper-case ID is the same request logged twice
    recs = gen.records(dir)
    for i, r in ipairs(recs) do
      if r.op == "PutBlob" then
        local dup = {}
        for k, v in pairs(r) do dup[k] = v end
        dup.crid = r.crid:upper() .. " "
        table.insert(recs, i + 1, dup)
        break
      end
    end
    rc, res = run_clean(dir, recs, "case2.json")
    assert.are.equal(2, rc)
    assert.matches("hidden re%-send: seq %d+ Put Blob's client request ID .* is logged 2 times",
      texts(res.contradictions))
  end)

  it("names the first request missing even when the logs begin before its response", function()
    local dir = bundle("azure-main-handoff-accept")
    local recs = gen.records(dir)
    local first = table.remove(recs, 1)
    -- another blob's record where the first request's record was: the span
    -- begins after that request was sent, before it was answered
    first.path, first.crid = first.path .. "-other", "7d7d7d7d-0000-4000-8000-000000000001"
    table.insert(recs, 1, first)
    local rc, res = run_clean(dir, recs, "nofirst.json")
    assert.are.equal(1, rc, texts(res.contradictions))
    assert.are.equal("INCOMPLETE", res.verdict)
    assert.matches("seen%-once: no log record of seq " .. math.tointeger(first.seq) .. " ",
      texts(res.missing) .. "\n" .. cjson.encode(res.log_span))
  end)

  it("names a record that lacks the requester's IDs when identities are recorded (INCOMPLETE)", function()
    local dir = bundle("azure-main-handoff-accept")
    local ids = {}
    for _, actor in ipairs({ "A", "B", "operator", "observer" }) do
      ids[actor] = fingerprint(gen.TENANT, gen.OID[actor])
    end
    with_identities(dir, ids)
    local recs = gen.records(dir)
    recs[#recs].oid = nil
    local rc, res = run_clean(dir, recs, "noid.json")
    assert.are.equal(1, rc, texts(res.contradictions))
    assert.are.equal("INCOMPLETE", res.verdict)
    assert.matches("identity: seq %d+ [%w ]+ by %w+: the service's record lacks the requester's object ID",
      texts(res.missing))
  end)

  local function verify_fails(dir, pattern)
    local vrc, vout, verr = helper.run({ "verify", dir })
    assert.are.equal(2, vrc, vout .. verr)
    assert.matches(pattern, vout .. verr)
  end

  it("verify checks corroboration.json against the chain's last corroboration row, and each needs the other",
    function()
      local dir = bundle("azure-main-handoff-accept")
      local f = log_file(dir, "v.json", gen.text(gen.records(dir), "diagnostic"))
      local recs = gen.records(dir)
      table.remove(recs, 2)
      assert.are.equal(1, (corroborate(dir, { log_file(dir, "v1.json", gen.text(recs, "diagnostic")) })))
      local incomplete = helper.read(dir .. "/corroboration.json")
      assert.are.equal(0, (corroborate(dir, { f })))
      rp.assert_verifies(dir)
      -- an older corroboration's summary in place of the last one's
      helper.write(dir .. "/corroboration.json", incomplete)
      verify_fails(dir, "corroboration%.json differs from corroboration%.jsonl's last corroboration row in 'verdict'")
      -- a summary edited to a better verdict
      local j = cjson.decode(incomplete)
      j.missing_total, j.corroboration_seq = 0, 2
      helper.write(dir .. "/corroboration.json", cjson.encode(j))
      verify_fails(dir, "corroboration%.json differs .* in '")
      -- the summary without its chain, and the chain without its summary
      local d2 = bundle("azure-main-handoff-accept")
      assert.are.equal(0, (corroborate(d2, { log_file(d2, "v2.json", gen.text(gen.records(d2), "diagnostic")) })))
      local chain = helper.read(d2 .. "/corroboration.jsonl")
      os.remove(d2 .. "/corroboration.jsonl")
      verify_fails(d2, "corroboration%.json is present without corroboration%.jsonl")
      helper.write(d2 .. "/corroboration.jsonl", chain)
      os.remove(d2 .. "/corroboration.json")
      verify_fails(d2, "corroboration%.jsonl is present without corroboration%.json")
    end)

  it("verify refuses a corroboration that names another run, with --export-only too (helper-26)", function()
    local dir = bundle("azure-main-handoff-accept")
    assert.are.equal(0, (corroborate(dir, { log_file(dir, "t.json", gen.text(gen.records(dir), "diagnostic")) })))
    rp.assert_verifies(dir)
    local chain, summary = helper.read(dir .. "/corroboration.jsonl"), helper.read(dir .. "/corroboration.json")
    -- another run's ID, or another blob, in every row, the chain rewritten
    for key, other in pairs { run_id = "run-19990101T000000Z", blob_path = "/other/other.json" } do
      local pat = '"' .. key .. '":"[^"]*"'
      local lines = {}
      for l in chain:gmatch("[^\n]+") do lines[#lines + 1] = l:gsub(pat, '"' .. key .. '":"' .. other .. '"') end
      helper.write(dir .. "/corroboration.jsonl",
        table.concat(require("support.ledger_builder").rechain(lines), "\n") .. "\n")
      helper.write(dir .. "/corroboration.json", (summary:gsub(pat, '"' .. key .. '":"' .. other .. '"')))
      for _, flag in ipairs { false, "--export-only" } do
        local vrc, vout, verr = helper.run(flag and { "verify", flag, dir } or { "verify", dir })
        assert.are.equal(2, vrc, vout .. verr)
        assert.matches("corroboration%.jsonl row %d+ is not this run's: its " .. key, verr)
      end
    end
    -- a summary with no chain is refused from the export alone too
    os.remove(dir .. "/corroboration.jsonl")
    local vrc, vout, verr = helper.run { "verify", "--export-only", dir }
    assert.are.equal(2, vrc, vout .. verr)
    assert.matches("corroboration%.json is present without corroboration%.jsonl", verr)
  end)

  -- helper-28: only the verdict and counts were compared, so decision_run,
  -- decision_with_logs, the lists and the identity could say anything,
  -- and the report drew them; a forger rewriting the chain too was not
  -- seen either. Now the file is the chain's last row member for member,
  -- and both decisions are the export's.
  it("verify checks every member of the summary, and both decisions against the export (helper-28)", function()
    local dir = bundle("rev5-lost")
    assert.are.equal(0, (corroborate(dir, { log_file(dir, "d.json", gen.text(gen.records(dir, { unknown = "201" }),
      "diagnostic")) })))
    rp.assert_verifies(dir)
    local chain, summary = helper.read(dir .. "/corroboration.jsonl"), helper.read(dir .. "/corroboration.json")
    local function both(edit)
      local lines = {}
      for l in chain:gmatch("[^\n]+") do lines[#lines + 1] = edit(l) end
      helper.write(dir .. "/corroboration.jsonl",
        table.concat(require("support.ledger_builder").rechain(lines), "\n") .. "\n")
      helper.write(dir .. "/corroboration.json", edit(summary))
    end
    local function fails(pattern)
      for _, flag in ipairs { false, "--export-only" } do
        local vrc, vout, verr = helper.run(flag and { "verify", flag, dir } or { "verify", dir })
        assert.are.equal(2, vrc, vout .. verr)
        assert.matches(pattern, verr)
      end
      local rrc, rout, rerr = helper.run { "report", dir }
      assert.are.equal(2, rrc, rout .. rerr)
    end
    -- the summary alone: an identity the chain does not hold
    local forged, n = summary:gsub('"identity":%s*{%s*"status":%s*"[^"]*"', '"identity":{"status":"checked"', 1)
    assert.are.equal(1, n)
    helper.write(dir .. "/corroboration.json", forged)
    fails("corroboration%.json differs from corroboration%.jsonl's last corroboration row in 'identity'")
    -- both rewritten: the run's decision, then the one with the logs
    both(function(t)
      return (t:gsub('"decision_run":%s*{%s*"decision":%s*"HOLD"', '"decision_run":{"decision":"ACCEPT"'))
    end)
    fails("corroboration%.json's 'decision_run' is not what the export says")
    both(function(t)
      return (t:gsub('"decision_with_logs":%s*{%s*"decision":%s*"[A-Z]+"', '"decision_with_logs":{"decision":"ACCEPT"'))
    end)
    fails("corroboration%.json's 'decision_with_logs' is not what the export says")
    -- a settlement moved onto an outcome the run did learn (helper-29:
    -- an ordinary 409 "settled" as 412 re-derived to ACCEPT)
    local other
    for line in helper.read(dir .. "/export/ledger.jsonl"):gmatch("[^\n]+") do
      local row = cjson.decode(line)
      if row.record == "outcome" and row.outcome == "RESPONSE" then other = math.tointeger(row.seq) end
    end
    assert.truthy(other)
    both(function(t) return (t:gsub('"outcome_seq":%s*%d+', '"outcome_seq":' .. other)) end)
    fails("corroboration%.json's 'settlements' is not what the export says")
    -- as written, both again: consistent
    helper.write(dir .. "/corroboration.jsonl", chain)
    helper.write(dir .. "/corroboration.json", summary)
    rp.assert_verifies(dir)
  end)

  -- helper-29: a recovery appending to a corroborated bundle made verify
  -- call the corroboration's decisions forged; it names the export's row
  -- it read (export_seq, export_row_hash) and is checked against the
  -- export as it stood then.
  it("a corroboration stays consistent after a recovery appends to the export", function()
    local dir = bundle("rev5-lost")
    assert.are.equal(0, (corroborate(dir, { log_file(dir, "r.json", gen.text(gen.records(dir, { unknown = "201" }),
      "diagnostic")) })))
    local j = cjson.decode(helper.read(dir .. "/corroboration.json"))
    assert.are.equal(#helper.rows(dir), j.export_seq)
    local rc, out, err = rp.replay("recovery", "documented/rev5-lost.recovery-committed", dir)
    assert.are.equal(0, rc, out .. err)
    assert.is_true(#helper.rows(dir) > j.export_seq)
    rp.assert_verifies(dir)
    assert.are.equal(0, (helper.run { "report", dir }))
    -- the row it names must still be the one it read: another seq, in
    -- the file and the re-hashed chain alike, is refused
    local lines = {}
    for l in helper.read(dir .. "/corroboration.jsonl"):gmatch("[^\n]+") do
      lines[#lines + 1] = l:gsub('"export_seq":%d+', '"export_seq":3')
    end
    helper.write(dir .. "/corroboration.jsonl",
      table.concat(require("support.ledger_builder").rechain(lines), "\n") .. "\n")
    helper.write(dir .. "/corroboration.json",
      (helper.read(dir .. "/corroboration.json"):gsub('"export_seq":%s*%d+', '"export_seq": 3')))
    local vrc, vout, verr = helper.run { "verify", dir }
    assert.are.equal(2, vrc, vout .. verr)
    assert.matches("corroboration%.json's 'export_seq' is not what the export says", verr)
  end)

  it("verify names settlement rows whose corroboration row never came (a half-written corroboration)", function()
    local dir = bundle("rev5-lost")
    local rc = corroborate(dir, { log_file(dir, "h.json", gen.text(gen.records(dir, { unknown = "201" }),
      "diagnostic")) })
    assert.are.equal(0, rc)
    rp.assert_verifies(dir)
    -- the write stopped between the settlement rows and the corroboration row
    local lines = {}
    for line in io.lines(dir .. "/corroboration.jsonl") do lines[#lines + 1] = line end
    assert.matches('"record":"settlement"', lines[1])
    table.remove(lines)
    helper.write(dir .. "/corroboration.jsonl", table.concat(lines, "\n") .. "\n")
    verify_fails(dir, "settlement row 1 has no corroboration row after it")
    -- as the message says, corroborating again completes it (helper-29:
    -- the orphan row then failed verify forever); it stays as history
    os.remove(dir .. "/corroboration.json")
    assert.are.equal(0, (corroborate(dir, { log_file(dir, "h2.json", gen.text(gen.records(dir, { unknown = "201" }),
      "diagnostic")) })))
    rp.assert_verifies(dir)
    local n = 0
    for line in io.lines(dir .. "/corroboration.jsonl") do
      if line:find('"record":"settlement"', 1, true) then n = n + 1 end
    end
    assert.are.equal(2, n)
  end)
end)
