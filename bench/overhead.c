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
 *   overhead gap URL N GAP_US...
 *     The emulator's answer after an idle gap: HEAD requests on one
 *     kept-alive connection, the same client and options throughout, in
 *     blocks of 50 at one GAP_US (up to 8 of them), each request coming
 *     after that many microseconds of busy work since the previous answer
 *     (a spin on the monotonic clock, as a client's own work between two
 *     requests would be); the gaps take turns block by block, and the
 *     first 10 requests of a block are not counted (how an idle CPU waits
 *     adapts to the idle times it has seen). Prints the median wall time
 *     of curl_easy_perform after each gap over N counted requests, in
 *     microseconds: the curve of what a steady own time costs a client
 *     again in the wait, with drift cancelled by the alternation.
 *
 *   overhead transport URL N DIR
 *     Our transport against plain libcurl: N rounds of two HEAD requests,
 *     one through a libcurl handle with the options above, one through
 *     core/http.c's transport (ll_http_new) with its on_wire hook writing
 *     a 1500-byte line to a file in DIR as the run's intent export line
 *     is written while a read is out, each on its own kept-alive
 *     connection, taking turns at going first. Prints the median wall
 *     time of each exchange in microseconds.
 *
 *   overhead wake URL N GAP_US
 *     How much of an exchange is the waiting CPU's wake-up: HEAD requests
 *     after GAP_US of busy work, in blocks of 50 (the first 10 not
 *     counted), the blocks taking turns between two ways of waiting for
 *     the same answer. poll: curl_easy_perform, which sleeps in poll(2)
 *     while the request is out, as curl and leaselua both wait. spin:
 *     curl_multi_perform called again and again until the transfer is
 *     done, so the CPU never idles. Each way keeps its own connection.
 *     Prints the median wall time of each in microseconds. leaselua never
 *     spins: this measures what the floor and ours both carry on this
 *     machine, not a change to make.
 *
 *   overhead cold URL N GAP_US KB
 *     Whether a client's own work costs its next exchange through the
 *     caches: HEAD requests after GAP_US of busy work, in blocks of 50
 *     (the first 10 not counted), the blocks taking turns between a spin
 *     on the clock (as gap) and the same spin writing a byte in every
 *     64-byte line of a KB-kilobyte buffer, round and round, so that the
 *     exchange after it starts with the caches holding that buffer rather
 *     than libcurl's, OpenSSL's and the kernel's working set. Prints the
 *     median wall time after each in microseconds. Run by hand (see
 *     docs/PERFORMANCE.md); make bench does not.
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

#include "clock.h"
#include "hash.h"
#include "http.h"

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

/* The HEAD requests of trace and gap: one handle, one kept-alive
 * connection, core/http.c's options (without its tracing). */
typedef struct {
  CURL *c;
  struct curl_slist *h;
  const char *url, *ca;
  char err[CURL_ERROR_SIZE];
} heads;

static int heads_open(heads *x, const char *url) {
  const char *tok = getenv("AZURE_STORAGE_TOKEN");
  x->ca = getenv("LEASELUA_CA_FILE");
  x->url = url;
  if (!tok || !x->ca) {
    fprintf(stderr, "overhead: AZURE_STORAGE_TOKEN and LEASELUA_CA_FILE\n");
    return 0;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  x->c = curl_easy_init();
  char auth[8192];
  snprintf(auth, sizeof auth, "Authorization: Bearer %s", tok);
  x->h = curl_slist_append(NULL, auth);
  x->h = curl_slist_append(x->h, "x-ms-version: 2023-11-03");
  return x->c && x->h;
}

static void heads_close(heads *x) {
  curl_slist_free_all(x->h);
  curl_easy_cleanup(x->c);
  curl_global_cleanup();
}

static void heads_setup(heads *x) {
  CURL *c = x->c;
  curl_easy_reset(c);
  curl_easy_setopt(c, CURLOPT_URL, x->url);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, x->err);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
  curl_easy_setopt(c, CURLOPT_CAINFO, x->ca);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, sink);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, x->h);
  curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
}

