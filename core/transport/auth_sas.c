/* AZURE_STORAGE_SAS, checked before anything is sent: a signature, and
 * its validity window (st/se, and a user delegation key's skt/ske)
 * against the clock and the run's deadline. The sig= value never reaches
 * a message; st/se are not secret and are named. */
#include "auth_ident.h"
#include "auth_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "secret.h"
#include "text.h"

/* The forms of "Formatting DateTime values" (Azure Storage REST
 * reference, learn.microsoft.com/rest/api/storageservices/
 * formatting-datetime-values): YYYY-MM-DD, YYYY-MM-DDThh:mm and
 * YYYY-MM-DDThh:mm:ss with up to 7 fractional digits, the time with an
 * optional Z or +/-hh:mm offset (-23:59..+23:59); a date alone is
 * midnight UTC. */
ll_status ll_auth_sas_time(const char *s, size_t len, int64_t *out_ms) {
  return ll_utc_parse(s, len, LL_UTC_BARE | LL_UTC_SHORT | LL_UTC_OFFSET,
                      out_ms) == 0
             ? LL_OK
             : LL_E_PARSE;
}

enum { P_SIG, P_ST, P_SE, P_SKT, P_SKE, P__COUNT };
static const char *const param_names[P__COUNT] = {"sig", "st", "se", "skt",
                                                  "ske"};

typedef struct {
  const char *v;
  size_t len;
  int seen;
} sas_param;

/* A time parameter as UTC ms, or a refusal that shows the (public) raw
 * value, printable characters only. */
static ll_status param_time(const sas_param *ps, int which, const char *label,
                            int64_t *out, ll_error *err) {
  char buf[64], shown[48];
  size_t n = 0;
  if (ll_pct_decode(ps[which].v, ps[which].len, buf, sizeof buf, &n) == 0 &&
      ll_auth_sas_time(buf, n, out) == LL_OK)
    return LL_OK;
  size_t k = 0;
  for (size_t i = 0; i < ps[which].len && k + 4 < sizeof shown; i++) {
    char c = ps[which].v[i];
    shown[k++] = (c > 0x20 && c < 0x7f) ? c : '?';
  }
  shown[k] = '\0';
  if (k < ps[which].len)
    strcat(shown, "...");
  return ll_fail(err, LL_E_AUTH,
                 "%s %s=%s is not a time Azure Storage accepts (ISO 8601 "
                 "UTC, e.g. 2026-12-01T10:00:00Z): issue a new SAS",
                 label, param_names[which], shown);
}

/* One validity window: the SAS's own (st, se) or its user delegation
 * key's (skt, ske). */
static ll_status check_window(const sas_param *ps, int start, int expiry,
                              const char *what, const char *label,
                              ll_clock *clock, int64_t not_after_ms,
                              ll_error *err) {
  int64_t s_ms = 0, e_ms = 0, now = ll_clock_utc_ms(clock);
  char a[40], b[40];
  ll_status st = param_time(ps, expiry, label, &e_ms, err);
  if (st == LL_OK && ps[start].seen)
    st = param_time(ps, start, label, &s_ms, err);
  if (st != LL_OK)
    return st;
  ll_clock_format_utc(e_ms, a, sizeof a);
  if (ps[start].seen && s_ms >= e_ms) {
    ll_clock_format_utc(s_ms, b, sizeof b);
    return ll_fail(err, LL_E_AUTH,
                   "%s starts at %s (%s=), not before it expires at %s "
                   "(%s=): issue a new SAS",
                   what, b, param_names[start], a, param_names[expiry]);
  }
  if (e_ms <= now) {
    ll_clock_format_utc(now, b, sizeof b);
    return ll_fail(err, LL_E_AUTH,
                   "%s expired at %s (%s=; now %s): issue a new SAS", what, a,
                   param_names[expiry], b);
  }
  if (not_after_ms > 0 && e_ms < not_after_ms) {
    ll_clock_format_utc(not_after_ms, b, sizeof b);
    return ll_fail(err, LL_E_AUTH,
                   "%s expires at %s (%s=), before the run's deadline %s: "
                   "issue a SAS valid for the whole run, or shorten the "
                   "deadline",
                   what, a, param_names[expiry], b);
  }
  if (ps[start].seen && s_ms > now + LL_AUTH_SAS_START_SKEW_S * 1000LL) {
    ll_clock_format_utc(s_ms, a, sizeof a);
    ll_clock_format_utc(now, b, sizeof b);
    return ll_fail(err, LL_E_AUTH,
                   "%s is not valid before %s (%s=), more than %d s after "
                   "now (%s): issue a SAS whose %s= is not in the future",
                   what, a, param_names[start], LL_AUTH_SAS_START_SKEW_S, b,
                   param_names[start]);
  }
  return LL_OK;
}

