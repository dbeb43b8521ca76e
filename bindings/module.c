/* Placeholder until the bindings land. */
int luaopen_leaselua(void *L);
int luaopen_leaselua(void *L) { (void)L; return 0; }
