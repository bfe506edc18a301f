/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_EXPORTER_AUTH_H
#define KVMMMU_EXPORTER_AUTH_H

/*
 * Basic auth off the HTTP thread: a bcrypt check takes about 0.25 s at cost
 * 12, so a request whose credentials are not known good is suspended and
 * checked by a worker, and libmicrohttpd's thread goes on serving the
 * others. A user's last good password is remembered (as a salted SHA-256,
 * never in clear), as exporter-toolkit caches its checks: a scraper that
 * authenticates every 15 s pays bcrypt once, and wrong-password clients
 * cannot make it wait behind them.
 */
#include <stdbool.h>

#include "web_config.h"

struct MHD_Connection;
struct auth;

enum auth_verdict {
	AUTH_OK,
	AUTH_DENIED,
	AUTH_BUSY,    /* too many checks waiting: 503, try later */
	AUTH_PENDING, /* suspended: the handler is called again with the verdict */
};

/* Starts the workers for CFG's users (none without users). NULL on error, errno set. */
struct auth *auth_start(const struct web_config *cfg);
/*
 * Denies what waits, resumes it, joins the workers; later checks get
 * AUTH_BUSY. Before the daemons stop (none may stop with a connection
 * suspended); auth_free after.
 */
void auth_stop(struct auth *a);
void auth_free(struct auth *a);
/*
 * The verdict on CONN's request; *REQ_CLS is libmicrohttpd's per-request
 * pointer (NULL at first), released with auth_request_done.
 */
enum auth_verdict auth_check(struct auth *a, struct MHD_Connection *conn, void **req_cls);
void auth_request_done(void *req_cls);

#endif
