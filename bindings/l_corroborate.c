/* `leaselua corroborate` (l_corroborate.h): reads the operator's log
 * files, joins them with the run's export, appends the result to the
 * bundle and prints it. Knows no Lua: it is a host command. */
#include "l_corroborate.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "corroborate.h"
#include "corroborate_load.h"
#include "corroborate_query.h"
#include "corroborate_write.h"
#include "logs.h"

#if defined(__has_include)
#if __has_include("sign.h")
#include "sign.h"
#define LL_HAVE_SIGN 1
#endif
#endif

static const char usage[] =
    "usage: leaselua corroborate DIR --logs FILE... [--margin SECONDS] "
    "[--json] [--sign-key KEY]\n"
    "       leaselua corroborate DIR --print-query [--margin SECONDS]\n"
    "exit: 0 CORROBORATED, 1 INCOMPLETE, 2 CONTRADICTED, 64 usage or bad "
    "input, 70 internal or I/O\n";

/* The exit of an error that ends corroborate before a verdict: the host's
 * one mapping (ll_code_exit: out of memory and internal errors 70, the
 * rest 64), except that exit 2 is CONTRADICTED here, so an error the host
 * would end as a HOLD (an edited bundle) is bad input, 64, and a read or
 * write that failed part-way (a full disk) is the machine's, 70, wherever
 * it happens: loading the bundle, reading a log or writing the result. */
static int error_exit(ll_code code) {
  if (code == LL_E_IO)
    return 70;
  int rc = ll_code_exit(code);
  return rc == 2 ? 64 : rc;
}

static int bad_usage(FILE *errs, const char *what) {
  fprintf(errs, "leaselua: corroborate: %s\n%s", what, usage);
  return 64;
}

/* The optional signing hook: sign16's ll_bundle_sign (core/run/sign.c)
 * when it is built in; without it --sign-key is refused before anything
 * is read. */
static int sign_available(void) {
#ifdef LL_HAVE_SIGN
  return 1;
#else
  return 0;
#endif
}

static int sign_bundle(const char *dir, const char *key, FILE *errs) {
#ifdef LL_HAVE_SIGN
  ll_error err = {0};
  if (ll_bundle_sign(dir, key, &err) != LL_OK) {
    fprintf(errs, "leaselua: corroborate: signing failed: %s\n", err.message);
    return 70;
  }
  return 0;
#else
  (void)dir, (void)key, (void)errs;
  return 70;
#endif
}

static void print_list(FILE *out, const cJSON *res, const char *key,
                       const char *label) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(res, key), *e;
  cJSON_ArrayForEach(e, a) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "text");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "check");
    if (cJSON_IsString(t))
      fprintf(out, "  %s [%s] %s\n", label,
              cJSON_IsString(c) ? c->valuestring : "?", t->valuestring);
  }
}

static const char *str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : "null";
}

static void summary(FILE *out, const cJSON *res) {
  const cJSON *run = cJSON_GetObjectItemCaseSensitive(res, "decision_run");
  const cJSON *re = cJSON_GetObjectItemCaseSensitive(res, "decision_with_logs");
  fprintf(out, "corroboration: %s (%s)\n", str(res, "verdict"),
          str(res, "run_id"));
  fprintf(out, "  run's decision: %s; with the logs: %s\n",
          str(run, "decision"),
          cJSON_IsObject(re) ? str(re, "decision") : "(nothing to settle)");
  print_list(out, res, "contradictions", "CONTRADICTION");
  print_list(out, res, "missing", "MISSING");
  const cJSON *u = cJSON_GetObjectItemCaseSensitive(res, "unrecorded"), *e;
  cJSON_ArrayForEach(e, u) {
    fprintf(out, "  listed: %s %s at %s by %s (%s)\n", str(e, "operation"),
            str(e, "status"), str(e, "logged_utc"), str(e, "principal"),
            str(e, "source"));
  }
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(res, "identity");
  fprintf(out, "  identities: %s\n", str(id, "status"));
}

