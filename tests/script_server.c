/* The scripted loopback HTTP/1.1 server of script_server.h. */
#define _GNU_SOURCE /* memmem */
#include "script_server.h"

#include <arpa/inet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void conn_close(conn *c) {
  close(c->fd);
  free(c->buf);
  *c = (conn){-1, 0, NULL, 0};
}

struct sockaddr_in loopback(int port) {
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_port = htons((unsigned short)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

static void send_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0)
      return;
    p += w;
    n -= (size_t)w;
  }
}

/* Handles every complete request in the buffer, until one closes it. */
static void serve_buffered(server *s, conn *c) {
  for (;;) {
    char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
    if (!end)
      return;
    end += 4;
    size_t head_len = (size_t)(end - c->buf), body_len = 0;
    for (char *p = c->buf + 1; p < end; p++)
      if (p[-1] == '\n' && strncasecmp(p, "content-length:", 15) == 0)
        body_len = strtoul(p + 15, NULL, 10);
    if (c->len < head_len + body_len)
      return;

    pthread_mutex_lock(&s->mu);
    int n = s->nreq++;
    if (n < MAX_LOG) {
      received *r = &s->log[n];
      memset(r, 0, sizeof *r);
      sscanf(c->buf, "%15s %127s", r->method, r->path);
      r->conn = c->id;
      size_t hn = head_len < sizeof r->head ? head_len : sizeof r->head - 1;
      memcpy(r->head, c->buf, hn);
      r->body_len = body_len < sizeof r->body ? body_len : sizeof r->body;
      memcpy(r->body, end, r->body_len);
    }
    step st = {ANSWER, NULL, 0};
    if (n < s->nscript)
      st = s->script[n];
    pthread_mutex_unlock(&s->mu);

    memmove(c->buf, c->buf + head_len + body_len, c->len - head_len - body_len);
    c->len -= head_len + body_len;
    if (st.act == ANSWER)
      send_all(c->fd, OK_REPLY, strlen(OK_REPLY));
    if (st.act == RAW)
      send_all(c->fd, st.raw, st.raw_len);
    if (st.act == TUNNEL) /* what follows on c is the tunnelled request */
      send_all(c->fd, "HTTP/1.1 200 Connection Established\r\n\r\n", 39);
    if (st.act == CLOSE || st.act == RAW) {
      conn_close(c);
      return;
    }
  }
}

static void server_accept(server *s) {
  int fd = accept(s->lfd, NULL, NULL);
  for (int i = 0; fd >= 0 && i < MAX_CONNS; i++)
    if (s->c[i].fd < 0) {
      pthread_mutex_lock(&s->mu);
      s->c[i] = (conn){fd, s->nconns++, malloc(CONN_BUF), 0};
      pthread_mutex_unlock(&s->mu);
      return;
    }
  if (fd >= 0)
    close(fd);
}

static void *server_main(void *ud) {
  server *s = ud;
  while (!s->stop) {
    /* poll ignores the negative fds of free slots */
    struct pollfd p[MAX_CONNS + 1] = {{s->lfd, POLLIN, 0}};
    for (int i = 0; i < MAX_CONNS; i++)
      p[i + 1] = (struct pollfd){s->c[i].fd, POLLIN, 0};
    if (poll(p, MAX_CONNS + 1, 20) <= 0)
      continue;
    if (p[0].revents)
      server_accept(s);
    for (int i = 0; i < MAX_CONNS; i++) {
      conn *c = &s->c[i];
      if (!p[i + 1].revents || c->fd != p[i + 1].fd)
        continue;
      ssize_t r = c->len == CONN_BUF
                      ? -1
                      : recv(c->fd, c->buf + c->len, CONN_BUF - c->len, 0);
      if (r <= 0) {
        conn_close(c);
        continue;
      }
      c->len += (size_t)r;
      serve_buffered(s, c);
    }
  }
  return NULL;
}

void server_start(server *s, const step *script, int nscript) {
  memset(s, 0, sizeof *s);
  for (int i = 0; i < MAX_CONNS; i++)
    s->c[i].fd = -1;
  s->script = script;
  s->nscript = nscript;
  pthread_mutex_init(&s->mu, NULL);
  s->lfd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = loopback(0);
  socklen_t al = sizeof a;
  if (bind(s->lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
      listen(s->lfd, 16) != 0 ||
      getsockname(s->lfd, (struct sockaddr *)&a, &al) != 0) {
    fprintf(stderr, "test server: cannot listen\n");
    exit(1);
  }
  s->port = ntohs(a.sin_port);
  pthread_create(&s->th, NULL, server_main, s);
}

void server_stop(server *s) {
  s->stop = 1;
  pthread_join(s->th, NULL);
  for (int i = 0; i < MAX_CONNS; i++)
    if (s->c[i].fd >= 0)
      conn_close(&s->c[i]);
  close(s->lfd);
  pthread_mutex_destroy(&s->mu);
}

/* Request heads received for method and path. */
int server_count(server *s, const char *method, const char *path) {
  int n = 0;
  pthread_mutex_lock(&s->mu);
  for (int i = 0; i < s->nreq && i < MAX_LOG; i++)
    if (strcmp(s->log[i].method, method) == 0 &&
        strcmp(s->log[i].path, path) == 0)
      n++;
  pthread_mutex_unlock(&s->mu);
  return n;
}

/* Copies taken under the lock: the server thread writes the log. */
received req_at(server *s, int i) {
  pthread_mutex_lock(&s->mu);
  received r = s->log[i];
  pthread_mutex_unlock(&s->mu);
  return r;
}

int stat_of(server *s, const int *field) {
  pthread_mutex_lock(&s->mu);
  int v = *field;
  pthread_mutex_unlock(&s->mu);
  return v;
}

void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}