static int heads_perform(heads *x) {
  CURLcode rc = curl_easy_perform(x->c);
  long code = 0;
  curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &code);
  if (rc != CURLE_OK || code != 200) {
    fprintf(stderr, "overhead: HEAD failed: %s (%ld)\n", x->err, code);
    return 0;
  }
  return 1;
}

static int trace_main(const char *url, int n) {
  heads x;
  if (n < 1 || !heads_open(&x, url))
    return 1;
  CURL *c = x.c;
  int64_t *cpu[2] = {malloc(n * sizeof(int64_t)), malloc(n * sizeof(int64_t))};
  long heads = 0;
  for (int i = -20; i < 2 * n; i++) { /* 20 warm-up requests */
    int traced = (i & 1) != 0;
    heads_setup(&x);
    if (traced) {
      curl_easy_setopt(c, CURLOPT_VERBOSE, 1L);
      curl_easy_setopt(c, CURLOPT_DEBUGFUNCTION, on_debug);
      curl_easy_setopt(c, CURLOPT_DEBUGDATA, &heads);
    }
    int64_t a = ns(CLOCK_THREAD_CPUTIME_ID);
    int ok = heads_perform(&x);
    int64_t b = ns(CLOCK_THREAD_CPUTIME_ID);
    if (!ok)
      return 1;
    if (i >= 0)
      cpu[traced][i / 2] = b - a;
  }
  printf("{\"part\":\"trace\",\"n\":%d,\"cpu_us_plain\":%.2f,"
         "\"cpu_us_traced\":%.2f,\"heads_counted\":%ld}\n",
         n, median(cpu[0], (size_t)n) / 1e3, median(cpu[1], (size_t)n) / 1e3,
         heads);
  heads_close(&x);
  free(cpu[0]);
  free(cpu[1]);
  return 0;
}

/* A client's own time between two requests: busy on the CPU (a spin on
 * the monotonic clock), never idle, for us microseconds. */
static void busy_us(long us) {
  int64_t until = ns(CLOCK_MONOTONIC) + (int64_t)us * 1000;
  while (ns(CLOCK_MONOTONIC) < until) {
  }
}

#define GAPS_MAX 8
#define GAP_BLOCK 50
#define GAP_SETTLE 10

/* One request of an arm: its busy work, then the exchange, whose wall time
 * goes to *out_ns; 0 when the request failed. */
typedef int (*arm_fn)(heads *x, void *ctx, int arm, int64_t *out_ns);

static int timed_perform(heads *x, int64_t *out_ns) {
  int64_t t0 = ns(CLOCK_MONOTONIC);
  int ok = heads_perform(x);
  *out_ns = ns(CLOCK_MONOTONIC) - t0;
  return ok;
}

/* The one measuring loop of gap, cold and wake: blocks of GAP_BLOCK
 * requests of one arm, the k arms taking turns block by block (which goes
 * first rotates, after a warm-up round of blocks), the first GAP_SETTLE
 * requests of a block not counted. A client's own time is steady from one
 * request to the next, and how an idle CPU waits adapts to the idle times
 * it saw, so each arm is measured after GAP_SETTLE requests of its own.
 * Fills wall[arm][0..n); 0 when a request failed. */
static int run_blocks(heads *x, int n, int k, arm_fn one, void *ctx,
                      int64_t **wall) {
  int per = GAP_BLOCK - GAP_SETTLE, blocks = (n + per - 1) / per;
  int got[GAPS_MAX] = {0};
  for (int b = -1; b < blocks; b++)
    for (int j = 0; j < k; j++) {
      int arm = (j + (b < 0 ? 0 : b)) % k;
      for (int i = 0; i < GAP_BLOCK; i++) {
        int64_t t = 0;
        heads_setup(x);
        if (!one(x, ctx, arm, &t))
          return 0;
        if (b >= 0 && i >= GAP_SETTLE && got[arm] < n)
          wall[arm][got[arm]++] = t;
      }
    }
  return 1;
}

