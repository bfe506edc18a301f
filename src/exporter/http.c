// SPDX-License-Identifier: GPL-2.0
/*
 * The HTTP side, on libmicrohttpd: a daemon a listen address, each one
 * thread polling its connections (epoll), so a slow or idle client holds a
 * slot, never the thread. Connections are bounded in number (past the
 * limit, closed as accepted: a client waiting in the backlog would look
 * like a hung exporter) and in idle time, requests in size; bcrypt runs on
 * auth's workers. GET (and HEAD) of the telemetry path is a scrape, gzipped
 * when the client asks, "/" a landing page, any other path 404, any other
 * method 405, HTTP/1.1 without a Host header (or any with two) 400.
 */
#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <libdeflate.h>

#include "auth.h"
#include "exporter.h"
#include "log.h"
#include "prom_text.h"

#define REALM "kvmmmu-exporter"
/*
 * Headers and all: a larger request gets 431. Above 32 KiB, libmicrohttpd
 * maps each connection's pool on its own (mmap) rather than taking it from
 * malloc: a burst of idle connections then gives its memory back to the
 * system when they close, instead of leaving the heap fragmented (measured:
 * 1,000 idle connections left 25 MiB of RSS under TCG with 32 KiB).
 */
#define REQUEST_MEMORY (40 * 1024)

/* R queued with its headers, then let go (libmicrohttpd keeps it while it sends). */
static enum MHD_Result queue(struct MHD_Connection *conn, unsigned int status, const char *type,
			     struct MHD_Response *r, const char *encoding)
{
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (encoding && *encoding)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, encoding);
	/* a scrape's body depends on Accept-Encoding, gzipped or not: caches must know */
	if (encoding)
		MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_encoded(struct MHD_Connection *conn, unsigned int status,
				     const char *type, void *body, size_t len, bool must_free,
				     const char *encoding)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		len, body, must_free ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);

	if (!r && must_free)
		free(body);
	return queue(conn, status, type, r, encoding);
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, const char *type,
			     void *body, size_t len, bool must_free)
{
	return reply_encoded(conn, status, type, body, len, must_free, NULL);
}

static enum MHD_Result text(struct MHD_Connection *conn, unsigned int status, const char *msg)
{
	return reply(conn, status, "text/plain; charset=utf-8", (void *)msg, strlen(msg), false);
}

/*
 * Basic auth, when the web config has users: whether the request may go on;
 * else *RET is what to return (401 or 503 queued, or a suspension).
 */
static bool authorized(struct exporter *e, struct MHD_Connection *conn, void **req_cls,
		       enum MHD_Result *ret)
{
	static const char msg[] = "Unauthorized\n";
	struct MHD_Response *r;

	switch (auth_check(e->auth, conn, req_cls)) {
	case AUTH_OK:
		return true;
	case AUTH_PENDING:
		*ret = MHD_YES; /* called again when a worker has checked it */
		return false;
	case AUTH_BUSY:
		*ret = text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "Too many logins at once\n");
		return false;
	case AUTH_DENIED:
		break;
	}
	r = MHD_create_response_from_buffer(sizeof(msg) - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
	*ret = r ? MHD_queue_basic_auth_fail_response(conn, REALM, r) : MHD_NO;
	if (r)
		MHD_destroy_response(r);
	return false;
}

/* Whether the client takes gzip (Accept-Encoding names it, not with q=0). */
static bool wants_gzip(struct MHD_Connection *conn)
{
	const char *ae =
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	char *copy, *tok, *save = NULL;
	bool yes = false;

	if (!ae || !(copy = strdup(ae)))
		return false;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *q;

		tok += strspn(tok, " \t");
		if (strncasecmp(tok, "gzip", 4) || (tok[4] && !strchr(" \t;", tok[4])))
			continue;
		q = strcasestr(tok, "q=");
		yes = !q || strtod(q + 2, NULL) > 0;
	}
	free(copy);
	return yes;
}

/* C, compressed with, back for the next scrape (one kept: scrapes at once are rare). */
static void gzip_done(struct exporter *e, struct libdeflate_compressor *c)
{
	c = __atomic_exchange_n(&e->gzip, c, __ATOMIC_ACQ_REL);
	if (c)
		libdeflate_free_compressor(c);
}

/*
 * BODY (LEN bytes) gzipped into a new buffer; NULL when it could not be.
 * libdeflate, whole-buffer, where zlib streamed: a fleet's scrape in 0.6 of
 * zlib's CPU at the same level, and a little smaller (docs/performance.md).
 * Level 1: the text shrinks about 12 times at a fraction of a higher level's
 * cost. The compressor is the last scrape's, so its tables stay resident.
 */
