/* Opening a run (fresh or for recovery, where an intent left open gets
 * its UNKNOWN_OUTCOME row) and closing it. */
#include "jsonx.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "endpoint.h"
#include "identity.h"
#include "manifest.h"
#include "payload.h"
#include "run_impl.h"
#include "run_row.h"
#include "sanitize.h"
/* expected.json: the declarations as the fold holds them, in row order,
 * each payload built again from its revision and writer and checked
 * against the declared hash (invariant 6: the bytes are C's, never the
 * log's), so the file needs no row read back. */
ll_status ll_run_write_expected(ll_run *r, ll_error *err) {
  cJSON *arr = cJSON_CreateArray();
  const char *writer = NULL, *sha = NULL;
  ll_status st = LL_OK;
  long rev;
  for (int i = 0;
       st == LL_OK &&
       (rev = ll_model_declaration(r->model, i, &writer, &sha)) != LL_REV_NONE;
       i++) {
    ll_payload p;
    st = ll_payload_build(rev, writer, &p, err);
    if (st == LL_OK && strcmp(p.sha256, sha) != 0)
      st = ll_fail(err, LL_E_INTERNAL,
                   "expected.json: revision %ld of %s does not build to its "
                   "declared hash",
                   rev, writer);
    if (st != LL_OK)
      break;
    cJSON *d = cJSON_CreateObject();
    cJSON_AddNumberToObject(d, "revision", (double)rev);
    cJSON_AddStringToObject(d, "writer", writer);
    cJSON_AddStringToObject(d, "payload", p.bytes);
    cJSON_AddStringToObject(d, "payload_sha256", p.sha256);
    ll_json_push(arr, d);
  }
  /* a file built across a failed allocation is never written */
  if (st == LL_OK)
    st = ll_run_check_alloc(r, err);
  if (st == LL_OK)
    st = ll_ledger_write_json(r->ledger, "expected.json", arr, err);
  cJSON_Delete(arr);
  if (st == LL_OK)
    r->expected_dirty = 0;
  return st;
}

/* The proxy as it was set on the transport, without userinfo, and the
 * hosts it was set to skip: a reviewer sees whether the account host was
 * one of them (proxy.h). */
static void add_proxy(cJSON *o, const ll_run_config *cfg) {
  cJSON *px = cJSON_AddObjectToObject(o, "proxy");
  if (cfg->proxy)
    cJSON_AddStringToObject(px, "url", cfg->proxy);
  else
    cJSON_AddNullToObject(px, "url");
  cJSON_AddStringToObject(px, "source",
                          cfg->proxy_source ? cfg->proxy_source : "none");
  if (cfg->no_proxy) {
    cJSON_AddStringToObject(px, "no_proxy", cfg->no_proxy);
    cJSON_AddStringToObject(px, "no_proxy_source",
                            cfg->no_proxy_source ? cfg->no_proxy_source
                                                 : "none");
  }
}

static ll_status write_environment(ll_run *r, const cJSON *manifest,
                                   const ll_run_config *cfg, ll_error *err) {
  cJSON *env = cJSON_CreateObject();
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(manifest, "versions");
  cJSON *vv = cJSON_Duplicate(v, 1);
  const char *az = getenv("AZURITE_VERSION");
  if (az && strcmp(ll_model_endpoint_kind(r->model), "emulator") == 0)
    cJSON_AddStringToObject(vv, "azurite", az);
  ll_json_add(env, "versions", vv);
  cJSON_AddStringToObject(env, "requested_api_version",
                          ll_model_api_version(r->model));
  cJSON *retry = cJSON_AddObjectToObject(env, "retry");
  cJSON_AddNumberToObject(retry, "storage_operation_retries", 0);
  cJSON_AddBoolToObject(retry, "mutations_on_fresh_connection", 1);
  cJSON_AddStringToObject(retry, "request_heads_counted",
                          "CURLOPT_DEBUGFUNCTION/CURLINFO_HEADER_OUT");
  cJSON_AddNumberToObject(
      env, "max_single_put_size",
      (double)(r->max_single_put ? r->max_single_put : LL_MAX_SINGLE_PUT));
  cJSON_AddStringToObject(env, "endpoint_kind",
                          ll_model_endpoint_kind(r->model));
  add_proxy(env, cfg);
  ll_status st = ll_run_check_alloc(r, err);
  if (st == LL_OK)
    st = ll_ledger_write_json(r->ledger, "environment.json", env, err);
  cJSON_Delete(env);
  return st;
}

