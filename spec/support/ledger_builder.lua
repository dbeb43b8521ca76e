-- Writes a hash-chained export ledger by hand, in the canonical compact
-- form the C ledger writes, so report specs can feed the host rows that no
-- live run produces (hostile text, a replay kind, an open intent).
local ll = require "leaselua"

local B = {}

local function str(s)
  s = s:gsub('[%c"\\]', function(c)
    local map = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n", ["\r"] = "\\r",
      ["\t"] = "\\t" }
    return map[c] or string.format("\\u%04x", c:byte())
  end)
  return '"' .. s .. '"'
end

local encode
local function encode_obj(fields)
  local parts = {}
  for _, kv in ipairs(fields) do parts[#parts + 1] = str(kv[1]) .. ":" .. encode(kv[2]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- Values: strings, integers, booleans, B.null, arrays {...}, objects
-- B.obj{{"k", v}, ...}.
B.null = setmetatable({}, { __name = "null" })
function encode(v)
  if v == B.null then return "null" end
  local t = type(v)
  if t == "string" then return str(v) end
  if t == "number" then return math.type(v) == "integer" and tostring(v) or string.format("%.17g", v) end
  if t == "boolean" then return tostring(v) end
  if getmetatable(v) == B.obj_mt then return encode_obj(v.fields) end
  local parts = {}
  for _, x in ipairs(v) do parts[#parts + 1] = encode(x) end
  return "[" .. table.concat(parts, ",") .. "]"
end
B.obj_mt = {}
function B.obj(fields) return setmetatable({ fields = fields }, B.obj_mt) end

-- lines(rows) -> the chained lines; each row is an ordered list of
-- {key, value} without seq, prev_hash and row_hash.
function B.lines(rows)
  local prev = string.rep("0", 64)
  local out = {}
  for i, fields in ipairs(rows) do
    local all = { { "seq", i } }
    for _, kv in ipairs(fields) do all[#all + 1] = kv end
    all[#all + 1] = { "prev_hash", prev }
    local body = encode_obj(all):sub(1, -2)
    local hash = ll.sha256(prev .. body .. "}")
    out[#out + 1] = body .. ',"row_hash":"' .. hash .. '"}'
    prev = hash
  end
  return out
end

-- write(dir, rows) -> dir, with dir/export/ledger.jsonl holding the chain.
function B.write(dir, rows)
  os.execute("mkdir -p '" .. dir .. "/export'")
  local f = assert(io.open(dir .. "/export/ledger.jsonl", "wb"))
  f:write(table.concat(B.lines(rows), "\n"), "\n")
  f:close()
  return dir
end

-- A small run: a manifest, a declaration, a properties read, a Put with a
-- hostile step name and message, a break, and an intent with no outcome.
-- opts: kind (endpoint kind), decision (nil for none), discrepancy_by.
function B.sample(opts)
  opts = opts or {}
  local kind = opts.kind or "replay"
  local run = "run-spec"
  local function outcome(ev, op, actor, status, class, t0, t1, extra)
    local f = { { "record", "outcome" }, { "run_id", run }, { "event_id", ev }, { "fixture_epoch", 1 },
      { "step", extra.step or op }, { "operation", op }, { "actor_alias", actor },
      { "request_started_utc", "2026-01-01T00:00:00.000Z" }, { "lease_alias_supplied", extra.lease or "omitted" },
      { "payload_revision", extra.rev or B.null }, { "http_status", status },
      { "azure_error_code", extra.code or B.null }, { "result_classification", class },
      { "endpoint_kind", kind }, { "mono_start_ns", t0 }, { "mono_end_ns", t1 },
      { "x_ms_lease_time", extra.lease_time or B.null }, { "discrepancy", extra.discrepancy or {} },
      { "error_message", extra.message or B.null }, { "observed_lease_state", extra.state or B.null },
      { "returned_api_version", "2023-11-03" }, { "requested_api_version", "2023-11-03" } }
    return f
  end
  local rows = {
    { { "record", "manifest" }, { "run_id", run }, { "endpoint_kind", kind }, { "account_host", "example.invalid" },
      { "blob_path", "/acct/lab/blob.json" }, { "api_version", "2023-11-03" }, { "ticket", "T-<b>1</b>" },
      { "versions", B.obj { { "leaselua", "0.1.0" } } }, { "retries", 0 } },
    { { "record", "declare" }, { "revision", 1 }, { "writer", "A" }, { "payload_sha256", string.rep("a", 64) } },
    { { "record", "lifecycle" }, { "fixture_epoch", 1 }, { "destructive", false }, { "reason", "spec" } },
    { { "record", "intent" }, { "event_id", "e0001" }, { "fixture_epoch", 1 }, { "operation", "Get Blob Properties" },
      { "actor_alias", "observer" } },
    outcome("e0001", "Get Blob Properties", "observer", 200, "STATE_OBSERVED", 1000000000, 1002000000,
      { state = "leased" }),
    { { "record", "intent" }, { "event_id", "e0002" }, { "fixture_epoch", 1 }, { "operation", "Put Blob" },
      { "actor_alias", "A" } },
    outcome("e0002", "Put Blob", "A", 412, "EXPECTED_REJECTION", 1003000000, 1004000000, {
      step = "<script>alert('x')</script>", rev = 1, lease = "A", code = "LeaseIdMissing",
      message = "bad & <worse> \"quoted\" 'single'",
      discrepancy = { B.obj { { "text", "odd <status> & more" }, { "explained_by", opts.discrepancy_by or B.null } } },
    }),
    { { "record", "intent" }, { "event_id", "e0003" }, { "fixture_epoch", 1 }, { "operation", "Lease Break" },
      { "actor_alias", "operator" } },
    outcome("e0003", "Lease Break", "operator", 202, "BREAK_ACCEPTED_NOT_COMPLETE", 1005000000, 1006000000,
      { lease_time = 2 }),
    { { "record", "intent" }, { "event_id", "e0004" }, { "fixture_epoch", 1 }, { "operation", "Get Blob Properties" },
      { "actor_alias", "observer" } },
    outcome("e0004", "Get Blob Properties", "observer", 200, "STATE_OBSERVED", 1007000000, 1008000000,
      { state = "breaking" }),
    outcome("e0005", "Get Blob Properties", "observer", 200, "STATE_OBSERVED", 2000000000, 2001000000,
      { state = "breaking" }),
    outcome("e0006", "Get Blob Properties", "observer", 200, "STATE_OBSERVED", 3100000000, 3101000000,
      { state = "broken" }),
    { { "record", "intent" }, { "event_id", "e0007" }, { "fixture_epoch", 1 }, { "operation", "Lease Acquire" },
      { "actor_alias", "B" }, { "request_started_utc", "2026-01-01T00:00:02.200Z" } },
  }
  if opts.decision then
    rows[#rows + 1] = { { "record", "decision" }, { "fixture_epoch", 1 }, { "endpoint_kind", kind },
      { "decision", opts.decision }, { "reasons", { "reason one <b>", "reason two & more" } },
      { "window_finding", "NOT_ATTEMPTED" }, { "statement", "Statement <i>as recorded</i>." } }
  end
  return rows
end

local GENESIS = string.rep("0", 64)
local TAIL = #',"row_hash":"' + 64 + #'"}'

-- rechain(lines) -> lines: rewrites prev_hash and row_hash of every line
-- so the chain is valid again (what a forger with write access could do).
function B.rechain(lines)
  local prev = GENESIS
  for i, line in ipairs(lines) do
    line = line:gsub('"prev_hash":"%x+"', '"prev_hash":"' .. prev .. '"', 1)
    local head = line:sub(1, #line - TAIL)
    local hash = ll.sha256(prev .. head .. "}")
    lines[i] = head .. ',"row_hash":"' .. hash .. '"}'
    prev = hash
  end
  return lines
end

return B
