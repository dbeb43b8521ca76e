-- luacheck configuration: Lua 5.4 scripts run in the leaselua sandbox.
std = "lua54"
max_line_length = 120
files["spec"] = { std = "+busted" }
files["examples"] = { std = "+busted" }
exclude_files = { "build*/**", "tools/emulator/node_modules/**", "bench/peers/**" }
