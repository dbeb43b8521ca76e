-- Bad input to the host: each case exits 64 with exactly one line on stderr
-- that names the problem (and, where the host says it, what to do), and
-- nothing reaches the network. "Nothing sent" is measured by a counting
-- plain-http server on loopback (spec/support/count_server.js): the target
-- of every case but the one that is refused for the target itself.
-- Offline: no Azurite needed (a valid token is minted with `leaselua
-- dev-token`).
local helper = require "helper"
local record = require("support.faultproxy").record -- docs/RELIABILITY.md's table

local SCRIPT = helper.root .. "/scripts/main_handoff.lua"

local function exists(path)
  return os.execute("test -e " .. helper.quote(path)) == true
end

local function lines(s)
  local out = {}
  for l in s:gmatch("([^\n]*)\n") do out[#out + 1] = l end
  if s ~= "" and s:sub(-1) ~= "\n" then out[#out + 1] = s:match("[^\n]*$") end
  return out
end

-- The first non-loopback IPv4 address of this machine, or nil.
local function local_non_loopback_ip()
  local p = io.popen("hostname -I 2>/dev/null")
  local all = p and p:read("a") or ""
  if p then p:close() end
  for ip in all:gmatch("%S+") do
    if ip:match("^%d+%.%d+%.%d+%.%d+$") and not ip:match("^127%.") then return ip end
  end
  return nil
end

describe("host bad input", function()
  local token, manifest
  local srv, ev

  setup(function()
    token = helper.dev_token()
    assert.is_truthy(token and token:match("^[%w_-]+%.[%w_-]+%.[%w_-]*$"))
    manifest = helper.manifest_file(helper.tmpdir())
  end)

  teardown(function()
    helper.cleanup()
  end)

  before_each(function()
    srv = helper.count_server(20)
    ev = helper.tmpdir() .. "/ev"
  end)

  after_each(function()
    if srv then srv.stop() end
    srv = nil
  end)

  -- A configuration that passes every check: each case changes one thing.
  local function base_env(over)
    local env = {
      AZURE_STORAGE_ACCOUNT_URL = srv.url,
      AZURE_STORAGE_CONTAINER = "lease-handoff-lab",
      AZURE_STORAGE_BLOB = helper.unique_blob("bad-input"),
      AZURE_STORAGE_TOKEN = token,
      AZURE_STORAGE_SAS = false,
      LEASELUA_CA_FILE = false,
      LEASELUA_EVIDENCE_ROOT = false,
    }
    for k, v in pairs(over or {}) do env[k] = v end
    return env
  end

  local function base_args(extra, opts)
    opts = opts or {}
    local args = { SCRIPT }
    if not opts.no_manifest then
      args[#args + 1] = "--manifest"
      args[#args + 1] = opts.manifest or manifest
    end
    args[#args + 1] = "--evidence"
    args[#args + 1] = ev
    for _, a in ipairs(extra or {}) do args[#args + 1] = a end
    return args
  end

  -- Runs the host and checks the common contract; returns the stderr line.
  local function refused(args, env, patterns, opts)
    opts = opts or {}
    local rc, out, err = helper.run_env(args, env)
    local l = lines(err)
    assert.are.equal(64, rc, "exit code; stderr: " .. err)
    assert.are.equal(1, #l, "stderr must be exactly one line, got:\n" .. err)
    assert.matches("^leaselua: ", l[1])
    for _, pat in ipairs(patterns) do
      assert.matches(pat, l[1])
    end
    assert.are.equal("", out, "nothing on stdout")
    assert.are.equal(0, srv.count(), "requests received by the counting server")
    assert.are.equal(0, srv.connections(), "connections received by the counting server")
    if not opts.evidence_may_exist then
      assert.is_false(exists(ev), "a refused configuration must not create the evidence directory")
    end
    -- for the bad input table of docs/RELIABILITY.md
    record { suite = "bad_input", rc = rc, line = l[1], requests = srv.count() }
    return l[1], rc
  end

  it("the base configuration does reach the counting server (control)", function()
    local rc, out = helper.run_env(base_args(), base_env())
    -- The server answers 500 to Create Container: an unknown outcome, HOLD.
    assert.are.equal(2, rc)
    assert.matches("DECISION: HOLD", out)
    assert.is_true(srv.count() >= 1)
    assert.is_true(exists(ev .. "/protected/ledger.jsonl"))
  end)

  it("refuses http:// to a non-loopback host before any connection", function()
    local line = refused(base_args(), base_env { AZURE_STORAGE_ACCOUNT_URL = "http://example.com/x" },
      { "LL_E_INSECURE", "example%.com", "https" })
    assert.not_matches("/x", line) -- names the host, not the whole URL
  end)

  it("refuses http:// to a non-loopback local address without connecting to it", function()
    local ip = local_non_loopback_ip()
    if not ip then
      pending("this machine has no non-loopback IPv4 address")
      return
    end
    -- The server listens on that address: a connection would be counted.
    srv.stop()
    srv = helper.count_server(20, ip)
    local host_pattern = ip:gsub("%.", "%%.")
    refused(base_args(), base_env { AZURE_STORAGE_ACCOUNT_URL = srv.url }, { "LL_E_INSECURE", host_pattern, "https" })
  end)

  it("refuses a run without any credential", function()
    refused(base_args(), base_env { AZURE_STORAGE_TOKEN = false, AZURE_STORAGE_SAS = false },
      { "LL_E_AUTH", "no credential: set AZURE_STORAGE_TOKEN", "AZURE_STORAGE_SAS" })
  end)

  it("refuses an expired token", function()
    local expired = helper.jwt('{"aud":"https://storage.azure.com","exp":1000}')
    local line = refused(base_args(), base_env { AZURE_STORAGE_TOKEN = expired },
      { "LL_E_AUTH", "expired at 1970%-01%-01T00:16:40", "get a fresh token" })
    assert.is_nil(line:find(expired, 1, true), "the token itself is never printed")
  end)

  it("refuses a token that expires before the run's deadline", function()
    local soon = helper.jwt(string.format('{"aud":"https://storage.azure.com","exp":%d}', os.time() + 60))
    refused(base_args(), base_env { AZURE_STORAGE_TOKEN = soon },
      { "LL_E_AUTH", "before the run's deadline", "get a fresh token" })
  end)

  it("refuses a token that is not a JWT", function()
    refused(base_args(), base_env { AZURE_STORAGE_TOKEN = "opaque-secret-value" },
      { "LL_E_AUTH", "not a JWT" })
  end)

  it("refuses when the token command fails", function()
    refused(base_args { "--token-command", "false" }, base_env { AZURE_STORAGE_TOKEN = false },
      { "LL_E_AUTH", "token command failed %(exit 1%)", "check the command false" })
  end)

  it("runs the token command without a shell: shell syntax is text", function()
    local marker = helper.tmpdir() .. "/marker"
    refused(base_args { "--token-command", "printf %s;$(touch " .. marker .. ")|`touch " .. marker .. "`" },
      base_env { AZURE_STORAGE_TOKEN = false }, { "LL_E_AUTH", "token from the token command is not a JWT" })
    assert.is_false(exists(marker), "a shell ran the command")
  end)

  it("refuses a token command that is not a program", function()
    refused(base_args { "--token-command", "exit 3" }, base_env { AZURE_STORAGE_TOKEN = false },
      { "LL_E_AUTH", "cannot start exit", "runs without a shell" })
  end)

  it("refuses a token command with quotes, which no shell would remove", function()
    refused(base_args { "--token-command", "az account get-access-token --query 'accessToken'" },
      base_env { AZURE_STORAGE_TOKEN = false },
      { "LL_E_USAGE", "quote", "without a shell" })
  end)

  it("refuses a SAS and a token configured together", function()
    refused(base_args(), base_env { AZURE_STORAGE_SAS = "se=2099-01-01&sig=c2lnLXZhbHVl" },
      { "LL_E_USAGE", "2 credentials are configured %(AZURE_STORAGE_TOKEN and AZURE_STORAGE_SAS%)",
        "keep exactly one" })
  end)

  it("refuses a token command beside AZURE_STORAGE_TOKEN", function()
    refused(base_args { "--token-command", "false" }, base_env(),
      { "LL_E_USAGE", "2 credentials are configured %(AZURE_STORAGE_TOKEN and %-%-token%-command%)",
        "keep exactly one" })
  end)

  it("refuses a SAS that expires before the run's deadline", function()
    local se = os.date("!%Y-%m-%dT%H:%M:%SZ", os.time() + 60)
    local line = refused(base_args(), base_env { AZURE_STORAGE_TOKEN = false,
        AZURE_STORAGE_SAS = "sv=2023-11-03&se=" .. se .. "&sig=c2lnLXZhbHVl" },
      { "LL_E_AUTH", "AZURE_STORAGE_SAS expires at", "before the run's deadline",
        "issue a SAS valid for the whole run, or shorten the deadline" })
    assert.not_matches("c2lnLXZhbHVl", line)
  end)

  it("refuses a SAS without an expiry", function()
    refused(base_args(), base_env { AZURE_STORAGE_TOKEN = false, AZURE_STORAGE_SAS = "sv=2023-11-03&sig=c2lnLXZhbHVl" },
      { "LL_E_AUTH", "no se= expiry" })
  end)

  it("refuses a SAS whose start is in the future", function()
    local st = os.date("!%Y-%m-%dT%H:%M:%SZ", os.time() + 3600)
    refused(base_args(), base_env { AZURE_STORAGE_TOKEN = false,
        AZURE_STORAGE_SAS = "st=" .. st .. "&se=2099-01-01&sig=c2lnLXZhbHVl" },
      { "LL_E_AUTH", "is not valid before", "%(st=%)" })
  end)

  it("refuses a manifest api_version that is not a date", function()
    local m = helper.write(helper.tmpdir() .. "/banana.json",
      '{"resource_owner":"o","ticket":"T","permitted_actors":["A","B","operator","observer"],' ..
      '"cleanup_authority":"o","api_version":"banana"}')
    refused(base_args(nil, { manifest = m }), base_env(),
      { "LL_E_MANIFEST", "'api_version' is \"banana\"", "YYYY%-MM%-DD" })
  end)

  it("refuses a manifest api_version leaselua does not know", function()
    local m = helper.write(helper.tmpdir() .. "/unlisted.json",
      '{"resource_owner":"o","ticket":"T","permitted_actors":["A","B","operator","observer"],' ..
      '"cleanup_authority":"o","api_version":"2099-01-01"}')
    refused(base_args(nil, { manifest = m }), base_env(),
      { "LL_E_MANIFEST", "2099%-01%-01 is not an Azure Storage service version", "%-%-allow%-api%-version" })
  end)

  it("refuses an --api-version leaselua does not list, before any request", function()
    refused(base_args({ "--api-version", "2099-01-01" }), base_env(),
      { "LL_E_USAGE", "%-%-api%-version 2099%-01%-01 is not an Azure Storage service version",
        "%-%-allow%-api%-version" })
  end)

  it("refuses an --api-version list with an unlisted, malformed or repeated version", function()
    refused(base_args({ "--api-version", "2023-11-03,2099-01-01" }), base_env(),
      { "LL_E_USAGE", "2099%-01%-01 is not an Azure Storage service version" })
    refused(base_args({ "--api-version", "2021-12-02,banana" }), base_env(),
      { "LL_E_USAGE", "\"banana\" is not a service version date" })
    refused(base_args({ "--api-version", "2023-11-03,2021-12-02,2023-11-03" }), base_env(),
      { "LL_E_USAGE", "names 2023%-11%-03 twice" })
    refused(base_args({ "--api-version", "2023-11-03,,2021-12-02" }), base_env(),
      { "LL_E_USAGE", "an empty entry" })
  end)

  it("refuses a list of versions with --recover, and with a manifest naming its api_version", function()
    refused(base_args({ "--api-version", "2021-12-02,2023-11-03", "--recover" }), base_env(),
      { "LL_E_USAGE", "%-%-recover reopens one interrupted run" })
    local m = helper.write(helper.tmpdir() .. "/versioned.json",
      '{"resource_owner":"o","ticket":"T","permitted_actors":["A","B","operator","observer"],' ..
      '"cleanup_authority":"o","api_version":"2023-11-03"}')
    refused(base_args({ "--api-version", "2021-12-02,2023-11-03" }, { manifest = m }), base_env(),
      { "LL_E_USAGE", "the manifest names api_version 2023%-11%-03", "leave api_version out" })
  end)

  it("refuses a script that sets max_single_put, before anything is opened", function()
    -- The host fixes max_single_put at 1 MiB (invariant 14): a script
    -- cannot lower or raise it.
    local script = helper.write(helper.tmpdir() .. "/too_large.lua", [[
local ll = require "leaselua"
local run <close> = ll.open { max_single_put = 10 }
run:declare(0, "A")
run:unbound("A"):put(0)
print("the put returned")
]])
    refused({ script, "--manifest", manifest, "--evidence", ev }, base_env(),
      { "LL_E_USAGE", "'max_single_put' is the operator's to set", "fixed at 1 MiB" })
  end)

  it("refuses a payload over max_single_put before sending it (embedding API)", function()
    -- Only an embedder (the stock-Lua module) sets max_single_put: the
    -- refusal of invariant 7 is checked there, against the same counting
    -- server.
    local ll = require "leaselua"
    local token_file = helper.write(helper.tmpdir() .. "/token", token)
    local run = ll.open {
      evidence = ev, manifest = manifest, max_single_put = 10,
      account_url = srv.url, container = "lease-handoff-lab", blob = helper.unique_blob("bad-input"),
      auth = { kind = "file", token_file = token_file },
    }
    run:declare(0, "A")
    local ok, err = pcall(function() return run:unbound("A"):put(0) end)
    run:close()
    assert.is_false(ok)
    assert.are.equal("LL_E_TOO_LARGE", err.code)
    assert.matches("57 bytes exceeds max_single_put_size 10", tostring(err))
    assert.are.equal(0, srv.count(), "requests received by the counting server")
    assert.are.equal(0, srv.connections(), "connections received by the counting server")
    -- The refusal is recorded, and no request was ever intended.
    local rows = helper.rows(ev)
    local refusals, intents = {}, 0
    for _, r in ipairs(rows) do
      if r.record == "refusal" then refusals[#refusals + 1] = r end
      if r.record == "intent" or r.record == "outcome" then intents = intents + 1 end
    end
    assert.are.equal(1, #refusals)
    assert.are.equal("LL_E_TOO_LARGE", refusals[1].code)
    assert.are.equal(7, refusals[1].invariant)
    assert.are.equal(0, intents)
  end)

  it("refuses an account URL that is not a URL", function()
    refused(base_args(), base_env { AZURE_STORAGE_ACCOUNT_URL = "not a url" }, { "LL_E_BAD_URL", "URL" })
  end)

  it("refuses an account URL with user information", function()
    local line = refused(base_args(), base_env { AZURE_STORAGE_ACCOUNT_URL = "https://user@host/x" },
      { "LL_E_BAD_URL", "user@host", "credentials" })
    assert.not_matches("https://user@host/x", line, 1, true)
  end)

  it("refuses a run without --manifest", function()
    refused(base_args(nil, { no_manifest = true }), base_env(), { "LL_E_MANIFEST", "no manifest", "%-%-manifest" })
  end)

  it("refuses a manifest file that cannot be read", function()
    refused(base_args(nil, { manifest = helper.tmpdir() .. "/absent.json" }), base_env(),
      { "LL_E_MANIFEST", "absent%.json", "%-%-manifest" })
  end)

  it("refuses a manifest without a ticket, naming the field", function()
    local m = helper.write(helper.tmpdir() .. "/no-ticket.json",
      '{"resource_owner":"storage-team","permitted_actors":["A","B","operator","observer"],' ..
      '"cleanup_authority":"storage-team"}')
    refused(base_args(nil, { manifest = m }), base_env(), { "LL_E_MANIFEST", "'ticket'", "add it to the manifest" })
  end)

  it("refuses a manifest that is not JSON", function()
    local m = helper.write(helper.tmpdir() .. "/broken.json", '{"ticket": ')
    refused(base_args(nil, { manifest = m }), base_env(), { "LL_E_MANIFEST", "not valid JSON" })
  end)

  it("refuses an evidence directory that is not empty and leaves it untouched", function()
    os.execute("mkdir -p " .. helper.quote(ev))
    local keep = "earlier evidence, do not touch\n"
    helper.write(ev .. "/existing.txt", keep)
    refused(base_args(), base_env(), { "LL_E_EVIDENCE_EXISTS", "already holds evidence", "choose a new %-%-evidence" },
      { evidence_may_exist = true })
    assert.are.equal(keep, helper.read(ev .. "/existing.txt"))
    local p = io.popen("ls -A " .. helper.quote(ev))
    local listing = p:read("a")
    p:close()
    assert.are.equal("existing.txt\n", listing)
  end)

  it("refuses an unknown script argument", function()
    refused(base_args { "--bogus" }, base_env(), { "LL_E_USAGE", "unknown argument '%-%-bogus'" })
  end)

  it("refuses a script option without its value", function()
    refused(base_args { "--break-period" }, base_env(), { "LL_E_USAGE", "%-%-break%-period needs a value" })
  end)

  it("refuses an unknown host option", function()
    local rc, out, err = helper.run_env({ "--bogus" }, base_env())
    assert.are.equal(64, rc)
    assert.are.equal("", out)
    assert.matches("^leaselua: unknown option %-%-bogus: see leaselua %-%-help\n$", err)
    assert.are.equal(0, srv.count())
  end)
end)
