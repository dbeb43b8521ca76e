/* A user-assigned managed identity through ll_run_open: a fake IMDS on
 * loopback hands out a token whose appid is the configured client ID (as
 * Azure's does), for the single credential (--managed-identity
 * --client-id) and for actor A's own (managed-identity:CLIENT_ID). The run
 * opens; manifest.json, the export and the protected ledger agree on the
 * identity record (credential "managed-identity", the client ID's
 * fingerprint), and no copy of the client ID or an alias put in its place
 * reaches the export or manifest.json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "credentials.h"
#include "fake_wire.h"
#include "hash.h"
#include "ledger.h"
#include "run.h"
#include "script_server.h"
#include "testlib.h"

#define CLIENT_ID "6a1f0c3e-9b2d-4e7a-8c51-0d9e2b7f4a13"
#define MI_OID "2d5e8f01-7c3b-4a96-b2e4-51f0a9c3d871"
#define MI_TID "72f988bf-86f1-41af-91ab-2d7cd011db47"

static char *root;

static char *slurp(const char *p) {
  FILE *f = fopen(p, "rb");
  if (!f)
    return NULL;
  char *s = calloc(1, 1 << 20);
  size_t n = s ? fread(s, 1, (1 << 20) - 1, f) : 0;
  if (s)
    s[n] = '\0';
  fclose(f);
  return s;
}

/* An unsigned JWT naming the managed identity's principal. */
static char *mi_token(void) {
  char payload[512];
  long now = (long)time(NULL);
  snprintf(payload, sizeof payload,
           "{\"aud\":\"https://storage.azure.com/\",\"iat\":%ld,\"nbf\":%ld,"
           "\"exp\":%ld,\"idtyp\":\"app\",\"tid\":\"" MI_TID
           "\",\"oid\":\"" MI_OID "\",\"appid\":\"" CLIENT_ID "\"}",
           now - 60, now - 60, now + 3600);
  const char *header = "{\"alg\":\"none\",\"typ\":\"JWT\"}";
  char *h = ll_b64url_encode((const unsigned char *)header, strlen(header));
  char *p = ll_b64url_encode((const unsigned char *)payload, strlen(payload));
  size_t len = (h ? strlen(h) : 0) + (p ? strlen(p) : 0) + 8;
  char *out = malloc(len);
  if (out && h && p)
    snprintf(out, len, "%s.%s.c2ln", h, p);
  free(h);
  free(p);
  return out;
}

/* The first 16 hex of SHA-256 over leaselua-client-id-v1:<lowercase>. */
static void client_fp(const char *id, char out[17]) {
  char text[128], hex[LL_SHA256_HEX];
  int n = snprintf(text, sizeof text, "leaselua-client-id-v1:%s", id);
  for (int i = 0; i < n; i++)
    if (text[i] >= 'A' && text[i] <= 'Z')
      text[i] = (char)(text[i] - 'A' + 'a');
  CHECK_INT(ll_sha256_hex(text, (size_t)n, hex), LL_OK);
  memcpy(out, hex, 16);
  out[16] = '\0';
}

static const cJSON *entry(const cJSON *row, const char *actor) {
  return cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(row, "identities"), actor);
}

/* The export's form of an identity entry: the client ID as configuration
 * only by fingerprint, no principal identifier. */
static void check_public_entry(const cJSON *e, const char *fp,
                               const char *where) {
  int before = ll_test_fail;
  CHECK(e != NULL);
  CHECK_STR(fw_str(e, "credential"), "managed-identity");
  CHECK_STR(fw_str(e, "kind"), "managed_identity");
  CHECK_STR(fw_str(e, "client_id_fingerprint"), fp);
  CHECK(fw_str(e, "fingerprint") != NULL);
  CHECK(!cJSON_HasObjectItem(e, "appid"));
  CHECK(!cJSON_HasObjectItem(e, "oid"));
  CHECK(!cJSON_HasObjectItem(e, "tid"));
  if (ll_test_fail > before)
    fprintf(stderr, "  in %s\n", where);
}

