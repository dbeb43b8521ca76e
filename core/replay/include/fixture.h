/* Recorded HTTP fixtures, format leaselua-fixture/1 (DESIGN.md section 6,
 * fixtures/README.md): a recording transport that wraps the wire and writes
 * every exchange sanitized, and a strict replay transport served by a
 * fixture file that drives a virtual clock. Never includes lua.h. */
#ifndef LL_FIXTURE_H
#define LL_FIXTURE_H

#include <cjson/cJSON.h>

#include "http.h"

#define LL_FIXTURE_FORMAT "leaselua-fixture/1"

/* Strict replay. Loads and checks the fixture (a malformed one is
 * LL_E_PARSE naming the file, the exchange and the field), creates the
 * virtual clock it drives (*out_clock, owned by the caller, who must free
 * it after the transport; it starts at the fixture's started_utc), and
 * writes the fixture's endpoint_kind into label. account_path is the path
 * of the target's account URL ("" or "/devstoreaccount1"); fixture paths
 * are relative to it.
 *
 * Each request must match the next exchange on method, path, query, the
 * recorded request headers (lease and condition headers included) and the
 * body's SHA-256; lease IDs are bound to the fixture's {{lease:ALIAS}}
 * placeholders in order of first appearance, one ID per placeholder. A
 * request that does not match, or comes after the last exchange, is
 * answered with nothing: exchange returns LL_E_REPLAY, and from then on
 * every call does. finish fails with LL_E_REPLAY when exchanges were never
 * requested. detail gives the full diff; messages never hold a real lease
 * ID. */
ll_transport *ll_fixture_replay_open(const char *path, const char *account_path,
                                     ll_clock **out_clock, char *label,
                                     size_t label_cap, ll_error *err);
/* The same from text in memory; name stands for the file in messages. */
ll_transport *ll_fixture_replay_text(const char *text, size_t len,
                                     const char *name, const char *account_path,
                                     ll_clock **out_clock, char *label,
                                     size_t label_cap, ll_error *err);

/* Recording. Wraps inner (whose ownership moves to the recorder, also on
 * failure); every exchange passes through unchanged and is kept, sanitized
 * like the export: lease IDs become {{lease:ALIAS}} (the run's alias, via
 * t->alias_of; a second ID of the same alias is ALIAS2), Authorization,
 * x-ms-date, x-ms-client-request-id and every query parameter but comp and
 * restype (so any SAS) are never kept, bearer tokens and sig= values are
 * redacted, and the run's credential (t->secret_of) becomes
 * {{secret:NAME}} wherever a response echoed it, with a note in that
 * exchange. clock is borrowed (the run's). path must not exist (an
 * existing file or link is LL_E_USAGE, checked here, before anything is
 * sent) and its directory must take a new file. finish writes it
 * atomically (a temporary file, fsync, linkat: never over a name that
 * appeared meanwhile, never through a link), and again after later
 * exchanges, replacing only the file it placed. label NULL: the run's
 * endpoint kind. description NULL: a generic one. */
ll_transport *ll_fixture_record_new(ll_transport *inner, const char *path,
                                    ll_clock *clock, const char *account_path,
                                    const char *label, const char *description,
                                    ll_error *err);

/* What a fixture records of the run beside its exchanges: the target
 * (header field "target": {container, blob}) and the flow (header field
 * "flow": {script: the script's file name, args: its own arguments as
 * given, never an operator option}), so a replay needs nothing re-typed.
 * Both are optional: a fixture recorded before them has neither. */
#define LL_FIXTURE_MAX_ARGS 32
typedef struct {
  int has_target, has_flow;
  char container[1025], blob[1025];
  char script[128];
  char args[LL_FIXTURE_MAX_ARGS][256];
  int nargs;
} ll_fixture_context;

/* Reads the context of the fixture at path (LL_E_PARSE naming the field
 * when present but malformed; text that is not JSON is left to the strict
 * loader and gives an empty context). */
ll_status ll_fixture_context_read(const char *path, ll_fixture_context *out,
                                  ll_error *err) LL_WARN_UNUSED;
ll_status ll_fixture_context_parse(const char *text, size_t len,
                                   const char *file, ll_fixture_context *out,
                                   ll_error *err) LL_WARN_UNUSED;
/* key "target" or "flow": that part of c as a new JSON object. */
cJSON *ll_fixture_context_json(const ll_fixture_context *c, const char *key);

/* The recorder t (from ll_fixture_record_new; any other transport is left
 * alone) writes c's target, and its flow when has_flow, into the header.
 * The secret scan covers them like every exchange: a credential given as a
 * flow argument keeps the file from being written. */
ll_status ll_fixture_record_context(ll_transport *t,
                                    const ll_fixture_context *c,
                                    ll_error *err) LL_WARN_UNUSED;

/* The path of an account URL without a trailing '/': "" for
 * https://acct.blob.core.windows.net, "/devstoreaccount1" for Azurite. */
void ll_fixture_account_path(const char *account_url, char *buf, size_t cap);

/* v as JSON text indented by two spaces, byte for byte what
 * JSON.stringify(v, null, 2) prints, with a final newline. malloc'd. */
char *ll_fixture_print(const cJSON *v);

#endif
