-- The report of a main handoff in a real browser: Debian's chromium,
-- headless, with an empty profile. The DOM it parsed must hold one mark per
-- request, the probe bracket and the state bands; the screenshot is a PNG.
local helper = require "helper"

local FLAGS = "--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking " ..
  "--disable-component-update --disable-sync"

-- chromium(args) -> stdout; raises with the browser's stderr on failure.
local function chromium(args)
  local d = helper.tmpdir()
  local profile = d .. "/profile" -- empty, fresh for every run
  os.execute("mkdir " .. helper.quote(profile))
  local cmd = string.format("timeout 120 chromium %s --user-data-dir=%s %s >%s/out 2>%s/err; echo $? >%s/rc", FLAGS,
    helper.quote(profile), args, d, d, d)
  os.execute(cmd)
  local rc = tonumber(helper.read(d .. "/rc"))
  assert(rc == 0, "chromium exited " .. tostring(rc) .. ": " .. (helper.read(d .. "/err") or ""))
  return helper.read(d .. "/out") or ""
end

local count = helper.count

-- The evidence of a main handoff that ended ACCEPT: a replay of the
-- recorded fixture when the fixture and --replay exist, else a live run
-- against the Azurite of tools/run-specs.sh.
local function main_handoff(manifest)
  local fixture = "emulator/main-handoff-accept"
  local have, rp = pcall(require, "support.replay")
  if have and helper.read(rp.fixture(fixture)) then
    local dir = helper.tmpdir() .. "/replay"
    local rc = rp.replay("main_handoff", fixture, dir)
    if rc == 0 then return dir, "replay of fixtures/" .. fixture .. ".json" end
  end
  assert(helper.have_live(), "no replay fixture and no live Azurite: run through tools/run-specs.sh")
  local dir = helper.tmpdir() .. "/live"
  local env = helper.live_env(helper.unique_blob("browser"))
  env.LEASELUA_CA_FILE = os.getenv("LEASELUA_CA_FILE")
  local rc, out = helper.run({ "scripts/main_handoff.lua", "--break-period", "2", "--manifest", manifest,
    "--evidence", dir }, env)
  assert(rc == 0, out)
  return dir, "live emulator run"
end

describe("report in headless chromium #browser", function()
  local dir, rows, source
  setup(function()
    assert(os.execute("command -v chromium >/dev/null"), "chromium is not installed (tools/deps.sh installs it)")
    dir, source = main_handoff(helper.manifest_file(helper.tmpdir()))
    print("report_browser_spec: evidence from a " .. source)
    local rc, _, err = helper.run({ "report", dir })
    assert(rc == 0, err)
    rows = helper.rows(dir)
  end)
  teardown(helper.cleanup)

  it("renders the timeline: one mark per request, the bracket, the state bands", function()
    local dom = chromium("--dump-dom " .. helper.quote("file://" .. dir .. "/report.html"))
    assert.matches("</html>%s*$", dom)
    local svg = dom:match('<svg class="timeline".-</svg>')
    assert.is_not_nil(svg, "no timeline in the DOM chromium built")
    local outcomes = helper.outcomes(rows)
    assert.is_true(#outcomes > 20)
    assert.are.equal(#outcomes, count(svg, '<g class="req '))
    for _, o in ipairs(outcomes) do
      assert.truthy(svg:find('<g class="req c-' .. o.result_classification .. '" data-event="' .. o.event_id .. '"',
        1, true), o.event_id)
    end
    local windows = {}
    for _, r in ipairs(rows) do
      if r.record == "finding" and r.kind == "window" then windows[#windows + 1] = r end
    end
    assert.is_true(#windows >= 1)
    assert.are.equal(#windows, count(svg, 'class="bracket"'))
    for _, w in ipairs(windows) do
      assert.truthy(svg:find('<g class="bracket" data-before="' .. w.before_event .. '" data-after="' ..
        w.after_event .. '"', 1, true))
    end
    for _, state in ipairs { "leased", "breaking", "broken" } do
      assert.is_true(count(svg, '<rect class="band st%-' .. state .. '"') >= 1, "no band for " .. state)
    end
    local breaks = 0
    for _, o in ipairs(outcomes) do
      if o.operation == "Lease Break" and o.x_ms_lease_time then breaks = breaks + 1 end
    end
    assert.is_true(breaks >= 1)
    assert.are.equal(breaks, count(svg, '<g class="lease%-time"'))
    assert.truthy(dom:find('data-endpoint-kind="' .. rows[1].endpoint_kind .. '"', 1, true))
  end)

  it("takes a 1280 px wide screenshot", function()
    local png = helper.tmpdir() .. "/report.png"
    chromium("--hide-scrollbars --window-size=1280,2000 --screenshot=" .. helper.quote(png) .. " " ..
      helper.quote("file://" .. dir .. "/report.html"))
    local data = helper.read(png)
    assert.is_not_nil(data, "no screenshot written")
    assert.are.equal("\137PNG\r\n\26\n", data:sub(1, 8))
    local w, h = string.unpack(">I4>I4", data, 17)
    assert.are.equal(1280, w)
    assert.are.equal(2000, h)
    assert.is_true(#data > 50000, "the screenshot is suspiciously small: " .. #data .. " bytes")
  end)
end)
