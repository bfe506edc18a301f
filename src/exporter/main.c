// SPDX-License-Identifier: GPL-2.0
/*
 * kvmmmu-exporter: kvmmmu's figures for Prometheus. One session (src/core),
 * a snapshot per scrape, rendered by render_prom (src/render). The main
 * thread hands the session BPF's news; libmicrohttpd's thread serves
 * scrapes; a mutex makes them take turns.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bpf_cost.h"
#include "cli.h"
#include "exporter.h"
#include "log.h"
#include "sysinfo.h"

const char *log_prog = "kvmmmu-exporter";
bool log_verbose;

#define TICK_MS 200 /* the session's /proc and map upkeep at least this often */

static volatile sig_atomic_t quit_signal;

/* How faults are counted: the function probes' kind, else tracepoints. */
static const char *probe_mode_of(const struct snapshot *snap)
{
	for (size_t i = 0; snap->func_mode && i < snap->n_collector_probes; i++) {
		const struct probe_status *p = &snap->probes[i];

		if (!p->group && (p->kind == ATTACH_FSESSION || p->kind == ATTACH_FENTRY ||
				  p->kind == ATTACH_KPROBE))
			return attach_kind_str(p->kind);
	}
	return "tracepoint";
}

/* The exporter's own families; the scrape's duration last, so that it covers the rest. */
static void self_metrics(struct exporter *e, struct prom_writer *w, const struct snapshot *snap,
			 double started)
{
	struct prom_label build[] = {{"version", KVMMMU_VERSION},
				     {"probe_mode", probe_mode_of(snap)}};

	prom_family(w, "kvmmmu_exporter_build_info", PROM_GAUGE,
		    "kvmmmu-exporter's version, and how it counts faults (fsession, fentry, "
		    "kprobe or tracepoint)");
	prom_u64(w, build, 2, 1);
	prom_family(w, "kvmmmu_scrape_collector_success", PROM_GAUGE,
		    "Whether a collector had figures to give (0: the probes cannot give them; "
		    "kvmmmu-check says why)");
	for (int c = 0; c < PROM_N_COLLECTORS; c++) {
		struct prom_label l[] = {{"collector", prom_collector_names[c]}};

		if (e->env.prom.collector[c])
			prom_u64(w, l, 1, prom_collector_ok(snap, c));
	}
	if (e->bpf_stats) {
		prom_family(w, "kvmmmu_bpf_run_seconds_total", PROM_COUNTER,
			    "Time kvmmmu's own BPF programs have run, all CPUs");
		prom_double(w, NULL, 0, (double)bpf_cost_run_ns(&e->s) / 1e9);
	}
	if (e->env.exporter_metrics)
		process_metrics(w);
	prom_family(w, "kvmmmu_scrape_duration_seconds", PROM_GAUGE,
		    "How long this scrape took kvmmmu-exporter");
	prom_double(w, NULL, 0, sysinfo_monotonic() - started);
}

static void body_free(struct exporter_body *b)
{
	if (b)
		free(b->text);
	free(b);
}

void exporter_body_done(void *body)
{
	struct exporter_body *b = body;

	/* one is kept: scrapes at once, each with a buffer of its own, are rare */
	body_free(__atomic_exchange_n(&b->e->spare_body, b, __ATOMIC_ACQ_REL));
}

/*
 * Exited VM PID is in a scrape at NOW: its retention starts, unless an
 * earlier scrape started it (a process's VMs are one entry). Past
 * EXPORTER_MAX_GONE at once, it starts at a later scrape, when there is room.
 */
static void gone_shown(struct exporter *e, int pid, double now)
{
	for (size_t i = 0; i < e->n_gone; i++)
		if (e->gone[i].pid == pid)
			return;
	if (e->n_gone < EXPORTER_MAX_GONE)
		e->gone[e->n_gone++] = (struct exporter_gone){.pid = pid, .shown = now};
}