static void test_user_assigned_mi(void) {
  char *tok = mi_token();
  CHECK(tok != NULL);
  if (!tok)
    return;
  char raw[8192];
  int rl = snprintf(raw, sizeof raw,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    "Content-Length: %zu\r\nConnection: close\r\n\r\n"
                    "{\"access_token\":\"%s\",\"token_type\":\"Bearer\"}",
                    strlen(tok) + 41, tok);
  step script[2] = {{RAW, raw, (size_t)rl}, {RAW, raw, (size_t)rl}};
  server s;
  server_start(&s, script, 2);
  char ep[200];
  snprintf(ep, sizeof ep, "http://127.0.0.1:%d/metadata/identity/oauth2/token",
           s.port);
  ll_error err = {0};
  ll_clock *clock = ll_clock_new_real();

  /* the single credential: --managed-identity --client-id CLIENT_ID */
  ll_auth_options ao = {.kind = LL_AUTH_MANAGED_IDENTITY,
                        .imds_endpoint = ep,
                        .client_id = CLIENT_ID,
                        .explicit_source = 1};
  ll_auth *dflt = ll_auth_new(&ao, clock, 0, &err);
  CHECK(dflt != NULL);
  char dsource[LL_CRED_SOURCE_MAX];
  ll_cred_default_source(LL_AUTH_MANAGED_IDENTITY, NULL, CLIENT_ID, dsource,
                         sizeof dsource);
  CHECK_STR(dsource, "managed-identity");

  /* actor A's own: managed-identity:CLIENT_ID */
  ll_cred_config cc;
  const char *specs[LL_ACTOR__COUNT] = {"managed-identity:" CLIENT_ID, NULL,
                                        NULL, NULL};
  CHECK_INT(ll_cred_config_read(&cc, specs, NULL, &err), LL_OK);
  CHECK_STR(cc.actor[LL_ACTOR_A].source, "managed-identity");
  cc.imds_endpoint = ep;
  ll_auth *per[LL_ACTOR__COUNT] = {0};
  CHECK_INT(ll_cred_config_build(&cc, clock, 0, per, &err), LL_OK);
  ll_clock_free(clock);
  server_stop(&s);
  CHECK(per[LL_ACTOR_A] != NULL);
  if (!dflt || !per[LL_ACTOR_A]) {
    fprintf(stderr, "auth: %s\n", err.message);
    ll_auth_free(dflt);
    ll_auth_free(per[LL_ACTOR_A]);
    free(tok);
    return;
  }

  fake_wire w;
  fw_init(&w);
  cJSON *man = fw_manifest();
  char ev[600], lock[600], p[700];
  snprintf(ev, sizeof ev, "%s/ev-mi", root);
  snprintf(lock, sizeof lock, "%s/locks", root);
  CHECK_INT(mkdir(lock, 0700), 0);
  static const char actors[][16] = {"A", "B", "operator"};
  ll_run_config cfg = {.evidence_dir = ev,
                       .manifest = man,
                       .account_url = "http://127.0.0.1:9/devstoreaccount1",
                       .container = "lease-handoff-lab",
                       .blob = "run.json",
                       .lua_version = "Lua 5.4.6",
                       .transport = fw_transport(&w),
                       .clock = ll_clock_new_real(),
                       .auth = dflt,
                       .auth_source = dsource,
                       .actors = actors,
                       .nactors = 3,
                       .lock_dir = lock};
  cfg.actor_auth[LL_ACTOR_A] = per[LL_ACTOR_A];
  cfg.actor_source[LL_ACTOR_A] = cc.actor[LL_ACTOR_A].source;
  ll_run *r = ll_run_open(&cfg, &err);
  cJSON_Delete(man);
  CHECK(r != NULL);
  if (!r)
    fprintf(stderr, "open: %s: %s\n", ll_code_name(err.code), err.message);
  CHECK_INT(w.requests, 0);

  char fp[17];
  client_fp(CLIENT_ID, fp);
  /* the protected ledger keeps the principal's identifiers, and the same
   * credential and client ID fingerprint */
  snprintf(p, sizeof p, "%s/protected/ledger.jsonl", ev);
  char *prot = slurp(p);
  cJSON *prow = NULL;
  if (prot && strchr(prot, '\n'))
    *strchr(prot, '\n') = '\0';
  prow = prot ? cJSON_Parse(prot) : NULL;
  CHECK(prow != NULL);
  for (int i = 0; i < 2; i++) {
    const cJSON *e = entry(prow, i ? "B" : "A");
    CHECK_STR(fw_str(e, "credential"), "managed-identity");
    CHECK_STR(fw_str(e, "client_id_fingerprint"), fp);
    CHECK_STR(fw_str(e, "appid"), CLIENT_ID);
    CHECK_STR(fw_str(e, "oid"), MI_OID);
  }
  cJSON_Delete(prow);
  free(prot);

  /* manifest.json and the export: the same record, without the client
   * ID, its alias or any principal identifier */
  const char *files[] = {"manifest.json", "export/ledger.jsonl"};
  for (size_t i = 0; i < 2; i++) {
    snprintf(p, sizeof p, "%s/%s", ev, files[i]);
    char *text = slurp(p);
    CHECK(text != NULL);
    if (!text)
      continue;
    CHECK(strstr(text, CLIENT_ID) == NULL);
    CHECK(strstr(text, "6a1f0c3e9b2d") == NULL);
    CHECK(strstr(text, MI_OID) == NULL);
    CHECK(strstr(text, "{{identity}}") == NULL);
    CHECK(strstr(text, "managed-identity:") == NULL);
    if (i == 1 && strchr(text, '\n'))
      *strchr(text, '\n') = '\0';
    cJSON *row = cJSON_Parse(text);
    CHECK(row != NULL);
    check_public_entry(entry(row, "A"), fp, files[i]);
    check_public_entry(entry(row, "B"), fp, files[i]);
    check_public_entry(entry(row, "observer"), fp, files[i]);
    cJSON_Delete(row);
    free(text);
  }
  ll_run_close(r);
  fw_cleanup(&w);
  free(tok);
}

int main(void) {
  root = ll_test_tmpdir();
  CHECK(root != NULL);
  if (root) {
    test_user_assigned_mi();
    ll_test_rmtree(root);
    free(root);
  }
  return ll_test_report("test_run_identity");
}
