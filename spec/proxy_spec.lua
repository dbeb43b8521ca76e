-- Corporate networks (issue 15): the proxy is resolved once, in C, and
-- recorded as scheme://host:port with its source; its credentials reach no
-- file of the evidence. Offline: a replay sends nothing, so the proxy
-- (127.0.0.1:9, nothing listens) is never contacted.
local helper = require "helper"
local cjson = require "cjson"

local root = os.getenv("PWD")
local fixture = root .. "/fixtures/emulator/main-handoff-accept.json"
local manifest = root .. "/tools/emulator/manifest.json"

local function base_env(extra)
  local env = {
    AZURE_STORAGE_ACCOUNT_URL = false, AZURE_STORAGE_TOKEN = false, AZURE_STORAGE_SAS = false,
    LEASELUA_CA_FILE = false, https_proxy = false, HTTPS_PROXY = false, all_proxy = false,
    ALL_PROXY = false, http_proxy = false, no_proxy = false, NO_PROXY = false,
  }
  for k, v in pairs(extra or {}) do env[k] = v end
  return env
end

local function handoff(dir, extra_args, env)
  local args = { "handoff", "--manifest", manifest, "--replay", fixture, "--evidence", dir }
  for _, a in ipairs(extra_args or {}) do args[#args + 1] = a end
  return helper.run(args, base_env(env))
end

local function files_containing(dir, needle)
  local p = assert(io.popen("grep -rlF -- " .. helper.quote(needle) .. " " .. helper.quote(dir)))
  local out = p:read("a")
  p:close()
  return out
end

describe("the proxy", function()
  teardown(helper.cleanup)

  it("from HTTPS_PROXY is recorded without its userinfo, with its source, and its password is in no file", function()
    local d = helper.tmpdir() .. "/ev"
    local rc, out, err = handoff(d, {}, { HTTPS_PROXY = "http://user:secret@127.0.0.1:9" })
    assert.are.equal(0, rc, out .. err)
    local env = cjson.decode((assert(helper.read(d .. "/environment.json"))))
    assert.are.same({ url = "http://127.0.0.1:9", source = "HTTPS_PROXY" }, env.proxy)
    local row = helper.rows(d)[1]
    assert.are.equal("manifest", row.record)
    assert.are.same({ url = "http://127.0.0.1:9", source = "HTTPS_PROXY" }, row.proxy)
    assert.are.equal(0, helper.run({ "verify", d }, base_env()))
    assert.are.equal(0, helper.run({ "report", d }, base_env()))
    assert.matches("proxy http://127.0.0.1:9 (from HTTPS_PROXY)", helper.read(d .. "/summary.md"), 1, true)
    assert.are.equal("", files_containing(d, "secret"))
    assert.are.equal("", files_containing(d, "user:"))
    assert.falsy((out .. err):find("secret", 1, true))
  end)

  it("records the hosts it skips (NO_PROXY) beside it, so a reviewer sees whether the account was one", function()
    local d = helper.tmpdir() .. "/ev"
    local rc, out, err = handoff(d, {}, { HTTPS_PROXY = "http://127.0.0.1:9", NO_PROXY = "127.0.0.1,.internal" })
    assert.are.equal(0, rc, out .. err)
    local env = cjson.decode((assert(helper.read(d .. "/environment.json"))))
    assert.are.same({ url = "http://127.0.0.1:9", source = "HTTPS_PROXY",
      no_proxy = "127.0.0.1,.internal", no_proxy_source = "NO_PROXY" }, env.proxy)
    assert.are.same(env.proxy, helper.rows(d)[1].proxy)
  end)

  it("when none is set is recorded as none, and the manifest row has no proxy field", function()
    local d = helper.tmpdir() .. "/ev"
    local rc, out, err = handoff(d, {}, {})
    assert.are.equal(0, rc, out .. err)
    local env = cjson.decode((assert(helper.read(d .. "/environment.json"))))
    assert.are.equal(cjson.null, env.proxy.url)
    assert.are.equal("none", env.proxy.source)
    assert.is_nil(helper.rows(d)[1].proxy)
  end)

  it("--proxy wins over the variables", function()
    local d = helper.tmpdir() .. "/ev"
    local rc, out, err = handoff(d, { "--proxy", "https://u:pw@proxy.corp.example:8443" },
      { HTTPS_PROXY = "http://127.0.0.1:9" })
    assert.are.equal(0, rc, out .. err)
    local env = cjson.decode((assert(helper.read(d .. "/environment.json"))))
    assert.are.same({ url = "https://proxy.corp.example:8443", source = "--proxy" }, env.proxy)
    assert.are.equal("", files_containing(d, "u:pw"))
  end)

  it("--proxy notaurl is a one-line usage error, exit 64, and no evidence is made", function()
    local d = helper.tmpdir() .. "/ev"
    local rc, out, err = handoff(d, { "--proxy", "notaurl" }, {})
    assert.are.equal(64, rc)
    assert.are.equal("", out)
    assert.are.equal(1, helper.count(err, "\n"), err)
    assert.matches("^leaselua: LL_E_USAGE: the proxy from %-%-proxy is not a URL", err)
    assert.is_nil(helper.read(d .. "/environment.json"))
  end)

  -- Invariant 10 (helper-34): through a proxy on another host, loopback is
  -- that host's, and over http the token would cross the network in clear.
  it("off loopback, for a loopback account URL, is refused before anything is made or sent (exit 64)", function()
    for _, c in ipairs {
      { url = "http://127.0.0.1:10999/devstoreaccount1", var = "http_proxy", clear = true },
      { url = "https://127.0.0.1:10999/devstoreaccount1", var = "HTTPS_PROXY", clear = false },
    } do
      local d = helper.tmpdir() .. "/ev"
      local rc, out, err = helper.run({ "handoff", "--manifest", manifest, "--evidence", d },
        base_env { AZURE_STORAGE_ACCOUNT_URL = c.url, AZURE_STORAGE_TOKEN = "x.y.z",
          [c.var] = "http://192.0.2.1:3128" })
      assert.are.equal(64, rc, out .. err)
      assert.are.equal(1, helper.count(err, "\n"), err)
      assert.matches("^leaselua: LL_E_INSECURE: the proxy from " .. c.var ..
        " %(http://192%.0%.2%.1:3128%) is not on loopback, and the account URL names loopback", err)
      assert.are.equal(c.clear, err:find("the token, in clear", 1, true) ~= nil, err)
      assert.is_nil(helper.read(d .. "/environment.json"))
    end
  end)

  it("a bad HTTPS_PROXY names the variable and never its text", function()
    local rc, _, err = handoff(helper.tmpdir() .. "/ev", {}, { HTTPS_PROXY = "ftp://user:secret@host" })
    assert.are.equal(64, rc)
    assert.are.equal(1, helper.count(err, "\n"), err)
    assert.matches("HTTPS_PROXY", err, 1, true)
    assert.falsy(err:find("secret", 1, true))
  end)
end)

describe("the embedding API's proxy key", function()
  local ll = require "leaselua"
  teardown(helper.cleanup)

  -- a fixture with no exchange: the run opens and closes, sending nothing
  local empty = helper.write(helper.tmpdir() .. "/empty.json",
    '{"format": "leaselua-fixture/1", "endpoint_kind": "emulator", "description": "no exchange", ' ..
    '"source": "written by spec/proxy_spec.lua", "exchanges": []}')

  local function open(dir, extra)
    local cfg = {
      name = "embed-proxy", evidence = dir, manifest = manifest, replay = empty,
      account_url = "https://replay.invalid",
    }
    for k, v in pairs(extra) do cfg[k] = v end
    return ll.open(cfg)
  end

  it("is resolved and recorded like --proxy, without its userinfo; none reads no variable", function()
    local d = helper.tmpdir() .. "/ev"
    local run = open(d, { proxy = "http://user:secret@127.0.0.1:9", no_proxy = ".internal" })
    run:close()
    local env = cjson.decode((assert(helper.read(d .. "/environment.json"))))
    assert.are.same({ url = "http://127.0.0.1:9", source = "--proxy", no_proxy = ".internal",
      no_proxy_source = "--no-proxy" }, env.proxy)
    assert.are.equal("", files_containing(d, "secret"))
    local d2 = helper.tmpdir() .. "/ev"
    run = open(d2, {})
    run:close()
    env = cjson.decode((assert(helper.read(d2 .. "/environment.json"))))
    assert.are.equal("none", env.proxy.source)
  end)

  it("a bad proxy raises LL_E_USAGE before anything is made", function()
    local d = helper.tmpdir() .. "/ev"
    local ok, e = pcall(open, d, { proxy = "ftp://user:secret@p:21" })
    assert.is_false(ok)
    assert.are.equal("LL_E_USAGE", e.code)
    assert.falsy(tostring(e):find("secret", 1, true))
    assert.is_nil(helper.read(d .. "/environment.json"))
  end)
end)
