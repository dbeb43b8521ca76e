/* Two parts of leaselua's per-request overhead, each measured alone.
 *
 *   overhead hash LEDGER N_ROWS
 *     Hashing: runs the ledger's chain hash (SHA-256 of prev_hash || line,
 *     through ll_sha256_* exactly as core/ledger.c does) over the LAST N_ROWS
 *     lines of an export ledger, 2000 times. Prints ns per pass, i.e. per
 *     N_ROWS rows in one file (the caller doubles it: protected + export).
 *
 *   overhead fsync DIR N
 *     The evidence disk: N appends of a 1500-byte line to a new file in DIR,
 *     each followed by fsync, as the ledger does. Prints p50 and p90 in us.
 *
 *   overhead trace URL N
 *     Tracing: N pairs of HEAD requests on one kept-alive connection, with
 *     core/http.c's options, alternately without and with its tracing
 *     (CURLOPT_VERBOSE + CURLOPT_DEBUGFUNCTION counting CURLINFO_HEADER_OUT).
 *     Reads AZURE_STORAGE_TOKEN and LEASELUA_CA_FILE. Prints the median
 *     thread CPU time of curl_easy_perform in each mode, in microseconds.
 *
 * Output: one JSON line. This is a benchmark helper, not part of leaselua. */
#include <curl/curl.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hash.h"

static int64_t ns(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int64_t median(int64_t *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_i64);
  return v[n / 2];
}

static int hash_main(const char *path, int nrows) {
  FILE *f = fopen(path, "r");
  if (!f) {
    perror(path);
    return 1;
  }
  char **lines = NULL;
  size_t n = 0, cap = 0, len = 0;
  char *line = NULL;
  ssize_t got;
  while ((got = getline(&line, &len, f)) > 0) {
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      lines = realloc(lines, cap * sizeof *lines);
    }
    lines[n++] = strndup(line, (size_t)got - 1);
  }
  free(line);
  fclose(f);
  if ((size_t)nrows > n || nrows <= 0) {
    fprintf(stderr, "overhead: %s has %zu rows\n", path, n);
    return 1;
  }
  char prev[LL_SHA256_HEX], out[LL_SHA256_HEX];
  memset(prev, '0', 64);
  prev[64] = '\0';
  size_t bytes = 0;
  for (size_t i = n - (size_t)nrows; i < n; i++)
    bytes += strlen(lines[i]);
  enum { PASSES = 2000 };
  int64_t *t = malloc(PASSES * sizeof *t);
  for (int p = 0; p < PASSES; p++) {
    int64_t a = ns(CLOCK_MONOTONIC);
    for (size_t i = n - (size_t)nrows; i < n; i++) {
      ll_sha256 *h = ll_sha256_new();
      if (!h || ll_sha256_update(h, prev, 64) ||
          ll_sha256_update(h, lines[i], strlen(lines[i])) ||
          ll_sha256_final(h, out))
        return 1;
      ll_sha256_free(h);
      memcpy(prev, out, sizeof prev);
    }
    t[p] = ns(CLOCK_MONOTONIC) - a;
  }
  printf("{\"part\":\"hash\",\"rows\":%d,\"bytes\":%zu,\"ns_p50\":%lld}\n",
         nrows, bytes, (long long)median(t, PASSES));
  free(t);
  for (size_t i = 0; i < n; i++)
    free(lines[i]);
  free(lines);
  return 0;
}

static int fsync_main(const char *dir, int n) {
  char path[4096], line[1500];
  snprintf(path, sizeof path, "%s/fsync-probe.jsonl", dir);
  int fd = open(path, O_CREAT | O_EXCL | O_APPEND | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0 || n <= 0) {
    perror(path);
    return 1;
  }
  memset(line, 'x', sizeof line - 1);
  line[sizeof line - 1] = '\n';
  int64_t *t = malloc((size_t)n * sizeof *t);
  for (int i = 0; i < n; i++) {
    int64_t a = ns(CLOCK_MONOTONIC);
    if (write(fd, line, sizeof line) != (ssize_t)sizeof line ||
        fsync(fd) != 0) {
      perror(path);
      return 1;
    }
    t[i] = ns(CLOCK_MONOTONIC) - a;
  }
  close(fd);
  unlink(path);
  qsort(t, (size_t)n, sizeof *t, cmp_i64);
  printf("{\"part\":\"fsync\",\"n\":%d,\"us_p50\":%.1f,\"us_p90\":%.1f}\n", n,
         t[n / 2] / 1e3, t[(n * 9) / 10] / 1e3);
  free(t);
  return 0;
}

static size_t sink(char *b, size_t s, size_t n, void *u) {
  (void)b;
  (void)u;
  return s * n;
}

static int on_debug(CURL *c, curl_infotype type, char *d, size_t s, void *u) {
  (void)c;
  (void)d;
  (void)s;
  if (type == CURLINFO_HEADER_OUT)
    ++*(long *)u;
  return 0;
}

static int trace_main(const char *url, int n) {
  const char *tok = getenv("AZURE_STORAGE_TOKEN");
  const char *ca = getenv("LEASELUA_CA_FILE");
  if (!tok || !ca) {
    fprintf(stderr, "overhead: AZURE_STORAGE_TOKEN and LEASELUA_CA_FILE\n");
    return 1;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  CURL *c = curl_easy_init();
  char auth[8192];
  snprintf(auth, sizeof auth, "Authorization: Bearer %s", tok);
  struct curl_slist *h = curl_slist_append(NULL, auth);
  h = curl_slist_append(h, "x-ms-version: 2023-11-03");
  int64_t *cpu[2] = {malloc(n * sizeof(int64_t)), malloc(n * sizeof(int64_t))};
  long heads = 0;
  char err[CURL_ERROR_SIZE];
  for (int i = -20; i < 2 * n; i++) { /* 20 warm-up requests */
    int traced = (i & 1) != 0;
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(c, CURLOPT_CAINFO, ca);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, sink);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    if (traced) {
      curl_easy_setopt(c, CURLOPT_VERBOSE, 1L);
      curl_easy_setopt(c, CURLOPT_DEBUGFUNCTION, on_debug);
      curl_easy_setopt(c, CURLOPT_DEBUGDATA, &heads);
    }
    int64_t a = ns(CLOCK_THREAD_CPUTIME_ID);
    CURLcode rc = curl_easy_perform(c);
    int64_t b = ns(CLOCK_THREAD_CPUTIME_ID);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    if (rc != CURLE_OK || code != 200) {
      fprintf(stderr, "overhead: HEAD failed: %s (%ld)\n", err, code);
      return 1;
    }
    if (i >= 0)
      cpu[traced][i / 2] = b - a;
  }
  printf("{\"part\":\"trace\",\"n\":%d,\"cpu_us_plain\":%.2f,"
         "\"cpu_us_traced\":%.2f,\"heads_counted\":%ld}\n",
         n, median(cpu[0], (size_t)n) / 1e3, median(cpu[1], (size_t)n) / 1e3,
         heads);
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  curl_global_cleanup();
  free(cpu[0]);
  free(cpu[1]);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "hash") == 0)
    return hash_main(argv[2], atoi(argv[3]));
  if (argc == 4 && strcmp(argv[1], "fsync") == 0)
    return fsync_main(argv[2], atoi(argv[3]));
  if (argc == 4 && strcmp(argv[1], "trace") == 0)
    return trace_main(argv[2], atoi(argv[3]));
  fprintf(stderr,
          "usage: overhead hash LEDGER N_ROWS | fsync DIR N | trace URL N\n");
  return 64;
}
