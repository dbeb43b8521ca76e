-- Reading an evidence ledger from a script: load (chain checked in C),
-- filter, and the facts a recovery needs.
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

-- filter(rows, match) -> rows whose fields equal every field of match.
function M.filter(rows, match)
  local out = {}
  for _, r in ipairs(rows) do
    local ok = true
    for k, v in pairs(match) do
      if r[k] ~= v then
        ok = false
        break
      end
    end
    if ok then out[#out + 1] = r end
  end
  return out
end

-- last_accepted_revision(rows) -> the revision of the last accepted Put
-- Blob, or of a doubtful one that a reconcile found committed; nil if none.
function M.last_accepted_revision(rows)
  local rev
  for _, r in ipairs(rows) do
    if r.record == "lifecycle" then rev = nil end
    if r.record == "outcome" and r.operation == "Put Blob" and r.result_classification == "ACCEPTED_WRITE" then
      rev = r.payload_revision
    elseif r.record == "reconcile" and r.result == "DOUBTFUL_WRITE_COMMITTED" then
      rev = r.content_revision
    end
  end
  return rev
end

-- open_unknown_outcomes(rows) -> UNKNOWN_OUTCOME rows no reconcile has
-- settled yet.
function M.open_unknown_outcomes(rows)
  local open = {}
  for _, r in ipairs(rows) do
    if r.record == "outcome" and r.result_classification == "UNKNOWN_OUTCOME" then
      open[#open + 1] = r
    elseif r.record == "reconcile" and r.result ~= "INCOMPLETE" and r.result ~= "MISMATCH"
        and r.result ~= "REJECTED_REVISION_FOUND" then
      open = {}
    end
  end
  return open
end

-- decision(rows) -> the last decision row, or nil.
function M.decision(rows)
  local d
  for _, r in ipairs(rows) do
    if r.record == "decision" then d = r end
  end
  return d
end

-- attempted(rows, operation, actor) -> true if such a request was sent in
-- the last lifecycle.
function M.attempted(rows, operation, actor)
  local seen = false
  for _, r in ipairs(rows) do
    if r.record == "lifecycle" then seen = false end
    if r.record == "intent" and r.operation == operation and r.actor_alias == actor then seen = true end
  end
  return seen
end

return M
