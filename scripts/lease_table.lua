-- The whole lease contract, cell by cell: each state is reached on a fresh
-- create-only lifecycle, its cells are attempted (the state-changing one
-- last) and every attempt is judged against the documented contract. C
-- plans the table and decides every request; this script only names cells.
local ll = require "leaselua"
local cli = require "lib.cli"
local out = require "lib.out"

local opts = cli.parse(arg, require("lib.flows")["lease-table"])
if not opts then return end
if opts.plan then -- the plan alone: nothing is opened, nothing is sent
  print((ll.lease_plan { break_period = opts.break_period }:gsub("\n$", "")))
  return
end
local run <close> = ll.open {
  name = "lease-table", actors = { "A", "B", "operator", "observer" },
  break_periods = { 0, opts.break_period }, lease_table = true,
}
local plan = run:lease_plan { break_period = opts.break_period }
print((plan.text:gsub("\n$", "")))

local function line(row)
  local o = row.observed or {}
  print(string.format("  %-44s %-19s %s %s", row.state .. "/" .. row.op, row.verdict,
    tostring(o.status or "-"), o.code or (row.verdict == "NOT_REACHED" and row.reason or "")))
end

out.guarded(function()
  for i, life in ipairs(plan.lifecycles) do
    local l = run:lease_lifecycle()
    print(string.format("lifecycle %d: %s%s", i, life.state,
      l.reached and "" or (" NOT REACHED: " .. l.reason)))
    for _, c in ipairs(life.cells) do line(run:cell(c.state, c.op)) end
  end
end)

local decision = run:finish()
local t = decision.lease_table or {}
print(string.format("lease table: %s cells, %s CONFORMS, %s CONFORMS_ONE_SOURCE, %s DEVIATES, %s NOT_REACHED",
  tostring(t.cells), tostring(t.conforms), tostring(t.conforms_one_source), tostring(t.deviates),
  tostring(t.not_reached)))
out.decision(decision, run:state().evidence)
