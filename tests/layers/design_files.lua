-- docs/DESIGN.md section 7 ("Every file") and the tree agree: every file
-- under core/, bindings/ and scripts/ is listed once, under the heading of
-- its own directory, with a purpose; nothing listed is missing. Each
-- disagreement is one line saying what to add to or remove from the doc;
-- exit 1.
-- Usage: lua5.4 tests/layers/design_files.lua SOURCE_DIR
local src = arg[1]
assert(src, "usage: design_files.lua SOURCE_DIR")
local DOC = "docs/DESIGN.md"
local ROOTS = { "core", "bindings", "scripts" }

local function lines(cmd)
  local p = assert(io.popen(cmd))
  local t = {}
  for l in p:lines() do t[#t + 1] = l end
  p:close()
  return t
end

-- the tree: every regular file, hidden ones (editor state) aside
local tree = {}
for _, root in ipairs(ROOTS) do
  local cmd = "cd '" .. src .. "' && find " .. root
    .. " -type f ! -name '.*' | LC_ALL=C sort"
  for _, f in ipairs(lines(cmd)) do tree[f] = true end
end

-- the doc: "### `dir`" headings, then "- `path`: purpose" lines
local f = assert(io.open(src .. "/" .. DOC), "cannot read " .. DOC)
local listed, problems = {}, {}
local function problem(fmt, ...)
  problems[#problems + 1] = string.format(fmt, ...)
end
local in_section, dir, n = false, nil, 0
local seen_section = false
for l in f:lines() do
  n = n + 1
  if l:match("^## ") then
    in_section = l:match("^## 7%. Every file") ~= nil
    seen_section = seen_section or in_section
    dir = nil
  elseif in_section then
    local h = l:match("^### `([^`]+)`")
    if h then dir = h end
    local p, purpose = l:match("^%- `([^`]+)`:%s*(.*)$")
    if not p and l:match("^%- `") then
      problem("%s:%d: write the entry as \"- `path`: purpose\"", DOC, n)
    end
    if p then
      if listed[p] then
        problem("%s:%d: %s is listed twice: remove this line", DOC, n, p)
      end
      listed[p] = true
      if purpose == "" then
        problem("%s:%d: %s has no purpose: add one line after the colon",
          DOC, n, p)
      end
      if not dir then
        problem("%s:%d: %s is listed before any \"### `dir`\" heading", DOC, n, p)
      elseif p:match("^(.*)/[^/]+$") ~= dir
          and p:match("^(.*)/include/[^/]+$") ~= dir then
        problem("%s:%d: %s is listed under `%s`: move it under the heading "
          .. "of its directory", DOC, n, p, dir)
      end
    end
  end
end
f:close()
if not seen_section then
  problem("%s has no section \"## 7. Every file\"", DOC)
end

local function sorted(set)
  local t = {}
  for k in pairs(set) do t[#t + 1] = k end
  table.sort(t)
  return t
end
for _, p in ipairs(sorted(tree)) do
  if not listed[p] then
    local d = p:match("^(.*)/include/[^/]+$") or p:match("^(.*)/[^/]+$")
    problem("%s does not list %s: add \"- `%s`: <its purpose>\" under "
      .. "\"### `%s`\" in section 7", DOC, p, p, d)
  end
end
for _, p in ipairs(sorted(listed)) do
  if not tree[p] then
    problem("%s lists %s, which is not in the tree: remove its line "
      .. "(or rename it to the file's new path)", DOC, p)
  end
end

local count = 0
for _ in pairs(tree) do count = count + 1 end
if #problems > 0 then
  for _, p in ipairs(problems) do print(p) end
  print(string.format("%d problem(s); %d files in the tree", #problems, count))
  os.exit(1)
end
print(string.format("%s section 7 lists all %d files of %s", DOC, count,
  table.concat(ROOTS, "/, ") .. "/"))