static int gap_arm(heads *x, void *ctx, int arm, int64_t *out_ns) {
  busy_us(((const long *)ctx)[arm]);
  return timed_perform(x, out_ns);
}

static int gap_main(const char *url, int n, int k, char **args) {
  heads x;
  long gap[GAPS_MAX];
  int64_t *wall[GAPS_MAX] = {0};
  if (n < 1 || k < 1 || k > GAPS_MAX)
    return 1;
  for (int j = 0; j < k; j++) {
    char *end;
    gap[j] = strtol(args[j], &end, 10);
    if (*end || gap[j] < 0 || gap[j] > 100000)
      return 1;
    if (!(wall[j] = malloc(n * sizeof(int64_t))))
      return 1;
  }
  if (!heads_open(&x, url))
    return 1;
  if (!run_blocks(&x, n, k, gap_arm, gap, wall))
    return 1;
  printf("{\"part\":\"gap\",\"n\":%d,\"gaps_us\":[", n);
  for (int j = 0; j < k; j++)
    printf("%s%ld", j ? "," : "", gap[j]);
  printf("],\"us_after\":[");
  for (int j = 0; j < k; j++)
    printf("%s%.2f", j ? "," : "", median(wall[j], (size_t)n) / 1e3);
  printf("]}\n");
  heads_close(&x);
  for (int j = 0; j < k; j++)
    free(wall[j]);
  return 0;
}

/* cold: busy for us microseconds as busy_us is, but writing a byte in
 * every 64-byte line of buf, round and round, as a client's own work
 * walks its heap between two requests (the clock read every 4 KB). */
static void busy_touch_us(long us, unsigned char *buf, size_t len) {
  int64_t until = ns(CLOCK_MONOTONIC) + (int64_t)us * 1000;
  size_t at = 0;
  for (;;) {
    for (size_t end = at + 4096; at < end && at < len; at += 64)
      buf[at]++;
    if (at >= len)
      at = 0;
    if (ns(CLOCK_MONOTONIC) >= until)
      return;
  }
}

/* cold's arms: 0 spins on the clock, 1 writes the buffer as it spins */
struct cold_ctx {
  long gap;
  unsigned char *buf;
  size_t len;
};

static int cold_arm(heads *x, void *ctx, int arm, int64_t *out_ns) {
  const struct cold_ctx *c = ctx;
  if (arm)
    busy_touch_us(c->gap, c->buf, c->len);
  else
    busy_us(c->gap);
  return timed_perform(x, out_ns);
}

static int cold_main(const char *url, int n, const char *gap_us,
                     const char *kb) {
  heads x;
  char *end, *kend;
  long gap = strtol(gap_us, &end, 10);
  long k = strtol(kb, &kend, 10);
  if (n < 1 || *end || end == gap_us || gap < 0 || gap > 100000 || *kend ||
      kend == kb || k < 1 || k > 65536) {
    fprintf(stderr, "overhead: cold: N from 1, GAP_US 0 to 100000, KB 1 to "
                    "65536\n");
    return 1;
  }
  size_t len = (size_t)k * 1024;
  unsigned char *buf = calloc(1, len);
  int64_t *wall[2] = {malloc(n * sizeof(int64_t)), malloc(n * sizeof(int64_t))};
  if (!buf || !wall[0] || !wall[1]) {
    fprintf(stderr, "overhead: cold: out of memory\n");
    return 1;
  }
  if (!heads_open(&x, url))
    return 1;
  struct cold_ctx c = {gap, buf, len};
  if (!run_blocks(&x, n, 2, cold_arm, &c, wall))
    return 1;
  printf("{\"part\":\"cold\",\"n\":%d,\"gap_us\":%ld,\"kb\":%ld,"
         "\"us_spin\":%.2f,\"us_touch\":%.2f}\n",
         n, gap, k, median(wall[0], (size_t)n) / 1e3,
         median(wall[1], (size_t)n) / 1e3);
  heads_close(&x);
  free(wall[0]);
  free(wall[1]);
  free(buf);
  return 0;
}

