/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_EXPORTER_H
#define KVMMMU_EXPORTER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "procs.h"
#include "render_prom.h"
#include "session.h"
#include "session_args.h"
#include "web_config.h"

#define EXPORTER_DEFAULT_ADDRESS "127.0.0.1:9486"
#define EXPORTER_MAX_GONE 256
#define EXPORTER_MAX_LISTEN 8 /* --web.listen-address, repeated */
/* --exited-vm-retention: four scrapes at Prometheus' default interval */
#define EXPORTER_DEFAULT_RETENTION_S 60.0

struct exporter_listen {
	const char *address; /* as given */
	struct sockaddr_storage addr;
	socklen_t addr_len;
};

struct exporter_env {
	struct exporter_listen listen[EXPORTER_MAX_LISTEN]; /* --web.listen-address */
	size_t n_listen;
	const char *telemetry_path; /* --web.telemetry-path */
	const char *web_config;	    /* --web.config.file */
	unsigned int max_connections;
	unsigned int timeout_s;	     /* an idle connection is closed after this */
	double exited_retention_s;   /* --exited-vm-retention */
	struct prom_opts prom;	     /* --[no-]collector.NAME, --collector.disable-defaults */
	bool exporter_metrics;	     /* process_*: off with --web.disable-exporter-metrics */
	struct session_args session; /* -p, --probe-mode, --sample */
	bool verbose;
};

/* The open connections, every address's (conns.c). */
struct exporter_conn;
struct exporter_conns {
	pthread_mutex_t lock;
	struct exporter_conn *head, *tail; /* waiting for a request header, oldest first */
	unsigned int open;
	unsigned int evicted; /* shut down by conns_admit or conns_expire, not yet closed */
};

struct MHD_Daemon;
struct auth;
struct exporter;
struct libdeflate_compressor;

/*
 * A scrape's text (LEN bytes, in a malloc()ed buffer of CAP): once sent it
 * goes back to E for the next scrape, which then writes into memory
 * already there rather than growing a new buffer (docs/performance.md).
 */
struct exporter_body {
	struct exporter *e;
	char *text;
	size_t len, cap;
};

struct exporter {
	struct exporter_env env;
	struct web_config web;
	struct auth *auth;
	/* a daemon a listen address: bound before attaching, served after */
	struct MHD_Daemon *httpd[EXPORTER_MAX_LISTEN];
	int listen_fd[EXPORTER_MAX_LISTEN];
	struct exporter_conns conns; /* on every address (the daemons' threads) */
	/* the session: the main loop (news from BPF) and scrapes take turns */
	pthread_mutex_t lock;
	struct session s;
	struct prom_state prom;
	bool bpf_stats; /* the kernel counts BPF run time */
	/*
	 * VMs a scrape showed with their final figures, and when it first did:
	 * every scrape shows them for --exited-vm-retention from then (each
	 * Prometheus of an HA pair sees them), and the first scrape after, not.
	 */
	struct exporter_gone {
		int pid;
		double shown; /* sysinfo_monotonic() */
	} gone[EXPORTER_MAX_GONE];
	size_t n_gone;
	struct exporter_body *spare_body;   /* the last one sent, for the next scrape (atomic) */
	struct libdeflate_compressor *gzip; /* the last scrape's, for the next (atomic) */
};

/* Parses argv into ENV; exits with status 2 after one line on stderr on bad input. */
void exporter_parse_args(int argc, char **argv, struct exporter_env *env);

/*
 * One scrape: a snapshot of the session, rendered. *BODY is the exposition
 * text, for exporter_body_done() once sent. 0, or -errno (the scrape fails
 * with 500).
 */
int exporter_scrape(struct exporter *e, struct exporter_body **body);
/* BODY (a struct exporter_body) has been sent: kept for the next scrape. */
void exporter_body_done(void *body);

/* Binds and listens on ENV's addresses (early: a bad one fails before attaching). */
int http_listen(struct exporter *e, char *why, size_t why_size);
/* Serves on those sockets, with TLS and basic auth from WEB. 0, or -errno and a reason. */
int http_start(struct exporter *e, char *why, size_t why_size);
void http_stop(struct exporter *e);
/* Closes the connections whose request header is not whole within --web.timeout. */
void http_tick(struct exporter *e);

void conns_init(struct exporter_conns *c);
void conns_free(struct exporter_conns *c);
/* A new connection on socket FD: it waits for a header. NULL if out of memory (untracked). */
struct exporter_conn *conns_opened(struct exporter_conns *c, int fd);
void conns_closed(struct exporter_conns *c, struct exporter_conn *x);
/* X's request header is whole / its request answered (it waits for the next header). */
void conns_request(struct exporter_conns *c, struct exporter_conn *x);
void conns_answered(struct exporter_conns *c, struct exporter_conn *x);
/*
 * Whether a new connection may be: below MAX, or at it by shutting down the
 * one that has waited longest for a header (none waits: refused).
 */
bool conns_admit(struct exporter_conns *c, unsigned int max);
/* Shuts down those waiting for a header DEADLINE_S or longer. */
void conns_expire(struct exporter_conns *c, double deadline_s);

/*
 * After attaching: drops every capability but those the running session
 * still needs, and says which it keeps and why (on stderr). 0, or -errno.
 */
int caps_drop_unneeded(const struct exporter *e);

/*
 * process_* families as every Prometheus client library writes them: CPU
 * time, memory, file descriptors, start time. From /proc/self.
 */
void process_metrics(struct prom_writer *w);
/*
 * Raises the open-file limit to what --web.max-connections needs (its hard
 * limit at most); lowers MAX_CONNECTIONS to what it allows, saying so.
 */
void process_fit_fd_limit(unsigned int *max_connections);

#endif