int ll_corroborate_main(int argc, char **argv, FILE *out, FILE *errs) {
  const char *dir = NULL, *sign_key = NULL;
  const char **files = calloc((size_t)argc + 1, sizeof *files);
  int nfiles = 0, print_query = 0, json = 0, logs_flag = 0;
  long margin = LL_CORR_MARGIN_DEFAULT;
  if (!files) {
    fprintf(errs, "leaselua: out of memory\n");
    return 70;
  }
  int rc = 0, in_logs = 0;
  for (int i = 0; i < argc && rc == 0; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, out);
      free(files);
      return 0;
    } else if (strcmp(a, "--logs") == 0) {
      in_logs = logs_flag = 1;
    } else if (strcmp(a, "--print-query") == 0) {
      print_query = 1, in_logs = 0;
    } else if (strcmp(a, "--json") == 0) {
      json = 1, in_logs = 0;
    } else if (strcmp(a, "--margin") == 0 || strcmp(a, "--sign-key") == 0) {
      if (i + 1 >= argc) {
        rc = bad_usage(errs, "an option needs a value");
        break;
      }
      in_logs = 0;
      if (a[2] == 's') {
        sign_key = argv[++i];
      } else {
        char *end = NULL;
        margin = strtol(argv[++i], &end, 10);
        if (!end || *end || margin < 0 || margin > LL_CORR_MARGIN_MAX)
          rc = bad_usage(errs, "--margin takes whole seconds, 0 to 86400");
      }
    } else if (a[0] == '-' && a[1] == '-') {
      rc = bad_usage(errs, "unknown option");
      fprintf(errs, "leaselua: corroborate: (it was %s)\n", a);
    } else if (in_logs) {
      files[nfiles++] = a;
    } else if (!dir) {
      dir = a;
    } else {
      rc = bad_usage(errs, "one evidence directory only");
    }
  }
  if (rc == 0 && !dir)
    rc = bad_usage(errs, "name the evidence directory DIR");
  else if (rc == 0 && !print_query && nfiles == 0)
    rc = bad_usage(errs, logs_flag ? "--logs names no file"
                                   : "give --logs FILE... (or --print-query)");
  else if (rc == 0 && print_query && nfiles > 0)
    rc = bad_usage(errs, "--print-query reads no logs");
  else if (rc == 0 && sign_key && !sign_available())
    rc = bad_usage(errs,
                   "--sign-key: this build has no bundle signing (issue 16's "
                   "core/run/sign.c); corroborate without it, sign later");
  if (rc) {
    free(files);
    return rc;
  }
  ll_error err = {0};
#ifdef LL_HAVE_SIGN
  /* the key is checked before anything is read or written */
  ll_sign_key key;
  if (sign_key && ll_sign_key_check(sign_key, &key, &err) != LL_OK) {
    fprintf(errs, "leaselua: corroborate: %s\n", err.message);
    free(files);
    return error_exit(err.code);
  }
#endif
  if (print_query) {
    ll_buf b = {0};
    ll_status st = ll_corr_query(dir, (int)margin, &b, &err);
    if (st == LL_OK)
      fputs(b.p ? b.p : "", out);
    else
      fprintf(errs, "leaselua: corroborate: %s\n", err.message);
    free(b.p);
    free(files);
    return error_exit(st);
  }
  /* the directory first: a bundle that holds no run reads no log */
  cJSON *rows = NULL;
  const cJSON *manifest = NULL;
  ll_status st = ll_corr_load(dir, &rows, &manifest, &err);
  cJSON_Delete(rows);
  if (st != LL_OK) {
    fprintf(errs, "leaselua: corroborate: %s\n", err.message);
    free(files);
    return error_exit(st);
  }
  ll_log_set logs = {0};
  for (int i = 0; i < nfiles && st == LL_OK; i++)
    st = ll_log_read(&logs, files[i], &err);
  free(files);
  cJSON *res = NULL;
  ll_corr_verdict v = LL_CORR_INCOMPLETE;
  char now[40];
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
  ll_corr_opts opts = {.margin_s = (int)margin, .now_utc = now};
  if (st == LL_OK)
    st = ll_corr_run(dir, &logs, &opts, &res, &v, &err);
  if (st == LL_OK)
    st = ll_corr_write(dir, res, &logs, &err);
  ll_log_set_free(&logs);
  if (st != LL_OK) {
    fprintf(errs, "leaselua: corroborate: %s\n", err.message);
    cJSON_Delete(res);
    return error_exit(st);
  }
  if (json) {
    char *text = cJSON_PrintUnformatted(res);
    if (text)
      fprintf(out, "%s\n", text);
    cJSON_free(text);
  } else {
    summary(out, res);
  }
  cJSON_Delete(res);
  if (sign_key && sign_bundle(dir, sign_key, errs) != 0)
    return 70;
#ifdef LL_HAVE_SIGN
  if (!sign_key && ll_bundle_is_signed(dir))
    fprintf(errs,
            "leaselua: corroborate: %s is signed; its SHA256SUMS does not "
            "cover corroboration.json and corroboration.jsonl until it is "
            "re-signed (--sign-key)\n",
            dir);
#endif
  return (int)v;
}