ll_status ll_auth_sas_from_env(ll_clock *clock, int64_t not_after_ms,
                               char **out_sas, char **out_sig, ll_error *err) {
  return ll_auth_sas_parse(getenv("AZURE_STORAGE_SAS"), "AZURE_STORAGE_SAS",
                           clock, not_after_ms, out_sas, out_sig, err);
}

ll_status ll_auth_sas_parse(const char *v, const char *label, ll_clock *clock,
                            int64_t not_after_ms, char **out_sas,
                            char **out_sig, ll_error *err) {
  *out_sas = *out_sig = NULL;
  if (v && *v == '?')
    v++;
  if (!v || !*v)
    return ll_fail(err, LL_E_AUTH, "%s is not set or empty", label);
  if (!(*out_sas = ll_secret_dup_trimmed(v, strlen(v))))
    return ll_fail(err, LL_E_NOMEM, "out of memory copying the SAS");
  sas_param ps[P__COUNT] = {{0}};
  for (const char *p = *out_sas; *p;) {
    const char *end = strchr(p, '&');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char *eq = memchr(p, '=', len);
    if (!eq || eq == p)
      return ll_fail(err, LL_E_AUTH,
                     "%s is not a query string of name=value pairs", label);
    for (const char *c = p; c < p + len; c++)
      if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f || *c == '#')
        return ll_fail(err, LL_E_AUTH,
                       "%s holds characters a query string cannot", label);
    for (int k = 0; k < P__COUNT; k++) {
      size_t nl = strlen(param_names[k]);
      if ((size_t)(eq - p) != nl || memcmp(p, param_names[k], nl) != 0)
        continue;
      if (ps[k].seen)
        return ll_fail(err, LL_E_AUTH, "%s has two %s= parameters", label,
                       param_names[k]);
      ps[k] = (sas_param){eq + 1, len - nl - 1, 1};
    }
    p = end ? end + 1 : p + len;
  }
  if (!ps[P_SIG].seen || ps[P_SIG].len == 0)
    return ll_fail(err, LL_E_AUTH, "%s has no sig= value: it is not a SAS",
                   label);
  if (!(*out_sig = malloc(ps[P_SIG].len + 1)))
    return ll_fail(err, LL_E_NOMEM, "out of memory copying the SAS");
  memcpy(*out_sig, ps[P_SIG].v, ps[P_SIG].len);
  (*out_sig)[ps[P_SIG].len] = '\0';
  if (!ps[P_SE].seen)
    return ll_fail(err, LL_E_AUTH,
                   "%s has no se= expiry, so it cannot be checked against "
                   "the run's deadline: issue a SAS with se=",
                   label);
  ll_status st =
      check_window(ps, P_ST, P_SE, label, label, clock, not_after_ms, err);
  if (st == LL_OK && ps[P_SKE].seen) {
    char what[160];
    snprintf(what, sizeof what, "the user delegation key of %s", label);
    st = check_window(ps, P_SKT, P_SKE, what, label, clock, not_after_ms, err);
  }
  return st;
}

void ll_sas_fields_read(const char *sas, ll_sas_fields *out) {
  static const char *const names[] = {"sv", "sr",    "sp",   "st",
                                      "se", "skoid", "sktid"};
  char *dst[] = {out->sv, out->sr,    out->sp,   out->st,
                 out->se, out->skoid, out->sktid};
  memset(out, 0, sizeof *out);
  for (const char *p = sas ? sas : ""; *p;) {
    const char *end = strchr(p, '&');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char *eq = memchr(p, '=', len);
    for (size_t k = 0; eq && k < sizeof names / sizeof names[0]; k++) {
      size_t nl = strlen(names[k]);
      size_t n = 0;
      if ((size_t)(eq - p) != nl || memcmp(p, names[k], nl) != 0)
        continue;
      if (ll_pct_decode(eq + 1, len - nl - 1, dst[k], LL_SAS_FIELD_MAX, &n))
        dst[k][0] = '\0';
      for (size_t i = 0; i < n; i++)
        if (dst[k][i] < 0x20 || dst[k][i] >= 0x7f)
          dst[k][0] = '\0';
    }
    p = end ? end + 1 : p + len;
  }
}
