/* The documented baseline (DESIGN.md section 4): what each request should
 * get in the current lease state, and how an observed response is classed
 * against it. Observed values are never corrected; a deviation is written
 * down as a discrepancy, explained only by the reviewed deviations table. */
#include "jsonx.h"
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "deviations.h"
#include "model_impl.h"

static const char *const blob_family[] = {
    "LeaseIdMissing", "LeaseIdMismatchWithBlobOperation",
    "LeaseNotPresentWithBlobOperation", "LeaseLost", NULL};

static const char *const lease_family[] = {"LeaseAlreadyPresent",
                                           "LeaseAlreadyBroken",
                                           "LeaseIdMismatchWithLeaseOperation",
                                           "LeaseIsBreakingAndCannotBeAcquired",
                                           "LeaseIsBreakingAndCannotBeChanged",
                                           "LeaseIsBrokenAndCannotBeRenewed",
                                           "LeaseNotPresentWithLeaseOperation",
                                           NULL};

static const char *const absent_family[] = {"BlobNotFound", NULL};

/* What each code of the blob-operation family says, from Microsoft's error
 * catalogue (Azure Blob Storage error codes,
 * https://learn.microsoft.com/rest/api/storageservices/blob-service-error-codes),
 * all Precondition Failed (412):
 * - LeaseIdMissing: "There is currently a lease on the blob and no lease ID
 *   was specified in the request."
 * - LeaseIdMismatchWithBlobOperation: "The lease ID specified did not match
 *   the lease ID for the blob."
 * - LeaseNotPresentWithBlobOperation: "There is currently no lease on the
 *   blob."
 * - LeaseLost: "A lease ID was specified, but the lease for the blob has
 *   expired."
 * Each names the lease state it was refused in, so a code that names
 * another state than the modelled one contradicts the model: a
 * discrepancy, even inside the family. A broken or expired lease is
 * neither a lease on the blob nor one that matches: the catalogue does not
 * say which of the last two it answers, and both say the ID holds nothing
 * (Azurite 3.37.0 answers LeaseNotPresentWithBlobOperation, with
 * LeaseLost's message: docs/EVIDENCE.md). */
static const char *const code_missing[] = {"LeaseIdMissing", NULL};
static const char *const code_mismatch[] = {"LeaseIdMismatchWithBlobOperation",
                                            NULL};
static const char *const code_not_present[] = {
    "LeaseNotPresentWithBlobOperation", NULL};
static const char *const code_gone[] = {"LeaseNotPresentWithBlobOperation",
                                        "LeaseLost", NULL};

static int in_list(const char *const *list, const char *code) {
  for (; list && *list && code; list++)
    if (strcmp(*list, code) == 0)
      return 1;
  return 0;
}

#define FAM_BLOB "blob-operation lease family"
#define FAM_LEASE "lease-operation family"
#define FAM_ABSENT "BlobNotFound"

int ll_baseline_in_family(const char *family, const char *code) {
  const char *const *list = NULL;
  if (!family || !code)
    return 0;
  if (strcmp(family, FAM_BLOB) == 0)
    list = blob_family;
  else if (strcmp(family, FAM_LEASE) == 0)
    list = lease_family;
  else if (strcmp(family, FAM_ABSENT) == 0)
    list = absent_family;
  for (; list && *list; list++)
    if (strcmp(*list, code) == 0)
      return 1;
  return 0;
}

static void set(ll_expect *e, long status, const char *family) {
  e->status = status;
  e->family = family;
  e->codes = NULL;
  e->codes_why = NULL;
  if (family)
    snprintf(e->text, sizeof e->text, "%ld %s", status, family);
  else
    snprintf(e->text, sizeof e->text, "%ld", status);
}

/* The phase the service is documented to be in. A break accepted but not
 * yet observed is breaking while its period runs, broken for period 0. */
