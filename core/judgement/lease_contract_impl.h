/* Private to judgement: the reviewed lease-contract table and its sources,
 * read only through lease_contract.c. */
#ifndef LL_LEASE_CONTRACT_IMPL_H
#define LL_LEASE_CONTRACT_IMPL_H

#include "lease_contract.h"

#define USE_TITLE "Outcomes of use attempts on blobs by lease state"
#define OPS_TITLE "Outcomes of lease operations on blobs by lease state"

extern const ll_lease_source ll_lease_sources[]; /* ends with id NULL */
extern const ll_lease_cell ll_lease_cells[];
extern const size_t ll_lease_cells_count;

#endif
