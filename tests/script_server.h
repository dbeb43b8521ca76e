/* A scripted loopback HTTP/1.1 server for the transport tests: it answers,
 * closes or stalls on the Nth request head it receives, and logs every
 * request, so a test can count what libcurl really put on the wire. */
#ifndef LL_SCRIPT_SERVER_H
#define LL_SCRIPT_SERVER_H

#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>

/* What the server does with the Nth request head it receives, counted over
 * every connection (0-based). Past the end of the script: ANSWER. */
typedef enum {
  ANSWER, /* 200 with a 2-byte body, keep-alive */
  CLOSE,  /* read the whole request, close without answering */
  RAW,    /* write raw bytes, then close */
  HOLD,   /* read the request, never answer, keep the socket open */
  TUNNEL  /* a proxy's CONNECT: 200 Connection Established, keep open */
} action;

typedef struct {
  action act;
  const char *raw;
  size_t raw_len;
} step;

#define MAX_CONNS 16
#define MAX_LOG 32
#define CONN_BUF (256 * 1024)
#define OK_REPLY                                                               \
  "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok"

typedef struct {
  char method[16], path[128];
  int conn;        /* connection number, in accept order */
  char head[4096]; /* request head as received (truncated) */
  unsigned char body[4096];
  size_t body_len;
} received;

typedef struct {
  int fd, id;
  char *buf;
  size_t len;
} conn;

typedef struct {
  int lfd, port;
  pthread_t th;
  pthread_mutex_t mu;
  _Atomic int stop;
  const step *script;
  int nscript;
  int nconns; /* accepted connections */
  int nreq;   /* request heads received */
  received log[MAX_LOG];
  conn c[MAX_CONNS];
} server;

/* Listens on a free loopback port (s->port) and serves on a thread. */
void server_start(server *s, const step *script, int nscript);
void server_stop(server *s);
/* Request heads received for method and path. */
int server_count(server *s, const char *method, const char *path);
/* A copy of the i-th logged request, taken under the lock. */
received req_at(server *s, int i);
int stat_of(server *s, const int *field);
#define NREQ(s) stat_of(&(s), &(s).nreq)
#define NCONNS(s) stat_of(&(s), &(s).nconns)

struct sockaddr_in loopback(int port);
void sleep_ms(long ms);

#endif