static ll_phase effective(const ll_epoch_state *ep) {
  if (ep->phase == LL_PH_BREAK_SENT)
    return ep->break_period > 0 ? LL_PH_BREAKING : LL_PH_BROKEN;
  return ep->phase;
}

/* After an acquire whose outcome is unknown, the proposed holder's renew is
 * the conditioned operation that proves or refutes its ownership (seed,
 * "Recover a Partial Handoff"). Both answers are documented: 200 when the
 * acquire took effect, 409 from the lease-operation family when it did not.
 */
static int ownership_probe(const ll_epoch_state *ep, ll_op op,
                           const char *lease) {
  return op == LL_OP_LEASE_RENEW && ep->new_acquire_doubtful &&
         !ep->new_acquired && lease && ep->new_holder[0] &&
         strcmp(lease, ep->new_holder) == 0 && ep->phase == LL_PH_LEASED;
}

/* A blob write (Put, Delete) refused for its lease: 412, and the code the
 * modelled state gives. A write without an ID on a locked blob is missing
 * its ID; another ID than the holder's on a locked blob mismatches; an ID
 * on a blob never leased in this lifecycle finds no lease, and on a broken
 * or released one finds none or a lost one. An unknown state, and the
 * holder's own ID while breaking, keep the family. */
static void blob_rejection(ll_expect *e, ll_phase ph, int none, int holder) {
  int locked = ph == LL_PH_LEASED || ph == LL_PH_BREAKING;
  set(e, 412, FAM_BLOB);
  if (none && locked) {
    e->codes = code_missing;
    e->codes_why = "a lease on the blob, no lease ID sent";
  } else if (!none && !holder && locked) {
    e->codes = code_mismatch;
    e->codes_why = "the blob is leased under another ID than the one sent";
  } else if (!none && ph == LL_PH_NONE) {
    e->codes = code_not_present;
    e->codes_why = "a lease ID sent, no lease on the blob";
  } else if (!none && (ph == LL_PH_BROKEN || ph == LL_PH_RELEASED)) {
    e->codes = code_gone;
    e->codes_why = "a lease ID sent, the lease broken or ended";
  }
}

void ll_baseline_expect(const ll_model *m, ll_op op, const char *lease,
                        ll_expect *out) {
  const ll_epoch_state *ep = &m->ep;
  ll_phase ph = effective(ep);
  int none = ll_lease_none(lease);
  int holder = !none && strcmp(lease, ep->holder) == 0;
  int locked = ph == LL_PH_LEASED || ph == LL_PH_BREAKING;
  memset(out, 0, sizeof *out);
  switch (op) {
  case LL_OP_CREATE_CONTAINER:
    set(out, 201, NULL);
    break;
  case LL_OP_GET_BLOB:
  case LL_OP_GET_PROPERTIES:
    /* after an accepted delete the blob is documented to be gone */
    if (m->blob_deleted)
      set(out, 404, FAM_ABSENT);
    else
      set(out, 200, NULL);
    break;
  case LL_OP_PUT_BLOB:
    if (none && !locked)
      set(out, 201, NULL);
    else if (holder && locked)
      set(out, 201, NULL);
    else
      blob_rejection(out, ph, none, holder);
    break;
  case LL_OP_DELETE_BLOB:
    if (none && !locked)
      set(out, 202, NULL);
    else if (holder && ph == LL_PH_LEASED)
      set(out, 202, NULL);
    else
      blob_rejection(out, ph, none, holder);
    break;
  case LL_OP_LEASE_ACQUIRE:
    if (ph == LL_PH_BREAKING || (ph == LL_PH_LEASED && !holder))
      set(out, 409, FAM_LEASE);
    else
      set(out, 201, NULL);
    break;
  case LL_OP_LEASE_BREAK:
    if (locked || ph == LL_PH_BROKEN)
      set(out, 202, NULL);
    else
      set(out, 409, FAM_LEASE);
    break;
  case LL_OP_LEASE_RELEASE:
    set(out, holder && ph != LL_PH_NONE && ph != LL_PH_RELEASED ? 200 : 409,
        holder && ph != LL_PH_NONE && ph != LL_PH_RELEASED ? NULL : FAM_LEASE);
    break;
  case LL_OP_LEASE_RENEW:
  case LL_OP_LEASE_CHANGE:
    if (ownership_probe(ep, op, lease)) {
      set(out, 200, NULL);
      snprintf(out->text, sizeof out->text,
               "200 if the doubtful acquire took effect, else 409 %s",
               FAM_LEASE);
    } else if (holder && ph == LL_PH_LEASED)
      set(out, 200, NULL);
    else
      set(out, 409, FAM_LEASE);
    break;
  default:
    set(out, 0, NULL);
  }
}
int ll_baseline_rejection_proven(const ll_model *m, const cJSON *row) {
  int opi = ll_op_from_name(ll_json_str(row, "operation"));
  const char *code = ll_json_str(row, "azure_error_code");
  ll_expect e;
  if (opi < 0)
    return 0;
  ll_baseline_expect(m, (ll_op)opi, ll_json_str(row, "lease_alias_supplied"),
                     &e);
  return e.family && e.codes &&
         ll_json_long(row, "http_status", 0) == e.status &&
         in_list(e.codes, code);
}

