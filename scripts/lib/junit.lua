-- JUnit XML for CI systems (`verify --junit`, `qualify --junit`), valid
-- against schemas/junit.xsd: one testsuite per bundle, each step a test
-- case; an unexplained discrepancy is a failure with its reason, an
-- EVIDENCE_ERROR or unknown outcome an error, a WAIT a skipped test with
-- its reason. Text passes through M.text/M.attr: XML 1.0 allows only tab,
-- newline, carriage return and U+0020 and above (no surrogates, no
-- U+FFFE/U+FFFF), and only well-formed UTF-8; anything else becomes U+FFFD.
local M = {}

local REPL = "\u{FFFD}"

-- clean(s) -> s as well-formed UTF-8 holding only characters XML 1.0
-- allows, each other byte or character replaced by U+FFFD.
function M.clean(s)
  s = tostring(s == nil and "" or s)
  if not s:find("[%z\1-\8\11\12\14-\31\128-\255]") then return s end
  local out, i, n = {}, 1, #s
  while i <= n do
    local c = s:byte(i)
    local len, cp = 0, nil
    if c < 0x80 then
      len, cp = 1, c
    elseif c >= 0xC2 and c <= 0xDF then
      len, cp = 2, c & 0x1F
    elseif c >= 0xE0 and c <= 0xEF then
      len, cp = 3, c & 0x0F
    elseif c >= 0xF0 and c <= 0xF4 then
      len, cp = 4, c & 0x07
    end
    local ok = len > 0 and i + len - 1 <= n
    for k = 1, len - 1 do
      local b = ok and s:byte(i + k)
      if not b or b < 0x80 or b > 0xBF then
        ok = false
        break
      end
      cp = (cp << 6) | (b & 0x3F)
    end
    -- overlong forms, surrogates and code points beyond U+10FFFF
    if ok and ((len == 3 and cp < 0x800) or (len == 4 and (cp < 0x10000 or cp > 0x10FFFF))) then ok = false end
    if ok then
      local allowed = cp == 0x9 or cp == 0xA or cp == 0xD or (cp >= 0x20 and cp <= 0xD7FF)
        or (cp >= 0xE000 and cp <= 0xFFFD) or (cp >= 0x10000 and cp <= 0x10FFFF)
      out[#out + 1] = allowed and s:sub(i, i + len - 1) or REPL
      i = i + len
    else
      out[#out + 1] = REPL
      i = i + 1
    end
  end
  return table.concat(out)
end

local TEXT = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;" }
local ATTR = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&apos;",
  ["\t"] = "&#9;", ["\n"] = "&#10;", ["\r"] = "&#13;" }

-- text(s) -> character data. A carriage return is written &#13; so a
-- parser's line-end normalisation keeps it.
function M.text(s)
  return (M.clean(s):gsub("[&<>\r]", function(c) return TEXT[c] or "&#13;" end))
end

-- attr(s) -> an attribute value for double quotes; tab, newline and
-- carriage return as references, so attribute normalisation keeps them.
function M.attr(s)
  return (M.clean(s):gsub("[&<>\"'\t\n\r]", ATTR))
end

local function seconds(ms)
  return string.format("%.3f", (ms or 0) / 1000)
end

local function case(name, classname, ms, child)
  local head = '    <testcase name="' .. M.attr(name) .. '" classname="' .. M.attr(classname) .. '" time="'
    .. seconds(ms) .. '"'
  if not child then return head .. "/>" end
  return head .. ">\n" .. child .. "\n    </testcase>"
end

local function failure(kind, message, body)
  return "      <" .. kind .. ' message="' .. M.attr(message) .. '" type="' .. M.attr(kind) .. '">'
    .. M.text(body or message) .. "</" .. kind .. ">"
end

local function skipped(message)
  return '      <skipped message="' .. M.attr(message) .. '"/>'
end

local function step_name(st)
  local name = st.step .. ": " .. st.operation
  if st.n and st.n > 1 then name = name .. " #" .. st.n end
  return name
end

-- cases(s) -> the test cases of one bundle's summary, and the counts.
local function cases(s)
  local out, c = {}, { tests = 0, failures = 0, errors = 0, skipped = 0 }
  local function add(name, classname, ms, kind, message, body)
    c.tests = c.tests + 1
    local child
    if kind == "failure" or kind == "error" then
      c[kind == "failure" and "failures" or "errors"] = c[kind == "failure" and "failures" or "errors"] + 1
      child = failure(kind, message, body)
    elseif kind == "skipped" then
      c.skipped = c.skipped + 1
      child = skipped(message)
    end
    out[#out + 1] = case(name, classname, ms, child)
  end
  local flow = s.flow or "bundle"
  if s.consistent then
    add("verify", "leaselua.verify", 0)
  else
    add("verify", "leaselua.verify", 0, "failure", "INCONSISTENT: " .. tostring(s.problem or s.error),
      "leaselua verify found this bundle inconsistent" .. (s.bad_row and s.bad_row > 0
        and (" at row " .. s.bad_row) or "") .. ": " .. tostring(s.problem or s.error)
        .. "\nIts rows are not reported: only what verify proves is read.")
    return out, c
  end
  for _, st in ipairs(s.steps or {}) do
    local cls = "leaselua." .. flow .. ".lifecycle" .. tostring(st.epoch)
    local name = step_name(st)
    if st.kind == "refusal" then
      add(name, cls, 0, "skipped", "refused by the guard, not sent: " .. tostring(st.code)
        .. (st.error and (": " .. st.error) or ""))
    elseif #st.discrepancy > 0 then
      add(name, cls, st.ms, "failure", "unexplained discrepancy: " .. st.discrepancy[1],
        table.concat(st.discrepancy, "\n"))
    elseif st.class == "EVIDENCE_ERROR" or st.class == "UNKNOWN_OUTCOME" or st.class == "NO_OUTCOME" then
      add(name, cls, st.ms, "error", st.class .. (st.error and (": " .. st.error) or ""),
        st.class .. ": status " .. tostring(st.status) .. (st.error and ("\n" .. st.error) or ""))
    else
      add(name, cls, st.ms)
    end
  end
  for _, cl in ipairs(s.cells or {}) do
    local name = "lease table " .. cl.state .. "/" .. cl.op
    local cls = "leaselua." .. flow .. ".lease_table"
    if cl.verdict == "NOT_REACHED" then
      add(name, cls, 0, "skipped", "NOT_REACHED: " .. tostring(cl.reason))
    elseif cl.verdict == "DEVIATES" and not cl.known_deviation then
      add(name, cls, 0, "failure", "DEVIATES: " .. tostring(cl.reason))
    elseif cl.verdict == "CONFORMS" or cl.verdict == "CONFORMS_ONE_SOURCE" or cl.verdict == "DEVIATES" then
      add(name, cls, 0)
    else
      add(name, cls, 0, "error", "verdict " .. tostring(cl.verdict))
    end
  end
  local d, why = s.decision, table.concat(s.reasons or {}, "; ")
  local cls = "leaselua." .. flow
  if d == "ACCEPT" then
    add("decision", cls, 0)
  elseif d == "WAIT" then
    add("decision", cls, 0, "skipped", "WAIT: " .. (why ~= "" and why or "the evidence is not complete yet"))
  elseif d then
    add("decision", cls, 0, "failure", d .. ": " .. (why ~= "" and why or "no reason recorded"))
  else
    add("decision", cls, 0, "failure", "no decision recorded")
  end
  return out, c
end

local function total(s)
  local t = 0
  for _, st in ipairs(s.steps or {}) do t = t + (st.ms or 0) end
  return t
end

-- suite(s) -> one <testsuite> for a bundle's summary, and its counts.
function M.suite(s)
  local body, c = cases(s)
  local name = (s.flow or "bundle") .. " " .. tostring(s.dir)
  local props = {
    { "dir", s.dir }, { "endpoint_kind", s.endpoint_kind }, { "fixture_label", s.fixture_label },
    { "account_host", s.account_host }, { "api_version", s.api_version }, { "leaselua", s.leaselua },
    { "libcurl", s.libcurl }, { "decision", s.decision }, { "window", s.window },
    { "verify", s.consistent and "consistent" or "INCONSISTENT" },
  }
  local p = {}
  for _, kv in ipairs(props) do
    if kv[2] then p[#p + 1] = '      <property name="' .. M.attr(kv[1]) .. '" value="' .. M.attr(kv[2]) .. '"/>' end
  end
  local head = '  <testsuite name="' .. M.attr(name) .. '" tests="' .. c.tests .. '" failures="' .. c.failures
    .. '" errors="' .. c.errors .. '" skipped="' .. c.skipped .. '" time="' .. seconds(total(s)) .. '"'
  if s.started and s.started:match("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%d") then
    head = head .. ' timestamp="' .. s.started:sub(1, 19) .. '"'
  end
  local xml = head .. ">\n    <properties>\n" .. table.concat(p, "\n") .. "\n    </properties>\n"
    .. table.concat(body, "\n") .. (#body > 0 and "\n" or "") .. "  </testsuite>"
  return xml, c
end

-- document(name, suites) -> the whole file; suites: a list of {xml, counts}.
function M.document(name, suites)
  local t = { tests = 0, failures = 0, errors = 0, skipped = 0 }
  local parts = {}
  for _, s in ipairs(suites) do
    parts[#parts + 1] = s[1]
    for k in pairs(t) do t[k] = t[k] + s[2][k] end
  end
  return '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="' .. M.attr(name) .. '" tests="' .. t.tests
    .. '" failures="' .. t.failures .. '" errors="' .. t.errors .. '" skipped="' .. t.skipped .. '">\n'
    .. table.concat(parts, "\n") .. (#parts > 0 and "\n" or "") .. "</testsuites>\n"
end

-- verify(summary) -> the JUnit file of `leaselua verify DIR --junit FILE`.
function M.verify(s)
  local xml, c = M.suite(s)
  return M.document("leaselua verify", { { xml, c } })
end

-- qualification(rows) -> one suite: a test case per qualification row;
-- QUALIFIED passes, an Azure row that is not fails with its reasons, a
-- non-qualifying (emulator, replay) row is skipped: it cannot qualify.
function M.qualification(rows)
  local out, c = {}, { tests = 0, failures = 0, errors = 0, skipped = 0 }
  for _, r in ipairs(rows) do
    c.tests = c.tests + 1
    local name = table.concat({ r.kind, r.account_host or "-", r.api_version or "-", "leaselua " .. (r.leaselua or "-"),
      r.libcurl or "-", r.flow or "-" }, " | ")
    local child
    if r.section ~= "qualifying" then
      c.skipped = c.skipped + 1
      child = skipped("non-qualifying: endpoint kind " .. r.kind .. " is never Azure qualification evidence")
    elseif r.verdict ~= "QUALIFIED" then
      c.failures = c.failures + 1
      child = failure("failure", "NOT QUALIFIED: " .. table.concat(r.why, "; "))
    end
    out[#out + 1] = case(name, "leaselua.qualify", 0, child)
  end
  local xml = '  <testsuite name="qualification" tests="' .. c.tests .. '" failures="' .. c.failures
    .. '" errors="0" skipped="' .. c.skipped .. '" time="0.000">\n' .. table.concat(out, "\n")
    .. (#out > 0 and "\n" or "") .. "  </testsuite>"
  return xml, c
end

return M
