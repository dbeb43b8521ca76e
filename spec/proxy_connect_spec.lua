-- Through an http proxy (a loopback CONNECT proxy, spec/support/
-- connect_proxy.js) against the live Azurite: the tunnel's CONNECT is not
-- counted as a request head (one head per attempt, so a proxied run can
-- ACCEPT), and a CONNECT the proxy refuses is a request that never left:
-- NOT_SENT, 0 heads, EVIDENCE_ERROR, and the run ends HOLD with no
-- mutation after it (docs/API.md, "Corporate networks" in the man page).
local helper = require "helper"

local function proxy(mode)
  local d = helper.tmpdir()
  local log = d .. "/connects.log"
  local p = assert(io.popen(string.format("exec node %s %s %s 120",
    helper.quote(helper.root .. "/spec/support/connect_proxy.js"), helper.quote(log), mode), "r"))
  local port, pid = tonumber(p:read("l")), tonumber(p:read("l"))
  assert(port and pid, "connect_proxy did not start")
  local s = { url = "http://127.0.0.1:" .. port }
  function s.lines()
    local t = {}
    for l in (helper.read(log) or ""):gmatch("[^\n]+") do t[#t + 1] = l end
    return t
  end
  function s.stop()
    os.execute("kill " .. pid .. " 2>/dev/null")
    p:close()
  end
  return s
end

local function handoff(px, extra)
  local d = helper.tmpdir()
  local env = helper.live_env(helper.unique_blob("px"))
  env.LEASELUA_CA_FILE = os.getenv("LEASELUA_CA_FILE")
  env.HTTPS_PROXY, env.https_proxy, env.ALL_PROXY, env.all_proxy = px.url, false, false, false
  env.NO_PROXY, env.no_proxy = false, false
  local args = { "handoff", "--manifest", helper.manifest_file(d), "--break-period", "2", "--evidence", d .. "/ev" }
  for _, a in ipairs(extra or {}) do args[#args + 1] = a end
  local rc, out, err = helper.run(args, env)
  return rc, out .. err, d .. "/ev"
end

local function outcomes(ev)
  local t = {}
  for _, r in ipairs(helper.rows(ev)) do
    if r.record == "outcome" then t[#t + 1] = r end
  end
  return t
end

describe("an http proxy's CONNECT #live", function()
  teardown(helper.cleanup)

  it("tunnelled: one request head per attempt, recorded as HTTPS_PROXY, and the handoff ACCEPTs", function()
    if not helper.have_live() then return pending("needs the live Azurite of tools/run-specs.sh") end
    local px = proxy("tunnel")
    local rc, out, ev = handoff(px)
    local lines = px.lines()
    px.stop()
    assert.are.equal(0, rc, out)
    local rows, mutations = outcomes(ev), 0
    for _, r in ipairs(rows) do
      assert.are.equal(1, r.emitted_requests, r.event_id)
      if r.operation ~= "Get Blob" and r.operation ~= "Get Blob Properties" then mutations = mutations + 1 end
    end
    -- every mutation on a fresh connection, so a CONNECT each; reads may share one
    assert.is_true(#lines >= mutations and #lines <= #rows, #lines .. " CONNECTs for " .. #rows .. " requests")
    for _, l in ipairs(lines) do assert.matches("^CONNECT 127%.0%.0%.1:%d+ 200$", l) end
    assert.are.same({ url = px.url .. "", source = "HTTPS_PROXY" }, helper.rows(ev)[1].proxy)
  end)

  it("refused at once: the preflight read was never sent (0 heads, EVIDENCE_ERROR), HOLD, exit 64", function()
    if not helper.have_live() then return pending("needs the live Azurite of tools/run-specs.sh") end
    local px = proxy("refuse")
    local rc, out, ev = handoff(px)
    local lines = px.lines()
    px.stop()
    -- invariant 15: a target the preflight cannot read stops the run
    -- before any mutation, exit 64 (DESIGN.md section 5), decision HOLD
    assert.are.equal(64, rc, out)
    assert.matches("CONNECT tunnel failed, response 403", out, 1, true)
    local rows = outcomes(ev)
    assert.are.equal(1, #rows, out)
    assert.are.equal("NOT_SENT", rows[1].outcome)
    assert.are.equal(0, rows[1].emitted_requests)
    assert.are.equal("EVIDENCE_ERROR", rows[1].result_classification)
    assert.are.equal(1, #lines)
    assert.matches("^CONNECT 127%.0%.0%.1:%d+ 403$", lines[1])
    assert.matches("DECISION: HOLD", out, 1, true)
  end)

  it("refused for a mutation (Create Container): NOT_SENT, 0 heads, HOLD, nothing sent after it", function()
    if not helper.have_live() then return pending("needs the live Azurite of tools/run-specs.sh") end
    local px = proxy("2")
    local rc, out, ev = handoff(px)
    local lines = px.lines()
    px.stop()
    assert.are.equal(2, rc, out)
    local rows = outcomes(ev)
    assert.are.equal(2, #rows, out)
    assert.are.equal("Get Blob Properties", rows[1].operation)
    assert.are.equal(1, rows[1].emitted_requests)
    assert.are.equal("Create Container", rows[2].operation)
    assert.are.equal("NOT_SENT", rows[2].outcome)
    assert.are.equal(0, rows[2].emitted_requests)
    assert.are.equal("EVIDENCE_ERROR", rows[2].result_classification)
    assert.are.same({ "200", "403" }, { lines[1]:match("%d+$"), lines[2]:match("%d+$") })
    assert.are.equal(2, #lines)
    assert.matches("DECISION: HOLD", out, 1, true)
    assert.are.equal(0, (helper.run({ "verify", ev })))
  end)
end)

-- A plain-http (emulator) target is tunnelled too: a forwarding proxy sees
-- the request line and may re-send a mutation itself, which the head count
-- would not show. Offline: a counting loopback server as the target.
describe("a plain-http target behind an http proxy", function()
  teardown(helper.cleanup)

  it("goes through a CONNECT tunnel, never as a forwarded request", function()
    local px, srv = proxy("tunnel"), helper.count_server(30)
    local d = helper.tmpdir()
    local s = helper.write(d .. "/read.lua",
      'local ll = require "leaselua"\nlocal run = ll.open { name = "px-plain" }\nrun:properties()\n')
    local rc, out, err = helper.run({ s, "--manifest", helper.manifest_file(d), "--evidence", d .. "/ev",
      "--timeout-ms", "3000" }, {
      AZURE_STORAGE_ACCOUNT_URL = srv.url, AZURE_STORAGE_TOKEN = helper.dev_token(),
      AZURE_STORAGE_BLOB = helper.unique_blob("pxplain"), AZURE_STORAGE_SAS = false, LEASELUA_CA_FILE = false,
      http_proxy = px.url, HTTPS_PROXY = false, https_proxy = false, ALL_PROXY = false, all_proxy = false,
      NO_PROXY = false, no_proxy = false,
    })
    local lines = px.lines()
    px.stop()
    srv.stop()
    assert.is_true(#lines >= 1, "the proxy saw nothing (exit " .. tostring(rc) .. "): " .. out .. err)
    for _, l in ipairs(lines) do assert.matches("^CONNECT 127%.0%.0%.1:%d+ 200$", l) end
  end)
end)
