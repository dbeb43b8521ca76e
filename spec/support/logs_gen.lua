-- Documented-format service logs made from a recorded run (issue 17): the
-- records Azure Storage would have logged for the run's own requests, with
-- the run's client request IDs, times, statuses and request IDs, written in
-- the three forms `leaselua corroborate` reads, shaped like Microsoft's
-- published samples:
--   diagnostic  a diagnostic setting's PT1H.json lines ("Azure Blob Storage
--               monitoring data reference": time, resourceId, category,
--               operationName, statusCode, statusText, callerIpAddress,
--               correlationId, uri, identity.requester, properties)
--   analytics   what `az monitor log-analytics query` prints for
--               StorageBlobLogs: an array of rows keyed by column
--   classic     Storage Analytics log format 2.0 lines (38 fields)
-- Label: documented. Nothing here was logged by a service: Azurite writes
-- none of these logs. The principals are made-up GUIDs, never a real oid.
local cjson = require "cjson"

local M = {}

M.TENANT = "72f988bf-86f1-41af-91ab-dddddddddddd"
-- one made-up object ID per actor, and one for a principal the run lacks
M.OID = {
  A = "0a0a0a0a-0000-4000-8000-00000000000a",
  B = "0b0b0b0b-0000-4000-8000-00000000000b",
  operator = "0c0c0c0c-0000-4000-8000-00000000000c",
  observer = "0d0d0d0d-0000-4000-8000-00000000000d",
  stranger = "0e0e0e0e-0000-4000-8000-00000000000e",
}
M.ACCOUNT = "myaccount"
-- The host the service logs in each uri: the run's own account host (its
-- declared Azure host, else the host it talked to; a replay's placeholder);
-- a record's own .host wins (a record of another account).
local function run_host(manifest)
  local d = manifest.declared_azure_host
  if d and d ~= cjson.null then return d end
  return manifest.account_host
end
M.run_host = run_host

local OPS = {
  ["Put Blob"] = "PutBlob", ["Get Blob"] = "GetBlob", ["Get Blob Properties"] = "GetBlobProperties",
  ["Delete Blob"] = "DeleteBlob", ["Create Container"] = "CreateContainer",
  ["Lease Acquire"] = "AcquireBlobLease", ["Lease Break"] = "BreakBlobLease",
  ["Lease Release"] = "ReleaseBlobLease", ["Lease Renew"] = "RenewBlobLease",
  ["Lease Change"] = "ChangeBlobLease",
}
local READS = { GetBlob = true, GetBlobProperties = true }

-- The category of an operation as these logs state it: reads and deletes
-- as their names say, everything else (lease operations too: an
-- assumption, the pages read do not say) StorageWrite; a record's own
-- .category wins.
local function category(op)
  if READS[op] then return "StorageRead" elseif op == "DeleteBlob" then return "StorageDelete" end
  return "StorageWrite"
end

-- "2026-12-01T09:00:00.017Z" -> "2026-12-01T09:00:00.0170000Z" (the logs'
-- seven fractional digits), shifted by ms.
local function stamp(utc, ms)
  local y, mo, d, h, mi, s, f = utc:match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)%.(%d+)Z$")
  local t = os.time({ year = tonumber(y), month = tonumber(mo), day = tonumber(d), hour = tonumber(h),
    min = tonumber(mi), sec = tonumber(s), isdst = false })
  local total = (t * 1000 + tonumber(f)) + (ms or 0)
  -- os.time is local time; the offset cancels in os.date("!")'s inverse
  local off = os.time(os.date("!*t", 0)) - 0
  local secs = total // 1000 - off
  return os.date("!%Y-%m-%dT%H:%M:%S", secs) .. string.format(".%03d0000Z", total % 1000)
end
M.stamp = stamp