/* ---- invariant 15: the preflight and the conditional requests ---------
 *
 * Documented answers, with their sources:
 * - If-None-Match: * "perform the operation only if the resource does not
 *   exist, and fail the operation if it does exist" (Specifying conditional
 *   headers for Blob service operations,
 *   https://learn.microsoft.com/rest/api/storageservices/specifying-conditional-headers-for-blob-service-operations).
 *   For a Put Blob onto an existing blob the code is BlobAlreadyExists,
 *   Conflict (409), "The specified blob already exists." (Azure Blob
 *   Storage error codes,
 *   https://learn.microsoft.com/rest/api/storageservices/blob-service-error-codes).
 *   The generic write-condition answer, 412 ConditionNotMet, is kept as a
 *   discrepancy: it still says the blob exists.
 * - If-Match on a Delete Blob, or on a Lease Blob acquire or break ("Lease
 *   Blob" lists If-Match among its conditional headers), that no longer
 *   matches: ConditionNotMet,
 *   Precondition Failed (412), "The condition specified in the conditional
 *   header(s) was not met for a write operation." (Common REST API error
 *   codes,
 *   https://learn.microsoft.com/rest/api/storageservices/common-rest-api-error-codes).
 * - The preflight Get Blob Properties of a fresh target: 404 BlobNotFound,
 *   or ContainerNotFound before the lab's container exists (Azure Blob
 *   Storage error codes).
 * Measured on Azurite 3.37.0 (docs/EVIDENCE.md): 409 BlobAlreadyExists,
 * 412 ConditionNotMet, 404 BlobNotFound and 404 ContainerNotFound. */
#define PREFLIGHT_TEXT                                                         \
  "404 BlobNotFound or ContainerNotFound (a fresh target), or 200 (the blob "  \
  "exists: the run stops)"
#define CREATE_TEXT "201; 409 BlobAlreadyExists if the blob exists"
#define DELETE_IF_MATCH_TEXT                                                   \
  "; 412 ConditionNotMet if the blob changed after the read-back"
#define LEASE_IF_MATCH_TEXT                                                    \
  "; 412 ConditionNotMet if the blob changed after the run's last write"

static int is_preflight(const cJSON *row) {
  return cJSON_IsTrue(ll_json_get(row, "preflight"));
}

/* What a response says about the request's condition header. */
typedef enum {
  COND_NONE = 0,       /* not a condition's answer */
  COND_DOCUMENTED = 1, /* the documented answer to the condition */
  COND_OTHER = 2       /* still says the condition failed, but not the
                          documented answer: a discrepancy */
} cond_answer;