ll_auth *ll_run_auth_for(ll_run *r, const char *actor, const char **source) {
  int slot = -1;
  ll_auth *a = ll_cred_pick(r->auth, r->actor_auth, actor, &slot);
  if (source)
    *source = slot >= 0 ? r->actor_source[slot] : r->auth_source;
  return a;
}

const char *ll_run_principal(ll_run *r, const char *actor) {
  const ll_auth_ident *id = ll_auth_identity(ll_run_auth_for(r, actor, NULL));
  return id && id->fingerprint[0] ? id->fingerprint : NULL;
}

int ll_run_has_credentials(const ll_run *r) {
  for (int i = 0; i < LL_ACTOR__COUNT; i++)
    if (r->actor_auth[i])
      return 1;
  return r->auth != NULL;
}

/* The identity record (identity.h): one entry per actor the flow declares
 * (a flow that declares none: per actor the manifest permits) and one for
 * the observer, whose reads C adds, from the credential each one's
 * requests will carry. NULL for a run without credentials (a replay). */
static cJSON *identities(ll_run *r, const ll_run_config *cfg,
                         const cJSON *permitted) {
  if (!ll_run_has_credentials(r))
    return NULL;
  const char *names[LL_PLAN_MAX_ACTORS + 32];
  size_t n = 0;
  for (int i = 0; i < cfg->nactors; i++)
    names[n++] = cfg->actors[i];
  const cJSON *p;
  if (cfg->nactors == 0)
    cJSON_ArrayForEach(p, permitted) {
      if (cJSON_IsString(p) && n < sizeof names / sizeof names[0] - 1)
        names[n++] = p->valuestring;
    }
  names[n++] = "observer";
  cJSON *ids = cJSON_CreateObject();
  for (size_t i = 0; ids && i < n; i++) {
    if (cJSON_GetObjectItemCaseSensitive(ids, names[i]))
      continue;
    const char *source = NULL;
    ll_auth *auth = ll_run_auth_for(r, names[i], &source);
    ll_json_add(ids, names[i], ll_identity_entry(auth, source));
  }
  return ids;
}

/* The identifiers an identity record keeps for the protected ledger
 * only; bound like lease IDs (identity.h), so that the export scan finds
 * any stray copy of them (invariant 9). */
static const char *const private_ids[] = {LL_IDENTITY_PRIVATE_KEYS};

_Static_assert(LL_PLAN_MAX_ACTORS <= LL_IDENTITY_ENTRIES_MAX,
               "room for the identifiers of every actor of a plan");

static ll_status bind_identity_ids(ll_run *r, const cJSON *ids, ll_error *err) {
  const char *v[LL_IDENTITY_IDS_MAX];
  size_t n = ll_identity_ids(ids, v, sizeof v / sizeof v[0]);
  if (n > sizeof v / sizeof v[0])
    return ll_fail(err, LL_E_INTERNAL,
                   "the identity record holds %zu identifiers, more than the "
                   "%d this run can bind for the export scan",
                   n, LL_IDENTITY_IDS_MAX);
  for (size_t i = 0; i < n; i++) {
    ll_status st =
        ll_ledger_bind_alias(r->ledger, LL_IDENTITY_ALIAS, v[i], err);
    if (st != LL_OK)
      return st;
  }
  return LL_OK;
}

/* The identity record with the protected-only identifiers removed, for
 * manifest.json (the export's rows lose them in the sanitizer). */
