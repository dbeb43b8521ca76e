-- The report's timeline as inline SVG: one lane per actor, the lease state
-- as bands built only from properties reads, one mark per request, the
-- probe bracket, and each break's x-ms-lease-time estimate.
local R = require "lib.report"
local esc, fmt_ms = R.esc, R.fmt_ms

local S = {}

local W, LEFT, RIGHT = 1240, 132, 18
local PLOT = W - LEFT - RIGHT
S.GAP_MS = 250 -- idle time longer than this is drawn compressed
local GAP_W = 46 -- px a compressed span takes, whatever its length
S.MIN_W = 3 -- narrowest drawn request, in px
local Y_ANN = { 14, 30, 46 } -- three rows of annotations
local Y_STATE, H_STATE = 56, 26
local LANE_Y0, LANE_H = 92, 50

local function num(x) return string.format("%.1f", x) end

-- Text width estimate for a sans font, to keep labels from overlapping.
local function text_w(s, size) return utf8.len(s) * (size or 11) * 0.58 end

-- The x scale: requests are grouped in clusters; inside a cluster time is
-- linear (one px/ms factor for the whole figure), and an idle interval
-- longer than GAP_MS between clusters is drawn GAP_W wide, labelled with
-- its real length. Positions inside a compressed span stay monotone.
function S.scale(points)
  table.sort(points, function(a, b) return a.s < b.s end)
  local cl = {}
  for _, p in ipairs(points) do
    local c = cl[#cl]
    if c and p.s - c.e <= S.GAP_MS then
      if p.e > c.e then c.e = p.e end
    else
      cl[#cl + 1] = { s = p.s, e = p.e }
    end
  end
  if #cl == 0 then cl[1] = { s = 0, e = 1 } end
  local active = 0
  for _, c in ipairs(cl) do
    local pad = math.min(math.max(0.5, (c.e - c.s) * 0.02), 20)
    c.s, c.e = c.s - pad, c.e + pad
    active = active + (c.e - c.s)
  end
  local k = (PLOT - (#cl - 1) * GAP_W) / active
  local segs, x = {}, LEFT
  for i, c in ipairs(cl) do
    local w = (c.e - c.s) * k
    segs[#segs + 1] = { kind = "linear", t0 = c.s, t1 = c.e, x0 = x, x1 = x + w }
    x = x + w
    if cl[i + 1] then
      segs[#segs + 1] = { kind = "gap", t0 = c.e, t1 = cl[i + 1].s, x0 = x, x1 = x + GAP_W }
      x = x + GAP_W
    end
  end
  local function X(t)
    if t <= segs[1].t0 then return segs[1].x0 end
    for _, sg in ipairs(segs) do
      if t <= sg.t1 then return sg.x0 + (t - sg.t0) / (sg.t1 - sg.t0) * (sg.x1 - sg.x0) end
    end
    return segs[#segs].x1
  end
  return X, segs, k
end

-- Labels placed in rows without overlapping: place(row_ys, text, x,
-- anchor) -> y of the first row with room (the last row otherwise).
local function placer(rows)
  local used = {}
  for i = 1, #rows do used[i] = {} end
  local function free(i, a, b)
    for _, u in ipairs(used[i]) do
      if a < u[2] + 6 and b > u[1] - 6 then return false end
    end
    return true
  end
  return function(text, x, anchor, size, only_if_free)
    local w = text_w(text, size)
    local a = anchor == "end" and x - w or (anchor == "middle" and x - w / 2 or x)
    for i = 1, #rows do
      if free(i, a, a + w) then
        used[i][#used[i] + 1] = { a, a + w }
        return rows[i]
      end
    end
    if only_if_free then return nil end
    used[#rows][#used[#rows] + 1] = { a, a + w }
    return rows[#rows]
  end
end

-- fit(text, x, anchor, size) -> anchor, x that keep the text inside the
-- figure: a label that would cross an edge flips to the other side of x.
local function fit(text, x, anchor, size)
  local w = text_w(text, size)
  if anchor == "start" and x + w > W - 2 then return "end", x - 8 end
  if anchor == "end" and x - w < 2 then return "start", x + 8 end
  return anchor, x
end

local SHORT = {
  ["Lease Acquire"] = "acquire", ["Lease Break"] = "break", ["Lease Release"] = "release",
  ["Lease Renew"] = "renew", ["Lease Change"] = "change", ["Delete Blob"] = "delete",
  ["Create Container"] = "container",
}

local function mark_label(q)
  local o = q.outcome
  local status = o and (o.http_status or o.outcome) or "no outcome"
  if q.operation == "Put Blob" then
    local unleased = q.row.lease_alias_supplied == "omitted" and " no lease" or ""
    return "r" .. tostring(q.row.payload_revision) .. " " .. tostring(status) .. unleased
  end
  local s = SHORT[q.operation]
  return s and (s .. " " .. tostring(status)) or nil
end

local function title(q)
  local o, r = q.outcome, q.row
  local parts = { q.event_id, r.step or "", q.operation, "actor " .. q.actor,
    "lease sent: " .. tostring(r.lease_alias_supplied) }
  if o then
    parts[#parts + 1] = "HTTP " .. tostring(o.http_status or "-") ..
      (o.azure_error_code and (" " .. o.azure_error_code) or "")
    if o.observed_lease_state then
      parts[#parts + 1] = "observed " .. o.observed_lease_state .. "/" .. tostring(o.observed_lease_status)
    end
  end
  parts[#parts + 1] = q.class
  local span = q.t_end and (fmt_ms(q.t_start) .. " to " .. fmt_ms(q.t_end)) or ("from " .. fmt_ms(q.t_start))
  parts[#parts + 1] = span .. " (" .. q.timed_by .. ")"
  return table.concat(parts, " · ")
end

-- band_runs(m) -> list of runs {state, first, last, obs = {...}}, and the
-- unobserved transitions {from, to}. A run joins consecutive properties
-- observations of one lifecycle that report the same state with no lease
-- action or delete the service may have applied between them.
function S.band_runs(m)
  local runs, gaps = {}, {}
  local cur
  for _, q in ipairs(m.observations) do
    local state = q.outcome.observed_lease_state
    local joined = false
    if cur and cur.last.epoch == q.epoch then
      local changed = false
      for i = cur.last.index + 1, q.index - 1 do
        if m.requests[i].changes_lease then changed = true end
      end
      if state == cur.state and not changed then
        cur.last = q
        cur.obs[#cur.obs + 1] = q
        joined = true
      else
        gaps[#gaps + 1] = { from = cur.last, to = q }
      end
    end
    if not joined then
      cur = { state = state, first = q, last = q, obs = { q } }
      runs[#runs + 1] = cur
    end
  end
  return runs, gaps
end

function S.timeline(m)
  local out = {}
  local function add(s) out[#out + 1] = s end
  local lanes, lane_of = {}, {}
  for _, a in ipairs(R.LANES) do
    lanes[#lanes + 1] = a
    lane_of[a] = #lanes
  end
  for _, q in ipairs(m.requests) do
    if not lane_of[q.actor] then
      lanes[#lanes + 1] = q.actor
      lane_of[q.actor] = #lanes
    end
  end
  local t_max = 0
  for _, q in ipairs(m.requests) do t_max = math.max(t_max, q.t_end or q.t_start) end
  -- points that must be on the scale: every request, and every estimate
  local points, estimates = {}, {}
  for _, q in ipairs(m.requests) do points[#points + 1] = { s = q.t_start, e = q.t_end or q.t_start } end
  for _, q in ipairs(m.requests) do
    local o = q.outcome
    if o and o.operation == "Lease Break" and tonumber(o.x_ms_lease_time) and q.t_end then
      local est = q.t_end + tonumber(o.x_ms_lease_time) * 1000
      estimates[#estimates + 1] = { q = q, t = est, secs = tonumber(o.x_ms_lease_time) }
      points[#points + 1] = { s = est, e = est }
      t_max = math.max(t_max, est)
    end
  end
  local X, segs, k = S.scale(points)
  local y_axis = LANE_Y0 + #lanes * LANE_H + 6
  local H = y_axis + 60
  local y_top, y_bot = Y_STATE, y_axis - 2
  add(string.format('<svg class="timeline" viewBox="0 0 %d %d" ' ..
    'width="%d" height="%d" role="img" aria-label="Timeline of %d requests">', W, H, W, H, #m.requests))
  add('<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" ' ..
    'patternTransform="rotate(45)"><rect width="6" height="6" class="hatch-bg"/>' ..
    '<line x1="0" y1="0" x2="0" y2="6" class="hatch-line"/></pattern>' ..
    '<pattern id="hatch-red" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">' ..
    '<rect width="5" height="5" class="hatch-red-bg"/><line x1="0" y1="0" x2="0" y2="5" class="hatch-red-line"/>' ..
    '</pattern></defs>')
  -- lanes
  add(string.format('<rect class="lane-state-bg" x="%d" y="%d" width="%d" height="%d"/>', LEFT, Y_STATE, PLOT,
    H_STATE))
  add(string.format('<text class="lane-label" x="%d" y="%d">lease state</text>', LEFT - 8, Y_STATE + 12))
  add(string.format('<text class="lane-sub" x="%d" y="%d">properties reads only</text>', LEFT - 8, Y_STATE + 23))
  for i, a in ipairs(lanes) do
    local y = LANE_Y0 + (i - 1) * LANE_H
    add(string.format('<rect class="lane-bg lane-%d" x="%d" y="%d" width="%d" height="%d"/>', i % 2, LEFT, y, PLOT,
      LANE_H))
    add(string.format('<text class="lane-label" x="%d" y="%d">%s</text>', LEFT - 8, y + LANE_H / 2 + 4, esc(a)))
  end
  -- compressed spans
  local bottom = placer({ y_axis + 29, y_axis + 41, y_axis + 53 })
  for _, sg in ipairs(segs) do
    if sg.kind == "gap" then
      local label = "+" .. fmt_ms(sg.t1 - sg.t0)
      local xm = (sg.x0 + sg.x1) / 2
      add(string.format('<g class="gap" data-ms="%.3f"><title>%s with no request, drawn compressed</title>' ..
        '<rect x="%s" y="%d" width="%s" height="%d" fill="url(#hatch)"/>' ..
        '<path class="gap-zig" d="M%s %d l4 -5 l4 10 l4 -5"/>' ..
        '<text class="gap-label" x="%s" y="%d">%s</text></g>',
        sg.t1 - sg.t0, esc(fmt_ms(sg.t1 - sg.t0)), num(sg.x0), y_top, num(sg.x1 - sg.x0), y_bot - y_top,
        num(xm - 6), y_axis, num(xm), bottom(label, xm, "middle", 10), esc(label)))
    end
  end
  -- axis
  add(string.format('<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>', LEFT, y_axis, W - RIGHT, y_axis))
  local ticks = placer({ y_axis + 15 })
  local step = 1
  for _, f in ipairs { 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000,
    10000, 20000, 60000 } do
    step = f
    if f * k >= 90 then break end
  end
  local function tick_text(t)
    if t < 1000 and step < 1000 then
      local d = math.max(0, math.ceil(-math.log(step, 10) - 1e-9))
      return string.format("%." .. d .. "f ms", t)
    end
    local d = math.max(0, math.ceil(-math.log(step / 1000, 10) - 1e-9))
    d = math.max(d, t >= 1000 and step < 1000 and 3 or 0)
    return string.format("%." .. d .. "f s", t / 1000)
  end
  local function tick(t)
    local x, label = X(t), tick_text(t)
    local anchor = "middle"
    if x - text_w(label, 10) / 2 < LEFT then anchor = "start" end
    if x + text_w(label, 10) / 2 > W - 2 then anchor = "end" end
    local y = ticks(label, x, anchor, 10, true)
    add(string.format('<line class="tick" x1="%s" y1="%d" x2="%s" y2="%d"/>', num(x), y_axis, num(x), y_axis + 4))
    if y then
      add(string.format('<text class="tick-label" x="%s" y="%d" text-anchor="%s">%s</text>', num(x), y, anchor,
        esc(label)))
    end
  end
  for _, sg in ipairs(segs) do
    if sg.kind == "linear" then
      local first = math.ceil(math.max(sg.t0, 0) / step) * step
      local n = 0
      for t = first, sg.t1, step do
        tick(t)
        n = n + 1
      end
      if n == 0 then tick((sg.t0 + sg.t1) / 2) end
    end
  end
  add(string.format('<text class="axis-title" x="%d" y="%d">time from the</text>' ..
    '<text class="axis-title" x="%d" y="%d">first request</text>', LEFT - 8, y_axis + 12, LEFT - 8, y_axis + 24))
  -- lifecycle and recovery boundaries
  local seen_epoch = {}
  for i, q in ipairs(m.requests) do
    local label
    if q.epoch and q.epoch > 0 and not seen_epoch[q.epoch] and i > 1 then label = "lifecycle " .. q.epoch end
    if q.epoch then seen_epoch[q.epoch] = true end
    if q.after_recovery then label = (label and label .. ", " or "") .. "recovery reopened the run" end
    if label then
      local x = X(q.t_start) - 1
      add(string.format('<g class="boundary"><line x1="%s" y1="%d" x2="%s" y2="%d"/>' ..
        '<text x="%s" y="%d">%s</text></g>', num(x), y_top, num(x), y_axis + 4, num(x + 3),
        bottom(label, x + 3, "start", 10), esc(label)))
    end
  end
  -- state bands
  local runs, gaps = S.band_runs(m)
  local state_labels = placer({ Y_STATE + 17 })
  if #runs == 0 then
    add(string.format('<text class="band-label none" x="%d" y="%d">no Get Blob Properties read in this run: ' ..
      'no state is drawn</text>', LEFT + 8, Y_STATE + 17))
  end
  for _, g in ipairs(gaps) do
    local x0, x1 = X(g.from.t_end), X(g.to.t_start)
    add(string.format('<g class="band-gap"><title>not observed between %s (%s) and %s (%s): ' ..
      'the change happened somewhere in this interval</title><rect x="%s" y="%d" width="%s" height="%d"/></g>',
      esc(g.from.event_id), esc(g.from.outcome.observed_lease_state), esc(g.to.event_id),
      esc(g.to.outcome.observed_lease_state), num(x0), Y_STATE + 4, num(math.max(x1 - x0, 0)), H_STATE - 8))
  end
  for _, run in ipairs(runs) do
    local st = run.state
    for j, q in ipairs(run.obs) do
      local x0 = X(q.t_start)
      local x1 = math.max(X(q.t_end), x0 + S.MIN_W)
      add(string.format('<rect class="band st-%s" data-state="%s" data-event="%s" x="%s" y="%d" width="%s" ' ..
        'height="%d"><title>%s: %s/%s (Get Blob Properties)</title></rect>', esc(st), esc(st), esc(q.event_id),
        num(x0), Y_STATE, num(x1 - x0), H_STATE, esc(q.event_id), esc(st), esc(q.outcome.observed_lease_status)))
      local nxt = run.obs[j + 1]
      if nxt then
        local j0, j1 = x1, X(nxt.t_start)
        if j1 > j0 then
          add(string.format('<rect class="band join st-%s" data-state="%s" x="%s" y="%d" width="%s" height="%d">' ..
            '<title>%s at %s and again at %s</title></rect>', esc(st), esc(st), num(j0), Y_STATE, num(j1 - j0),
            H_STATE, esc(st), esc(q.event_id), esc(nxt.event_id)))
        end
      end
    end
    local label = st
    if st == "leased" then
      local h = R.holder_before(m, run.first)
      if h then label = "leased (" .. h.actor .. ", " .. h.event .. ")" end
    end
    local x0, x1 = X(run.first.t_start), math.max(X(run.last.t_end), X(run.first.t_start) + S.MIN_W)
    local w = text_w(label, 11)
    if x1 - x0 >= w + 10 then
      state_labels(label, (x0 + x1) / 2, "middle", 11)
      add(string.format('<text class="band-label in" x="%s" y="%d">%s</text>', num((x0 + x1) / 2), Y_STATE + 17,
        esc(label)))
    elseif state_labels(label, x0 - 3, "end", 11, true) then
      add(string.format('<text class="band-label out" x="%s" y="%d" text-anchor="end">%s</text>', num(x0 - 3),
        Y_STATE + 17, esc(label)))
    elseif state_labels(label, x1 + 3, "start", 11, true) then
      add(string.format('<text class="band-label out" x="%s" y="%d">%s</text>', num(x1 + 3), Y_STATE + 17,
        esc(label)))
    end
  end
  -- annotations: brackets, estimates
  local ann = placer(Y_ANN)
  for _, f in ipairs(m.windows) do
    local b, a, p = m.by_event[f.before_event], m.by_event[f.after_event], m.by_event[f.put_event]
    if b and a and b.t_start and (a.t_end or a.t_start) then
      local x0, x1 = X(b.t_start) - 2, math.max(X(a.t_end or a.t_start), X(b.t_start) + S.MIN_W) + 2
      local yb = LANE_Y0 + #lanes * LANE_H - 2
      local label = string.format("probe bracket %s–%s: %s, Put %s %s, %s", f.before_event, f.after_event,
        tostring(b.outcome and b.outcome.observed_lease_state or "?"), tostring(f.put_event),
        tostring(p and p.outcome and p.outcome.http_status or "?"), tostring(f.result))
      if f.bracket_ms then label = label .. string.format(" (%.1f ms)", f.bracket_ms) end
      local anchor, lx = "start", x0
      if x0 + text_w(label) > W - RIGHT then anchor, lx = "end", x1 end
      local y = ann(label, lx, anchor)
      add(string.format('<g class="bracket" data-before="%s" data-after="%s" data-put="%s" data-result="%s">' ..
        '<rect class="bracket-fill" x="%s" y="%d" width="%s" height="%d"/>' ..
        '<path class="bracket-line" d="M%s %d h-4 v%d h4 M%s %d h4 v%d h-4"/>' ..
        '<line class="leader" x1="%s" y1="%d" x2="%s" y2="%d"/>' ..
        '<text class="ann" x="%s" y="%d" text-anchor="%s">%s</text></g>',
        esc(f.before_event), esc(f.after_event), esc(f.put_event), esc(f.result),
        num(x0), y_top, num(x1 - x0), yb - y_top, num(x0 + 4), y_top, yb - y_top, num(x1 - 4), y_top,
        yb - y_top, num(x0), y + 3, num(x0), y_top, num(lx), y, anchor, esc(label)))
    end
  end
  for _, e in ipairs(estimates) do
    local x = X(e.t)
    local label = string.format("x-ms-lease-time %s s from %s: estimate %s", tostring(e.secs), e.q.event_id,
      fmt_ms(e.t))
    local anchor, lx = fit(label, x - 4, "end")
    local y = ann(label, lx, anchor)
    add(string.format('<g class="lease-time" data-event="%s" data-estimate-ms="%.3f"><line x1="%s" y1="%d" ' ..
      'x2="%s" y2="%d"/><text class="ann" x="%s" y="%d" text-anchor="%s">%s</text></g>', esc(e.q.event_id), e.t,
      num(x), y - 9, num(x), y_axis, num(lx), y, anchor, esc(label)))
    -- the first broken observation after this break, in its lifecycle
    for _, q in ipairs(m.observations) do
      if q.index > e.q.index and q.epoch == e.q.epoch and q.outcome.observed_lease_state == "broken" then
        local xb = X(q.t_start)
        local l2 = string.format("first broken observed: %s at %s (%s%s after the estimate)", q.event_id,
          fmt_ms(q.t_start), q.t_start >= e.t and "+" or "", fmt_ms(q.t_start - e.t))
        local a2, lx2 = fit(l2, xb + 4, "start")
        local y2 = ann(l2, lx2, a2)
        add(string.format('<g class="first-broken" data-event="%s"><line x1="%s" y1="%d" x2="%s" y2="%d"/>' ..
          '<text class="ann" x="%s" y="%d" text-anchor="%s">%s</text></g>', esc(q.event_id), num(xb), y2 - 9,
          num(xb), Y_STATE, num(lx2), y2, a2, esc(l2)))
        break
      end
    end
  end
  -- requests
  local lane_labels = {}
  for i = 1, #lanes do
    local y = LANE_Y0 + (i - 1) * LANE_H
    lane_labels[i] = placer({ y + LANE_H - 13, y + LANE_H - 3 })
  end
  for _, q in ipairs(m.requests) do
    local li = lane_of[q.actor]
    local yc = LANE_Y0 + (li - 1) * LANE_H + 18
    local xs = X(q.t_start)
    local xe = q.t_end and math.max(X(q.t_end), xs + S.MIN_W) or (W - RIGHT)
    local hh = q.class == "STATE_OBSERVED" and 6 or 9
    add(string.format('<g class="req c-%s" data-event="%s" data-class="%s" data-actor="%s" data-op="%s" ' ..
      'data-start-ms="%.3f"%s><title>%s</title>', q.class, esc(q.event_id), esc(q.class), esc(q.actor),
      esc(q.operation), q.t_start, q.t_end and string.format(' data-end-ms="%.3f"', q.t_end) or "", esc(title(q))))
    add(string.format('<rect class="span" x="%s" y="%s" width="%s" height="%d"/>', num(xs), num(yc - hh), num(xe - xs),
      2 * hh))
    add(string.format('<line class="t-start" x1="%s" y1="%s" x2="%s" y2="%s"/>', num(xs), num(yc - 13), num(xs),
      num(yc + 13)))
    if q.t_end then
      add(string.format('<line class="t-end" x1="%s" y1="%s" x2="%s" y2="%s"/>', num(xe), num(yc - 13), num(xe),
        num(yc + 13)))
    end
    add("</g>")
    local label = q.actor ~= "observer" and mark_label(q)
    if label then
      local anchor, lx = "start", xs
      if xs + text_w(label, 10) > W - 2 then anchor, lx = "end", xe end
      local y = lane_labels[li](label, lx, anchor, 10, true)
      if y then
        add(string.format('<text class="mark-label" x="%s" y="%d" text-anchor="%s">%s</text>', num(lx), y, anchor,
          esc(label)))
      end
    end
  end
  add("</svg>")
  return table.concat(out, "\n"), { k = k, segments = segs, t_max = t_max, runs = runs, gaps = gaps }
end

return S