/* wake: the spin way of waiting for heads_perform's answer */
static int heads_spin(heads *x, CURLM *m) {
  int running = 1, done = 0;
  CURLcode rc = CURLE_OK;
  if (curl_multi_add_handle(m, x->c) != CURLM_OK) {
    fprintf(stderr, "overhead: wake: curl_multi_add_handle failed\n");
    return 0;
  }
  while (running)
    if (curl_multi_perform(m, &running) != CURLM_OK)
      break;
  CURLMsg *msg;
  int left;
  while ((msg = curl_multi_info_read(m, &left)))
    if (msg->msg == CURLMSG_DONE) {
      rc = msg->data.result;
      done = 1;
    }
  curl_multi_remove_handle(m, x->c);
  long code = 0;
  curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &code);
  if (running || !done || rc != CURLE_OK || code != 200) {
    fprintf(stderr, "overhead: wake: HEAD failed: %s (%ld)\n", x->err, code);
    return 0;
  }
  return 1;
}

/* wake's arms: 0 waits in poll (heads_perform), 1 spins */
struct wake_ctx {
  long gap;
  CURLM *m;
};

static int wake_arm(heads *x, void *ctx, int arm, int64_t *out_ns) {
  const struct wake_ctx *w = ctx;
  busy_us(w->gap);
  if (!arm)
    return timed_perform(x, out_ns);
  int64_t t0 = ns(CLOCK_MONOTONIC);
  int ok = heads_spin(x, w->m);
  *out_ns = ns(CLOCK_MONOTONIC) - t0;
  return ok;
}

static int wake_main(const char *url, int n, const char *gap_us) {
  heads x;
  char *end;
  long gap = strtol(gap_us, &end, 10);
  if (n < 1 || *end || end == gap_us || gap < 0 || gap > 100000) {
    fprintf(stderr, "overhead: wake: N from 1, GAP_US 0 to 100000\n");
    return 1;
  }
  if (!heads_open(&x, url))
    return 1;
  CURLM *m = curl_multi_init();
  int64_t *wall[2] = {malloc(n * sizeof(int64_t)), malloc(n * sizeof(int64_t))};
  if (!m || !wall[0] || !wall[1]) {
    fprintf(stderr, "overhead: wake: out of memory\n");
    return 1;
  }
  struct wake_ctx w = {gap, m};
  if (!run_blocks(&x, n, 2, wake_arm, &w, wall))
    return 1;
  printf("{\"part\":\"wake\",\"n\":%d,\"gap_us\":%ld,\"us_poll\":%.2f,"
         "\"us_spin\":%.2f}\n",
         n, gap, median(wall[0], (size_t)n) / 1e3,
         median(wall[1], (size_t)n) / 1e3);
  curl_multi_cleanup(m);
  heads_close(&x);
  free(wall[0]);
  free(wall[1]);
  return 0;
}

/* transport: the run's intent export line, as ll_ledger_flush_hook writes
 * it while a read is out */
static int wire_fd = -1;
static char wire_line[1500];
static int on_wire_write(void *ctx) {
  (void)ctx;
  return write(wire_fd, wire_line, sizeof wire_line) ==
                 (ssize_t)sizeof wire_line
             ? 0
             : -1;
}

