/* Private to the transport: a response's header lines, as libcurl hands
 * them over, into ll_headers (http_head.c). */
#ifndef LL_HTTP_HEAD_H
#define LL_HTTP_HEAD_H

#include <stddef.h>

#include "ll.h"

/* One header line of n bytes (not NUL-terminated, its CRLF included): a
 * status line starts a new response, whose headers replace those kept
 * before (100 Continue, then the final one); a folded line (obs-fold)
 * joins the previous value; a "name: value" pair is kept, both trimmed;
 * anything else is passed over. 0 only when out of memory. */
int ll_http_head_line(ll_headers *hs, const char *buf, size_t n);

#endif
