-- examples/ci: the two workflow files parse as YAML (lyaml, Debian's
-- lua-yaml) and call examples/ci/qualify.sh for every step that matters;
-- and qualify.sh runs end to end, as the workflows run it, against two
-- Azurite "accounts" (the one tools/run-specs.sh started and a second one
-- started here by tools/emulator/start), credentials by token-command.
local helper = require "helper"
local cjson = require "cjson"

local SCRIPT = "examples/ci/qualify.sh"
local TOKEN_COMMAND = "az account get-access-token --resource https://storage.azure.com/ --query accessToken -o tsv"

local function load_yaml(path)
  local lyaml = require "lyaml"
  local text = assert(helper.read(helper.root .. "/" .. path), path)
  return lyaml.load(text)
end

-- Every string in a YAML tree, with the path of keys that leads to it.
local function strings(t, out, path)
  out = out or {}
  for k, v in pairs(t) do
    local p = (path or "") .. "/" .. tostring(k)
    if type(v) == "table" then
      strings(v, out, p)
    elseif type(v) == "string" then
      out[#out + 1] = { path = p, value = v }
    end
  end
  return out
end

-- The versions leaselua accepts: a list it refuses names the version; one
-- it takes gets as far as the next rule (no target).
local function versions_known(list)
  local rc, _, err = helper.run({ "handoff", "--api-version", table.concat(list, ",") },
    { AZURE_STORAGE_ACCOUNT_URL = false, AZURE_STORAGE_TOKEN = false })
  return rc == 64 and err:find("no target", 1, true) ~= nil, err
end

local function step_runs(steps, field)
  local out = {}
  for _, s in ipairs(steps) do
    local v = field(s)
    if v then out[#out + 1] = v end
  end
  return table.concat(out, "\n")
end

describe("examples/ci workflows", function()
  it("qualify.sh is there and executable, and shellcheck-clean when shellcheck is installed", function()
    assert.is_true(os.execute("test -x " .. helper.quote(helper.root .. "/" .. SCRIPT)) == true)
    if os.execute("command -v shellcheck >/dev/null 2>&1") == true then
      assert.is_true(os.execute("shellcheck " .. helper.quote(helper.root .. "/" .. SCRIPT)) == true)
    end
  end)

  it("qualify.sh refuses what it cannot run: exit 64 and a line naming what to set, nothing sent", function()
    local d = helper.tmpdir()
    local function sh(args, env)
      local cmd = helper.env_prefix(env) .. " " .. helper.quote(helper.root .. "/" .. SCRIPT)
      for _, a in ipairs(args) do cmd = cmd .. " " .. helper.quote(a) end
      os.execute(cmd .. " >" .. d .. "/out 2>" .. d .. "/err; echo $? >" .. d .. "/rc")
      return tonumber(helper.read(d .. "/rc")), helper.read(d .. "/err") or ""
    end
    local base = { LEASELUA = helper.host, LEASELUA_OUT = d .. "/out-dir", AZURE_STORAGE_ACCOUNT_URL = false }
    local rc, err = sh({}, base)
    assert.are.equal(64, rc)
    assert.matches("usage: examples/ci/qualify.sh build", err, 1, true)
    rc, err = sh({ "run", "weu" }, base)
    assert.are.equal(64, rc)
    assert.matches("set AZURE_STORAGE_ACCOUNT_URL", err, 1, true)
    rc, err = sh({ "run", "../escape" }, base)
    assert.are.equal(64, rc)
    assert.matches("NAME", err, 1, true)
    rc, err = sh({ "gather" }, base)
    assert.are.equal(64, rc)
    assert.matches("does not exist", err, 1, true)
    os.execute("mkdir -p " .. helper.quote(d .. "/out-dir"))
    rc, err = sh({ "gather" }, base)
    assert.are.equal(64, rc)
    assert.matches("no bundle under", err, 1, true)
    -- an API version leaselua does not know: leaselua's own refusal, passed on
    local m = helper.manifest_file(d)
    rc, err = sh({ "run", "weu" }, { LEASELUA = helper.host, LEASELUA_OUT = d .. "/out-dir",
      AZURE_STORAGE_ACCOUNT_URL = "https://127.0.0.1:9/devstoreaccount1", LEASELUA_MANIFEST = m,
      LEASELUA_API_VERSIONS = "2023-11-03,2099-01-01" })
    assert.are.equal(64, rc)
    assert.matches("%-%-api%-version 2099%-01%-01 is not an Azure Storage service version", err)
    assert.is_false(os.execute("test -e " .. helper.quote(d .. "/out-dir/weu")) == true)
  end)

  it("GitHub Actions: accounts x API versions, OIDC, the script, artifacts, qualify and JUnit", function()
    local wf = load_yaml("examples/ci/github-actions.yml")
    assert.are.equal("write", wf.permissions["id-token"], "OIDC needs id-token: write")
    local job = wf.jobs.handoff
    local m = job.strategy.matrix
    assert.is_true(#m.account >= 2, "at least two accounts")
    assert.is_true(#m.api_version >= 2, "at least two API versions")
    for _, a in ipairs(m.account) do
      assert.matches("^https://[a-z0-9]+%.blob%.core%.windows%.net$", a.url)
      assert.matches("^[A-Za-z0-9._-]+$", a.name)
    end
    local ok, err = versions_known(m.api_version)
    assert.is_true(ok, err)
    assert.are.equal(TOKEN_COMMAND, job.env.LEASELUA_TOKEN_COMMAND)
    assert.matches("matrix%.api_version", job.env.AZURE_STORAGE_BLOB, 1, false)
    local login
    for _, s in ipairs(job.steps) do
      if s.uses and s.uses:match("^azure/login@") then login = s end
    end
    assert.is_table(login, "an azure/login step")
    for _, k in ipairs({ "client-id", "tenant-id", "subscription-id" }) do
      assert.is_string(login.with[k], k)
    end
    assert.is_nil(login.with["creds"], "federated credentials, not a client secret")
    local runs = step_runs(job.steps, function(s) return s.run end)
    assert.matches(SCRIPT .. " run ", runs, 1, true)
    local upload = step_runs(job.steps, function(s) return s.uses end)
    assert.matches("actions/upload-artifact@", upload, 1, true)
    local final = wf.jobs.qualify
    assert.are.equal("handoff", final.needs)
    local fruns = step_runs(final.steps, function(s) return s.run end)
    assert.matches(SCRIPT .. " gather", fruns, 1, true)
    local published
    for _, s in ipairs(final.steps) do
      if s.with and tostring(s.with.report_paths or ""):match("junit%.xml$") then published = s end
    end
    assert.is_table(published, "a step publishing junit.xml")
  end)

  it("Azure Pipelines: accounts x API versions, AzureCLI@2 on a WIF connection, the script, artifacts, JUnit",
    function()
    local p = load_yaml("examples/ci/azure-pipelines.yml")
    local params = {}
    for _, q in ipairs(p.parameters) do params[q.name] = q.default end
    assert.is_true(#params.accounts >= 2)
    assert.is_true(#params.apiVersions >= 2)
    local ok, err = versions_known(params.apiVersions)
    assert.is_true(ok, err)
    for _, a in ipairs(params.accounts) do
      assert.matches("^[A-Za-z0-9_]+$", a.name, 1, false) -- part of a job name
    end
    assert.are.equal(TOKEN_COMMAND, p.variables.LEASELUA_TOKEN_COMMAND)
    local all = strings(p)
    local cli, gather, junit, publish = nil, false, false, false
    local each_account, each_version = false, false
    for _, s in ipairs(all) do
      if s.path:find("${{ each account in parameters.accounts }}", 1, true) then each_account = true end
      if s.path:find("${{ each version in parameters.apiVersions }}", 1, true) then each_version = true end
      if s.path:match("/task$") and s.value == "AzureCLI@2" then cli = s.path:gsub("/task$", "") end
      if s.value:find(SCRIPT .. " gather", 1, true) then gather = true end
      if s.path:match("/testResultsFormat$") and s.value == "JUnit" then junit = true end
      if s.value == "PublishPipelineArtifact@1" then publish = true end
    end
    assert.is_true(each_account and each_version, "one job per account x version")
    assert.is_string(cli, "an AzureCLI@2 task")
    local inputs = {}
    for _, s in ipairs(all) do
      if s.path:sub(1, #cli + 8) == cli .. "/inputs/" then inputs[s.path:sub(#cli + 9)] = s.value end
    end
    assert.are.equal("${{ parameters.serviceConnection }}", inputs.azureSubscription)
    assert.matches("^" .. SCRIPT:gsub("%p", "%%%0") .. " run ", inputs.inlineScript)
    assert.is_true(gather and junit and publish)
  end)

  it("every script step of both files that runs leaselua goes through qualify.sh", function()
    for _, f in ipairs({ "examples/ci/github-actions.yml", "examples/ci/azure-pipelines.yml" }) do
      local n = 0
      for _, s in ipairs(strings(load_yaml(f))) do
        local key = s.path:match("/([^/]+)$")
        if key == "run" or key == "script" or key == "inlineScript" then
          assert.is_nil(s.value:find("leaselua ", 1, true), f .. ": " .. s.value)
          if s.value:find(SCRIPT, 1, true) then n = n + 1 end
        end
      end
      assert.is_true(n >= 3, f .. ": build, run and gather through " .. SCRIPT .. " (" .. n .. ")")
    end
  end)
end)

describe("examples/ci/qualify.sh end to end #live", function()
  local out, second, rundir2
  local results = {}

  local function token_commands(env)
    for _, actor in ipairs({ "A", "B", "OPERATOR", "OBSERVER" }) do
      env["LEASELUA_TOKEN_COMMAND_" .. actor] = helper.host .. " dev-token 7200 --actor " .. actor:lower()
    end
    return env
  end

  local function sh(args, env)
    local d = helper.tmpdir()
    local cmd = helper.env_prefix(env) .. " " .. helper.quote(helper.root .. "/" .. SCRIPT)
    for _, a in ipairs(args) do cmd = cmd .. " " .. helper.quote(a) end
    os.execute(cmd .. " >" .. d .. "/out 2>" .. d .. "/err; echo $? >" .. d .. "/rc")
    return tonumber(helper.read(d .. "/rc")), helper.read(d .. "/out") or "", helper.read(d .. "/err") or ""
  end

  setup(function()
    out = helper.tmpdir() .. "/qualification"
    rundir2 = helper.tmpdir() .. "/azurite-b"
    -- started as the lab starts one (tools/emulator/start: loopback, https,
    -- --oauth basic), stopped by its PID in teardown; a second attempt
    -- when the first one did not get ready on a loaded machine
    local start = helper.quote(helper.root .. "/tools/emulator/start") .. " " .. helper.quote(rundir2) ..
      " >" .. helper.quote(rundir2 .. ".log") .. " 2>&1"
    local started = os.execute(start) == true or os.execute(start) == true
    assert(started, "the second Azurite did not start: " .. (helper.read(rundir2 .. ".log") or ""))
    second = {}
    for k, v in (helper.read(rundir2 .. "/env") or ""):gmatch("export ([%w_]+)=([^\n]*)") do second[k] = v end
    local base = {
      LEASELUA = helper.host, LEASELUA_OUT = out,
      LEASELUA_MANIFEST = helper.root .. "/examples/ci/manifest.json",
      LEASELUA_FLOW_ARGS = "--break-period 1", LEASELUA_EVIDENCE_ROOT = false,
      AZURE_STORAGE_CONTAINER = "lease-handoff-lab",
    }
    local a = token_commands({})
    for k, v in pairs(base) do a[k] = v end
    a.AZURE_STORAGE_ACCOUNT_URL = os.getenv("AZURE_STORAGE_ACCOUNT_URL")
    a.LEASELUA_CA_FILE = os.getenv("LEASELUA_CA_FILE")
    a.AZURE_STORAGE_BLOB = helper.unique_blob("ci-a")
    a.LEASELUA_API_VERSIONS = "2021-12-02,2023-11-03"
    results.a = { sh({ "run", "lab-a" }, a) }
    local b = token_commands({})
    for k, v in pairs(base) do b[k] = v end
    b.AZURE_STORAGE_ACCOUNT_URL = second.AZURE_STORAGE_ACCOUNT_URL
    b.LEASELUA_CA_FILE = second.LEASELUA_CA_FILE
    b.AZURE_STORAGE_BLOB = helper.unique_blob("ci-b")
    b.LEASELUA_API_VERSIONS = "2023-11-03"
    results.b = { sh({ "run", "lab-b" }, b) }
    results.gather = { sh({ "gather" }, { LEASELUA = helper.host, LEASELUA_OUT = out }) }
  end)

  teardown(function()
    if rundir2 then
      local stop = helper.quote(helper.root .. "/tools/emulator/stop")
      os.execute(stop .. " " .. helper.quote(rundir2) .. " >/dev/null 2>&1")
    end
    helper.cleanup()
  end)

  it("runs the handoff on both accounts with each actor's token command, no ambient token", function()
    assert.are_not.equal(os.getenv("AZURE_STORAGE_ACCOUNT_URL"), second.AZURE_STORAGE_ACCOUNT_URL)
    assert.are.equal(0, results.a[1], results.a[3])
    assert.are.equal(0, results.b[1], results.b[3])
    local ix = cjson.decode(helper.read(out .. "/lab-a/index.json"))
    assert.are.equal(2, #ix.runs)
    assert.is_true(os.execute("test -f " .. helper.quote(out .. "/lab-b/export/ledger.jsonl")) == true,
      "one version: the bundle is the folder itself")
    for _, dir in ipairs({ out .. "/lab-a/2021-12-02", out .. "/lab-a/2023-11-03", out .. "/lab-b" }) do
      local m = helper.rows(dir)[1]
      assert.are.equal("emulator", m.endpoint_kind)
      -- every actor's credential was its own token command
      for _, actor in ipairs({ "A", "B", "operator", "observer" }) do
        assert.are.equal("token-command", m.identities[actor].credential, dir .. " " .. actor)
      end
    end
  end)

  it("gathers every bundle into the qualification table: emulator rows only, so exit 1 and none QUALIFIED", function()
    local rc, stdout, stderr = table.unpack(results.gather)
    assert.are.equal(1, rc, stderr)
    assert.matches("3 bundles under", stderr)
    for _, f in ipairs({ "qualification.md", "qualification.html", "qualification.json", "junit.xml" }) do
      assert.is_true(os.execute("test -s " .. helper.quote(out .. "/" .. f)) == true, f)
    end
    assert.are.equal(helper.read(out .. "/qualification.md"), stdout)
    local q = cjson.decode(helper.read(out .. "/qualification.json"))
    assert.are.equal(3, q.bundles)
    assert.are.same({}, q.qualifying, "an emulator row never sits in the qualifying section")
    -- the two accounts are two hosts: lab-a's two versions and lab-b's one
    local rows = {}
    for _, r in ipairs(q.non_qualifying) do rows[#rows + 1] = r.account_host .. " " .. r.api_version end
    table.sort(rows)
    local ha = os.getenv("AZURE_STORAGE_ACCOUNT_URL"):match("^https://([^/]+)")
    local hb = second.AZURE_STORAGE_ACCOUNT_URL:match("^https://([^/]+)")
    local want = { ha .. " 2021-12-02", ha .. " 2023-11-03", hb .. " 2023-11-03" }
    table.sort(want)
    assert.are.same(want, rows)
    local xsd = helper.root .. "/schemas/junit.xsd"
    if os.execute("test -f " .. helper.quote(xsd) .. " && command -v xmllint >/dev/null") == true then
      assert.is_true(os.execute("xmllint --noout --schema " .. helper.quote(xsd) .. " " ..
        helper.quote(out .. "/junit.xml") .. " 2>/dev/null") == true, "junit.xml validates")
    end
  end)
end)