static void *gzip(struct exporter *e, const void *body, size_t len, size_t *out_len)
{
	struct libdeflate_compressor *c = __atomic_exchange_n(&e->gzip, NULL, __ATOMIC_ACQ_REL);
	size_t cap;
	void *out;

	if (!c && !(c = libdeflate_alloc_compressor(1)))
		return NULL;
	cap = libdeflate_gzip_compress_bound(c, len);
	out = malloc(cap);
	/* 0: it did not fit, which the bound rules out */
	*out_len = out ? libdeflate_gzip_compress(c, body, len, out, cap) : 0;
	gzip_done(e, c);
	if (!*out_len) {
		free(out);
		return NULL;
	}
	return out;
}

static enum MHD_Result landing(struct exporter *e, struct MHD_Connection *conn)
{
	char *page = NULL;
	int n = asprintf(&page,
			 "<html><head><title>kvmmmu-exporter</title></head><body>\n"
			 "<h1>kvmmmu-exporter</h1>\n"
			 "<p>KVM x86 MMU page faults per VM: paths, outcomes, latency, mmu_lock "
			 "waits.</p>\n"
			 "<p><a href=\"%s\">Metrics</a></p>\n"
			 "</body></html>\n",
			 e->env.telemetry_path);

	if (n < 0)
		return text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	return reply(conn, MHD_HTTP_OK, "text/html; charset=utf-8", page, (size_t)n, true);
}

/* CONN's own in e->conns (NULL: untracked). */
static struct exporter_conn *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *i =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

static enum MHD_Result count_host(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *value)
{
	(void)kind;
	(void)value;
	if (!strcasecmp(key, MHD_HTTP_HEADER_HOST))
		(*(unsigned int *)cls)++;
	return MHD_YES;
}

/*
 * RFC 9112 3.2: an HTTP/1.1 request without Host, or any request with two,
 * is a 400 (libmicrohttpd checks the first only when pedantic, which also
 * refuses what clients send in practice).
 */
static bool bad_host(struct MHD_Connection *conn, const char *version)
{
	unsigned int hosts = 0;

	MHD_get_connection_values(conn, MHD_HEADER_KIND, count_host, &hosts);
	return hosts > 1 || (!hosts && strcmp(version, MHD_HTTP_VERSION_1_0));
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct exporter *e = cls;
	enum MHD_Result ret = MHD_NO;
	struct exporter_body *body;
	struct MHD_Response *r;
	int err;

	(void)upload_data;
	*upload_data_size = 0;			 /* a body is never read: nothing here takes one */
	conns_request(&e->conns, conn_of(conn)); /* its header is whole */
	if (bad_host(conn, version))
		return text(conn, MHD_HTTP_BAD_REQUEST, "Bad Request: one Host header needed\n");
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "Method Not Allowed\n");
	if (!authorized(e, conn, req_cls, &ret))
		return ret;
	if (!strcmp(url, "/"))
		return landing(e, conn);
	if (strcmp(url, e->env.telemetry_path))
		return text(conn, MHD_HTTP_NOT_FOUND, "Not Found\n");
	err = exporter_scrape(e, &body);
	if (err) {
		elog("scrape failed: %s", strerror(-err));
		return text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "scrape failed\n");
	}
	if (wants_gzip(conn)) {
		size_t zlen;
		void *z = gzip(e, body->text, body->len, &zlen);

		if (z) {
			exporter_body_done(body);
			return reply_encoded(conn, MHD_HTTP_OK, PROM_CONTENT_TYPE, z, zlen, true,
					     "gzip");
		}
	}
	/* sent from the scrape's buffer, which then goes back for the next scrape */
	r = MHD_create_response_from_buffer_with_free_callback_cls(body->len, body->text,
								   exporter_body_done, body);
	if (!r)
		exporter_body_done(body);
	/* "": identity, but the answer still varies with Accept-Encoding */
	return queue(conn, MHD_HTTP_OK, PROM_CONTENT_TYPE, r, "");
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct exporter *e = cls;

	(void)why;
	/* kept alive: its next header is due within --web.timeout from now */
	conns_answered(&e->conns, conn_of(conn));
	auth_request_done(*req_cls);
	*req_cls = NULL;
}

/*
 * At --web.max-connections, a new connection takes the slot of the one
 * that has waited longest for its request header (conns.c); if none waits,
 * it is closed as accepted.
 */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct exporter *e = cls;

	(void)addr;
	(void)len;
	return conns_admit(&e->conns, e->env.max_connections) ? MHD_YES : MHD_NO;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode what)
{
	struct exporter *e = cls;
	const union MHD_ConnectionInfo *fd;

	if (what == MHD_CONNECTION_NOTIFY_STARTED) {
		fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		*socket_context = conns_opened(&e->conns, fd ? fd->connect_fd : -1);
	} else if (what == MHD_CONNECTION_NOTIFY_CLOSED) {
		conns_closed(&e->conns, *socket_context);
		*socket_context = NULL;
	}
}

