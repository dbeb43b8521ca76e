-- `leaselua report DIR`: built from the export alone, it escapes what the
-- rows say, labels emulator and replay evidence, shows why a run is HOLD,
-- works on interrupted runs, refuses a broken chain and leaks no secret.
local helper = require "helper"
local B = require "support.ledger_builder"

local function report(dir)
  local rc, out, err = helper.run({ "report", dir })
  return rc, out, err, helper.read(dir .. "/report.html"), helper.read(dir .. "/summary.md")
end

local count = helper.count

local function listing(dir)
  local p = io.popen("ls -A " .. helper.quote(dir))
  local s = p:read("a")
  p:close()
  return s
end

-- Every lease ID of the protected ledger, without hyphens, lowercase: the
-- service and the sanitizer compare them case- and hyphen-insensitively.
local function lease_ids(dir)
  local ids = {}
  for line in (helper.read(dir .. "/protected/ledger.jsonl") or ""):gmatch("[^\n]+") do
    for id in line:gmatch('"lease_real_id":"([^"]+)"') do ids[(id:lower():gsub("%-", ""))] = true end
  end
  return ids
end

local function assert_no_secret(text, ids, what)
  local flat = text:lower():gsub("%-", "")
  for id in pairs(ids) do
    assert.is_nil(flat:find(id, 1, true), what .. " contains a lease ID from the protected ledger")
  end
  local token = os.getenv("AZURE_STORAGE_TOKEN")
  if token and #token > 20 then
    assert.is_nil(text:find(token, 1, true), what .. " contains the bearer token")
    assert.is_nil(text:find(token:sub(1, 40), 1, true), what .. " contains part of the bearer token")
  end
  assert.is_nil(text:find("eyJ", 1, true), what .. " contains something that looks like a JWT")
  assert.is_nil(text:lower():find("sig=", 1, true), what .. " contains a sig= value")
  assert.is_nil(text:lower():find("bearer ", 1, true), what .. " contains an Authorization value")
end