function M.rows(dir)
  local rows = {}
  for l in io.lines(dir .. "/export/ledger.jsonl") do rows[#rows + 1] = cjson.decode(l) end
  return rows
end

-- The service's records of the run: one per request that reached it.
-- opts.unknown: the status an UNKNOWN outcome was logged with ("201"), or
-- nil when the service never logged it.
function M.records(dir, opts)
  opts = opts or {}
  local rows = M.rows(dir)
  local manifest = rows[1]
  local recs = {}
  for _, r in ipairs(rows) do
    if r.record == "outcome" and r.outcome ~= "NOT_SENT" then
      local status = r.http_status ~= cjson.null and math.tointeger(r.http_status) or nil
      if r.outcome == "UNKNOWN" then status = opts.unknown and math.tointeger(tonumber(opts.unknown)) or nil end
      if status then
        local op = OPS[r.operation]
        local path = r.operation == "Create Container" and ("/" .. manifest.container) or manifest.blob_path
        recs[#recs + 1] = {
          time = stamp(r.request_started_utc, 1), op = op, status = status,
          text = status < 300 and "Success"
            or (r.azure_error_code ~= cjson.null and r.azure_error_code or "ClientOtherError"),
          crid = r.client_request_id,
          reqid = r.x_ms_request_id ~= cjson.null and r.x_ms_request_id or "0f0f0f0f-0000-4000-8000-000000000000",
          host = run_host(manifest), path = path,
          query = r.operation == "Create Container" and "?restype=container" or "",
          oid = M.OID[r.actor_alias] or M.OID.stranger,
          seq = r.seq, operation = r.operation,
        }
      end
    end
  end
  return recs, rows
end

-- Another principal's record at the middle of the run's longest gap
-- between two requests (inside no attempt's window).
function M.stranger(recs, op, status)
  local best, at = -1, nil
  local function ms(t)
    local h, mi, s, f = t:match("T(%d+):(%d+):(%d+)%.(%d%d%d)")
    return ((tonumber(h) * 60 + tonumber(mi)) * 60 + tonumber(s)) * 1000 + tonumber(f)
  end
  for i = 1, #recs - 1 do
    local gap = ms(recs[i + 1].time) - ms(recs[i].time)
    if gap > best then best, at = gap, i end
  end
  local base = recs[at]
  local r = {}
  for k, v in pairs(base) do r[k] = v end
  r.time = stamp(base.time:gsub("(%.%d%d%d)%d*Z$", "%1Z"), best // 2)
  r.op, r.status, r.text = op, status, status < 300 and "Success" or "ClientOtherError"
  r.crid = "7f7f7f7f-0000-4000-8000-000000000777"
  r.reqid = "7e7e7e7e-0000-4000-8000-000000000777"
  r.oid = M.OID.stranger
  r.path, r.query = recs[#recs].path, ""
  for _, x in ipairs(recs) do if x.op ~= "CreateContainer" then r.path = x.path break end end
  table.insert(recs, at + 1, r)
  return r
end

local function uri(r)
  if r.uri then return r.uri end -- a record's own uri text wins ("" for none)
  return "https://" .. (r.host or (M.ACCOUNT .. ".blob.core.windows.net")) .. r.path .. r.query
end

local function diagnostic(r)
  return cjson.encode({
    time = r.time,
    resourceId = "/subscriptions/12345678-2222-3333-4444-555555555555/resourceGroups/mytestrp/providers/"
      .. "Microsoft.Storage/storageAccounts/" .. M.ACCOUNT .. "/blobServices/default",
    category = r.category or category(r.op), operationName = r.op, operationVersion = "2023-11-03",
    schemaVersion = "1.0",
    statusCode = r.status, statusText = r.text, durationMs = 5, callerIpAddress = "192.168.0.1:11111",
    correlationId = r.reqid, location = "uswestcentral", uri = uri(r),
    identity = {
      type = "OAuth",
      requester = { appId = "691458b9-1327-4635-9f55-bbbbbbbbbbbb", audience = "https://storage.azure.com/",
        objectId = r.oid, tenantId = M.TENANT, tokenIssuer = "https://sts.windows.net/" .. M.TENANT .. "/" },
    },
    properties = { accountName = M.ACCOUNT, clientRequestId = r.crid, serviceType = "blob", operationCount = 0 },
  })
end

local function analytics(r)
  return {
    TimeGenerated = r.time, AccountName = M.ACCOUNT, Category = r.category or category(r.op), OperationName = r.op,
    StatusCode = tostring(r.status), StatusText = r.text, CorrelationId = r.reqid, ClientRequestId = r.crid,
    Uri = uri(r), CallerIpAddress = "192.168.0.1:11111", AuthenticationType = "OAuth",
    RequesterObjectId = r.oid, RequesterTenantId = M.TENANT, TableName = "PrimaryResult",
  }
end

local function classic(r)
  local f = {
    "2.0", r.time, r.op, r.status < 300 and "OAuthSuccess" or r.text, tostring(r.status), "12", "10", "bearer",
    M.ACCOUNT, M.ACCOUNT, "blob", '"' .. uri(r) .. '"', '"/' .. M.ACCOUNT .. r.path .. '"', r.reqid, "0",
    "192.168.0.1:11111", "2023-11-03", "460", "23", "225", "0", "23", "", "", "", "", "",
    '"leaselua/0.1.0"', "", '"' .. r.crid .. '"', '"' .. r.oid .. '"', '"' .. M.TENANT .. '"',
    '"691458b9-1327-4635-9f55-bbbbbbbbbbbb"', '"https://storage.azure.com/"',
    '"https://sts.windows.net/' .. M.TENANT .. '/"', "", "", "",
  }
  assert(#f == 38)
  return table.concat(f, ";")
end

-- The text of recs in one format.
function M.text(recs, format)
  local out = {}
  if format == "analytics" then
    local rows = {}
    for i, r in ipairs(recs) do rows[i] = analytics(r) end
    return cjson.encode(rows) .. "\n"
  end
  for _, r in ipairs(recs) do out[#out + 1] = (format == "classic" and classic or diagnostic)(r) end
  return table.concat(out, "\n") .. "\n"
end

M.write = require("helper").write

return M
