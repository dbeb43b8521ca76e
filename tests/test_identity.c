/* Identities (core/run/identity.c, credentials.c, and jwt.c's claims and
 * fingerprint): the fingerprint is the documented reviewer's command's
 * answer, a dev token per actor is a distinct principal, the identity
 * record and its sentence say what they should, a row naming another
 * actor's principal is caught, each actor's credential SPEC is read or
 * refused in one line, and the export's projection and scan never let a
 * raw oid or tid through (the scan proven to find them first). */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "credentials.h"
#include "identity.h"
#include "jwt.h"
#include "sanitize.h"
#include "testlib.h"

#define TID "ab1f708d-50f6-404c-a006-d71b2ac7a606"
#define OID_A "c7c9a723-63f1-4055-a3da-df0bc357091d"
/* printf 'leaselua-principal-v1:%s:%s' "$TID" "$OID_A" | sha256sum |
 * cut -c1-16 */
#define FP_A "a2bde252a0fa9874"

static void test_fingerprint(void) {
  char fp[LL_FINGERPRINT_LEN];
  CHECK_INT(ll_principal_fingerprint(TID, OID_A, fp), LL_OK);
  CHECK_STR(fp, FP_A);
  /* lower case first: a log that prints GUIDs in upper case agrees */
  CHECK_INT(ll_principal_fingerprint("AB1F708D-50F6-404C-A006-D71B2AC7A606",
                                     "C7C9A723-63F1-4055-A3DA-DF0BC357091D",
                                     fp),
            LL_OK);
  CHECK_STR(fp, FP_A);
  CHECK_INT(ll_principal_fingerprint("", OID_A, fp), LL_E_USAGE);
  CHECK_STR(fp, "");
}

static void test_dev_tokens(void) {
  char oid[37];
  CHECK(ll_auth_dev_oid("A", oid));
  CHECK_STR(oid, OID_A);
  CHECK(!ll_auth_dev_oid("x y", oid));
  CHECK(!ll_auth_dev_oid("", oid));
  char *a = ll_auth_dev_token_for((int64_t)time(NULL), 600, "A");
  char *b = ll_auth_dev_token_for((int64_t)time(NULL), 600, "B");
  ll_jwt_ids ia, ib;
  ll_error err = {0};
  CHECK(a && b);
  CHECK_INT(ll_jwt_ids_read(a, &ia, &err), LL_OK);
  CHECK_INT(ll_jwt_ids_read(b, &ib, &err), LL_OK);
  CHECK_STR(ia.oid, OID_A);
  CHECK_STR(ia.tid, TID);
  CHECK(strcmp(ia.oid, ib.oid) != 0);
  CHECK_STR(ia.appid, ""); /* absent claims stay empty */
  free(a);
  free(b);
  CHECK_INT(ll_jwt_ids_read("not.a-jwt", &ia, &err), LL_E_PARSE);
}

static cJSON *entry(const char *source, const char *fp) {
  cJSON *e = cJSON_CreateObject();
  cJSON_AddStringToObject(e, "credential", source);
  cJSON_AddStringToObject(e, "kind", "jwt");
  if (fp)
    cJSON_AddStringToObject(e, "fingerprint", fp);
  else
    cJSON_AddNullToObject(e, "fingerprint");
  return e;
}

/* A manifest row with identities for A, B, operator and observer. */
static cJSON *manifest(const char *fa, const char *fb, const char *fo,
                       const char *sa, const char *sb) {
  cJSON *m = cJSON_CreateObject();
  cJSON_AddStringToObject(m, "record", "manifest");
  cJSON *ids = cJSON_AddObjectToObject(m, "identities");
  cJSON_AddItemToObject(ids, "A", entry(sa, fa));
  cJSON_AddItemToObject(ids, "B", entry(sb, fb));
  cJSON_AddItemToObject(ids, "operator", entry("token-file:/o", fo));
  cJSON_AddItemToObject(ids, "observer", entry("token-file:/o", fo));
  return m;
}

