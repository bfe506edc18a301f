// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "log.h"
#include "parse.h"

/*
 * A kretprobe needs an instance for every thread inside its function at
 * once: for the fault handlers every vCPU may be, so as many as the
 * per-thread maps hold (KVMMMU_KRETPROBE_MAXACTIVE overrides, for tests).
 */
static unsigned int kretprobe_maxactive(unsigned int max_threads)
{
	const char *env = getenv("KVMMMU_KRETPROBE_MAXACTIVE");

	if (env && atoi(env) > 0)
		return atoi(env);
	return max_threads;
}

/*
 * Entries of each per-thread map: the caller's, else KVMMMU_MAX_THREADS,
 * else from the host's thread count (0). -EINVAL for a bad value (said).
 */
static int max_threads(const struct collector_opts *opts, unsigned int *out)
{
	const char *env = getenv("KVMMMU_MAX_THREADS");
	uint64_t v;

	*out = opts->max_threads;
	if (*out || !env || !*env)
		return 0;
	if (parse_u64_range(env, 64, 1 << 20, &v)) {
		elog("KVMMMU_MAX_THREADS='%s': expected a number of threads from 64 to 1048576",
		     env);
		return -EINVAL;
	}
	*out = (unsigned int)v;
	return 0;
}

int collector_open(struct collector *c, const struct collector_opts *opts)
{
	unsigned int threads;
	struct source_env env = {.opts = &c->opts, .engine = &c->engine};
	const char *mode_origin;
	int err;

	memset(c, 0, sizeof(*c));
	c->opts = *opts;
	err = probe_mode_resolve(opts->mode, &c->opts.mode, &mode_origin);
	if (err)
		return err;
	err = max_threads(opts, &threads);
	if (err)
		return err;
	thread_maps_init(&env.sizes, threads);
	err = attach_engine_open(&c->engine, c->opts.mode, mode_origin,
				 kretprobe_maxactive(env.sizes.max_threads));
	if (err) {
		elog("kernel BTF is not available (%s): kvmmmu needs CONFIG_DEBUG_INFO_BTF",
		     strerror(-err));
		return err;
	}
	err = faults_source_open(&c->faults, &env, &c->threads);
	if (!err) {
		faults_source_shared(&c->faults, &env.maps);
		err = threads_open(&c->threads, opts->attribution, env.maps.thread_news);
	}
	if (!err)
		err = threads_add_hook(&c->threads, faults_source_retire, &c->faults);
	if (!err && opts->slower_ns)
		err = faults_source_watch_slow(&c->faults);
	if (err)
		return err;
	env.func_mode = c->faults.func_mode;
	c->lock_on = opts->lock;
	c->events_on = opts->events;
	if (opts->lock)
		lock_source_open(&c->lock, &env, &c->threads);
	if (opts->events)
		events_source_open(&c->events, &env, &c->threads);
	/* the kernel's BTF is for choosing and loading: tens of MiB not kept */
	attach_engine_settled(&c->engine);
	return 0;
}

void collector_arm(struct collector *c)
{
	faults_source_arm(&c->faults);
}

int collector_trace_pid(struct collector *c, int pid)
{
	return faults_source_trace_pid(&c->faults, pid);
}

int collector_poll(struct collector *c, int timeout_ms)
{
	return threads_poll(&c->threads, timeout_ms);
}

int collector_poll_fd(const struct collector *c)
{
	return threads_poll_fd(&c->threads);
}

void collector_tick(struct collector *c)
{
	struct kvmmmu_health h;

	threads_consume(&c->threads);
	collector_health_sum(c, &h);
	if (h.news_lost != c->news_lost) {
		c->news_lost = h.news_lost;
		faults_source_scan(&c->faults);
	}
	threads_tick(&c->threads);
}

void collector_health_sum(const struct collector *c, struct kvmmmu_health *sum)
{
	const struct kvmmmu_health *of[] = {faults_source_health(&c->faults),
					    lock_source_health(&c->lock),
					    events_source_health(&c->events)};

	memset(sum, 0, sizeof(*sum));
	for (size_t i = 0; i < sizeof(of) / sizeof(of[0]); i++) {
		for (size_t k = 0; of[i] && k < N_HEALTH_FIELDS; k++)
			*(__u64 *)((char *)sum + health_fields[k].offset) +=
				health_value(of[i], &health_fields[k]);
	}
	/* user space's own counts, not BPF's */
	sum->kprobe_missed = kprobes_missed(&c->engine.kprobes);
	sum->prog_missed = 0;
}

int collector_read(struct collector *c, struct model *m, bool final)
{
	struct timeline *t = collector_timeline(c);
	int err;

	threads_consume(&c->threads);
	collector_health_sum(c, &m->health);
	/* not per tick: a syscall per program */
	m->health.prog_missed = faults_source_prog_missed(&c->faults);
	err = faults_source_read(&c->faults, m, final);
	if (!err && c->lock.ok)
		err = lock_source_read(&c->lock, &c->threads, m);
	if (!err && c->events.ok)
		err = events_source_read(&c->events, &c->threads, m);
	/*
	 * A VM whose only events are its timeline's (memslots set up before
	 * its vCPUs run, or by a thread counted with another VM) has a row too.
	 */
	for (size_t i = 0; !err && t && i < t->n; i++) {
		int tgid = (int)t->events[i].ev.tgid;

		if (!threads_model_vm(&c->threads, m, tgid, t->events[i].vm_index,
				      threads_process_name(&c->threads, tgid)))
			err = -ENOMEM;
	}
	model_sort(m);
	return err;
}

void collector_forget_process(struct collector *c, int pid, size_t *timeline_seen)
{
	*timeline_seen -= events_source_forget(&c->events, pid, *timeline_seen);
	lock_source_forget(&c->lock, pid);
	faults_source_forget(&c->faults, pid);
	threads_forget_process(&c->threads, pid);
}

struct timeline *collector_timeline(struct collector *c)
{
	return c->events.ok ? &c->events.timeline : NULL;
}

struct probe_status *collector_probes(const struct collector *c, size_t *n, size_t *n_faults)
{
	size_t nf = c->faults.n_probes, nl = c->lock_on, ne = c->events_on ? c->events.n_probes : 0;
	struct probe_status *p = calloc(nf + nl + ne + 1, sizeof(*p));

	if (!p)
		return NULL;
	memcpy(p, c->faults.probes, nf * sizeof(*p));
	if (nl)
		p[nf] = c->lock.probe;
	memcpy(p + nf + nl, c->events.probes, ne * sizeof(*p));
	*n = nf + nl + ne;
	*n_faults = nf;
	return p;
}

bool collector_hist_available(const struct collector *c, int hist, const char **why)
{
	if (hist == KVMMMU_HIST_PHASE_LOCK && c->faults.opts->phases && !c->lock.ok) {
		*why = "needs the mmu_lock probes (lock:contention_begin and _end)";
		return false;
	}
	return faults_source_hist_available(&c->faults, hist, why);
}

void collector_close(struct collector *c)
{
	events_source_close(&c->events);
	lock_source_close(&c->lock);
	threads_close(&c->threads);
	faults_source_close(&c->faults);
	attach_engine_close(&c->engine);
	memset(c, 0, sizeof(*c));
}

size_t collector_tracepoints(struct source_tracepoint *out, size_t max)
{
	size_t n = faults_source_tracepoints(out, max);

	return n + events_source_tracepoints(out + (n < max ? n : max), n < max ? max - n : 0);
}
