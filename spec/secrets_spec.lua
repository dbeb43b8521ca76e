-- Invariant 9 on a real run: the bearer token, the real lease IDs and SAS
-- signatures never reach stdout, stderr, the export or the files beside it;
-- the lease IDs live only in the protected ledger (mode 0600). Needs the
-- live Azurite of tools/run-specs.sh.
local helper = require "helper"

local SCRIPT = helper.root .. "/scripts/main_handoff.lua"

-- Lower case, hyphens removed: lease IDs are compared case- and
-- hyphen-insensitively, so the scan is too.
local function squash(s)
  return (s:lower():gsub("%-", ""))
end

-- Files to scan: everything under export/ and the top-level files.
local function evidence_files(dir)
  local files = {}
  local p = io.popen("find " .. helper.quote(dir) .. " -maxdepth 1 -type f; find " ..
    helper.quote(dir .. "/export") .. " -type f")
  for f in p:lines() do files[#files + 1] = f end
  p:close()
  table.sort(files)
  return files
end

-- texts: {name -> content}. Returns a list of "where: what" findings.
local function scan(texts, secrets)
  local found = {}
  for name, text in pairs(texts) do
    local flat = squash(text)
    for what, secret in pairs(secrets.plain or {}) do
      if text:find(secret, 1, true) then found[#found + 1] = name .. ": " .. what end
    end
    for what, id in pairs(secrets.lease or {}) do
      if flat:find(squash(id), 1, true) then found[#found + 1] = name .. ": lease " .. what end
    end
    -- Any sig= value other than the sanitizer's REDACTED.
    for value in text:lower():gmatch("sig=([^&\"'%s\\<>#]*)") do
      if value ~= "redacted" then found[#found + 1] = name .. ": sig=" .. value end
    end
  end
  table.sort(found)
  return found
end

local function read_all(files)
  local texts = {}
  for _, f in ipairs(files) do texts[f] = assert(helper.read(f)) end
  return texts
end

local function lease_ids(dir)
  local ids, n = {}, 0
  for line in (helper.read(dir .. "/protected/ledger.jsonl") or ""):gmatch("[^\n]+") do
    for id in line:gmatch('"lease_real_id":"([^"]+)"') do
      if not ids[id] then
        n = n + 1
        ids[id] = id
      end
    end
  end
  return ids, n
end

describe("secrets never leave the protected ledger", function()
  teardown(function()
    helper.cleanup()
  end)

  it("the scan finds a lease ID in any case and without hyphens, and an unredacted sig=", function()
    local id = "0a963f26-b9a2-4eaa-8910-c31c0239aba8"
    local hits = scan({
      a = "x 0A963F26B9A24EAA8910C31C0239ABA8 y",
      b = '{"url":"/c/b?sv=1&sig=abc%2Bdef"}',
      c = "sig=REDACTED and nothing else",
    }, { lease = { A = id }, plain = { token = "tok" } })
    assert.are.same({ "a: lease A", "b: sig=abc%2bdef" }, hits)
  end)

  describe("with a bearer token #live", function()
    if not helper.have_live() then
      it("needs a live Azurite (tools/run-specs.sh)", function() pending("AZURE_STORAGE_ACCOUNT_URL is not set") end)
      return
    end
    local dir, rc, out, err
    local token = os.getenv("AZURE_STORAGE_TOKEN")

    setup(function()
      local d = helper.tmpdir()
      dir = d .. "/ev"
      local env = helper.live_env(helper.unique_blob("secrets"))
      env.AZURE_STORAGE_TOKEN = token
      env.LEASELUA_CA_FILE = os.getenv("LEASELUA_CA_FILE")
      env.AZURE_STORAGE_SAS = false
      rc, out, err = helper.run_env({ SCRIPT, "--manifest", helper.manifest_file(d), "--evidence", dir,
        "--break-period", "1" }, env)
    end)

    it("the handoff ran to ACCEPT, so both leases were used", function()
      assert.are.equal(0, rc, out .. err)
      assert.matches("DECISION: ACCEPT", out)
    end)

    it("the protected ledger holds both lease IDs, and is 0600 in a 0700 directory", function()
      local ids, n = lease_ids(dir)
      assert.are.equal(2, n)
      for id in pairs(ids) do
        assert.matches("^%x+%-%x+%-%x+%-%x+%-%x+$", id)
      end
      assert.are.equal("600", helper.mode(dir .. "/protected/ledger.jsonl"))
      assert.are.equal("700", helper.mode(dir .. "/protected"))
    end)

    it("no token, lease ID or sig= value in stdout, stderr, the export or the top-level files", function()
      assert.is_truthy(token and #token > 20)
      local files = evidence_files(dir)
      local names = {}
      for _, f in ipairs(files) do names[#names + 1] = f:sub(#dir + 2) end
      assert.are.same({ "decision.json", "environment.json", "expected.json", "export/ledger.jsonl",
        "manifest.json" }, names)
      local texts = read_all(files)
      texts.stdout, texts.stderr = out, err
      local ids = lease_ids(dir)
      local payload = token:match("^[^.]+%.([^.]+)%.")
      assert.are.same({}, scan(texts, { lease = ids, plain = { token = token, token_payload = payload } }))
    end)

    it("the protected ledger holds no token either", function()
      local prot = helper.read(dir .. "/protected/ledger.jsonl")
      assert.is_true(#prot > 0)
      assert.are.same({}, scan({ protected = prot }, { plain = { token = token } }))
    end)
  end)

  describe("with a SAS #live", function()
    if not helper.have_live() then
      it("needs a live Azurite (tools/run-specs.sh)", function() pending("AZURE_STORAGE_ACCOUNT_URL is not set") end)
      return
    end
    local SIG = "SECRETSIGVALUE123"
    local dir, rc, out, err

    setup(function()
      local d = helper.tmpdir()
      dir = d .. "/ev"
      local env = helper.live_env(helper.unique_blob("secrets-sas"))
      -- a SAS valid for the whole run (se=), and no token beside it: either
      -- would be refused before anything is sent
      env.AZURE_STORAGE_SAS = "sv=2023-11-03&se=2099-01-01T00%3A00%3A00Z&sig=" .. SIG
      env.AZURE_STORAGE_TOKEN = false
      env.LEASELUA_CA_FILE = os.getenv("LEASELUA_CA_FILE")
      rc, out, err = helper.run_env({ SCRIPT, "--manifest", helper.manifest_file(d), "--evidence", dir,
        "--break-period", "1" }, env)
    end)

    it("the SAS was sent and refused by Azurite: the run ends HOLD", function()
      assert.are.equal(2, rc, out .. err)
      assert.matches("DECISION: HOLD", out)
      local sent = 0
      for _, r in ipairs(helper.outcomes(helper.rows(dir))) do
        if r.http_status == 403 then sent = sent + 1 end
      end
      assert.is_true(sent >= 1)
    end)

    it("the signature appears nowhere: stdout, stderr, export, top-level files, protected ledger", function()
      local files = evidence_files(dir)
      assert.is_true(#files >= 4)
      files[#files + 1] = dir .. "/protected/ledger.jsonl"
      local texts = read_all(files)
      texts.stdout, texts.stderr = out, err
      assert.are.same({}, scan(texts, { plain = { sig = SIG, sig_lower = SIG:lower() } }))
    end)
  end)
end)
