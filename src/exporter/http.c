// SPDX-License-Identifier: GPL-2.0
/*
 * The HTTP side, on libmicrohttpd: one internal thread polls every
 * connection (epoll), so a slow or idle client holds a slot, never the
 * thread; connections are bounded in number and in idle time, requests in
 * size. GET (and HEAD) of the telemetry path is a scrape, "/" a landing page,
 * any other path 404, any other method 405.
 */
#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include "exporter.h"
#include "log.h"
#include "prom_text.h"

#define REALM "kvmmmu-exporter"
#define REQUEST_MEMORY (32 * 1024) /* headers and all: a larger request gets 431 */

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, const char *type,
			     void *body, size_t len, bool must_free)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		len, body, must_free ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r) {
		if (must_free)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *conn, unsigned int status, const char *msg)
{
	return reply(conn, status, "text/plain; charset=utf-8", (void *)msg, strlen(msg), false);
}

/* Basic auth, when the web config has users: whether the request may go on (else 401 sent). */
static bool authorized(struct exporter *e, struct MHD_Connection *conn, enum MHD_Result *ret)
{
	char *password = NULL, *user;
	bool ok;

	if (!e->web.n_users)
		return true;
	user = MHD_basic_auth_get_username_password(conn, &password);
	ok = user && password && web_config_check_user(&e->web, user, password);
	MHD_free(user);
	MHD_free(password);
	if (!ok) {
		static const char msg[] = "Unauthorized\n";
		struct MHD_Response *r = MHD_create_response_from_buffer(
			sizeof(msg) - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);

		*ret = r ? MHD_queue_basic_auth_fail_response(conn, REALM, r) : MHD_NO;
		if (r)
			MHD_destroy_response(r);
	}
	return ok;
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct exporter *e = cls;
	enum MHD_Result ret = MHD_NO;
	char *body;
	size_t len;
	int err;

	(void)version;
	(void)upload_data;
	(void)req_cls;
	*upload_data_size = 0; /* a body is never read: nothing here takes one */
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "Method Not Allowed\n");
	if (!authorized(e, conn, &ret))
		return ret;
	if (!strcmp(url, "/"))
		return landing(e, conn);
	if (strcmp(url, e->env.telemetry_path))
		return text(conn, MHD_HTTP_NOT_FOUND, "Not Found\n");
	err = exporter_scrape(e, &body, &len);
	if (err) {
		elog("scrape failed: %s", strerror(-err));
		return text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "scrape failed\n");
	}
	return reply(conn, MHD_HTTP_OK, PROM_CONTENT_TYPE, body, len, true);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	const struct exporter *e = cls;

	if (e->env.verbose) {
		fputs("kvmmmu-exporter: http: ", stderr);
		vfprintf(stderr, fmt, ap);
	}
}

int http_listen(struct exporter *e, char *why, size_t why_size)
{
	const struct sockaddr *sa = (const struct sockaddr *)&e->env.addr;
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
	if (bind(fd, sa, e->env.addr_len) || listen(fd, 128))
		goto fail;
	e->listen_fd = fd;
	return 0;
fail:
	err = errno;
	snprintf(why, why_size, "cannot listen on %s: %s", e->env.listen_address, strerror(err));
	if (fd >= 0)
		close(fd);
	return -err;
}

int http_start(struct exporter *e, char *why, size_t why_size)
{
	unsigned int flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	struct MHD_OptionItem tls[3] = {{MHD_OPTION_END, 0, NULL}};
	const union MHD_DaemonInfo *info;

	if (e->web.cert_pem) {
		flags |= MHD_USE_TLS;
		tls[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, e->web.cert_pem};
		tls[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, e->web.key_pem};
	}
	e->httpd = MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, e, MHD_OPTION_LISTEN_SOCKET, e->listen_fd,
		MHD_OPTION_CONNECTION_LIMIT, e->env.max_connections, MHD_OPTION_CONNECTION_TIMEOUT,
		e->env.timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REQUEST_MEMORY,
		MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, e, MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
	if (!e->httpd) {
		snprintf(why, why_size, "cannot serve on %s%s", e->env.listen_address,
			 e->web.cert_pem ? ": the TLS certificate or key is not usable" : "");
		return -EINVAL;
	}
	e->listen_fd = -1; /* the daemon's now */
	info = MHD_get_daemon_info(e->httpd, MHD_DAEMON_INFO_BIND_PORT);
	/* said either way, as node_exporter says "TLS is disabled": plain HTTP is a choice */
	fprintf(stderr, "kvmmmu-exporter: listening on %s (port %u), %s, %s, metrics at %s\n",
		e->env.listen_address, info ? info->port : 0,
		e->web.cert_pem ? "TLS" : "TLS is off (plain HTTP)",
		e->web.n_users ? "basic auth" : "no authentication", e->env.telemetry_path);
	return 0;
}

void http_stop(struct exporter *e)
{
	if (e->httpd)
		MHD_stop_daemon(e->httpd);
	e->httpd = NULL;
	if (e->listen_fd >= 0)
		close(e->listen_fd);
	e->listen_fd = -1;
}
