-- Benchmark helper (stock lua5.4 + lua-cjson): picks the inclusive
-- instruction counts of leaselua's per-request functions out of
-- `callgrind_annotate --inclusive=yes` text and prints them as one JSON
-- line, with the number of requests the profiled run sent.
-- Usage: lua5.4 bench/callgrind.lua ANNOTATE.txt REQUESTS
local cjson = require "cjson"

local path, requests = arg[1], tonumber(arg[2])
assert(path and requests, "usage: lua5.4 bench/callgrind.lua ANNOTATE.txt REQUESTS")

-- name -> what it stands for in the breakdown
local wanted = {
  "ll_run_request",     -- one request, everything in C below the binding
  "ll_ledger_append_row", -- the rows: print, seal, sanitize, scan, hash, write, fsync
  "ll_ledger_print_spans", -- printing the protected line once (with its hash)
  "ll_ledger_seal_spans",  -- printing the export line once and sealing the row (with its hash)
  "ll_sanitize_row_in_place_ids", -- the export form of each row, made of the row itself
  "ll_ledger_scan_line",   -- the secret and lease-ID scan of each line
  "ll_sha256_update", "ll_sha256_final", "ll_sha256_new", "ll_sha256_free",
  "http_exchange",      -- libcurl and TLS, with the trace callback
  "ll_model_apply",     -- the fold that classifies each row
  "ll_row_outcome",     -- building the evidence row from the response
  "ll_row_intent",      -- building the intent row
  "ll_guard_check", "ll_auth_apply", "ll_blob_build",
  "ll_lua_push_json",   -- handing the export row to Lua
  "malloc", "free",
}
local want = {}
for _, w in ipairs(wanted) do want[w] = true end

local ir, total = {}, nil
for line in io.lines(path) do
  local n, fn = line:match("^%s*([%d,]+)%s+%(%s*[%d.]+%%%)%s+(%S+)")
  if n then
    local count = tonumber((n:gsub(",", "")))
    local name = fn:match(":([%w_.']+)$") or fn
    name = name:gsub("'%d+$", "")
    if fn == "PROGRAM" then total = count end
    if want[name] and (not ir[name] or count > ir[name]) then ir[name] = count end
  elseif line:match("PROGRAM TOTALS") then
    total = tonumber((line:match("([%d,]+)"):gsub(",", "")))
  end
end
-- A name that is not in the profile was renamed or inlined: say so, so
-- the table's "n/a" is not mistaken for a figure.
for _, w in ipairs(wanted) do
  if not ir[w] then io.stderr:write("bench: callgrind: no samples for ", w, " (renamed or inlined?)\n") end
end
print(cjson.encode { requests = requests, total_ir = total, ir = ir })