-- Rows written by hand do not verify (no run wrote them), and the host
-- refuses to report what does not: these cases render them through the
-- renderer itself (spec/support/render.lua). What the host lets through
-- is the next block's, on real bundles.
describe("report from rows built by hand", function()
  local render = require("support.render").render
  teardown(helper.cleanup)

  it("escapes every string from the rows into the HTML and the Markdown", function()
    local dir = B.write(helper.tmpdir() .. "/ev", B.sample { decision = "HOLD" })
    local rc, _, err, html, md = render(dir)
    assert.are.equal(0, rc, err)
    assert.is_nil(html:find("<script", 1, true))
    assert.is_nil(html:find("<worse>", 1, true))
    assert.is_nil(html:find("<b>1</b>", 1, true))
    assert.truthy(html:find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;", 1, true))
    assert.truthy(html:find("bad &amp; &lt;worse&gt; &quot;quoted&quot; &#39;single&#39;", 1, true))
    assert.is_nil(md:find("<script", 1, true))
    assert.is_nil(md:find("<b>", 1, true))
    -- no external resource of any kind
    assert.is_nil(html:find("https?://"))
    assert.is_nil(html:find("<link", 1, true))
    assert.is_nil(html:find("@import", 1, true))
    assert.is_nil(html:find("<script", 1, true))
    assert.is_nil(html:find("@font-face", 1, true))
  end)

  it("labels a replay as replay, never as a cloud qualification", function()
    local dir = B.write(helper.tmpdir() .. "/ev", B.sample { kind = "replay", decision = "ACCEPT" })
    local rc, _, err, html, md = render(dir)
    assert.are.equal(0, rc, err)
    local banner = html:match('<header class="banner.-</header>')
    assert.truthy(banner:find('data-endpoint-kind="replay"', 1, true))
    assert.truthy(banner:find("replay of recorded evidence: not a cloud qualification", 1, true))
    assert.matches("endpoint kind: replay", md)
    assert.matches("not a cloud qualification", md)
  end)

  it("shows HOLD's reasons verbatim, and an unexplained discrepancy as such", function()
    local dir = B.write(helper.tmpdir() .. "/ev", B.sample { kind = "emulator", decision = "HOLD" })
    local rc, _, err, html, md = render(dir)
    assert.are.equal(0, rc, err)
    assert.truthy(html:find('data-decision="HOLD"', 1, true))
    assert.truthy(html:find("<li>reason one &lt;b&gt;</li>", 1, true))
    assert.truthy(html:find("<li>reason two &amp; more</li>", 1, true))
    assert.truthy(html:find("UNEXPLAINED", 1, true))
    assert.truthy(html:find("odd &lt;status&gt; &amp; more", 1, true))
    assert.truthy(md:find("- reason one &lt;b&gt;", 1, true))
    assert.truthy(md:find("**UNEXPLAINED**", 1, true))
  end)

  it("draws one mark per request, bands only from properties reads, and the break's estimate", function()
    local dir = B.write(helper.tmpdir() .. "/ev", B.sample { decision = "WAIT" })
    local _, _, _, html = render(dir)
    local svg = html:match("<svg class=\"timeline\".-</svg>")
    -- 6 outcomes and one intent (e0007) with no outcome
    assert.are.equal(7, count(svg, '<g class="req '))
    assert.are.equal(1, count(svg, 'data%-class="NO_OUTCOME"'))
    -- leased (e0001) and breaking (e0004, e0005) and broken (e0006): each
    -- read is a band; the two breaking reads are joined; leased->breaking
    -- and breaking->broken are left as unobserved gaps, never filled
    assert.are.equal(4, count(svg, '<rect class="band st%-'))
    assert.are.equal(1, count(svg, '<rect class="band join st%-breaking"'))
    assert.are.equal(2, count(svg, '<g class="band%-gap"'))
    assert.are.equal(1, count(svg, '<g class="lease%-time" data%-event="e0003"'))
    assert.are.equal(1, count(svg, '<g class="first%-broken" data%-event="e0006"'))
    assert.are.equal(0, count(svg, 'class="bracket"'))
  end)

  it("works on a run with no decision row yet, and names the open intent", function()
    local dir = B.write(helper.tmpdir() .. "/ev", B.sample {})
    local rc, _, err, html, md = render(dir)
    assert.are.equal(0, rc, err)
    assert.truthy(html:find('data-decision="NO DECISION"', 1, true))
    assert.truthy(html:find("no decision row", 1, true))
    assert.truthy(html:find("e0007 (Lease Acquire, B)", 1, true))
    assert.matches("no decision row", md)
  end)

  it("refuses what is not an evidence directory (exit 64)", function()
    local d = helper.tmpdir()
    local rc, _, err = helper.run({ "report", d })
    assert.are.equal(64, rc)
    assert.matches("not an evidence directory", err)
    rc = helper.run({ "report", d .. "/missing" })
    assert.are.equal(64, rc)
    rc = helper.run({ "report" })
    assert.are.equal(64, rc)
  end)
end)

-- What the host reports, and refuses to, on bundles a run wrote: the
-- documented main handoff replayed offline (support.bundles).
describe("report of a bundle that must verify first", function()
  local have, bundles = pcall(require, "support.bundles")
  local rp = have and require "support.replay"
  local fixture = "documented/azure-main-handoff-accept"
  teardown(function() if have then rp.cleanup() end end)

  local function bundle(name)
    if not have then return nil end
    return bundles.replay(fixture, rp.tmpdir() .. "/" .. name)
  end

  -- The ledger writes a row in one write(2): a kill leaves it whole or
  -- absent (the crash drills report every bundle they kill), and the
  -- recovery refuses a line without its end as tampering. So does the
  -- report, as verify does (helper-28: the rows before a torn tail were
  -- drawn under an ACCEPT banner that neither verify mode gave).
  it("refuses a torn last line, as verify and the recovery do", function()
    local dir = bundle("torn")
    if not dir then return pending("no replay support") end
    assert.are.equal(0, (report(dir)))
    local rows = #helper.rows(dir)
    local f = assert(io.open(dir .. "/export/ledger.jsonl", "ab"))
    f:write('{"seq":' .. (rows + 1) .. ',"record":"outc')
    f:close()
    assert.are.equal(2, (helper.run({ "verify", "--export-only", dir })))
    local rc, out, err = helper.run({ "report", dir })
    assert.are.equal(2, rc, out .. err)
    assert.matches("report refused: .* does not verify: .*truncated last line", err)
    assert.is_nil(helper.read(dir .. "/report.html"))
  end)

  -- A signed bundle's files outside the chains (environment.json) are
  -- covered by SHA256SUMS only: one changed is a bad signature, which
  -- verify --export-only refuses, and so does the report.
  it("refuses a signed bundle whose signature no longer holds", function()
    if not have then return pending("no replay support") end
    local keys = rp.tmpdir()
    local key = bundles.keypair(keys, "operator@example.org")
    local dir = bundles.replay(fixture, rp.tmpdir() .. "/signed", { "--sign-key", key })
    local outs = rp.tmpdir()
    assert.are.equal(0, (helper.run({ "report", dir, "--out", outs .. "/ok" })))
    -- without ssh-keygen the signature cannot be checked: refused as
    -- verify refuses it (helper-29: drawn with "signature not checked")
    local nrc, nout, nerr = helper.run({ "report", dir, "--out", outs .. "/nokeygen" }, { PATH = "/nonexistent" })
    assert.are.equal(64, nrc, nout .. nerr)
    assert.matches("report refused: .*signature not checked", nerr)
    assert.is_nil(helper.read(outs .. "/nokeygen/report.html"))
    local env = assert(helper.read(dir .. "/environment.json"))
    local edited, n = env:gsub("}%s*$", ',"note":"edited"}\n')
    assert.are.equal(1, n)
    helper.write(dir .. "/environment.json", edited)
    assert.are.equal(2, (helper.run({ "verify", "--export-only", dir })))
    local rc, out, err = helper.run({ "report", dir, "--out", outs .. "/bad" })
    assert.are.equal(2, rc, out .. err)
    assert.matches("report refused: .*BAD SIGNATURE", err)
    assert.is_nil(helper.read(outs .. "/bad/report.html"))
  end)

  it("refuses an export whose chain is broken, and leaves no report behind", function()
    local dir = bundle("chain")
    if not dir then return pending("no replay support") end
    assert.are.equal(0, (report(dir)))
    local path = dir .. "/export/ledger.jsonl"
    local text, n = helper.read(path):gsub('"http_status":412', '"http_status":201', 1)
    assert.are.equal(1, n)
    helper.write(path, text)
    local rc, _, err = helper.run({ "report", dir })
    assert.are.equal(2, rc)
    assert.matches("report refused: .*chain broken at row %d+", err)
    assert.matches("removed the earlier .*report%.html", err)
    assert.is_nil(helper.read(dir .. "/report.html"))
    assert.is_nil(helper.read(dir .. "/summary.md"))
  end)

  -- The chains rewritten after the edit (support.bundles' forger) and
  -- decision.json kept in step: only re-deriving the run from its rows
  -- shows that the recorded ACCEPT no longer follows from them.
  it("refuses an ACCEPT whose rows no longer support it, chains rewritten, and says why", function()
    local src = bundle("src")
    if not src then return pending("no replay support") end
    assert.are.equal(0, (report(src))) -- the copy below takes this report along
    local dir = rp.tmpdir() .. "/forged"
    bundles.relabel(src, dir, { edit = function(t)
      local out, n = t:gsub('"http_status":412', '"http_status":201', 1)
      assert(n == 1, "no rejected write to turn into an accepted one")
      return out
    end })
    assert.truthy(helper.read(dir .. "/decision.json"):find('"decision":"ACCEPT"', 1, true))
    assert.are.equal(2, (helper.run({ "verify", "--export-only", dir })))
    local rc, out, err = helper.run({ "report", dir })
    assert.are.equal(2, rc, out .. err)
    assert.matches("report refused: .* does not verify: ", err)
    assert.matches("leaselua verify %-%-export%-only ", err)
    assert.matches("removed the earlier .*report%.html", err)
    assert.is_nil(helper.read(dir .. "/report.html"))
    assert.is_nil(helper.read(dir .. "/summary.md"))
    -- a torn last line on top changes nothing
    local f = assert(io.open(dir .. "/export/ledger.jsonl", "ab"))
    f:write('{"seq":' .. (#helper.rows(dir) + 1) .. ',"record":"outc')
    f:close()
    rc, out, err = helper.run({ "report", dir })
    assert.are.equal(2, rc, out .. err)
    assert.matches("report refused: .* does not verify: ", err)
    assert.is_nil(helper.read(dir .. "/report.html"))
  end)

  -- A problem the re-derivation finds by refusing a row (260 declarations,
  -- over the fold's limit: LL_E_USAGE, not LL_E_TAMPER) is a problem of
  -- the bundle all the same (helper-28: the report exited 70 and left the
  -- earlier ACCEPT page in place).
  it("refuses a bundle the re-derivation refuses, and removes the earlier report", function()
    local src = bundle("many")
    if not src then return pending("no replay support") end
    assert.are.equal(0, (report(src)))
    local dir = rp.tmpdir() .. "/declares"
    bundles.relabel(src, dir, { edit = function(t)
      local lines, copied = {}, false
      for l in t:gmatch("[^\n]+") do
        lines[#lines + 1] = l
        if not copied and l:find('"record":"declare"', 1, true) then
          copied = true
          for _ = 1, 260 do lines[#lines + 1] = l end
        end
      end
      for i, l in ipairs(lines) do lines[i] = l:gsub('^{"seq":%d+', '{"seq":' .. i, 1) end
      return table.concat(lines, "\n")
    end })
    local vrc, vout, verr = helper.run({ "verify", "--export-only", dir })
    assert.are.equal(2, vrc, vout .. verr)
    assert.truthy((vout .. verr):find("too many declared payloads", 1, true), vout .. verr)
    local rc, out, err = helper.run({ "report", dir })
    assert.are.equal(2, rc, out .. err)
    assert.matches("report refused: .*too many declared payloads", err)
    assert.matches("removed the earlier .*report%.html", err)
    assert.is_nil(helper.read(dir .. "/report.html"))
  end)

  it("writes exactly report.html and summary.md, and rewrites them in place", function()
    local dir = bundle("listing")
    if not dir then return pending("no replay support") end
    local before = listing(dir)
    assert.is_nil(before:find("report.html", 1, true))
    local rc, out = report(dir)
    assert.are.equal(0, rc)
    assert.matches("report: .*/report%.html", out)
    local function names(text)
      local t = {}
      for name in text:gmatch("[^\n]+") do t[#t + 1] = name end
      table.sort(t)
      return table.concat(t, " ")
    end
    local after = listing(dir)
    assert.are.equal(names(before .. "report.html\nsummary.md\n"), names(after))
    local first = helper.read(dir .. "/report.html")
    assert.are.equal(0, (report(dir)))
    assert.are.equal(after, listing(dir))
    assert.are.equal(first, helper.read(dir .. "/report.html"), "the same rows give the same report")
    assert.are.equal("644", helper.mode(dir .. "/report.html"))
  end)
end)

describe("report of a replayed main handoff", function()
  local have, rp = pcall(require, "support.replay")
  local fixture = "emulator/main-handoff-accept"
  teardown(function() if have then rp.cleanup() end end)

  it("says replay and not a cloud qualification, and leaks no secret", function()
    if not (have and helper.read(rp.fixture(fixture))) then
      pending("no replay fixture in this tree")
      return
    end
    local dir = rp.tmpdir() .. "/ev"
    local rc, out, err = rp.replay("main_handoff", fixture, dir)
    if rc == 64 then -- a host built without the replay transport (the replay specs cover it)
      pending("this host cannot replay: " .. err)
      return
    end
    assert.are.equal(0, rc, out .. err)
    local rrc, _, rerr, html, md = report(dir)
    assert.are.equal(0, rrc, rerr)
    local banner = html:match('<header class="banner.-</header>')
    assert.truthy(banner:find('data-decision="ACCEPT"', 1, true))
    assert.truthy(banner:find('data-endpoint-kind="replay"', 1, true))
    assert.truthy(banner:find("replay of recorded emulator evidence: not a cloud qualification", 1, true))
    assert.matches("endpoint kind: replay", md)
    assert.are.equal(#helper.outcomes(helper.rows(dir)), count(html, '<g class="req '))
    local ids = lease_ids(dir)
    assert.is_true(next(ids) ~= nil)
    assert_no_secret(html, ids, "report.html")
    assert_no_secret(md, ids, "summary.md")
  end)

  it("shows a deliberate stop with its reason, in the page and the summary", function()
    if not have then return pending("no replay support") end
    local dir = rp.tmpdir() .. "/stopped"
    local rc, out, err = rp.replay("main_handoff", "emulator/wait-while-breaking", dir, { "--stop-after", "8" })
    assert.are.equal(1, rc, out .. err) -- WAIT: the latest fresh read was breaking
    local rrc, _, rerr, html, md = report(dir)
    assert.are.equal(0, rrc, rerr)
    local why = "the operator asked to stop after step 8 %(%-%-stop%-after%)"
    assert.matches("The run stopped on purpose</b> %(stop%-after, at 8 fresh properties%): " .. why, html)
    assert.matches("The run %*%*stopped on purpose%*%* %(stop%-after, at 8 fresh properties%): " .. why, md)
  end)
end)

describe("report scale and bands (lib.report_svg)", function()
  require "leaselua" -- puts the embedded lib.* in package.preload
  local S = require "lib.report_svg"

  it("keeps time linear inside a cluster and compresses long idle spans", function()
    local X, segs = S.scale { { s = 0, e = 2 }, { s = 3, e = 5 }, { s = 30000, e = 30002 } }
    assert.are.equal(3, #segs)
    assert.are.equal("gap", segs[2].kind)
    -- same px per ms in both clusters
    local k1 = (X(2) - X(0)) / 2
    local k2 = (X(30002) - X(30000)) / 2
    assert.is_true(math.abs(k1 - k2) < 1e-6)
    -- 30 s of idle time take less room than 5 ms of requests
    assert.is_true(segs[2].x1 - segs[2].x0 < X(5) - X(0))
    -- monotone everywhere
    local last = -1
    for t = -10, 30010, 7 do
      assert.is_true(X(t) >= last)
      last = X(t)
    end
  end)
end)

describe("report of live runs #live", function()
  local manifest
  local function env(blob)
    local e = helper.live_env(blob)
    e.LEASELUA_CA_FILE = os.getenv("LEASELUA_CA_FILE")
    return e
  end
  setup(function() manifest = helper.manifest_file(helper.tmpdir()) end)
  teardown(helper.cleanup)

  it("an emulator ACCEPT says emulator in the banner, and leaks no secret", function()
    local dir = helper.tmpdir() .. "/main"
    local rc, out = helper.run({ "scripts/main_handoff.lua", "--break-period", "2", "--manifest", manifest,
      "--evidence", dir }, env(helper.unique_blob("report")))
    assert.are.equal(0, rc, out)
    local rrc, _, err, html, md = report(dir)
    assert.are.equal(0, rrc, err)
    local banner = html:match('<header class="banner.-</header>')
    assert.truthy(banner:find('data-decision="ACCEPT"', 1, true))
    assert.truthy(banner:find('data-endpoint-kind="emulator"', 1, true))
    assert.truthy(banner:find("emulator evidence: not a cloud qualification", 1, true))
    assert.matches("# leaselua evidence: ACCEPT %(endpoint kind: emulator%)", md)
    local ids = lease_ids(dir)
    assert.is_true(next(ids) ~= nil, "the protected ledger holds the lease IDs to look for")
    assert_no_secret(html, ids, "report.html")
    assert_no_secret(md, ids, "summary.md")
    -- the seed's narrow statement, as recorded
    assert.truthy(html:find("stale lease A no longer authorized the tested overwrite", 1, true))
    -- report files do not disturb the evidence
    local vrc, vout = helper.run({ "verify", dir })
    assert.are.equal(0, vrc, vout)
  end)

  it("a HOLD run shows its reasons", function()
    local dir = helper.tmpdir() .. "/hold"
    local rc = helper.run({ "scripts/main_handoff.lua", "--stop-after", "3", "--manifest", manifest,
      "--evidence", dir }, env(helper.unique_blob("report-hold")))
    assert.are.equal(2, rc)
    local rrc, _, err, html, md = report(dir)
    assert.are.equal(0, rrc, err)
    assert.truthy(html:find('data-decision="HOLD"', 1, true))
    for _, r in ipairs(helper.rows(dir)) do
      if r.record == "decision" then
        assert.is_true(#r.reasons > 0)
        for _, why in ipairs(r.reasons) do
          assert.truthy(html:find("<li>" .. why .. "</li>", 1, true), why)
          assert.truthy(md:find("- " .. why, 1, true), why)
        end
      end
    end
    assert_no_secret(html, lease_ids(dir), "report.html")
  end)

  it("works on a run killed mid-flow (no decision row)", function()
    local ev = helper.killed_after(9, env(helper.unique_blob("report-killed")), manifest)
    local rc, _, err, html = report(ev)
    assert.are.equal(0, rc, err)
    assert.truthy(html:find('data-decision="NO DECISION"', 1, true))
    local n = #helper.outcomes(helper.rows(ev))
    assert.are.equal(n, count(html, '<g class="req '))
    assert_no_secret(html, lease_ids(ev), "report.html")
  end)
end)