static void test_statement(void) {
  char s[400];
  cJSON *m = manifest("1111111111111111", "2222222222222222",
                      "3333333333333333", "token-file:/a", "token-file:/b");
  const cJSON *ids = cJSON_GetObjectItemCaseSensitive(m, "identities");
  CHECK_INT(ll_identity_shared(ids), 0); /* the observer shares by design */
  ll_identity_statement(m, s, sizeof s);
  CHECK_STR(s, "each actor used its own identity (A 1111111111111111, B "
               "2222222222222222, operator 3333333333333333, observer "
               "3333333333333333 (operator's: the observer only reads))");
  cJSON_Delete(m);
  /* one credential for everyone: the plain statement */
  m = manifest("1111111111111111", "1111111111111111", "1111111111111111",
               "token-env:AZURE_STORAGE_TOKEN",
               "token-env:AZURE_STORAGE_TOKEN");
  CHECK_INT(
      ll_identity_shared(cJSON_GetObjectItemCaseSensitive(m, "identities")), 1);
  ll_identity_statement(m, s, sizeof s);
  CHECK_STR(s, LL_IDENTITY_ONE);
  cJSON_Delete(m);
  /* two actors on one principal */
  m = manifest("1111111111111111", "1111111111111111", "3333333333333333",
               "token-file:/a", "token-file:/b");
  CHECK_INT(
      ll_identity_shared(cJSON_GetObjectItemCaseSensitive(m, "identities")), 1);
  ll_identity_statement(m, s, sizeof s);
  CHECK(strncmp(s, "some actors shared one identity", 31) == 0);
  cJSON_Delete(m);
  /* an unknown principal is never counted as distinct */
  m = manifest(NULL, "2222222222222222", "3333333333333333", "sas-env:X",
               "token-file:/b");
  CHECK_INT(
      ll_identity_shared(cJSON_GetObjectItemCaseSensitive(m, "identities")), 1);
  ll_identity_statement(m, s, sizeof s);
  CHECK(strstr(s, "actor A's principal is unknown") != NULL);
  cJSON_Delete(m);
  /* two user-assigned managed identities: one credential string, told
   * apart by their client IDs' fingerprints; the same client ID is one
   * source */
  m = manifest("1111111111111111", "2222222222222222", "3333333333333333",
               "managed-identity", "managed-identity");
  cJSON *mids = cJSON_GetObjectItemCaseSensitive(m, "identities");
  cJSON_AddStringToObject(cJSON_GetObjectItem(mids, "A"),
                          "client_id_fingerprint", "aaaaaaaaaaaaaaaa");
  cJSON_AddStringToObject(cJSON_GetObjectItem(mids, "B"),
                          "client_id_fingerprint", "bbbbbbbbbbbbbbbb");
  CHECK_INT(ll_identity_shared(mids), 0);
  cJSON_ReplaceItemInObject(cJSON_GetObjectItem(mids, "B"),
                            "client_id_fingerprint",
                            cJSON_CreateString("aaaaaaaaaaaaaaaa"));
  CHECK_INT(ll_identity_shared(mids), 1);
  cJSON_Delete(m);
  /* no identities at all (a replay, an older bundle) */
  m = cJSON_CreateObject();
  ll_identity_statement(m, s, sizeof s);
  CHECK(strncmp(s, "identities not recorded", 23) == 0);
  CHECK(strstr(s, "does not distinguish principals") != NULL);
  cJSON_Delete(m);
}

static cJSON *request_row(const char *actor, const char *principal) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "record", "intent");
  cJSON_AddStringToObject(r, "actor_alias", actor);
  if (principal)
    cJSON_AddStringToObject(r, "principal", principal);
  else
    cJSON_AddNullToObject(r, "principal");
  return r;
}

static void test_check_rows(void) {
  cJSON *rows = cJSON_CreateArray();
  cJSON_AddItemToArray(rows, manifest("1111111111111111", "2222222222222222",
                                      "3333333333333333", "token-file:/a",
                                      "token-file:/b"));
  cJSON_AddItemToArray(rows, request_row("A", "1111111111111111"));
  cJSON_AddItemToArray(rows, request_row("observer", "3333333333333333"));
  long bad = -1;
  char problem[300];
  CHECK_INT(ll_identity_check_rows(rows, &bad, problem, sizeof problem), LL_OK);
  CHECK_INT(bad, 0);
  /* B's request relabelled with A's principal */
  cJSON_AddItemToArray(rows, request_row("B", "1111111111111111"));
  CHECK_INT(ll_identity_check_rows(rows, &bad, problem, sizeof problem),
            LL_E_TAMPER);
  CHECK_INT(bad, 4);
  CHECK(strstr(problem, "of actor B") != NULL);
  cJSON_Delete(rows);
  /* an old bundle: no identities, no principals */
  rows = cJSON_CreateArray();
  cJSON_AddItemToArray(rows, cJSON_CreateObject());
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "actor_alias", "A");
  cJSON_AddItemToArray(rows, r);
  CHECK_INT(ll_identity_check_rows(rows, &bad, problem, sizeof problem), LL_OK);
  /* a principal without any identity record is not taken on trust */
  cJSON_AddItemToArray(rows, request_row("A", "1111111111111111"));
  CHECK_INT(ll_identity_check_rows(rows, &bad, problem, sizeof problem),
            LL_E_TAMPER);
  cJSON_Delete(rows);
}

