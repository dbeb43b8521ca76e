-- The shipped flows' own options, one table per flow: what `--help` prints
-- and what lib.cli accepts come from the same rows, so they cannot drift
-- (spec/flow_help_spec.lua checks both against the binary). Each option:
-- { name, value placeholder or false for a flag, default or false, text }.
-- The operator's options are not here: C reads them and lists them after.
local M = {}

M.handoff = {
  usage = "leaselua handoff --manifest FILE [operator options] [flow options]",
  about = {
    "The playbook's main handoff: A holds the lease, the operator breaks it,",
    "stale A's write is probed while the lease is breaking, B acquires and",
    "writes, and the bytes are reconciled against the ledger.",
  },
  options = {
    { "break-period", "S", 30, "the break period, 0..60 s" },
    { "window-attempts", "N", 3, "fresh lifecycles allowed for the breaking window" },
    { "stop-after", "N", false, "stop after step N (the blob is left as it is)" },
    { "first-break-period", "S", false,
      "lab: the first attempt's period (0: its probe comes late, a fresh lifecycle repeats)" },
  },
}

M["gap-control"] = {
  usage = "leaselua gap-control --manifest FILE --destructive --after DIR [operator options]",
  about = {
    "Destructive: after a break reaches broken, an unleased writer commits",
    "revision 102. The operator authorises it with --destructive and --after",
    "DIR, an accepted, cleaned-up handoff on the same blob (checked in C).",
  },
  options = {
    { "break-period", "S", 30, "the break period, 0..60 s" },
  },
}

M.recover = {
  usage = "leaselua recover --recover --evidence DIR [operator options] [flow options]",
  about = {
    "Reopens the interrupted run in DIR (append only) on the same blob:",
    "reconcile, prove the owner with a conditioned renew, then write.",
  },
  options = {
    { "stop-after", "N", false, "5: prove the owner, then stop before any write" },
  },
}

M["lease-table"] = {
  usage = "leaselua lease-table --manifest FILE [--destructive --after DIR] [operator options] [flow options]",
  about = {
    "The whole documented lease contract, cell by cell: each lease state is",
    "reached on a fresh create-only lifecycle, its cells attempted and judged",
    "CONFORMS, CONFORMS_ONE_SOURCE, DEVIATES or NOT_REACHED. Unleased writes",
    "documented to succeed need --destructive --after DIR, else NOT_REACHED.",
    "Exit 0 when every cell ran (DEVIATES are findings), else 2 (HOLD).",
  },
  options = {
    { "break-period", "S", 10, "Breaking (A)'s break period, 1..60 s" },
    { "plan", false, false, "print the plan (lifecycles, requests, waits) and send nothing" },
  },
}

return M
