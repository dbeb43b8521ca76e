-- Reading an evidence ledger from a script: load (chain checked in C), and
-- the doubts a recovery starts from, as the fold in C holds them.
local ll = require "leaselua"

local M = {}

-- load(run) -> the run's export rows. load(dir) -> the export rows of an
-- evidence directory, chain checked (the embedding API only: a sandboxed
-- script reads no path it chose); raises if the chain is broken.
function M.load(src)
  if type(src) ~= "string" then return src:rows() end
  local rows, err = ll.ledger(src)
  if not rows then error(err, 0) end
  return rows
end

-- open_unknown_outcomes(run) -> the outcome row of every doubt no reconcile
-- has settled yet: a lost answer (UNKNOWN_OUTCOME) and a mutation whose
-- evidence was not obtained (EVIDENCE_ERROR) alike. Which doubts stand is
-- the fold's answer (run:state().doubt_events), never re-derived here, so
-- no class is filtered out.
function M.open_unknown_outcomes(run)
  if type(run) ~= "userdata" then
    error("evidence.open_unknown_outcomes(run): pass the run, not rows: the fold in C says which doubts stand", 2)
  end
  local open = {}
  for _, id in ipairs(run:state().doubt_events) do
    open[id] = true
  end
  local out = {}
  for _, r in ipairs(run:rows()) do
    if r.record == "outcome" and open[r.event_id] then
      out[#out + 1] = r
    end
  end
  return out
end

return M
