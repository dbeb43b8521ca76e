/* What an account host is, and whether an endpoint kind agrees with it
 * (invariant 12): the one rule the manifest applies before a run and
 * verify applies after. */
#ifndef LL_ENDPOINT_H
#define LL_ENDPOINT_H

#include <stddef.h>

#include "ll.h"

/* The account host of every replay: RFC 2606's .invalid never resolves. */
#define LL_REPLAY_HOST "replay.invalid"

typedef enum {
  LL_HOST_OTHER = 0,
  LL_HOST_AZURE,    /* an Azure Storage blob endpoint name */
  LL_HOST_LOOPBACK, /* 127.0.0.0/8, [::1], localhost */
  LL_HOST_REPLAY    /* LL_REPLAY_HOST */
} ll_host_class;

/* host[:port] (as recorded in account_host) without its port, in lower
 * case; an IPv6 literal keeps its brackets. */
void ll_endpoint_bare_host(const char *host, char *out, size_t cap);

/* The server an account_host value (host[:port]) might be, as one key
 * for the lock: the host in lower case (RFC 4343), "[loopback]" for every
 * loopback spelling (127.0.0.0/8, [::1], localhost), and ":port" unless
 * the port is absent or a default one (443, 80). Two spellings of one
 * server get one key (helper-30: localhost beside 127.0.0.1, or an
 * explicit :443, took another lock and passed the earlier-run check).
 * Two servers that might be one share a key too: only ever use it to
 * refuse more, never to allow (helper-31). */
void ll_endpoint_server_key(const char *host, char *out, size_t cap);

/* Whether two account_host values might name the same server (their
 * ll_endpoint_server_key agree): the per-blob lock and the earlier-run
 * check, which refuse on it. NULL names nothing. */
int ll_endpoint_same_server(const char *a, const char *b);

/* Whether two account_host values name the same host exactly: a DNS
 * name's case does not matter (RFC 4343), its port, as written, does.
 * NULL names nothing. Recovery, the gap control and corroboration's log
 * records, which allow on it, ask this: 127.0.0.2 or [::1] may be
 * another listener than 127.0.0.1. */
int ll_endpoint_same_host(const char *a, const char *b);

/* The class of a bare host. Azure: <account> followed by
 * .blob.core.windows.net (public cloud, private endpoints under
 * privatelink.), .blob.core.chinacloudapi.cn (Azure China),
 * .blob.core.usgovcloudapi.net (Azure Government) or
 * .zNN.blob.storage.azure.net (Azure DNS zone endpoints). Exact forms
 * only: localhost.example.com is not loopback. */
ll_host_class ll_endpoint_classify(const char *bare);

/* A name the operator may declare as Azure in the manifest
 * (declared_azure_host: a custom domain, a private endpoint name, Azure
 * Stack Hub): a DNS name without scheme or port that is neither loopback,
 * nor the replay host, nor already an Azure name. */
int ll_endpoint_declarable(const char *name);

/* LL_OK when kind agrees with the recorded account host: azure is an
 * Azure name or the host the manifest declared (declared, may be NULL);
 * emulator is loopback; replay is LL_REPLAY_HOST with a fixture label.
 * Otherwise LL_E_MANIFEST, naming the mismatch in one line. */
ll_status ll_endpoint_check(const char *kind, const char *account_host,
                            const char *fixture_label, const char *declared,
                            ll_error *err) LL_WARN_UNUSED;

#endif