static int transport_main(const char *url, int n, const char *dir) {
  heads x;
  char path[4096];
  if (n < 1 || !heads_open(&x, url))
    return 1;
  snprintf(path, sizeof path, "%s/overhead-transport.jsonl", dir);
  wire_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
  memset(wire_line, 'x', sizeof wire_line);
  wire_line[sizeof wire_line - 1] = '\n';
  ll_error err;
  ll_clock *clk = ll_clock_new_real();
  ll_http_options o = {.ca_file = x.ca};
  ll_transport *t = clk ? ll_http_new(&o, clk, &err) : NULL;
  int64_t *wall[2] = {malloc(n * sizeof(int64_t)), malloc(n * sizeof(int64_t))};
  if (wire_fd < 0 || !t || !wall[0] || !wall[1]) {
    fprintf(stderr, "overhead: transport: no file in %s or no transport\n",
            dir);
    return 1;
  }
  /* the same request each time: the headers are the caller's, read only */
  ll_http_request rq = {.method = "HEAD", .url = url, .on_wire = on_wire_write};
  ll_headers_init(&rq.headers);
  char bearer[8192];
  snprintf(bearer, sizeof bearer, "Bearer %s",
           x.h->data + strlen("Authorization: Bearer "));
  if (ll_headers_add(&rq.headers, "Authorization", bearer) != LL_OK ||
      ll_headers_add(&rq.headers, "x-ms-version", "2023-11-03") != LL_OK)
    return 1;
  for (int i = -20; i < 2 * n; i++) { /* 20 warm-up requests */
    /* in each pair, which goes first takes turns */
    int ours = ((i & 1) != 0) != (((i >> 1) & 1) != 0);
    int64_t a, b;
    if (!ours) {
      heads_setup(&x);
      a = ns(CLOCK_MONOTONIC);
      int ok = heads_perform(&x);
      b = ns(CLOCK_MONOTONIC);
      if (!ok)
        return 1;
    } else {
      ll_http_response rs;
      ll_http_response_init(&rs);
      a = ns(CLOCK_MONOTONIC);
      ll_status st = t->exchange(t, &rq, &rs, &err);
      b = ns(CLOCK_MONOTONIC);
      long status = rs.status;
      ll_http_response_cleanup(&rs);
      if (st != LL_OK || status != 200) {
        fprintf(stderr, "overhead: transport: HEAD answered %ld\n", status);
        return 1;
      }
    }
    if (i >= 0)
      wall[ours][i / 2] = b - a;
  }
  printf("{\"part\":\"transport\",\"n\":%d,\"us_libcurl\":%.2f,"
         "\"us_transport\":%.2f}\n",
         n, median(wall[0], (size_t)n) / 1e3, median(wall[1], (size_t)n) / 1e3);
  ll_headers_clear(&rq.headers);
  ll_transport_free(t);
  ll_clock_free(clk);
  heads_close(&x);
  close(wire_fd);
  unlink(path);
  free(wall[0]);
  free(wall[1]);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "hash") == 0)
    return hash_main(argv[2], atoi(argv[3]));
  if (argc == 4 && strcmp(argv[1], "fsync") == 0)
    return fsync_main(argv[2], atoi(argv[3]));
  if (argc == 4 && strcmp(argv[1], "trace") == 0)
    return trace_main(argv[2], atoi(argv[3]));
  if (argc >= 5 && strcmp(argv[1], "gap") == 0)
    return gap_main(argv[2], atoi(argv[3]), argc - 4, argv + 4);
  if (argc == 5 && strcmp(argv[1], "transport") == 0)
    return transport_main(argv[2], atoi(argv[3]), argv[4]);
  if (argc == 6 && strcmp(argv[1], "cold") == 0)
    return cold_main(argv[2], atoi(argv[3]), argv[4], argv[5]);
  if (argc == 5 && strcmp(argv[1], "wake") == 0)
    return wake_main(argv[2], atoi(argv[3]), argv[4]);
  fprintf(stderr, "usage: overhead hash LEDGER N_ROWS | fsync DIR N | trace "
                  "URL N | gap URL N GAP_US... | transport URL N DIR | wake "
                  "URL N GAP_US | cold URL N GAP_US KB\n");
  return 64;
}
