-- The shipped flows by name (`leaselua handoff`, `gap-control`, `recover`),
-- and their --help: it exits 0, fits 80 columns, and lists every option the
-- flow accepts, the flow's own (lib.flows, the rows lib.cli parses) and the
-- operator's (C's option table). Both directions are checked against the
-- binary: each row of lib.flows is in the help with its default, and each
-- option the help names is accepted. Offline: nothing is sent.
local helper = require "helper"
local flows = require "lib.flows"
-- (lib.flows is plain data: stock Lua loads it as the host's sandbox does)

local no_target = { AZURE_STORAGE_ACCOUNT_URL = false, AZURE_STORAGE_TOKEN = false,
  AZURE_STORAGE_SAS = false, LEASELUA_CA_FILE = false }

-- a value each placeholder accepts (the help is asked for afterwards, so
-- nothing is opened or sent)
local sample = {
  S = "1", N = "1", FILE = "/dev/null", DIR = "/tmp", CMD = "true", ID = "x",
  URL = "http://169.254.169.254/", TEXT = "x", DATE = "2023-11-03",
  SPEC = "token-file:/dev/null",
}

local function options_in(text)
  local found = {}
  for line in text:gmatch("[^\n]+") do
    local name, value = line:match("^  %-%-([%w%-]+)%s+(%u+)%s")
    if not name then
      name = line:match("^  %-%-([%w%-]+)%s")
    end
    if name then found[#found + 1] = { name = name, value = value } end
  end
  return found
end

describe("flows by name and their --help", function()
  teardown(helper.cleanup)

  for name, def in pairs(flows) do
    describe(name, function()
      local rc, out, err
      setup(function() rc, out, err = helper.run({ name, "--help" }, no_target) end)

      it("exits 0 with the usage on stdout and nothing on stderr", function()
        assert.are.equal(0, rc, out .. err)
        assert.are.equal("", err)
        assert.matches("^usage: leaselua " .. name:gsub("%p", "%%%0") .. " ", out)
        assert.matches("Exit: the decision, 0 ACCEPT 1 WAIT 2 HOLD 3 RECONCILE", out)
      end)

      it("fits 80 columns", function()
        for line in out:gmatch("[^\n]*") do
          assert.is_true(#line <= 80, ("%d columns: %s"):format(#line, line))
        end
      end)

      it("lists every option lib.flows gives it, with its default", function()
        assert.is_true(#def.options > 0)
        for _, o in ipairs(def.options) do
          local head = "\n  %-%-" .. o[1]:gsub("%p", "%%%0") .. (o[2] and (" " .. o[2]) or "") .. " "
          assert.matches(head, out, 1, false, o[1])
          if o[3] then -- the default is on the option's line or its continuation
            local text = out:match(head .. "[^\n]*\n[^\n]*")
            assert.matches("%(default " .. tostring(o[3]) .. "%)", text, 1, false, o[1])
          end
        end
      end)

      it("lists the operator's options after its own", function()
        assert.matches("\noperator options %(read by leaselua in C", out)
        for _, o in ipairs { "manifest", "evidence", "replay", "record", "token-file", "deadline-s" } do
          assert.matches("\n  %-%-" .. o:gsub("%p", "%%%0") .. " ", out)
        end
      end)

      it("accepts every option its help names", function()
        local named = options_in(out)
        assert.is_true(#named >= #def.options + 15, #named .. " options named")
        for _, o in ipairs(named) do
          local args = { name, "--" .. o.name }
          if o.value then
            assert.is_truthy(sample[o.value], "no sample for " .. o.value)
            args[#args + 1] = sample[o.value]
          end
          args[#args + 1] = "--help"
          local c, o2, e2 = helper.run(args, no_target)
          assert.are.equal(0, c, table.concat(args, " ") .. ": " .. o2 .. e2)
          assert.matches("^usage: leaselua ", o2)
        end
      end)

      it("refuses an option its help does not name", function()
        local c, o2, e2 = helper.run({ name, "--no-such-option", "--help" }, no_target)
        assert.are.equal(64, c, o2 .. e2)
        assert.matches("unknown argument '%-%-no%-such%-option'", e2)
      end)
    end)
  end

  it("a name that is neither a flow nor a script is refused with one line", function()
    local rc, out, err = helper.run({ "handof" }, no_target)
    assert.are.equal(64, rc, out .. err)
    assert.matches("^leaselua: 'handof' is neither a flow " ..
      "%(handoff, gap%-control, recover, lease%-table%) nor a script path", err)
    assert.are.equal(1, select(2, err:gsub("\n", "")))
  end)

  it("leaselua --help lists the flows by name", function()
    local rc, out = helper.run({ "--help" }, no_target)
    assert.are.equal(0, rc)
    assert.matches("usage: leaselua FLOW %[operator options%] %[flow options%]", out)
    assert.matches("handoff, gap%-control,", out)
  end)
end)