int exporter_scrape(struct exporter *e, struct exporter_body **body)
{
	double started = sysinfo_monotonic();
	struct exporter_body *b = __atomic_exchange_n(&e->spare_body, NULL, __ATOMIC_ACQ_REL);
	struct prom_writer w;
	struct snapshot snap;
	int err;

	*body = NULL;
	if (!b && !(b = calloc(1, sizeof(*b))))
		return -ENOMEM;
	b->e = e;
	pthread_mutex_lock(&e->lock);
	/* exited VMs whose retention is over leave now */
	for (size_t i = 0; i < e->n_gone;) {
		if (started - e->gone[i].shown < e->env.exited_retention_s) {
			i++;
			continue;
		}
		session_forget(&e->s, e->gone[i].pid);
		prom_state_forget(&e->prom, e->gone[i].pid);
		e->gone[i] = e->gone[--e->n_gone];
	}
	/* and so do the timeline events it showed: a VM's timeline grows while it runs */
	session_trim_timeline(&e->s);
	err = session_snapshot(&e->s, &snap, false);
	if (!err) {
		err = prom_state_update(&e->prom, &snap);
		for (size_t i = 0; i < snap.m.n_vms; i++)
			if (snap.m.vms[i].gone)
				gone_shown(e, snap.m.vms[i].pid, started);
		prom_init_mem(&w, b->text, b->cap); /* the writer's until it finishes */
		b->text = NULL;
		render_prom(&w, &snap, &e->prom, &e->env.prom);
		self_metrics(e, &w, &snap, started);
		if (!err)
			err = prom_finish_mem(&w, &b->text, &b->len, &b->cap);
		else
			prom_finish(&w);
		snapshot_free(&snap);
	}
	pthread_mutex_unlock(&e->lock);
	if (err) {
		body_free(b);
		return err;
	}
	if (e->env.verbose)
		fprintf(stderr, "kvmmmu-exporter: scrape: %zu bytes in %.1f ms\n", b->len,
			(sysinfo_monotonic() - started) * 1e3);
	*body = b;
	return 0;
}

/* Until a signal: BPF's news (new threads and VMs, exits) to the session, as it comes. */
static void run(struct exporter *e)
{
	struct pollfd p = {.fd = session_poll_fd(&e->s), .events = POLLIN};

	while (!quit_signal) {
		int ready = poll(&p, 1, TICK_MS);

		pthread_mutex_lock(&e->lock);
		session_wait(&e->s, ready > 0 ? 1 : 0);
		pthread_mutex_unlock(&e->lock);
		http_tick(e);
	}
}

/* Which collectors are on: one that was on by default before (memslot) says so here. */
static void say_collectors(const struct prom_opts *o)
{
	const char *sep = "";

	fprintf(stderr, "kvmmmu-exporter: collectors on:");
	for (int c = 0; c < PROM_N_COLLECTORS; c++)
		if (o->collector[c]) {
			fprintf(stderr, "%s %s", sep, prom_collector_names[c]);
			sep = ",";
		}
	fprintf(stderr, "; off:");
	sep = "";
	for (int c = 0; c < PROM_N_COLLECTORS; c++)
		if (!o->collector[c]) {
			fprintf(stderr, "%s %s (--collector.%s)", sep, prom_collector_names[c],
				prom_collector_names[c]);
			sep = ",";
		}
	fprintf(stderr, "%s\n", *sep ? "" : " none");
}

int main(int argc, char **argv)
{
	static struct exporter e = {.lock = PTHREAD_MUTEX_INITIALIZER};
	struct session_opts sopts;
	char why[512];
	int err;

	for (size_t i = 0; i < EXPORTER_MAX_LISTEN; i++)
		e.listen_fd[i] = -1;
	conns_init(&e.conns);
	exporter_parse_args(argc, argv, &e.env);
	process_fit_fd_limit(&e.env.max_connections);
	log_verbose = e.env.verbose;
	libbpf_set_print(log_libbpf);
	if (e.env.web_config &&
	    (err = web_config_load(e.env.web_config, &e.web, why, sizeof(why)))) {
		elog("--web.config.file '%s': %s", e.env.web_config, why);
		return 1;
	}
	if (http_listen(&e, why, sizeof(why))) {
		elog("%s", why);
		web_config_free(&e.web);
		return 1;
	}
	cli_catch_quit_signals(&quit_signal);
	sopts = (struct session_opts){
		.mode = e.env.session.mode,
		.attribution = ATTRIBUTE_AUTO,
		.sample_every = e.env.session.sample_every,
		.lock = e.env.prom.collector[PROM_MMU_LOCK],
		.events = e.env.prom.collector[PROM_MMU_EVENTS],
		.kvm_stats = e.env.prom.collector[PROM_KVM_STATS],
		.memslot_off = !e.env.prom.collector[PROM_MEMSLOT],
		.event_counts_off = true, /* no series of its own */
		.memslot_option = "--collector.memslot",
		.specs = e.env.session.specs,
		.n_specs = e.env.session.n_specs,
		.wait = true, /* VMs that start later are exported as they appear */
	};
	err = session_open(&e.s, &sopts);
	if (!err) {
		e.bpf_stats = bpf_cost_enable(); /* before the capabilities go */
		err = caps_drop_unneeded(&e);
		if (err)
			elog("cannot drop capabilities: %s", strerror(-err));
	}
	if (!err && (err = http_start(&e, why, sizeof(why))))
		elog("%s", why);
	if (!err) {
		say_collectors(&e.env.prom);
		run(&e);
		if (e.env.verbose)
			elog("signal %d: stopping", (int)quit_signal);
	}
	http_stop(&e);
	body_free(e.spare_body);
	session_close(&e.s);
	bpf_cost_restore();
	prom_state_free(&e.prom);
	web_config_free(&e.web);
	session_args_free(&e.env.session);
	conns_free(&e.conns);
	return err ? 1 : 0;
}
