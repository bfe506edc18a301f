// SPDX-License-Identifier: GPL-2.0
#include <argp.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "exporter.h"
#include "parse.h"
#include "sysinfo.h"
#include "vm_name.h"

enum {
	OPT_LISTEN = 1000,
	OPT_PATH,
	OPT_WEB_CONFIG,
	OPT_MAX_CONNECTIONS,
	OPT_TIMEOUT,
	OPT_EXITED_RETENTION,
	OPT_DISABLE_DEFAULTS,
	OPT_DISABLE_EXPORTER_METRICS,
	OPT_COLLECTOR,			       /* + enum prom_collector: --collector.NAME */
	OPT_NO_COLLECTOR = OPT_COLLECTOR + 32, /* + enum prom_collector: --no-collector.NAME */
};

const char *argp_program_version = "kvmmmu-exporter " KVMMMU_VERSION;

static const char doc[] =
	"Serves kvmmmu's figures of every VM to Prometheus: page faults by path and "
	"outcome, their latency, mmu_lock waits, memslot lookups (--collector.memslot), MMU "
	"events and KVM's "
	"own statistics.\n"
	"\n"
	"USAGE: kvmmmu-exporter [--web.listen-address=[HOST]:PORT]... [--web.telemetry-path=PATH] "
	"[--web.config.file=FILE] [--collector.disable-defaults] [--[no-]collector.NAME]... "
	"[-p PID|NAME]...\n"
	"\v"
	"COLLECTORS (on unless said): faults, latency, mmu_lock, memslot (off: memslot lookups "
	"and their time; with function probes, two program runs a lookup, 1 a fault under the "
	"TDP MMU and 7 or more under shadow paging), mmu_events, kvm_stats, per_vcpu (off: "
	"per-vCPU counters). With --collector.disable-defaults, only those named with "
	"--collector.NAME, wherever it stands.\n"
	"\n"
	"EXAMPLES:\n"
	"    kvmmmu-exporter                                 # 127.0.0.1:9486/metrics\n"
	"    kvmmmu-exporter --web.listen-address=:9486      # every address\n"
	"    kvmmmu-exporter --web.listen-address=127.0.0.1:9486 --web.listen-address=[::1]:9486\n"
	"    kvmmmu-exporter --collector.disable-defaults --collector.faults --collector.latency\n"
	"    kvmmmu-exporter --collector.per_vcpu --no-collector.kvm_stats\n"
	"    kvmmmu-exporter --web.config.file=/etc/kvmmmu/web.yml  # TLS, basic auth\n";

#define COLLECTOR_OPTS(c, name)                                                                    \
	{"collector." name, OPT_COLLECTOR + (c), NULL, 0, "Turn collector " name " on", 1},        \
	{                                                                                          \
		"no-collector." name, OPT_NO_COLLECTOR + (c), NULL, 0,                             \
			"Turn collector " name " off", 1                                           \
	}

static const struct argp_option options[] = {
	{"web.listen-address", OPT_LISTEN, "[HOST]:PORT", 0,
	 "Address to listen on (default " EXPORTER_DEFAULT_ADDRESS
	 "; :PORT is every address); repeat it for more",
	 0},
	{"web.telemetry-path", OPT_PATH, "PATH", 0, "Path of the metrics (default /metrics)", 0},
	{"web.config.file", OPT_WEB_CONFIG, "FILE", 0,
	 "TLS and basic auth, in Prometheus exporter-toolkit's format", 0},
	{"web.max-connections", OPT_MAX_CONNECTIONS, "N", 0,
	 "Connections at once, on every address; more are refused at once (default 1024)", 0},
	{"web.timeout", OPT_TIMEOUT, "SECS", 0,
	 "Close a connection idle this long, or whose request header is not whole within it "
	 "(default 10)",
	 0},
	{"exited-vm-retention", OPT_EXITED_RETENTION, "DURATION", 0,
	 "Serve an exited VM's final figures this long after the first scrape that shows them "
	 "(default 60s; 0: that scrape only)",
	 0},
	{"web.disable-exporter-metrics", OPT_DISABLE_EXPORTER_METRICS, NULL, 0,
	 "Leave out the exporter's own process_* metrics", 0},
	{"collector.disable-defaults", OPT_DISABLE_DEFAULTS, NULL, 0,
	 "Turn every collector off but those named with --collector.NAME", 1},
	SESSION_ARGP_OPTIONS("Export only"),
	{"verbose", 'v', NULL, 0, "Show libbpf's debug messages and each scrape", 0},
	COLLECTOR_OPTS(PROM_FAULTS, "faults"),
	COLLECTOR_OPTS(PROM_LATENCY, "latency"),
	COLLECTOR_OPTS(PROM_MMU_LOCK, "mmu_lock"),
	COLLECTOR_OPTS(PROM_MEMSLOT, "memslot"),
	COLLECTOR_OPTS(PROM_MMU_EVENTS, "mmu_events"),
	COLLECTOR_OPTS(PROM_KVM_STATS, "kvm_stats"),
	COLLECTOR_OPTS(PROM_PER_VCPU, "per_vcpu"),
	{NULL, 'h', NULL, OPTION_HIDDEN, "Show the full help", 0},
	{},
};