void http_tick(struct exporter *e)
{
	conns_expire(&e->conns, e->env.timeout_s);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	const struct exporter *e = cls;

	if (e->env.verbose) {
		fputs("kvmmmu-exporter: http: ", stderr);
		vfprintf(stderr, fmt, ap);
	}
}

static int listen_one(const struct exporter_listen *l, int *fd_out, char *why, size_t why_size)
{
	const struct sockaddr *sa = (const struct sockaddr *)&l->addr;
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int one = 1, zero = 0, err;

	if (fd < 0)
		goto fail;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		goto fail;
	/* ":PORT" is every address: IPv4 too */
	if (sa->sa_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)))
		goto fail;
	if (bind(fd, sa, l->addr_len) || listen(fd, 128))
		goto fail;
	*fd_out = fd;
	return 0;
fail:
	err = errno;
	snprintf(why, why_size, "cannot listen on %s: %s", l->address, strerror(err));
	if (fd >= 0)
		close(fd);
	return -err;
}

int http_listen(struct exporter *e, char *why, size_t why_size)
{
	for (size_t i = 0; i < e->env.n_listen; i++) {
		int err = listen_one(&e->env.listen[i], &e->listen_fd[i], why, why_size);

		if (err)
			return err;
	}
	return 0;
}

static int start_one(struct exporter *e, size_t i, char *why, size_t why_size)
{
	unsigned int flags =
		MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
	struct MHD_OptionItem tls[3] = {{MHD_OPTION_END, 0, NULL}};
	const union MHD_DaemonInfo *info;

	if (e->web.cert_pem) {
		flags |= MHD_USE_TLS;
		tls[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, e->web.cert_pem};
		tls[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, e->web.key_pem};
	}
	/* libmicrohttpd's own limit above ours: at its limit it stops accepting, and
	 * clients wait in the backlog; accept_policy refuses them instead */
	e->httpd[i] = MHD_start_daemon(
		flags, 0, accept_policy, e, on_request, e, MHD_OPTION_LISTEN_SOCKET,
		e->listen_fd[i], MHD_OPTION_CONNECTION_LIMIT, e->env.max_connections + 64,
		MHD_OPTION_CONNECTION_TIMEOUT, e->env.timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		(size_t)REQUEST_MEMORY, MHD_OPTION_NOTIFY_COMPLETED, on_completed, e,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, e, MHD_OPTION_EXTERNAL_LOGGER,
		on_mhd_log, e, MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
	if (!e->httpd[i]) {
		snprintf(why, why_size, "cannot serve on %s%s", e->env.listen[i].address,
			 e->web.cert_pem ? " (is the TLS certificate or key usable?)" : "");
		/* libmicrohttpd closes the socket when TLS fails, not otherwise: not ours to
		 * close again (its number may be another daemon's by now) */
		if (e->web.cert_pem)
			e->listen_fd[i] = -1;
		return -EINVAL;
	}
	e->listen_fd[i] = -1; /* the daemon's now */
	info = MHD_get_daemon_info(e->httpd[i], MHD_DAEMON_INFO_BIND_PORT);
	/* said either way, as node_exporter says "TLS is disabled": plain HTTP is a choice */
	fprintf(stderr, "kvmmmu-exporter: listening on %s (port %u), %s, %s, metrics at %s\n",
		e->env.listen[i].address, info ? info->port : 0,
		e->web.cert_pem ? "TLS" : "TLS is off (plain HTTP)",
		e->web.n_users ? "basic auth" : "no authentication", e->env.telemetry_path);
	return 0;
}

int http_start(struct exporter *e, char *why, size_t why_size)
{
	int err;

	e->auth = auth_start(&e->web);
	if (!e->auth) {
		err = -errno;
		snprintf(why, why_size, "cannot start the basic-auth workers: %s", strerror(-err));
		return err;
	}
	for (size_t i = 0; i < e->env.n_listen; i++)
		if ((err = start_one(e, i, why, why_size)))
			return err;
	return 0;
}

void http_stop(struct exporter *e)
{
	/* first: a daemon must not stop with a connection suspended */
	auth_stop(e->auth);
	for (size_t i = 0; i < EXPORTER_MAX_LISTEN; i++) {
		if (e->httpd[i])
			MHD_stop_daemon(e->httpd[i]);
		e->httpd[i] = NULL;
		if (e->listen_fd[i] >= 0)
			close(e->listen_fd[i]);
		e->listen_fd[i] = -1;
	}
	auth_free(e->auth);
	e->auth = NULL;
	if (e->gzip)
		libdeflate_free_compressor(e->gzip);
	e->gzip = NULL;
}