static cond_answer condition_answer(const cJSON *row, ll_op op, long status,
                                    const char *code) {
  if (op == LL_OP_PUT_BLOB && ll_json_is(row, "if_none_match", "*")) {
    if (status == 409 && ll_streq(code, "BlobAlreadyExists"))
      return COND_DOCUMENTED;
    if (status == 412)
      return COND_OTHER;
  }
  if ((op == LL_OP_DELETE_BLOB || ll_op_lease_conditioned(op)) &&
      ll_json_str(row, "if_match") && status == 412 &&
      ll_streq(code, "ConditionNotMet"))
    return COND_DOCUMENTED;
  return COND_NONE;
}

static void condition_text(const cJSON *row, ll_op op, ll_expect *e) {
  char buf[sizeof e->text + 80];
  if (is_preflight(row)) {
    ll_strlcpy(e->text, PREFLIGHT_TEXT, sizeof e->text);
  } else if (op == LL_OP_PUT_BLOB && ll_json_is(row, "if_none_match", "*") &&
             !e->family) {
    ll_strlcpy(e->text, CREATE_TEXT, sizeof e->text);
  } else if (ll_json_str(row, "if_match") &&
             (op == LL_OP_DELETE_BLOB || ll_op_lease_conditioned(op))) {
    snprintf(buf, sizeof buf, "%s%s", e->text,
             op == LL_OP_DELETE_BLOB ? DELETE_IF_MATCH_TEXT
                                     : LEASE_IF_MATCH_TEXT);
    ll_strlcpy(e->text, buf, sizeof e->text);
  }
}

/* An acquire or a change proposes the lease ID its answer must name. */
static int proposes(ll_op op) {
  return op == LL_OP_LEASE_ACQUIRE || op == LL_OP_LEASE_CHANGE;
}

static const char *other_id(ll_op op) {
  return op == LL_OP_LEASE_CHANGE
             ? "change returned a lease ID other than the proposed one"
             : "acquire returned a lease ID other than the proposed one";
}

static const char *success_class(ll_op op) {
  if (op == LL_OP_LEASE_BREAK)
    return "BREAK_ACCEPTED_NOT_COMPLETE";
  if (!ll_op_is_mutation(op))
    return "STATE_OBSERVED";
  return "ACCEPTED_WRITE";
}

/* Writes one discrepancy, explained by the deviations table or not. */
static void discrepancy(const ll_model *m, const cJSON *row, cJSON *d,
                        const char *kind, const char *text) {
  const char *dev = ll_deviations_lookup(
      kind, m->judged_as, ll_json_str(row, "server"),
      ll_json_str(row, "operation"), ll_json_long(row, "http_status", 0),
      ll_json_str(row, "azure_error_code"),
      ll_json_str(row, "returned_api_version"));
  cJSON *list = ll_json_get(d, "discrepancy");
  if (!cJSON_IsArray(list)) {
    cJSON_DeleteItemFromObjectCaseSensitive(d, "discrepancy");
    list = cJSON_AddArrayToObject(d, "discrepancy");
  }
  cJSON *item = cJSON_CreateObject();
  cJSON_AddStringToObject(item, "text", text);
  if (dev)
    cJSON_AddStringToObject(item, "explained_by", dev);
  else
    cJSON_AddNullToObject(item, "explained_by");
  ll_json_push(list, item); /* deleted if the list was never made */
}

/* A content read's lease headers (its lease_state_after and _status_after)
 * against the modelled lease. While a lease is held (acquired or renewed,
 * neither broken nor released since) a read is documented to find it
 * leased/locked (Lease Blob: "Leased (A), read succeeds"); anything else
 * contradicts the state the ACCEPT chain stands on. Other phases are not
 * checked here: a break's period running out, or an unleased write once
 * broken, changes the state with no request the fold could place it at;
 * but neither leases the blob, so a read that finds it leased or breaking
 * while no lease of the run can be current is another party's lease
 * (harm.c, a HOLD of invariant 15). A read
 * that carried no lease header (a bundle older than the field) says
 * nothing. */