#define usage_error cli_usage_error

/*
 * A path a client can ask for as written: libmicrohttpd compares it with the
 * request's path, which never holds a query ('?') or fragment ('#') and whose
 * %XX escapes it decodes; the landing page links to it, unescaped. So RFC
 * 3986's path characters but '&' (an HTML entity in the link), no space,
 * control byte, quote or byte past ASCII; and no empty, "." or ".." segment,
 * which browsers and curl resolve away ("//host/x" is even another host).
 */
static bool plain_path(const char *path)
{
	static const char path_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					 "0123456789-._~!$'()*+,;=:@/";

	if (path[0] != '/' || strspn(path, path_chars) != strlen(path))
		return false;
	for (const char *seg = path + 1;;) {
		size_t len = strcspn(seg, "/");

		if ((!len && seg[len]) || (len == 1 && seg[0] == '.') ||
		    (len == 2 && !strncmp(seg, "..", 2)))
			return false;
		if (!seg[len])
			return true;
		seg += len + 1;
	}
}

/*
 * [HOST]:PORT into L's socket address: ":PORT" is every address (IPv6 and
 * IPv4). 0, or -1 with why it is not one in WHY (after the argument's name).
 */
static int parse_listen(const char *arg, struct exporter_listen *l, char *why, size_t why_size)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	char host[256];
	const char *colon = strrchr(arg, ':'), *port;
	struct addrinfo *res;
	bool v6 = arg[0] == '[';
	uint64_t v;
	size_t len;
	int err;

	snprintf(why, why_size,
		 "expected [HOST]:PORT, such as 127.0.0.1:9486, :9486 or [::1]:9486");
	if (!colon)
		return -1;
	port = colon + 1;
	len = (size_t)(colon - arg);
	if (v6) { /* [v6]:PORT */
		if (len < 2 || arg[len - 1] != ']')
			return -1;
		arg++;
		len -= 2;
		hints.ai_flags |= AI_NUMERICHOST;
	}
	if (len >= sizeof(host) || parse_u64_range(port, 0, 65535, &v))
		return -1;
	memcpy(host, arg, len);
	host[len] = '\0';
	hints.ai_family = len ? AF_UNSPEC : AF_INET6;
	err = getaddrinfo(len ? host : NULL, port, &hints, &res);
	if (err) {
		/* the syntax was right: say what the resolver said of the host */
		if (v6)
			snprintf(why, why_size, "'%s' is not an IPv6 address", host);
		else
			snprintf(why, why_size, "cannot resolve '%s': %s", host,
				 err == EAI_SYSTEM ? strerror(errno) : gai_strerror(err));
		return -1;
	}
	memcpy(&l->addr, res->ai_addr, res->ai_addrlen);
	l->addr_len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/*
 * A Prometheus-style duration, whole units: "60s", "2m", "1h", "500ms"; a
 * bare number is seconds, "0" none. Up to a day.
 */
