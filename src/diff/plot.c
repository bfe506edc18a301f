// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plot.h"
#include "log.h"
#include "stats.h"

#define MAX_PANELS 32

/*
 * TEXT (LEN bytes, or up to its NUL) as the inside of a gnuplot single-quoted
 * string: a quote doubled, control bytes as '?'. VM names and labels come
 * from the CSV files, so from whoever recorded them: unescaped, a quote
 * would end the string and the rest run as gnuplot commands (system()).
 */
static const char *gp(char *buf, size_t size, const char *text, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len && text[i] && o + 3 < size; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c == '\'')
			buf[o++] = '\'';
		buf[o++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	buf[o] = '\0';
	return buf;
}
#define GP(buf, text) gp(buf, sizeof(buf), text, SIZE_MAX)

/* The CDF of H at its buckets' upper bounds, as gnuplot data (one index block). */
static void write_cdf(FILE *f, const struct kvmmmu_hist *h)
{
	__u64 seen = 0;

	for (__u32 b = 0; b + 1 < KVMMMU_HIST_BUCKETS && h->count; b++) {
		if (!h->slots[b] && !seen)
			continue;
		seen += h->slots[b];
		fprintf(f, "%llu %.6f\n", (unsigned long long)kvmmmu_hist_slot_high(b) + 1,
			(double)seen / (double)h->count);
		if (seen >= h->count)
			break;
	}
	/* an empty side still has its block: blank lines alone would merge two separators and
	 * shift every later side's index onto the next one's data */
	if (!seen)
		fprintf(f, "NaN NaN\n");
	fprintf(f, "\n\n");
}

/* Every side's median of each share (metric "... %") of VM, as "label m1 m2 ..." lines. */
static int write_shares(FILE *f, struct side *const *sides, size_t n_sides, const char *vm)
{
	const struct run *r0 = &sides[0]->runs[0];
	int n = 0;

	for (size_t k = 0; k < r0->n; k++) {
		const struct scalar *s = &r0->s[k];
		double v[MAX_RUNS], m[MAX_SIDES];
		size_t len = strlen(s->metric), later = 0;
		bool any = false;

		if (s->vcpu >= 0 || strcmp(s->vm, vm) || len < 2 ||
		    strcmp(s->metric + len - 2, " %"))
			continue;
		for (size_t j = 0; j < n_sides; j++) {
			size_t nv = 0;

			for (size_t i = 0; i < sides[j]->n; i++) {
				const struct scalar *x =
					run_find(&sides[j]->runs[i], vm, -1, s->metric);

				if (x)
					v[nv++] = x->value;
			}
			later += j && nv;
			m[j] = stats_median(v, nv);
			any |= m[j] != 0;
		}
		/* a share that is nothing on every side says nothing */
		if (!later || !any)
			continue;
		fputc('"', f);
		for (size_t c = 0; c + 2 < len; c++)
			fputc(s->metric[c] == '"' || (unsigned char)s->metric[c] < 0x20
				      ? '?'
				      : s->metric[c],
			      f);
		fputc('"', f);
		for (size_t j = 0; j < n_sides; j++)
			fprintf(f, " %.4f", m[j]);
		fputc('\n', f);
		n++;
	}
	return n;
}

static const char *label(const struct side *s)
{
	const char *l = csv_table_meta(&s->runs[0].table, "label");

	return l && *l ? l : s->name;
}

bool diff_plot_path_ok(const char *path, char *why, size_t len)
{
	const char *ext = strrchr(path, '.'), *slash = strrchr(path, '/');
	char dir[PATH_MAX];

	if (!ext || (strcmp(ext, ".png") && strcmp(ext, ".svg"))) {
		snprintf(why, len, "the file must end in .png or .svg");
		return false;
	}
	/* the folder: "/" for "/x.png", "." for "x.png" */
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
		 slash ? path : ".");
	if (access(dir, W_OK)) {
		snprintf(why, len, "%s: %s", dir, strerror(errno));
		return false;
	}
	return true;
}

