-- fixtures/ as files: the secret scan (no lease ID, token or SAS survived
-- the sanitizer), each fixture's format, label, description and source,
-- a replay spec and a README entry for every fixture, and the documented
-- fixtures equal to what their generator writes.
local helper = require "helper"
local cjson = require "cjson"

local function fixture_files()
  local out = {}
  local p = io.popen("cd fixtures && find . -name '*.json' | sort")
  for l in p:lines() do out[#out + 1] = l:gsub("^%./", "") end
  p:close()
  return out
end

local LEASE_HEADERS = { ["x-ms-lease-id"] = true, ["x-ms-proposed-lease-id"] = true }
local GUID = "%x%x%x%x%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x"

-- The problems in one fixture's text, as a list of strings.
local function scan(text)
  local problems = {}
  local ok, f = pcall(cjson.decode, text)
  if not ok then return { "not JSON: " .. tostring(f) } end
  local request_ids = {}
  local function lease_headers(where, headers)
    for k, copies in pairs(headers or {}) do
      -- a header the service sent more than once is an array of its copies
      for _, v in ipairs(type(copies) == "table" and copies or { copies }) do
        if LEASE_HEADERS[k:lower()] and not tostring(v):match("^{{lease:[%w_%-]+}}$") then
          problems[#problems + 1] = where .. " " .. k .. " is not a {{lease:ALIAS}} placeholder"
        end
        if k:lower() == "x-ms-request-id" then request_ids[tostring(v):lower()] = true end
      end
    end
  end
  for i, x in ipairs(f.exchanges or {}) do
    lease_headers("exchange " .. i .. " request", x.request and x.request.headers)
    lease_headers("exchange " .. i .. " response", x.response and x.response.headers)
  end
  -- a GUID is only ever a request ID (also quoted in error bodies)
  for g in text:gmatch("%f[%x]" .. GUID .. "%f[^%x]") do
    if not request_ids[g:lower()] then problems[#problems + 1] = "a GUID that is no request ID: " .. g end
  end
  -- nor without its hyphens: a run of exactly 32 hex digits
  for run in text:gmatch("%x+") do
    if #run == 32 then problems[#problems + 1] = "32 hex digits, a lease ID without hyphens? " .. run end
  end
  local lower = text:lower()
  for _, word in ipairs { "eyj", "sig=", "bearer", "authorization", "x-ms-client-request-id", "x-ms-date",
    "cookie" } do
    if lower:find(word, 1, true) then problems[#problems + 1] = "holds '" .. word .. "'" end
  end
  return problems
end

describe("fixtures/", function()
  local files = fixture_files()

  it("holds the emulator and documented fixtures", function()
    local kinds = {}
    for _, f in ipairs(files) do
      local k = f:match("^(%w+)/")
      kinds[k] = (kinds[k] or 0) + 1
    end
    assert.is_true((kinds.emulator or 0) >= 4)
    assert.is_true((kinds.documented or 0) >= 16)
  end)

  it("secret scan: only placeholders for lease IDs, no token, no SAS, no credential header", function()
    for _, f in ipairs(files) do
      local problems = scan(helper.read("fixtures/" .. f))
      assert.are.same({}, problems, f)
    end
  end)

  it("the secret scan finds what it looks for", function()
    local bad = [[{"exchanges":[{"request":{"headers":{"x-ms-lease-id":
      "0f8fad5b-d9cb-469f-a165-70867728950e"}},"response":{"headers":{"x-ms-request-id":
      "11111111-2222-4333-8444-555555555555","x-ms-lease-id":"{{lease:A}}"},"body":
      "RequestId:11111111-2222-4333-8444-555555555555 0f8fad5bd9cb469fa16570867728950e eyJhbGciOi ?sig=abc"}}]}]]
    local problems = table.concat(scan(bad), "\n")
    assert.matches("exchange 1 request x%-ms%-lease%-id is not a {{lease:ALIAS}} placeholder", problems)
    assert.matches("a GUID that is no request ID: 0f8fad5b%-d9cb", problems)
    assert.matches("32 hex digits, a lease ID without hyphens%? 0f8fad5bd9cb", problems)
    assert.matches("holds 'eyj'", problems)
    assert.matches("holds 'sig='", problems)
    assert.is_nil(problems:find("11111111", 1, true))
  end)

  it("every fixture names its format, label, description and source", function()
    for _, f in ipairs(files) do
      local x = cjson.decode(helper.read("fixtures/" .. f))
      assert.are.equal("leaselua-fixture/1", x.format, f)
      assert.are.equal(f:match("^(%w+)/"), x.endpoint_kind, f .. ": the directory is the label")
      assert.is_true(type(x.description) == "string" and #x.description > 40, f .. ": description")
      assert.is_true(type(x.source) == "string" and #x.source > 40, f .. ": source")
      assert.is_true(#x.exchanges > 0, f)
      if x.endpoint_kind == "emulator" then
        assert.matches("^recorded by leaselua [%d.]+ .* from an emulator endpoint %(server Azurite%-Blob/", x.source)
      else
        assert.matches("^Written from Microsoft's documentation, not recorded", x.source)
      end
    end
  end)

  it("every fixture has its replay spec and its line in fixtures/README.md", function()
    local specs = helper.read("spec/replay_emulator_spec.lua") .. helper.read("spec/replay_documented_spec.lua") ..
      helper.read("spec/replay_harm_spec.lua") .. helper.read("spec/replay_lease_table_spec.lua")
    local readme = helper.read("fixtures/README.md") or ""
    for _, f in ipairs(files) do
      local name = f:gsub("%.json$", "")
      assert.truthy(specs:find('"' .. name .. '"', 1, true), f .. " is replayed by no spec")
      assert.truthy(readme:find(f:match("[^/]+$"), 1, true), f .. " is not described in fixtures/README.md")
    end
  end)

  it("documented fixtures are what tools/fixtures/make_documented.js writes", function()
    if not os.execute("command -v node >/dev/null 2>&1") then
      pending("node is not installed")
      return
    end
    local p = io.popen("node tools/fixtures/make_documented.js --check 2>&1; echo rc=$?")
    local out = p:read("a")
    p:close()
    assert.matches("rc=0", out, out)
  end)
end)
