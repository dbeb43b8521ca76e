-- The leaselua Lua module (leaselua.so) for stock Lua 5.4.
-- The host binary and the flows come with the source tree (make build).
package = "leaselua"
version = "0.1.0-1"
source = {
  url = "git+file://.",
  tag = "v0.1.0",
}
description = {
  summary = "Evidence for one Azure Blob lease handoff: does writer B really own the blob?",
  detailed = [[
    A C core (libcurl, OpenSSL, expat, cJSON) with Lua bindings: one attempt
    on the wire, write-ahead hash-chained evidence, and every safety rule of
    the lease-break playbook enforced in C.
  ]],
  license = "Proprietary",
}
dependencies = {
  "lua >= 5.4, < 5.5",
}
external_dependencies = {
  CURL = { header = "curl/curl.h" },
  OPENSSL = { header = "openssl/evp.h" },
  EXPAT = { header = "expat.h" },
  CJSON = { header = "cjson/cJSON.h" },
}
build = {
  type = "cmake",
  variables = {
    CMAKE_BUILD_TYPE = "RelWithDebInfo",
  },
  install = {
    lib = { leaselua = "build.luarocks/leaselua.so" },
  },
}
