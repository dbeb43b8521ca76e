/* The reviewed known-deviations table (core/judgement/known_deviations.json,
 * embedded at build time): which discrepancies between an observed response
 * and the documented baseline are explained, and by which entry. Private to
 * the judgement group: the baseline is its one reader. */
#ifndef LL_DEVIATIONS_H
#define LL_DEVIATIONS_H

/* The id of the entry that explains a discrepancy, or NULL. kind is the
 * discrepancy's kind ("status", "version", ...); judged_as the endpoint
 * kind the run is judged as; returned_version NULL when the response had
 * none (matched as "(none)"). The id is owned by the table. */
const char *ll_deviations_lookup(const char *kind, const char *judged_as,
                                 const char *server, const char *operation,
                                 long status, const char *code,
                                 const char *returned_version);

/* The id of the reviewed entry of kind "lease-cell" that explains a
 * lease-table cell's deviation: cell is "<state>/<op>" (matched against the
 * entry's "cell"), status and code as observed. NULL when none does. */
const char *ll_deviations_lookup_cell(const char *judged_as, const char *server,
                                      const char *cell, long status,
                                      const char *code);

#endif