static void lease_seen(const ll_model *m, const cJSON *row, cJSON *d) {
  const char *st = ll_json_str(row, "lease_state_after");
  const char *ss = ll_json_str(row, "lease_status_after");
  char text[256];
  if ((!st && !ss) || effective(&m->ep) != LL_PH_LEASED ||
      (ll_streq(st, "leased") && ll_streq(ss, "locked")))
    return;
  snprintf(text, sizeof text,
           "modelled leased/locked (lease %s held), observed %s/%s: the "
           "read contradicts the modelled lease state",
           m->ep.holder[0] ? m->ep.holder : "(unproven holder)",
           st ? st : "(none)", ss ? ss : "(none)");
  discrepancy(m, row, d, "lease-state", text);
}

void ll_baseline_classify(const ll_model *m, const cJSON *row, cJSON *d) {
  int opi = ll_op_from_name(ll_json_str(row, "operation"));
  ll_op op = opi < 0 ? LL_OP_GET_PROPERTIES : (ll_op)opi;
  int mutation = ll_op_is_mutation(op);
  const char *outcome = ll_json_str(row, "outcome");
  long status = ll_json_long(row, "http_status", 0);
  const char *code = ll_json_str(row, "azure_error_code");
  const char *cls = "EVIDENCE_ERROR";
  char text[256];
  ll_expect e;

  const char *cell = ll_json_str(row, "cell");
  ll_baseline_expect(m, op, ll_json_str(row, "lease_alias_supplied"), &e);
  condition_text(row, op, &e);
  if (cell) /* a lease-table attempt: its cell row judges it */
    snprintf(e.text, sizeof e.text,
             "lease contract cell %.100s (its cell row "
             "judges the answer)",
             cell);
  cond_answer cond = condition_answer(row, op, status, code);
  cJSON_AddStringToObject(d, "expectation", e.text);
  cJSON_AddArrayToObject(d, "discrepancy");

  if (!outcome || strcmp(outcome, "NOT_SENT") == 0) {
    cls = "EVIDENCE_ERROR"; /* the step's evidence was not obtained */
  } else if (strcmp(outcome, "UNKNOWN") == 0) {
    /* A lost response: for a mutation the service may have applied it;
     * for a read the state it saw is unknown. Both wait for reconcile. */
    cls = "UNKNOWN_OUTCOME";
  } else if (ll_json_long(row, "emitted_requests", 0) != 1) {
    snprintf(text, sizeof text, "%ld request heads emitted for one attempt",
             ll_json_long(row, "emitted_requests", 0));
    /* the evidence of the attempt is unusable (docs/EVIDENCE.md); the fold
     * also counts a mutation's as a doubt, since the service may have
     * applied it more than once */
    discrepancy(m, row, d, "emission", text);
    cls = "EVIDENCE_ERROR";
  } else if (status >= 500) {
    /* A server error does not say whether a mutation was applied, and a
     * read that failed observed nothing: both wait for reconcile. */
    cls = "UNKNOWN_OUTCOME";
  } else if (ll_json_str(row, "header_problems")) {
    /* a header said two things, or more than the row keeps */
    discrepancy(m, row, d, "header", ll_json_str(row, "header_problems"));
    cls = "EVIDENCE_ERROR";
  } else {
    int ok = status >= 200 && status < 300;
    const char *req = ll_json_str(row, "requested_api_version");
    const char *ret = ll_json_str(row, "returned_api_version");
    const char *lease = ll_json_str(row, "lease_alias_supplied");
    if (cell) {
      /* Any answer is the observation the cell row is judged on, not a
       * discrepancy of the handoff's baseline; only an acquire that
       * returned another ID than it proposed is still an evidence error. */
      cls = ok ? success_class(op) : "EXPECTED_REJECTION";
      if (ok && proposes(op) && !ll_lease_none(lease) &&
          !cJSON_IsTrue(ll_json_get(row, "returned_lease_matches_proposed"))) {
        cls = "EVIDENCE_ERROR";
        discrepancy(m, row, d, "lease", other_id(op));
      }
    } else if (e.family == NULL) {
      if (ok) {
        cls = success_class(op);
        if (status != e.status) {
          snprintf(text, sizeof text, "documented %s, observed %ld", e.text,
                   status);
          discrepancy(m, row, d, "status", text);
        }
        const cJSON *same = ll_json_get(row, "returned_lease_matches_proposed");
        if (proposes(op) && !cJSON_IsTrue(same)) {
          cls = "EVIDENCE_ERROR";
          discrepancy(m, row, d, "lease", other_id(op));
        }
      } else if (op == LL_OP_CREATE_CONTAINER && status == 409 && code &&
                 strcmp(code, "ContainerAlreadyExists") == 0) {
        cls = "STATE_OBSERVED";
      } else if (is_preflight(row) && status == 404 &&
                 (ll_streq(code, "BlobNotFound") ||
                  ll_streq(code, "ContainerNotFound"))) {
        cls = "STATE_OBSERVED"; /* a fresh target */
      } else if (cond != COND_NONE) {
        cls = "EXPECTED_REJECTION"; /* the condition held the write back */
        if (cond == COND_OTHER) {
          snprintf(text, sizeof text, "documented %s, observed %ld %s", e.text,
                   status, code ? code : "(no error code)");
          discrepancy(m, row, d, "status", text);
        }
      } else if (status == 409 && ll_baseline_in_family(FAM_LEASE, code) &&
                 ownership_probe(&m->ep, op,
                                 ll_json_str(row, "lease_alias_supplied"))) {
        cls = "EXPECTED_REJECTION"; /* the doubtful acquire did not hold */
      } else {
        cls = "EVIDENCE_ERROR";
        snprintf(text, sizeof text, "documented %s, observed %ld %s", e.text,
                 status, code ? code : "(no error code)");
        discrepancy(m, row, d, "status", text);
      }
    } else if (ok) {
      cls = success_class(op);
      snprintf(text, sizeof text, "documented %s, observed %ld", e.text,
               status);
      discrepancy(m, row, d, "status", text);
    } else {
      /* a read answering the documented absence observed the state */
      cls = mutation ? "EXPECTED_REJECTION" : "STATE_OBSERVED";
      if (cond != COND_DOCUMENTED &&
          (status != e.status || !ll_baseline_in_family(e.family, code))) {
        snprintf(text, sizeof text, "documented %s, observed %ld %s", e.text,
                 status, code ? code : "(no error code)");
        discrepancy(m, row, d, "status", text);
        if (!mutation)
          cls = "EVIDENCE_ERROR"; /* a failed read observed nothing */
      } else if (cond != COND_DOCUMENTED && e.codes &&
                 !in_list(e.codes, code)) {
        /* in the family, but it names another lease state than the
         * modelled one: the model or the answer is wrong */
        snprintf(text, sizeof text,
                 "documented %ld %s%s%s (%s), observed %ld %s: the code "
                 "contradicts the modelled lease state",
                 e.status, e.codes[0], e.codes[1] ? " or " : "",
                 e.codes[1] ? e.codes[1] : "", e.codes_why, status, code);
        discrepancy(m, row, d, "lease-code", text);
      }
    }
    if (op == LL_OP_GET_BLOB && status == 200 && !cell)
      lease_seen(m, row, d);
    if (req && (!ret || strcmp(req, ret) != 0)) {
      snprintf(text, sizeof text, "requested x-ms-version %s, returned %s", req,
               ret ? ret : "(none)");
      /* a documented fixture stands for the live service */
      if (strcmp(m->judged_as, "azure") == 0 ||
          strcmp(m->judged_as, "documented") == 0) {
        cls = "EVIDENCE_ERROR";
        discrepancy(m, row, d, "version-azure", text);
      } else {
        discrepancy(m, row, d, "version", text);
      }
    }
  }
  cJSON_AddStringToObject(d, "result_classification", cls);
}