static void strip_private(cJSON *ids) {
  for (cJSON *e = ids ? ids->child : NULL; e; e = e->next) {
    cJSON *sas = cJSON_GetObjectItemCaseSensitive(e, "sas");
    for (size_t k = 0; k < sizeof private_ids / sizeof private_ids[0]; k++) {
      cJSON_DeleteItemFromObjectCaseSensitive(e, private_ids[k]);
      if (sas)
        cJSON_DeleteItemFromObjectCaseSensitive(sas, private_ids[k]);
    }
  }
}

/* Adds identities and shared_identity to a manifest or recovery row, and
 * binds the identifiers they hold. Nothing for a replay. */
static ll_status add_identities(ll_run *r, const ll_run_config *cfg, cJSON *row,
                                const cJSON *permitted, ll_error *err) {
  cJSON *ids = identities(r, cfg, permitted);
  if (!ids)
    return ll_run_check_alloc(r, err);
  int shared = ll_identity_shared(ids);
  if (!ll_json_add(row, "identities", ids))
    return ll_fail(err, LL_E_NOMEM, "out of memory recording identities");
  cJSON_AddBoolToObject(row, "shared_identity", shared);
  ll_status st = ll_run_check_alloc(r, err);
  return st == LL_OK ? bind_identity_ids(r, ids, err) : st;
}

