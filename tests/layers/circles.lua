-- No include or call circle between the files of core/ and bindings/
-- (docs/DESIGN.md, "The groups"). A module is a source file with the
-- header of the same name; an edge is an #include of another module's
-- header, or a call (an undefined symbol of one object, `nm`) into a
-- function another module's object defines. A header with no source of
-- its name (a group's *_impl.h, jsonx.h) only declares: what it declares
-- shows up as calls. Any strongly connected set of
-- two or more modules is a circle, printed with its edges; exit 1.
-- Usage: lua5.4 tests/layers/circles.lua SOURCE_DIR BUILD_DIR
local src, build = arg[1], arg[2]
assert(src and build, "usage: circles.lua SOURCE_DIR BUILD_DIR")

local function lines(cmd)
  local p = assert(io.popen(cmd))
  local t = {}
  for l in p:lines() do t[#t + 1] = l end
  p:close()
  return t
end

local function module_of(path)
  return (path:match("([^/]+)%.[ch]$"))
end

local edges, why = {}, {}
local function edge(a, b, reason)
  if a == b then return end
  edges[a] = edges[a] or {}
  if not edges[a][b] then
    edges[a][b] = true
    why[a .. ">" .. b] = reason
  end
end

-- include edges
local files = lines("cd '" .. src .. "' && find core bindings -name '*.[ch]' | sort")
local known = {}
for _, f in ipairs(files) do
  if f:match("%.c$") then known[module_of(f)] = true end
end
for _, f in ipairs(files) do
  local m = module_of(f)
  edges[m] = edges[m] or {}
  for l in io.lines(src .. "/" .. f) do
    local h = l:match('^%s*#%s*include%s+"([^"]+)"')
    if h then
      local hm = module_of(h)
      if known[hm] then edge(m, hm, f .. " includes " .. h) end
    end
  end
end

-- call edges, from the objects of the core groups and the bindings
local objs = lines("find '" .. build .. "/CMakeFiles' -path '*leaselua_*.dir/*' -name '*.c.o' | sort")
assert(#objs > 0, "no objects under " .. build .. "/CMakeFiles: build first")
local defined, undefined = {}, {}
local function exists(path)
  local f = io.open(path)
  if f then f:close() end
  return f ~= nil
end
for _, o in ipairs(objs) do
  -- An object of a source that is no longer in the tree (a renamed file,
  -- an old target in a reused build directory) says nothing about it.
  local rel = o:match("%.dir/(.+)%.o$")
  if not (rel and exists(src .. "/" .. rel)) then goto next end
  local m = o:match("([^/]+)%.c%.o$")
  undefined[m] = undefined[m] or {}
  for _, l in ipairs(lines("nm -P '" .. o .. "'")) do
    local sym, kind = l:match("^(%S+)%s+(%a)")
    if sym then
      if kind == "U" then
        undefined[m][sym] = true
      elseif kind:match("[TDBR]") then
        defined[sym] = m
      end
    end
  end
  ::next::
end
for m, syms in pairs(undefined) do
  for sym in pairs(syms) do
    local d = defined[sym]
    if d then edge(m, d, m .. ".c calls " .. sym .. " (" .. d .. ".c)") end
  end
end

-- Tarjan's strongly connected components
local index, low, onstack, stack, n, sccs = {}, {}, {}, {}, 0, {}
local function visit(v)
  n = n + 1
  index[v], low[v] = n, n
  stack[#stack + 1] = v
  onstack[v] = true
  for w in pairs(edges[v] or {}) do
    if not index[w] then
      visit(w)
      low[v] = math.min(low[v], low[w])
    elseif onstack[w] then
      low[v] = math.min(low[v], index[w])
    end
  end
  if low[v] == index[v] then
    local c = {}
    repeat
      local w = table.remove(stack)
      onstack[w] = nil
      c[#c + 1] = w
    until w == v
    if #c > 1 then sccs[#sccs + 1] = c end
  end
end
local names = {}
for m in pairs(edges) do names[#names + 1] = m end
table.sort(names)
for _, m in ipairs(names) do
  if not index[m] then visit(m) end
end

local count = 0
for m in pairs(edges) do
  for _ in pairs(edges[m]) do count = count + 1 end
end
if #sccs == 0 then
  print(("circles: none among %d modules, %d edges"):format(#names, count))
  os.exit(0)
end
for _, c in ipairs(sccs) do
  table.sort(c)
  local in_c = {}
  for _, m in ipairs(c) do in_c[m] = true end
  print("circle: " .. table.concat(c, " "))
  for _, a in ipairs(c) do
    for b in pairs(edges[a] or {}) do
      if in_c[b] then print("  " .. why[a .. ">" .. b]) end
    end
  end
end
os.exit(1)
