-- Renders an export ledger written by hand (support.ledger_builder)
-- through lib.report, as `leaselua report` hands verified rows to its
-- sandbox, and writes DIR/report.html and DIR/summary.md. Rows written by
-- hand (hostile text, invented reasons, a replay manifest on an example
-- host) are no run's evidence: they do not verify, and `leaselua report`
-- refuses what does not verify (report_spec shows it on real bundles).
-- So the rendering specs call the renderer itself: what the page shows of
-- a row is theirs to test, what C lets through is report_spec's.
local helper = require "helper"
local cjson = require "cjson"
require "leaselua" -- puts the embedded lib.* in package.preload

local R = {}

-- as the host's row tables hold a row (bindings/l_json.c): a JSON null is
-- no member, a whole number an integer (lua-cjson decodes every number as
-- a float)
local function strip(v)
  if v == cjson.null then return nil end
  if math.type(v) == "float" then return math.tointeger(v) or v end
  if type(v) == "table" then
    for k, x in pairs(v) do v[k] = strip(x) end
  end
  return v
end

-- render(dir[, opts]) -> 0, "", "", html, md, like report_spec's report().
-- opts: signer, identity (what C would pass; the defaults are
-- an unsigned bundle's and the report's own fallback).
function R.render(dir, opts)
  opts = opts or {}
  local rows = {}
  for line in assert(helper.read(dir .. "/export/ledger.jsonl")):gmatch("[^\n]+") do
    rows[#rows + 1] = strip(cjson.decode(line))
  end
  local deviations = cjson.decode(assert(helper.read(helper.root .. "/core/judgement/known_deviations.json")))
  local html, md = require("lib.report").render(rows, {
    dir = dir,
    known_deviations = strip(deviations),
    signer = opts.signer or "unsigned",
    identity = opts.identity,
  })
  helper.write(dir .. "/report.html", html)
  helper.write(dir .. "/summary.md", md)
  return 0, "", "", html, md
end

return R
