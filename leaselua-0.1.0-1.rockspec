-- leaselua for stock Lua 5.4: the Lua module (leaselua.so), and with it the
-- host binary, the flows and the man page, installed by CMake's own rules
-- into the rocks tree. `luarocks make` on Debian 12 builds it from a
-- checkout (curl's header sits on Debian's multiarch path, which CMake's
-- FindCURL searches and luarocks' own header check does not).
package = "leaselua"
version = "0.1.0-1"
source = {
  -- `make dist` makes this tarball from the checkout (git archive);
  -- `luarocks make` builds the checkout itself and does not fetch it.
  url = "file://leaselua-0.1.0.tar.gz",
  dir = "leaselua-0.1.0",
}
description = {
  summary = "Evidence for one Azure Blob lease handoff: does writer B really own the blob?",
  detailed = [[
    A C core (libcurl, OpenSSL, expat, cJSON) with Lua bindings: one attempt
    on the wire, write-ahead hash-chained evidence, and every safety rule of
    the lease-break playbook enforced in C.
  ]],
  license = "MIT",
}
dependencies = {
  "lua >= 5.4, < 5.5",
}
external_dependencies = {
  OPENSSL = { header = "openssl/evp.h" },
  EXPAT = { header = "expat.h" },
  CJSON = { header = "cjson/cJSON.h" },
}
build = {
  type = "cmake",
  variables = {
    CMAKE_BUILD_TYPE = "RelWithDebInfo",
    CMAKE_INSTALL_PREFIX = "$(PREFIX)",
    LEASELUA_LUA_CMOD_DIR = "$(LIBDIR)",
  },
}
