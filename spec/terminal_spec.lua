-- The terminal and the CI log (issue 15). The replayed handoff runs in a
-- tmux pane 80 and 60 columns wide (a real terminal: isatty, TIOCGWINSZ);
-- the captured pane, with wrapped lines joined back (-J), has no line wider
-- than the pane and no fragment of the progress line left. Without a
-- terminal, the wait prints one plain heartbeat line about every 5 s of
-- the (virtual) wait, never a carriage return. Offline: a replay.
local helper = require "helper"

local root = os.getenv("PWD")
local fixture = root .. "/fixtures/emulator/main-handoff-accept.json"
local manifest = root .. "/tools/emulator/manifest.json"
local have_tmux = os.execute("command -v tmux >/dev/null 2>&1")

local function sh(cmd)
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  p:close()
  return out
end

local function handoff_cmd(dir)
  return ("env -u AZURE_STORAGE_ACCOUNT_URL -u AZURE_STORAGE_TOKEN -u AZURE_STORAGE_SAS " ..
    "-u LEASELUA_CA_FILE -u COLUMNS %q handoff --manifest %q --replay %q --evidence %q"):format(
    helper.host, manifest, fixture, dir .. "/ev")
end

describe("the terminal", function()
  teardown(helper.cleanup)

  for _, width in ipairs { 80, 60 } do
    it("in a " .. width .. "-column tmux pane no line wraps and no progress fragment is left", function()
      if not have_tmux then pending("tmux not installed (tools/deps.sh)") return end
      local d = helper.tmpdir()
      local sock = "leaselua-spec-" .. width .. "-" .. tostring(os.time())
      local done = d .. "/done"
      local cmd = handoff_cmd(d) .. "; echo rc=$? >" .. done .. "; sleep 60"
      sh(("tmux -L %s new-session -d -x %d -y 60 -s t %q"):format(sock, width, cmd))
      local ok = false
      for _ = 1, 300 do
        if helper.read(done) then ok = true break end
        os.execute("sleep 0.1")
      end
      local pane = sh(("tmux -L %s capture-pane -p -J -S - -t t"):format(sock))
      local real_width = sh(("tmux -L %s display -p -t t '#{pane_width}'"):format(sock))
      sh(("tmux -L %s kill-server 2>/dev/null"):format(sock))
      assert.is_true(ok, "the handoff did not end: " .. pane)
      assert.are.equal(tostring(width), real_width:match("%d+"))
      assert.matches("rc=0", helper.read(done))
      assert.matches("DECISION: ACCEPT", pane)
      assert.matches("finding: stale A's write of revision 3 was accepted", pane)
      local lines = 0
      for line in pane:gmatch("[^\n]*") do
        lines = lines + 1
        line = line:gsub("%s+$", "")
        assert.is_true(#line <= width, ("%d columns in a %d-column pane: %s"):format(#line, width, line))
        assert.falsy(line:find("waiting:", 1, true), "a progress fragment is left: " .. line)
      end
      assert.is_true(lines > 40, pane)
    end)
  end

  it("without a terminal, the wait prints a plain heartbeat about every 5 s", function()
    local d = helper.tmpdir()
    local rc = os.execute(handoff_cmd(d) .. " >" .. d .. "/out 2>" .. d .. "/err </dev/null")
    assert.is_true(rc == true or rc == 0)
    local err = helper.read(d .. "/err")
    assert.falsy(err:find("\r", 1, true), "a carriage return in a log")
    assert.falsy(err:find("\27", 1, true), "an escape sequence in a log")
    local beats = {}
    local beat = "  waiting: breaking, ([%d.]+) s elapsed, (%d+) polls, x%-ms%-lease%-time hint 30 s\n"
    for s, polls in err:gmatch(beat) do
      beats[#beats + 1] = tonumber(s)
      assert.is_true(tonumber(polls) >= 1)
    end
    -- a 30 s break: a beat at the start, then about every 5 s
    assert.is_true(#beats >= 5 and #beats <= 8, #beats .. " heartbeats: " .. err)
    for i = 2, #beats do
      local gap = beats[i] - beats[i - 1]
      assert.is_true(gap >= 4.9 and gap <= 6.5, ("heartbeat gap %.1f s"):format(gap))
    end
    -- and stdout keeps its step lines within 80 columns (no COLUMNS, no tty)
    for line in helper.read(d .. "/out"):gmatch("[^\n]+") do
      if not line:match("^For this identified") and not line:match("^  %- ") then
        assert.is_true(#line <= 80, line)
      end
    end
  end)
end)