static void test_specs(void) {
  ll_cred_spec s;
  ll_error err = {0};
  CHECK_INT(
      ll_cred_spec_parse("token-file:/run/a.jwt", "--credential-a", &s, &err),
      LL_OK);
  CHECK_INT(s.kind, LL_AUTH_TOKEN_FILE);
  CHECK_STR(s.value, "/run/a.jwt");
  CHECK_STR(s.source, "token-file:/run/a.jwt");
  CHECK_INT(ll_cred_spec_parse("token-command:az account get-access-token",
                               "--credential-b", &s, &err),
            LL_OK);
  CHECK_STR(s.source, "token-command"); /* the command is not recorded */
  CHECK_INT(ll_cred_spec_parse("managed-identity", "x", &s, &err), LL_OK);
  CHECK_INT(s.kind, LL_AUTH_MANAGED_IDENTITY);
  CHECK_INT(ll_cred_spec_parse("sas-file:/s", "x", &s, &err), LL_OK);
  CHECK(s.kind == LL_AUTH_SAS && s.sas_file);
  CHECK_INT(ll_cred_spec_parse("token-env:", "--credential-a", &s, &err),
            LL_E_USAGE);
  CHECK(strstr(err.message, "token-env needs a value") != NULL);
  CHECK_INT(ll_cred_spec_parse("password:x", "--credential-a", &s, &err),
            LL_E_USAGE);
  CHECK(strchr(err.message, '\n') == NULL);
  /* token-env and sas-env name a variable: a value given in its place
   * (a pasted token, a SAS) is refused without being echoed */
  static const char *const not_names[] = {
      "token-env:eyJhbGciOiJSUzI1NiJ9.eyJvaWQiOiJ4In0.SIGsecretSIG",
      "sas-env:sv=2024-11-04&sig=SIGsecretSIG", "token-env:9SIGsecretSIG",
      "token-env:SIG-secret-SIG", "sas-env:SIGsecretSIG "};
  for (size_t i = 0; i < sizeof not_names / sizeof not_names[0]; i++) {
    err = (ll_error){0};
    CHECK_INT(ll_cred_spec_parse(not_names[i], "--credential-a", &s, &err),
              LL_E_USAGE);
    CHECK(strstr(err.message, "SIG") == NULL);
    CHECK(strstr(err.message, "--credential-a") != NULL);
    CHECK(strstr(err.message, "[A-Za-z_][A-Za-z0-9_]*") != NULL);
  }
  char longname[80];
  memset(longname, 'A', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  char longspec[100];
  snprintf(longspec, sizeof longspec, "token-env:%s", longname);
  CHECK_INT(ll_cred_spec_parse(longspec, "--credential-b", &s, &err),
            LL_E_USAGE);
  CHECK(strstr(err.message, longname) == NULL);
  CHECK_INT(
      ll_cred_spec_parse("token-env:_MY_TOKEN_2", "--credential-a", &s, &err),
      LL_OK);
  CHECK_STR(s.source, "token-env:_MY_TOKEN_2");
  CHECK_INT(ll_cred_spec_parse("sas-env:AZURE_STORAGE_SAS", "x", &s, &err),
            LL_OK);

  /* the manifest's credentials, the flow's actors */
  ll_cred_config c;
  const char *const none[LL_ACTOR__COUNT] = {"", "token-env:TB", "", ""};
  cJSON *m = cJSON_Parse("{\"credentials\":{\"A\":\"token-env:TA\"}}");
  CHECK_INT(ll_cred_config_read(&c, none, m, &err), LL_OK);
  CHECK(c.any && c.actor[LL_ACTOR_A].given && c.actor[LL_ACTOR_B].given);
  const char actors[2][16] = {"A", "operator"};
  CHECK_INT(ll_cred_config_check(&c, actors, 2, 1, &err), LL_E_USAGE);
  CHECK(strstr(err.message, "actor B, which this flow never uses") != NULL);
  cJSON_Delete(m);
  m = cJSON_Parse("{\"credentials\":{\"B\":\"token-env:TB\"}}");
  CHECK_INT(ll_cred_config_read(&c, none, m, &err), LL_E_USAGE); /* twice */
  cJSON_Delete(m);
  m = cJSON_Parse("{\"credentials\":{\"C\":\"token-env:TB\"}}");
  CHECK_INT(ll_cred_config_read(&c, none, m, &err), LL_E_MANIFEST);
  cJSON_Delete(m);
  /* no default: each actor needs its own; the observer may use the
   * operator's */
  const char *const a_op[LL_ACTOR__COUNT] = {"token-env:TA", "", "token-env:TO",
                                             ""};
  CHECK_INT(ll_cred_config_read(&c, a_op, NULL, &err), LL_OK);
  CHECK_INT(ll_cred_config_check(&c, actors, 2, 0, &err), LL_OK);
  const char three[3][16] = {"A", "B", "operator"};
  CHECK_INT(ll_cred_config_check(&c, three, 3, 0, &err), LL_E_AUTH);
  CHECK(strstr(err.message, "actor B has no credential") != NULL);
  /* every flow reads (the preflight, run:read, the reads C adds), and
   * every read goes out as the observer: an observer credential is
   * accepted whether or not the flow lists "observer" */
  const char *const with_obs[LL_ACTOR__COUNT] = {
      "token-env:TA", "", "token-env:TO", "token-env:TR"};
  CHECK_INT(ll_cred_config_read(&c, with_obs, NULL, &err), LL_OK);
  CHECK_INT(ll_cred_config_check(&c, actors, 2, 0, &err), LL_OK);
  CHECK_INT(ll_cred_config_check(&c, actors, 2, 1, &err), LL_OK);
  const char obs_listed[3][16] = {"A", "operator", "observer"};
  CHECK_INT(ll_cred_config_check(&c, obs_listed, 3, 0, &err), LL_OK);
  const char *const obs_only[LL_ACTOR__COUNT] = {"", "", "", "token-env:TR"};
  CHECK_INT(ll_cred_config_read(&c, obs_only, NULL, &err), LL_OK);
  CHECK_INT(ll_cred_config_check(&c, NULL, 0, 1, &err), LL_OK);
  /* and the pick: observer -> operator, another alias -> the default */
  ll_auth *per[LL_ACTOR__COUNT] = {NULL, NULL, (ll_auth *)&c, NULL};
  ll_auth *dflt = (ll_auth *)&err;
  int slot = 9;
  CHECK(ll_cred_pick(dflt, per, "observer", &slot) == (ll_auth *)&c);
  CHECK_INT(slot, LL_ACTOR_OPERATOR);
  CHECK(ll_cred_pick(dflt, per, "W1", &slot) == dflt);
  CHECK_INT(slot, -1);
}

/* The export never holds a raw oid or tid: the projection drops the keys
 * at any depth, and the scan, given them as bound IDs the way the run
 * binds them, finds a stray copy in any case and without hyphens. */
static void test_export_projection_and_scan(void) {
  cJSON *row = cJSON_Parse("{\"record\":\"manifest\",\"identities\":{\"A\":{"
                           "\"fingerprint\":\"" FP_A "\",\"tid\":\"" TID
                           "\",\"oid\":\"" OID_A "\",\"appid\":\"x\","
                           "\"azp\":\"y\",\"sas\":{\"sv\":\"2023-11-03\","
                           "\"skoid\":\"" OID_A "\",\"sktid\":\"" TID "\"}}}}");
  cJSON *exp = ll_sanitize_row(row, NULL, NULL, 0);
  char *text = cJSON_PrintUnformatted(exp);
  CHECK(text && strstr(text, FP_A) && strstr(text, "2023-11-03"));
  CHECK(!strstr(text, "tid") && !strstr(text, "oid") &&
        !strstr(text, "appid") && !strstr(text, "azp"));
  CHECK(!strstr(text, "c7c9a723") && !strstr(text, "ab1f708d"));
  free(text);
  cJSON_Delete(exp);
  /* the run's way: the identifiers, bound under one alias */
  const char *found[8];
  size_t n = ll_identity_ids(
      cJSON_GetObjectItemCaseSensitive(row, "identities"), found, 8);
  CHECK_INT(n, 4); /* tid, oid, and the SAS's skoid, sktid; x, y no GUIDs */
  const char *stray = "note: C7C9A72363F14055A3DADF0BC357091D seen";
  char what[128];
  CHECK(ll_secret_scan(stray, strlen(stray), found, n, NULL, 0, what,
                       sizeof what) > 0);
  const char *clean = "note: nothing here " FP_A;
  CHECK_INT((int)ll_secret_scan(clean, strlen(clean), found, n, NULL, 0, what,
                                sizeof what),
            0);
  cJSON_Delete(row);
}

/* An actor's SAS from a file: its public fields, the signer's
 * fingerprint from sktid and skoid, and never its signature. */
static void test_actor_sas(void) {
  char path[] = "/tmp/ll-test-identity-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  const char *sas = "sv=2023-11-03&sr=b&sp=rw&se=2099-01-01T00:00:00Z"
                    "&skoid=" OID_A "&sktid=" TID "&sig=SECRETSIG%2B1";
  CHECK(write(fd, sas, strlen(sas)) == (ssize_t)strlen(sas));
  close(fd);
  ll_clock *clock = ll_clock_new_real();
  ll_auth_options ao = {.kind = LL_AUTH_SAS,
                        .explicit_source = 1,
                        .sas_file = path,
                        .label = "actor B's SAS file"};
  ll_error err = {0};
  ll_auth *a = ll_auth_new(&ao, clock, 0, &err);
  CHECK(a != NULL);
  const ll_auth_ident *id = ll_auth_identity(a);
  CHECK(id && id->is_sas);
  CHECK_STR(id->kind, "sas");
  CHECK_STR(id->sas.sp, "rw");
  CHECK_STR(id->fingerprint, FP_A);
  cJSON *e = ll_identity_entry(a, "sas-file:/x");
  char *text = cJSON_PrintUnformatted(e);
  CHECK(text && strstr(text, "\"sv\":\"2023-11-03\"") != NULL);
  CHECK(text && strstr(text, "SECRETSIG") == NULL &&
        strstr(text, "sig") == NULL);
  free(text);
  cJSON_Delete(e);
  ll_auth_free(a);
  /* the label names the source in the preflight's refusal */
  fd = open(path, O_WRONLY | O_TRUNC);
  const char *old = "se=2001-01-01&sig=x";
  CHECK(write(fd, old, strlen(old)) == (ssize_t)strlen(old));
  close(fd);
  CHECK(ll_auth_new(&ao, clock, 0, &err) == NULL);
  CHECK(strstr(err.message, "actor B's SAS file expired") != NULL);
  unlink(path);
  ll_clock_free(clock);
}

/* More identifiers than a cap: the count says so (the run and verify then
 * refuse), and no more than cap are stored. */
static void test_ids_over_cap(void) {
  cJSON *ids = cJSON_CreateObject();
  char name[16], guid[40];
  for (int i = 0; i < 3; i++) {
    cJSON *e = cJSON_CreateObject();
    snprintf(guid, sizeof guid, "0b9e5a4c-7d21-4f3e-9a6b-2c8d1e0f4a5%d", i);
    cJSON_AddStringToObject(e, "tid", guid);
    snprintf(name, sizeof name, "actor%d", i);
    cJSON_AddItemToObject(ids, name, e);
  }
  const char *out[3] = {NULL, NULL, NULL};
  CHECK_INT((int)ll_identity_ids(ids, out, 2), 3);
  CHECK(out[0] != NULL && out[1] != NULL);
  CHECK(out[2] == NULL); /* nothing written past cap */
  CHECK_INT((int)ll_identity_ids(ids, out, 3), 3);
  CHECK(out[2] != NULL);
  cJSON_Delete(ids);
}

int main(void) {
  test_ids_over_cap();
  test_fingerprint();
  test_dev_tokens();
  test_statement();
  test_check_rows();
  test_specs();
  test_export_projection_and_scan();
  test_actor_sas();
  return ll_test_report("test_identity");
}
