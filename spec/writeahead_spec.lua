-- Invariant 2 at the system-call level: strace shows that every request
-- that can change the service leaves only after its intent row was written
-- to the protected ledger and fsync'd, and that a read costs no fsync.
local helper = require "helper"
local slow = require "support.slow"

local SCRIPT = [[
local ll = require "leaselua"
local run = ll.open {}
run:declare(0, "A")
run:create_container()
run:unbound("A"):put(0)
run:read()
run:properties()
run:finish()
run:close()
]]

-- Events of one traced process tree, in order: {kind, fd, text}.
local function trace(path)
  local events, fds = {}, {}
  for line in (helper.read(path) or ""):gmatch("[^\n]+") do
    -- the ledger opens protected/ relative to the evidence directory, and
    -- ledger.jsonl relative to protected/ (openat, O_NOFOLLOW)
    local dir = line:match('openat%(%d+, "protected", .-= (%d+)$')
    if dir then fds.protected_dir = dir end
    local fd = line:match('openat%(.-protected/ledger%.jsonl".-= (%d+)$') or
      (fds.protected_dir and line:match('openat%(' .. fds.protected_dir .. ', "ledger%.jsonl".-= (%d+)$'))
    if fd then fds.protected = fd end
    local wfd, text = line:match('write%((%d+), "(.*)"%.*, %d+%)')
    if wfd then events[#events + 1] = { kind = "write", fd = wfd, text = text } end
    local sfd = line:match("fsync%((%d+)%)")
    if sfd then events[#events + 1] = { kind = "fsync", fd = sfd } end
    if line:match("connect%(%d+, {sa_family=AF_INET") then events[#events + 1] = { kind = "connect" } end
  end
  return events, fds
end

describe("write-ahead evidence (strace)", function()
  local server
  setup(function() server = slow.start {} end)
  teardown(function()
    slow.stop(server)
    helper.cleanup()
  end)

  it("fsyncs a mutation's intent before connecting, and never for a read", function()
    local d = helper.tmpdir()
    local log = d .. "/strace.log"
    local args, env = slow.operator(server, { script = slow.script(SCRIPT), evidence = d .. "/ev",
      manifest = helper.manifest_table })
    local rc, _, err = slow.run_host(args, {
      env = env,
      prefix = "strace -f -qq -s 300 -e trace=openat,write,fsync,connect -o " .. helper.quote(log),
    })
    -- the exit is the recorded decision: HOLD, this run proves no handoff
    assert.are.equal(2, rc, err)
    local events, fds = trace(log)
    assert.is_string(fds.protected)
    local intents, mutations_checked, read_fsyncs = 0, 0, 0
    for i, e in ipairs(events) do
      if e.kind == "write" and e.fd == fds.protected and e.text:find('\\"record\\":\\"intent\\"', 1, true) then
        intents = intents + 1
        -- find the next fsync of the protected fd and the next connect
        local synced_before_connect = nil
        local mutation = not e.text:find('operation\\":\\"Get Blob', 1, true)
        for j = i + 1, #events do
          local f = events[j]
          if f.kind == "fsync" and f.fd == fds.protected and synced_before_connect == nil then
            synced_before_connect = true
          elseif f.kind == "connect" and synced_before_connect == nil then
            synced_before_connect = false
          end
          if f.kind == "connect" then break end
          if f.kind == "write" and f.fd == fds.protected and f.text:find('\\"record\\":\\"outcome\\"', 1, true) then
            break -- the response came back: the request has left by now
          end
        end
        if mutation then
          mutations_checked = mutations_checked + 1
          assert.is_true(synced_before_connect, "intent " .. intents .. " left before its fsync")
        elseif synced_before_connect then
          read_fsyncs = read_fsyncs + 1
        end
      end
    end
    assert.is_true(intents >= 4)
    assert.is_true(mutations_checked >= 2)
    assert.are.equal(0, read_fsyncs)
    rc = helper.run({ "verify", d .. "/ev" })
    assert.are.equal(0, rc)
  end)
end)
