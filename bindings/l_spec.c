/* `leaselua spec [busted options] SPEC...` (l_spec.h): runs a user's busted
 * specs with Lua 5.4 and the paths this leaselua was installed or built
 * with, so `require "leaselua"` and the shipped flows resolve whether it is
 * installed or run from a build tree. busted on Debian's PATH starts Lua
 * 5.1; this starts `lua5.4 BUSTED` by execvp with an argument vector,
 * never a shell. */
#include "l_spec.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef LL_CMOD_DIR
#define LL_CMOD_DIR "lib/lua/5.4"
#endif
#ifndef LL_FLOW_DIR
#define LL_FLOW_DIR "share/leaselua"
#endif

#define MAX_ARGS 256

static int is_file(const char *p) {
  return access(p, R_OK) == 0;
}

/* The first of dirs (each relative to bin) holding name; 0 if none. */
static int find_dir(const char *bin, const char *const *dirs, size_t n,
                    const char *name, char *out, size_t cap) {
  for (size_t i = 0; i < n; i++) {
    char p[PATH_MAX];
    int k = snprintf(p, sizeof p, "%s/%s/%s", bin, dirs[i], name);
    if (k > 0 && (size_t)k < sizeof p && is_file(p)) {
      k = snprintf(out, cap, "%s/%s", bin, dirs[i]);
      return k > 0 && (size_t)k < cap;
    }
  }
  return 0;
}

/* busted: LEASELUA_BUSTED if set, else the first `busted` on PATH. */
static int find_busted(char *out, size_t cap) {
  const char *v = getenv("LEASELUA_BUSTED");
  if (v && *v) {
    int k = snprintf(out, cap, "%s", v);
    return k > 0 && (size_t)k < cap && is_file(out);
  }
  const char *path = getenv("PATH");
  if (!path || !*path)
    path = "/usr/local/bin:/usr/bin:/bin";
  while (*path) {
    size_t len = strcspn(path, ":");
    int k = snprintf(out, cap, "%.*s/busted", (int)len, path);
    if (len && k > 0 && (size_t)k < cap && is_file(out))
      return 1;
    path += len + (path[len] == ':');
  }
  return 0;
}

int ll_spec_main(int argc, char **argv, FILE *err) {
  if (argc < 1 || argc > MAX_ARGS - 8 || strcmp(argv[0], "--help") == 0 ||
      strcmp(argv[0], "-h") == 0) {
    fputs(
        "usage: leaselua spec [busted options] SPEC...\n"
        "  runs your busted specs with lua5.4, leaselua.so and the shipped\n"
        "  flows on the paths (installed or build tree); LEASELUA names this\n"
        "  binary for the specs. Exit: busted's.\n",
        argc < 1 || argc > MAX_ARGS - 8 ? err : stdout);
    return argc < 1 || argc > MAX_ARGS - 8 ? 64 : 0;
  }
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) {
    fputs("leaselua: spec: cannot find my own executable (/proc/self/exe)\n",
          err);
    return 70;
  }
  exe[n] = '\0';
  char bin[PATH_MAX];
  snprintf(bin, sizeof bin, "%s", exe);
  char *slash = strrchr(bin, '/');
  if (slash)
    *slash = '\0';
  /* installed: <prefix>/bin/leaselua beside <prefix>/LL_CMOD_DIR and
   * <prefix>/LL_FLOW_DIR; a build tree: leaselua.so and share/leaselua
   * beside the binary */
  static const char *const cmods[] = {"../" LL_CMOD_DIR, "."};
  static const char *const flows[] = {"../" LL_FLOW_DIR, "share/leaselua"};
  char cdir[PATH_MAX], fdir[PATH_MAX], busted[PATH_MAX];
  if (!find_dir(bin, cmods, 2, "leaselua.so", cdir, sizeof cdir)) {
    fprintf(err,
            "leaselua: spec: the Lua module leaselua.so is not beside %s "
            "(looked in ../%s and .): reinstall leaselua, or build it\n",
            exe, LL_CMOD_DIR);
    return 64;
  }
  if (!find_dir(bin, flows, 2, "main_handoff.lua", fdir, sizeof fdir)) {
    fprintf(err,
            "leaselua: spec: the shipped flows are not beside %s (looked in "
            "../%s and share/leaselua): reinstall leaselua\n",
            exe, LL_FLOW_DIR);
    return 64;
  }
  if (!find_busted(busted, sizeof busted)) {
    fputs("leaselua: spec: busted not found on PATH (apt-get install "
          "lua-busted, or set LEASELUA_BUSTED to its path)\n",
          err);
    return 64;
  }
  char lpath[3 * PATH_MAX], cpath[PATH_MAX + 32];
  snprintf(lpath, sizeof lpath,
           "--lpath=./?.lua;./spec/?.lua;%s/?.lua;%s/lib/?.lua", fdir, fdir);
  snprintf(cpath, sizeof cpath, "--cpath=%s/?.so", cdir);
  char *args[MAX_ARGS];
  int k = 0;
  args[k++] = "lua5.4";
  args[k++] = busted;
  args[k++] = lpath;
  args[k++] = cpath;
  for (int i = 0; i < argc; i++)
    args[k++] = argv[i];
  args[k] = NULL;
  if (setenv("LEASELUA", exe, 1) != 0 ||
      setenv("LEASELUA_SHARE", fdir, 1) != 0) {
    fputs("leaselua: spec: out of memory\n", err);
    return 70;
  }
  fflush(NULL);
  execvp("lua5.4", args);
  fprintf(err,
          "leaselua: spec: cannot start lua5.4 (apt-get install lua5.4)\n");
  return 64;
}
