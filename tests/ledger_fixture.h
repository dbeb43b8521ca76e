/* Helpers shared by the ledger tests (tests/ledger_fixture.c). */
#ifndef LL_LEDGER_FIXTURE_H
#define LL_LEDGER_FIXTURE_H

#include <stddef.h>

#include "ledger.h"

#define GUID "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
#define GUID_UP "3F2504E04F8941D39A0C0305E82C3301"
#define GUID2 "b3a1c7d2-0e4f-4a5b-8c6d-7e8f90a1b2c3"

/* dir/rel, kept until free_paths(); NULL when the table is full. */
char *path_of(const char *dir, const char *rel);
void free_paths(void);
/* Removes root and everything under it; 0 on success. */
int remove_tree(const char *root);
/* The whole file, NUL-terminated (malloc'd), or NULL. */
char *read_all(const char *path, size_t *len);
int write_all(const char *path, const char *b, size_t len);
long file_size(const char *path);
/* Offsets of the starts of lines; returns the count. */
size_t line_starts(const char *b, size_t len, size_t *starts, size_t cap);
ll_status append_text(ll_ledger *l, const char *json, long *seq, ll_error *err);
/* json parsed and appended with sync (ll_ledger_append_row); err may be
 * NULL. LL_E_PARSE when json does not parse. */
ll_status append_row_text(ll_ledger *l, const char *json, ll_sync sync,
                          ll_error *err);
/* The lines of the file at path (a last line without '\n' counts), or -1
 * when it cannot be read. */
long lines_in(const char *path);
/* The base rows: a manifest, A's binding, an intent and two outcomes. */
extern const char *const base_rows[];
extern const size_t N_BASE;
/* A closed ledger in dir holding base_rows (row 4's notes replaced by
 * notes4 when given). Returns 1 on success. */
int make_ledger(const char *dir, const char *notes4);
ll_status verify(const char *path, long *rows, long *bad);

#endif
