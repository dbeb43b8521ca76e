/* Placeholder until the bindings land. */
int main(void) { return 0; }
