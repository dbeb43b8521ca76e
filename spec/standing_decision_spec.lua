-- A decision row stands only while it is the last word: a request row
-- (intent or outcome) after it, from a continued or a crafted ledger,
-- leaves the run with no decision, for verify, qualify, compare and the
-- report alike. And verify pairs each outcome row with the intent of the
-- same request: an outcome whose intent is missing, or says something
-- else, is an inconsistent ledger. Offline: a documented fixture replayed
-- into a real bundle, then edited in both ledgers, seq renumbered and both
-- chains rewritten (what a forger with write access could do), so that
-- every other check still holds and only the one under test can fail.
local helper = require "helper"
local bd = require "support.bundles"
local LB = require "support.ledger_builder"
local cjson = require "cjson"

local q = helper.quote
local LEDGERS = { "/protected/ledger.jsonl", "/export/ledger.jsonl" }

local base, accept

setup(function()
  base = helper.tmpdir()
  accept = bd.replay("documented/azure-main-handoff-accept", base .. "/accept")
end)

teardown(function()
  helper.cleanup()
end)

local function split(text)
  local t = {}
  for l in text:gmatch("[^\n]+") do t[#t + 1] = l end
  return t
end

-- Every line's seq is its place again, after rows were added or removed.
local function renumber(lines)
  for i, l in ipairs(lines) do
    local n
    lines[i], n = l:gsub('^{"seq":%d+', '{"seq":' .. i, 1)
    assert(n == 1, "a line without a leading seq")
  end
  return lines
end

-- The index of the first line holding every needle.
local function find(lines, ...)
  local needles = { ... }
  for i, line in ipairs(lines) do
    local all = true
    for _, n in ipairs(needles) do all = all and line:find(n, 1, true) ~= nil end
    if all then return i end
  end
  error("no line holds " .. table.concat(needles, " and "))
end

-- line with its string field key set to value.
local function with(line, key, value)
  local out, n = line:gsub('"' .. key .. '":"[^"]*"', '"' .. key .. '":"' .. value .. '"', 1)
  assert(n == 1, "no string field " .. key)
  return out
end

-- A copy of src named name whose two ledgers are fn(lines) (the same edit
-- in both), renumbered and re-chained.
local function edit(src, name, fn)
  local dir = base .. "/" .. name
  assert(bd.sh(("cp -a %s %s"):format(q(src), q(dir))) == 0)
  for _, f in ipairs(LEDGERS) do
    local lines = renumber(fn(split(assert(helper.read(dir .. f)))))
    helper.write(dir .. f, table.concat(LB.rechain(lines), "\n") .. "\n")
  end
  bd.sync_decision(dir)
  return dir
end

local PUT_B = { '"record":"intent"', '"operation":"Put Blob"', '"actor_alias":"B"' }
local ABSENT = '"step":"14 confirm absent"'

-- After the decision: B's Put announced again (a mutation, never answered).
local function put_after(lines)
  lines[#lines + 1] = with(lines[find(lines, table.unpack(PUT_B))], "event_id", "e0901")
  return lines
end

-- After the decision: the closing read asked and answered again.
local function read_after(lines)
  local i = find(lines, '"record":"intent"', ABSENT)
  local o = find(lines, '"record":"outcome"', ABSENT)
  lines[#lines + 1] = with(lines[i], "event_id", "e0902")
  lines[#lines + 1] = with(lines[o], "event_id", "e0902")
  return lines
end

local function without_decision(lines)
  assert(lines[#lines]:find('"record":"decision"', 1, true))
  lines[#lines] = nil
  return lines
end

local function verify(dir)
  return helper.run { "verify", dir }
end

local function verify_json(dir)
  local rc, out, err = helper.run { "verify", "--json", dir }
  return rc, out ~= "" and cjson.decode(out) or nil, err
end

describe("verify: a decision stands only when no request follows it", function()
  it("the untouched bundle: ACCEPT stands", function()
    local rc, out, err = verify(accept)
    assert.are.equal(0, rc, err)
    assert.truthy(out:find("decision ACCEPT, window REPRODUCED", 1, true), out)
  end)

  it("a mutation intent after the decision row: consistent, and no decision", function()
    local dir = edit(accept, "put-after", put_after)
    local rc, out, err = verify(dir)
    assert.are.equal(0, rc, err)
    assert.is_nil(out:find("decision ACCEPT", 1, true), out)
    assert.truthy(out:find("no decision (the decision of row 83 does not stand: request row 84 follows it)", 1,
      true), out)
    local jrc, v = verify_json(dir)
    assert.are.equal(0, jrc)
    assert.are.equal(cjson.null, v.decision)
    assert.are.equal(cjson.null, v.window)
    assert.are.same({}, v.reasons)
  end)

  it("a read asked and answered after the decision row: no decision", function()
    local dir = edit(accept, "read-after", read_after)
    local rc, out, err = verify(dir)
    assert.are.equal(0, rc, err)
    assert.is_nil(out:find("decision ACCEPT", 1, true), out)
    assert.truthy(out:find("no decision (the decision of row 83 does not stand", 1, true), out)
    local _, v = verify_json(dir)
    assert.are.equal(cjson.null, v.decision)
  end)
end)

describe("verify pairs each outcome with its own intent", function()
  -- verify exits 2 naming row n (the outcome that does not pair) and what.
  local function inconsistent(dir, n, what)
    local rc, _, err = verify(dir)
    assert.are.equal(2, rc, err)
    assert.truthy(err:find("INCONSISTENT at row " .. n .. ":", 1, true), err)
    assert.truthy(err:find(what, 1, true), err)
  end

  it("an outcome whose step is not its intent's", function()
    local row
    local dir = edit(accept, "outcome-step", function(l)
      row = find(l, '"record":"outcome"', ABSENT)
      l[row] = with(l[row], "step", "14 confirm gone")
      return l
    end)
    inconsistent(dir, row, "does not pair with its intent (row " .. (row - 1) .. "): step differs")
  end)

  it("an intent that names another writer than its outcome", function()
    local row
    local dir = edit(accept, "intent-writer", function(l)
      local i = find(l, '"record":"intent"', '"operation":"Put Blob"', '"payload_revision":6')
      l[i] = with(l[i], "actor_alias", "B")
      row = find(l, '"record":"outcome"', '"operation":"Put Blob"', '"payload_revision":6')
      return l
    end)
    inconsistent(dir, row, "): actor_alias differs")
  end)

  it("an intent that names another operation than its outcome", function()
    local row
    local dir = edit(accept, "intent-op", function(l)
      local i = find(l, '"record":"intent"', '"operation":"Lease Acquire"', '"actor_alias":"B"')
      l[i] = with(l[i], "operation", "Lease Renew")
      row = i + 1
      assert(l[row]:find('"record":"outcome"', 1, true) and l[row]:find('"operation":"Lease Acquire"', 1, true))
      return l
    end)
    inconsistent(dir, row, "): operation differs")
  end)

  it("an outcome with no intent (its intent renamed to another event)", function()
    local row
    local dir = edit(accept, "no-intent", function(l)
      local i = find(l, '"record":"intent"', ABSENT)
      l[i] = with(l[i], "event_id", "e0934")
      row = find(l, '"record":"outcome"', ABSENT)
      return l
    end)
    inconsistent(dir, row, "has no intent row before it")
  end)

  it("an outcome given twice for one intent", function()
    local row
    local dir = edit(accept, "twice", function(l)
      local o = find(l, '"record":"outcome"', ABSENT)
      table.insert(l, o + 1, l[o])
      row = o + 1
      return l
    end)
    inconsistent(dir, row, "already has its outcome")
  end)
end)

describe("qualify: no standing decision is no pass", function()
  local function qualified(dir)
    local rc, out, err = helper.run { "qualify", "--json", dir }
    local t = out ~= "" and cjson.decode(out) or nil
    assert(t, "qualify printed nothing: " .. err)
    for _, r in ipairs(t.qualifying) do
      for _, run in ipairs(r.runs) do
        if run.dir == dir then return rc, run.qualified, r.verdict, run.decision end
      end
    end
    return rc, nil
  end

  local function relabelled(name, fn)
    return bd.relabel(accept, base .. "/" .. name, {
      edit = function(text) return table.concat(renumber(fn(split(text))), "\n") end,
    })
  end

  it("the relabelled azure ACCEPT qualifies (the control)", function()
    local dir = relabelled("az-accept", function(l) return l end)
    local rc, ok, verdict = qualified(dir)
    assert.are.same({ 0, true, "QUALIFIED" }, { rc, ok, verdict })
  end)

  it("a run that ended with no decision row does not qualify", function()
    local dir = relabelled("az-no-decision", without_decision)
    local rc, ok, verdict, decision = qualified(dir)
    assert.are.same({ 2, false, "NOT QUALIFIED" }, { rc, ok, verdict })
    assert.is_nil(decision)
  end)

  it("a run whose ACCEPT is followed by a request does not qualify", function()
    local dir = relabelled("az-put-after", put_after)
    local rc, ok, verdict, decision = qualified(dir)
    assert.are.same({ 2, false, "NOT QUALIFIED" }, { rc, ok, verdict })
    assert.is_nil(decision)
  end)
end)

describe("compare and report say no decision", function()
  it("compare's header says 'no decision', never 'decision nil'", function()
    local none = edit(accept, "cmp-none", without_decision)
    local after = edit(accept, "cmp-after", put_after)
    local rc, out, err = helper.run { "compare", accept, none, after }
    assert.are.equal(1, rc, err)
    assert.is_nil(out:find("decision nil", 1, true), out)
    assert.is_nil(out:find("window nil", 1, true), out)
    -- the header line of dir, as compare printed it
    local function head(tag, dir)
      local from = assert(out:find("compare: " .. tag .. " " .. dir .. ": ", 1, true), out)
      return out:sub(from, out:find("\n", from, true))
    end
    assert.truthy(head("B", none):find(", no decision, window -\n", 1, true), out)
    assert.truthy(head("B", after):find(", no decision, window -\n", 1, true), out)
    assert.truthy(head("A", accept):find(", decision ACCEPT, window REPRODUCED\n", 1, true), out)
  end)

  it("the report does not show a decision that requests follow as standing", function()
    local rows = LB.sample { kind = "replay", decision = "ACCEPT" }
    rows[#rows + 1] = { { "record", "intent" }, { "event_id", "e0008" }, { "fixture_epoch", 1 },
      { "operation", "Put Blob" }, { "actor_alias", "A" } }
    local dir = LB.write(helper.tmpdir() .. "/ev-after", rows)
    -- rows written by hand do not verify: the renderer itself (support.render)
    local rc, _, err = require("support.render").render(dir)
    assert.are.equal(0, rc, err)
    local html, md = helper.read(dir .. "/report.html"), helper.read(dir .. "/summary.md")
    assert.is_nil(html:find('data-decision="ACCEPT"', 1, true))
    assert.is_nil(md:find("**ACCEPT**", 1, true), md)
    assert.truthy(md:find("Decision: **NO DECISION**", 1, true), md)
    assert.truthy(md:find("does not stand", 1, true), md)
    assert.truthy(html:find("does not stand", 1, true))
  end)

  it("the report still shows a decision that is the last word", function()
    local dir = LB.write(helper.tmpdir() .. "/ev-last", LB.sample { kind = "replay", decision = "ACCEPT" })
    local rc, _, err = require("support.render").render(dir)
    assert.are.equal(0, rc, err)
    assert.truthy(helper.read(dir .. "/summary.md"):find("Decision: **ACCEPT**", 1, true))
  end)
end)