/* The last line gnuplot wrote to ERR_PATH (its error), into LINE; empty if none. */
static void last_line(const char *err_path, char *line, size_t len)
{
	char buf[512];
	FILE *f = fopen(err_path, "r");

	*line = '\0';
	while (f && fgets(buf, sizeof(buf), f))
		if (buf[strspn(buf, " \t\r\n^")]) {
			buf[strcspn(buf, "\r\n")] = '\0';
			snprintf(line, len, "%s", buf + strspn(buf, " \t"));
		}
	if (f)
		fclose(f);
}

/* "N (tdp_mmu=N, 4 runs) vs Y (tdp_mmu=Y, 4 runs)": the page's title */
static void write_title(FILE *g, struct side *const *sides, size_t n_sides)
{
	fprintf(g, "kvmmmu-diff: ");
	for (size_t k = 0; k < n_sides; k++) {
		char name[2 * SIDE_NAME_MAX + 3], l[256];

		fprintf(g, "%s%s (%s, %zu run%s)", k ? " vs " : "", GP(name, sides[k]->name),
			gp(l, sizeof(l), label(sides[k]), 120), sides[k]->n,
			sides[k]->n == 1 ? "" : "s");
	}
}

int diff_plot(const char *path, struct side *const *sides, size_t n_sides)
{
	char dir[] = "/tmp/kvmmmu-plot.XXXXXX", script[64], data[96];
	const struct side *a = sides[0];
	const struct run *r0 = &a->runs[0];
	const char *ext = strrchr(path, '.');
	bool svg = ext && !strcmp(ext, ".svg");
	int panels = 0, status, err = 0;
	char errors[96], said[256], out[2 * PATH_MAX + 3], vm[2 * sizeof(r0->s->vm) + 3];
	char metric[2 * sizeof(r0->s->metric) + 3], name[2 * SIDE_NAME_MAX + 3];
	FILE *g;
	pid_t pid;

	if (!mkdtemp(dir)) {
		elog("--plot: cannot make a temporary directory: %s", strerror(errno));
		return -errno;
	}
	snprintf(script, sizeof(script), "%s/plot.gp", dir);
	snprintf(errors, sizeof(errors), "%s/gnuplot.err", dir);
	g = fopen(script, "w");
	if (!g) {
		err = -errno;
		goto out;
	}
	/* count the panels first: the page's height follows */
	for (size_t k = 0; k < r0->n; k++) {
		const struct scalar *s = &r0->s[k];
		size_t len = strlen(s->metric);

		if (s->vcpu < 0 && ((s->hist && len > 5 && !strcmp(s->metric + len - 5, " mean")) ||
				    !strcmp(s->metric, "faults")))
			panels++;
	}
	panels = panels > MAX_PANELS ? MAX_PANELS : panels;
	if (!panels) {
		elog("--plot: nothing to plot (no VM figures in %s)", r0->path);
		fclose(g);
		err = -ENOENT;
		goto out;
	}
	fprintf(g, "set terminal %s size 1100,%d noenhanced font 'sans,10'\n",
		svg ? "svg" : "pngcairo", 360 * panels);
	fprintf(g, "set output '%s'\n", GP(out, path));
	fprintf(g, "set multiplot layout %d,1 title '", panels);
	write_title(g, sides, n_sides);
	fprintf(g, "'\n");
	fprintf(g, "set grid\nset key bottom right\n");
	for (size_t k = 0, p = 0; k < r0->n && p < (size_t)panels; k++) {
		const struct scalar *s = &r0->s[k];
		size_t len = strlen(s->metric);
		struct kvmmmu_hist ha, hb;
		double shift[MAX_SIDES] = {};
		FILE *d;

		if (s->vcpu >= 0)
			continue;
		snprintf(data, sizeof(data), "%s/panel%zu.dat", dir, p);
		if (!strcmp(s->metric, "faults")) {
			/* the VM's outcome and path shares, the sides' bars side by side */
			d = fopen(data, "w");
			if (!d || !write_shares(d, sides, n_sides, s->vm)) {
				if (d)
					fclose(d);
				continue;
			}
			fclose(d);
			fprintf(g,
				"set title 'VM %s: outcomes and paths, %% of faults (medians)'\n"
				"unset logscale x\nset xlabel ''\nset ylabel '%% of faults'\n"
				"set yrange [0:105]\nset xrange [*:*]\nset style data histograms\n"
				"set style histogram clustered gap 1\nset style fill solid 0.8 "
				"border -1\n"
				"set xtics rotate by -25 nomirror\n"
				"plot '%s' using 2:xtic(1) title '%s'",
				GP(vm, s->vm), data, GP(name, a->name));
			for (size_t k = 1; k < n_sides; k++)
				fprintf(g, ", '' using %zu title '%s'", k + 2,
					GP(name, sides[k]->name));
			fprintf(g, "\nset xtics norotate\nset style data lines\n");
			p++;
			continue;
		}
		if (!s->hist || len <= 5 || strcmp(s->metric + len - 5, " mean"))
			continue;
		d = fopen(data, "w");
		if (!d)
			continue;
		side_pool(a, s, &ha);
		write_cdf(d, &ha);
		for (size_t k = 1; k < n_sides; k++) {
			side_pool(sides[k], s, &hb);
			write_cdf(d, &hb);
			shift[k] = stats_wasserstein_log2(&ha, &hb);
		}
		fclose(d);
		fprintf(g, "set title 'VM %s: %s, the share of faults at or under a latency (",
			GP(vm, s->vm), gp(metric, sizeof(metric), s->metric, len - 5));
		if (n_sides == 2)
			fprintf(g, "shifted by %.2f doublings)'\n", shift[1]);
		else {
			fprintf(g, "doublings shifted from %s:", GP(name, a->name));
			for (size_t k = 1; k < n_sides; k++) {
				side_pool(sides[k], s, &hb);
				/* a side without samples has no distance to give */
				fprintf(g, hb.count ? "%s %s %.2f" : "%s %s -", k > 1 ? "," : "",
					GP(name, sides[k]->name), shift[k]);
			}
			fprintf(g, ")'\n");
		}
		fprintf(g,
			"set logscale x 10\nset format x '%%.0s%%cs'\nset xlabel 'latency'\n"
			"set ylabel 'fraction of faults'\nset yrange [0:1.02]\nset xrange [*:*]\n"
			"plot ");
		for (size_t k = 0; k < n_sides; k++) {
			side_pool(sides[k], s, &hb);
			fprintf(g,
				"%s'%s' index %zu using ($1/1e9):2 with steps lw 2 title '%s (%llu "
				"samples)'",
				k ? ", " : "", k ? "" : data, k, GP(name, sides[k]->name),
				(unsigned long long)hb.count);
		}
		fprintf(g, "\nunset logscale x\nset format x '%%g'\n");
		p++;
	}
	fprintf(g, "unset multiplot\n");
	if (fclose(g)) {
		err = -errno;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto out;
	}
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);
		int err_fd = open(errors, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		if (err_fd >= 0) /* its message, several lines long, becomes one of ours */
			dup2(err_fd, STDERR_FILENO);
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		last_line(errors, said, sizeof(said));
		if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
			elog("--plot: gnuplot is not installed (Debian: gnuplot-nox)");
		else
			elog("--plot: gnuplot failed%s%s", *said ? ": " : "", said);
		err = -EIO;
	}
out:
	if (err && err != -EIO && err != -ENOENT && err != -EINVAL)
		elog("--plot: %s", strerror(-err));
	/* the temporary files go, whatever happened */
	for (int p = 0; p < MAX_PANELS; p++) {
		snprintf(data, sizeof(data), "%s/panel%d.dat", dir, p);
		unlink(data);
	}
	unlink(script);
	unlink(errors);
	rmdir(dir);
	return err;
}