static int parse_duration(const char *arg, double *secs)
{
	static const struct {
		const char *unit;
		double secs;
	} units[] = {{"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}, {"", 1}};
	size_t digits = strspn(arg, "0123456789");
	char num[32];
	uint64_t v;

	if (!digits || digits >= sizeof(num))
		return -1;
	memcpy(num, arg, digits);
	num[digits] = '\0';
	if (parse_u64_range(num, 0, 86400000, &v))
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(arg + digits, units[i].unit)) {
			*secs = (double)v * units[i].secs;
			return *secs <= 86400 ? 0 : -1;
		}
	return -1;
}

/* What the command line said of each collector (-1: nothing), and of the defaults. */
struct collector_choice {
	int said[PROM_N_COLLECTORS];
	bool disable_defaults;
};

struct args_state {
	struct exporter_env *env;
	struct collector_choice choice;
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct args_state *as = state->input;
	struct exporter_env *env = as->env;
	uint64_t v;

	if (session_args_parse(&env->session, key, arg))
		return 0;
	/* applied at the end: --collector.disable-defaults holds wherever it stands */
	if (key >= OPT_COLLECTOR && key < OPT_COLLECTOR + PROM_N_COLLECTORS) {
		as->choice.said[key - OPT_COLLECTOR] = 1;
		return 0;
	}
	if (key >= OPT_NO_COLLECTOR && key < OPT_NO_COLLECTOR + PROM_N_COLLECTORS) {
		as->choice.said[key - OPT_NO_COLLECTOR] = 0;
		return 0;
	}
	switch (key) {
	case ARGP_KEY_INIT:
		cli_key_init(state);
		break;
	case OPT_LISTEN: {
		struct exporter_listen *l = &env->listen[env->n_listen];
		char why[300];

		if (env->n_listen == EXPORTER_MAX_LISTEN)
			usage_error("--web.listen-address '%s': at most %d addresses", arg,
				    EXPORTER_MAX_LISTEN);
		if (parse_listen(arg, l, why, sizeof(why)))
			usage_error("--web.listen-address '%s': %s", arg, why);
		l->address = arg;
		env->n_listen++;
		break;
	}
	case OPT_DISABLE_DEFAULTS:
		as->choice.disable_defaults = true;
		break;
	case OPT_DISABLE_EXPORTER_METRICS:
		env->exporter_metrics = false;
		break;
	case OPT_PATH:
		if (!plain_path(arg)) {
			/* escaped (a newline keeps the error one line), then freed: exit follows */
			char *esc = vm_name_escape(arg), shown[256];

			snprintf(shown, sizeof(shown), "%s", esc ? esc : "?");
			free(esc);
			usage_error(
				"--web.telemetry-path '%s': expected a plain path such as "
				"/metrics (letters, digits, /-._~!$'()*+,;=:@; no query, "
				"fragment, %%XX, &, space, control byte, empty, . or .. segment)",
				shown);
		}
		if (!strcmp(arg, "/"))
			usage_error("--web.telemetry-path '/': / is the landing page (/metrics, "
				    "say)");
		env->telemetry_path = arg;
		break;
	case OPT_WEB_CONFIG:
		env->web_config = arg;
		break;
	case OPT_MAX_CONNECTIONS:
		if (parse_u64_range(arg, 1, 65536, &v))
			usage_error("--web.max-connections '%s': expected 1 to 65536", arg);
		env->max_connections = (unsigned int)v;
		break;
	case OPT_TIMEOUT:
		if (parse_u64_range(arg, 1, 3600, &v))
			usage_error("--web.timeout '%s': expected seconds from 1 to 3600", arg);
		env->timeout_s = (unsigned int)v;
		break;
	case OPT_EXITED_RETENTION:
		if (parse_duration(arg, &env->exited_retention_s))
			usage_error("--exited-vm-retention '%s': expected a duration up to a day, "
				    "such as 60s, 5m or 0",
				    arg);
		break;
	case 'v':
		env->verbose = true;
		break;
	case 'h':
		argp_state_help(state, stdout, ARGP_HELP_STD_HELP);
		break;
	case ARGP_KEY_ARG:
		usage_error("unexpected argument '%s' (see --help)", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

void exporter_parse_args(int argc, char **argv, struct exporter_env *env)
{
	static const struct argp argp = {options, parse_opt, NULL, doc, NULL, NULL, NULL};
	struct args_state as = {.env = env};
	bool any = false;
	char why[300];

	env->telemetry_path = "/metrics";
	env->max_connections = 1024;
	env->timeout_s = 10;
	env->exited_retention_s = EXPORTER_DEFAULT_RETENTION_S;
	env->exporter_metrics = true;
	for (int c = 0; c < PROM_N_COLLECTORS; c++)
		as.choice.said[c] = -1;
	cli_parse(&argp, argc, argv, 0, &as);
	if (!env->n_listen &&
	    !parse_listen(EXPORTER_DEFAULT_ADDRESS, &env->listen[0], why, sizeof(why)))
		env->listen[env->n_listen++].address = EXPORTER_DEFAULT_ADDRESS;
	prom_opts_default(&env->prom);
	for (int c = 0; c < PROM_N_COLLECTORS; c++) {
		if (as.choice.disable_defaults)
			env->prom.collector[c] = false;
		if (as.choice.said[c] >= 0)
			env->prom.collector[c] = as.choice.said[c];
		/* per_vcpu refines the others: alone it has nothing to show */
		any |= env->prom.collector[c] && c != PROM_PER_VCPU;
	}
	if (!any)
		usage_error("no collector is on: name one with --collector.NAME (faults, latency, "
			    "mmu_lock, memslot, mmu_events, kvm_stats)");
}