static ll_status open_fresh(ll_run *r, ll_run_config *cfg, ll_error *err) {
  cJSON *row = NULL;
  ll_manifest_input in = {cfg->lua_version, cfg->fixture_label,
                          cfg->api_version, cfg->allow_unlisted_api_version};
  ll_status st =
      ll_manifest_build_with(cfg->manifest, &r->target, &in, &row, err);
  if (st == LL_OK)
    st = ll_run_check_alloc(r, err); /* no evidence from a broken manifest */
  if (st != LL_OK) {
    cJSON_Delete(row);
    return st;
  }
  ll_strlcpy(r->run_id, ll_json_str(row, "run_id"), sizeof r->run_id);
  if (cfg->proxy) /* only when set: replayed manifests stay as they were */
    add_proxy(row, cfg);
  /* the operator's bound on the run, for a reader of the bundle: a
   * refusal at it (invariant 14) is then explained by the bundle alone */
  if (cfg->deadline_s > 0)
    cJSON_AddNumberToObject(row, "deadline_s", (double)cfg->deadline_s);
  r->ledger = ll_ledger_open(cfg->evidence_dir, LL_LEDGER_CREATE, err);
  if (!r->ledger) {
    cJSON_Delete(row);
    return err ? err->code : LL_E_IO;
  }
  st = add_identities(r, cfg, row,
                      cJSON_GetObjectItemCaseSensitive(row, "permitted_actors"),
                      err);
  if (st == LL_OK)
    st = ll_run_append(r, row, err);
  if (st == LL_OK) {
    cJSON *m = cJSON_Duplicate(row, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(m, "record");
    strip_private(cJSON_GetObjectItemCaseSensitive(m, "identities"));
    st = ll_run_check_alloc(r, err);
    if (st == LL_OK)
      st = ll_ledger_write_json(r->ledger, "manifest.json", m, err);
    cJSON_Delete(m);
  }
  if (st == LL_OK)
    st = write_environment(r, row, cfg, err);
  cJSON_Delete(row);
  return st;
}

/* Reopen: fold every protected row again (comparing, not filling), restore
 * the writers' lease IDs, and turn dangling intents into UNKNOWN_OUTCOME. */
static ll_status open_recover(ll_run *r, ll_run_config *cfg, ll_error *err) {
  r->ledger = ll_ledger_open(cfg->evidence_dir, LL_LEDGER_RECOVER, err);
  if (!r->ledger)
    return err ? err->code : LL_E_IO;
  /* the operator's --recover opens a session with its own bound */
  r->evidence_base = ll_ledger_bytes(r->ledger);
  const cJSON *row, *permitted = NULL;
  cJSON_ArrayForEach(row, ll_ledger_rows(r->ledger)) {
    cJSON *copy = cJSON_Duplicate(row, 1);
    ll_status st = copy ? ll_model_apply(r->model, copy, 0, err)
                        : ll_fail(err, LL_E_NOMEM, "out of memory recovering");
    cJSON_Delete(copy);
    if (st != LL_OK)
      return st;
    const char *rec = ll_json_str(row, "record");
    st = bind_identity_ids(
        r, cJSON_GetObjectItemCaseSensitive(row, "identities"), err);
    if (st != LL_OK)
      return st;
    if (rec && strcmp(rec, "manifest") == 0) {
      permitted = cJSON_GetObjectItemCaseSensitive(row, "permitted_actors");
      char path[512];
      ll_target_blob_path(&r->target, path, sizeof path);
      char host[256];
      ll_manifest_recorded_host(&r->target, cfg->fixture_label != NULL, host,
                                sizeof host);
      const char *rh = ll_json_str(row, "account_host"),
                 *rp = ll_json_str(row, "blob_path");
      if (!ll_endpoint_same_host(host, rh) || !ll_streq(path, rp))
        return ll_fail(err, LL_E_MANIFEST,
                       "recovery target %s %s differs from the recorded run's "
                       "%s %s: point AZURE_STORAGE_* at the same blob",
                       host, path, rh ? rh : "?", rp ? rp : "?");
      ll_strlcpy(r->run_id, ll_json_str(row, "run_id"), sizeof r->run_id);
      const char *kind = ll_json_str(row, "endpoint_kind");
      int was_replay = kind && strcmp(kind, "replay") == 0;
      if (was_replay != (cfg->fixture_label != NULL))
        return ll_fail(err, LL_E_MANIFEST,
                       was_replay ? "this evidence is a replay: recover it "
                                    "with --replay FIXTURE"
                                  : "this evidence came from a live endpoint: "
                                    "a replay cannot recover it");
    }
    /* A binding marked "proposed" is a change not (yet) confirmed: the
     * writer keeps its previous ID; an "active" one replaces it. */
    const char *bstate = ll_json_str(row, "state");
    if (rec && strcmp(rec, "lease_bind") == 0 &&
        !(bstate && strcmp(bstate, "proposed") == 0)) {
      ll_writer *w = NULL;
      for (int i = 0; i < r->nwriters; i++)
        if (strcmp(r->writers[i].alias, ll_json_str(row, "alias")) == 0)
          w = &r->writers[i];
      if (!w && r->nwriters < LL_MAX_WRITERS)
        w = &r->writers[r->nwriters++];
      if (w) {
        ll_strlcpy(w->alias, ll_json_str(row, "alias"), sizeof w->alias);
        ll_strlcpy(w->lease_id, ll_json_str(row, "lease_real_id"),
                   sizeof w->lease_id);
      }
    }
    const char *ev = ll_json_str(row, "event_id");
    if (ev && ev[0] == 'e' && atol(ev + 1) > r->events)
      r->events = atol(ev + 1);
  }
  cJSON *note = cJSON_CreateObject();
  cJSON_AddStringToObject(note, "record", "recovery");
  char now[40];
  ll_clock_utc_str(r->clock, now, sizeof now);
  cJSON_AddStringToObject(note, "reopened_utc", now);
  cJSON_AddNumberToObject(note, "open_intents",
                          cJSON_GetArraySize(ll_model_open_intents(r->model)));
  /* the credentials of the reopened run, which its requests carry */
  ll_status st = add_identities(r, cfg, note, permitted, err);
  if (st == LL_OK)
    st = ll_run_append(r, note, err);
  cJSON_Delete(note);
  if (st != LL_OK)
    return st;
  /* Intents without an outcome: the process died with a request in flight. */
  cJSON *open = cJSON_Duplicate(ll_model_open_intents(r->model), 1);
  if (!open)
    return ll_fail(err, LL_E_NOMEM, "out of memory recovering");
  cJSON *in;
  cJSON_ArrayForEach(in, open) {
    ll_http_response resp;
    ll_http_response_init(&resp);
    resp.outcome = LL_OUTCOME_UNKNOWN;
    snprintf(resp.transport_error, sizeof resp.transport_error,
             "intent without outcome found on reopen: the process ended with "
             "the request in flight");
    int op = ll_op_from_name(ll_json_str(in, "operation"));
    /* the intent does not say what period a break sent: unknown, never
     * a guess */
    ll_outcome_ctx c = {.ledger = r->ledger,
                        .endpoint_kind = ll_model_endpoint_kind(r->model),
                        .now_ms = ll_clock_utc_ms(r->clock),
                        .op = op < 0 ? LL_OP_GET_PROPERTIES : (ll_op)op,
                        .break_period = LL_BREAK_PERIOD_UNKNOWN};
    cJSON *o = ll_row_outcome(&c, in, &resp, NULL);
    ll_http_response_cleanup(&resp);
    st = ll_run_append_take(r, o, err);
    if (st != LL_OK)
      break;
  }
  cJSON_Delete(open);
  return st;
}

/* What a recording transport may ask its run (http.h). */
static const char *run_alias_of(void *ctx, const char *lease_id) {
  ll_run *r = ctx;
  for (int i = 0; i < r->nwriters; i++)
    if (ll_lease_id_equal(r->writers[i].lease_id, lease_id))
      return r->writers[i].alias;
  return NULL;
}

static const char *run_endpoint_kind(void *ctx) {
  return ll_model_endpoint_kind(((ll_run *)ctx)->model);
}

/* One run per blob (invariant 14), before anything is written: the lock,
 * then, for a fresh run, the previous runs on the blob in the same
 * evidence root. A replay touches no blob and is exempt: it locks nothing
 * (replays of one fixture may run side by side) and its bundles, labelled
 * replay, never block a live run. Recovery is the way to settle a
 * previous run, so it does not look at its siblings: a fresh run beside
 * an unsettled one is refused, so at most one is unsettled per root. */
static ll_status guard_blob(ll_run *r, const ll_run_config *cfg,
                            ll_error *err) {
  char host[256], path[512];
  ll_manifest_account_host(r->target.account_url, host, sizeof host);
  ll_target_blob_path(&r->target, path, sizeof path);
  ll_status st =
      ll_lock_take(cfg->lock_dir, host, path, cfg->evidence_dir, &r->lock, err);
  if (st == LL_OK && !cfg->recover)
    st = ll_lock_check_previous(cfg->evidence_dir, host, path, err);
  return st;
}

/* The credential's secrets, by the names of their placeholders. */
static const char *const secret_names[] = {"token", "sas"};

/* The run's credentials: the default, then each actor's own (NULL ones
 * included, as empty slots). */
static const ll_auth *run_auth_at(const ll_run *r, int k) {
  return k == 0 ? r->auth : r->actor_auth[k - 1];
}
#define RUN_AUTHS (1 + LL_ACTOR__COUNT)

static const char *run_secret_of(void *ctx, int i, const char **name) {
  ll_run *r = ctx;
  if (i < 0 || i >= 2 * RUN_AUTHS)
    return NULL;
  *name = secret_names[i % 2];
  const char *s = ll_auth_secret(run_auth_at(r, i / 2), i % 2);
  return s ? s : "";
}

ll_run *ll_run_open(ll_run_config *cfg, ll_error *err) {
  ll_alloc_init();
  unsigned long mark = ll_alloc_failures();
  ll_run *r = calloc(1, sizeof *r);
  ll_status st = LL_OK;
  if (!r) {
    ll_transport_free(cfg->transport);
    ll_clock_free(cfg->clock);
    ll_auth_free(cfg->auth);
    for (int i = 0; i < LL_ACTOR__COUNT; i++)
      ll_auth_free(cfg->actor_auth[i]);
    ll_fail(err, LL_E_NOMEM, "out of memory");
    return NULL;
  }
  r->decision = -1;
  r->transport = cfg->transport;
  if (r->transport) {
    r->transport->run_ctx = r;
    r->transport->alias_of = run_alias_of;
    r->transport->endpoint_kind = run_endpoint_kind;
    r->transport->secret_of = run_secret_of;
  }
  r->alloc_mark = mark;
  r->clock = cfg->clock;
  r->auth = cfg->auth;
  ll_strlcpy(r->auth_source, cfg->auth_source ? cfg->auth_source : "none",
             sizeof r->auth_source);
  for (int i = 0; i < LL_ACTOR__COUNT; i++) {
    r->actor_auth[i] = cfg->actor_auth[i];
    ll_strlcpy(r->actor_source[i],
               cfg->actor_source[i] ? cfg->actor_source[i] : "none",
               sizeof r->actor_source[i]);
  }
  r->max_single_put = cfg->max_single_put;
  if (cfg->deadline_s > 0) {
    r->deadline_s = cfg->deadline_s;
    r->deadline_ns =
        ll_clock_mono_ns(r->clock) + (int64_t)cfg->deadline_s * 1000000000;
  }
  r->model = ll_model_new();
  if (!r->model)
    st = ll_fail(err, LL_E_NOMEM, "out of memory opening the run");
  else if (!r->clock || !r->transport)
    st = ll_fail(err, LL_E_USAGE, "run needs a transport and a clock");
  if (st == LL_OK)
    st = ll_target_init(&r->target, cfg->account_url, cfg->container, cfg->blob,
                        err);
  if (st == LL_OK && !cfg->evidence_dir)
    st = ll_fail(err, LL_E_USAGE, "no evidence directory: pass --evidence DIR");
  if (st == LL_OK && !cfg->fixture_label)
    st = guard_blob(r, cfg, err);
  if (st == LL_OK)
    st = cfg->recover ? open_recover(r, cfg, err) : open_fresh(r, cfg, err);
  for (int k = 0; k < RUN_AUTHS && st == LL_OK; k++) {
    for (int which = 0; which < 2 && st == LL_OK; which++) {
      const char *secret = ll_auth_secret(run_auth_at(r, k), which);
      if (secret && *secret)
        st = ll_ledger_add_named_secret(r->ledger, secret, secret_names[which],
                                        err);
    }
  }
  if (st == LL_OK && r->nwriters > 0)
    for (int i = 0; i < r->nwriters && st == LL_OK; i++)
      st = ll_ledger_bind_alias(r->ledger, r->writers[i].alias,
                                r->writers[i].lease_id, err);
  st = ll_run_settle(r, st, NULL, err);
  if (st != LL_OK) {
    ll_run_close(r);
    return NULL;
  }
  return r;
}

void ll_run_close(ll_run *r) {
  if (!r)
    return;
  if (r->ledger && !r->dead && r->expected_dirty) {
    ll_error e;
    if (ll_run_write_expected(r, &e) != LL_OK)
      r->dead = 1; /* best effort at close: the ledger holds the truth */
  }
  if (r->ledger && r->transport && r->transport->finish &&
      !r->replay_failure.code) {
    ll_error e;
    (void)r->transport->finish(r->transport, &e); /* best effort at close */
  }
  ll_free(r->table); /* the lease table's state holds no secret */
  ll_ledger_close(r->ledger);
  ll_model_free(r->model);
  ll_transport_free(r->transport);
  ll_clock_free(r->clock);
  ll_auth_free(r->auth);
  for (int i = 0; i < LL_ACTOR__COUNT; i++)
    ll_auth_free(r->actor_auth[i]);
  ll_lock_release(r->lock); /* last: the run no longer touches the blob */
  memset(r->writers, 0, sizeof r->writers);
  free(r);
}
