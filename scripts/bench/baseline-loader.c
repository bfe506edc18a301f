// SPDX-License-Identifier: GPL-2.0
/* Loads and attaches OBJ's programs until SIGINT; if the whole object does not
 * load (older kernel), retries with only the programs named after OBJ. */
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}
static int quiet(enum libbpf_print_level l, const char *f, va_list a)
{
	(void)l;
	(void)f;
	(void)a;
	return 0;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj = NULL;
	struct bpf_program *prog;
	int attempt, n = 0;

	if (argc < 2)
		return 2;
	libbpf_set_print(quiet);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (attempt = 0; attempt < 2 && !obj; attempt++) {
		obj = bpf_object__open_file(argv[1], NULL);
		if (!obj) {
			perror("open");
			return 1;
		}
		if (attempt) {
			bpf_object__for_each_program (prog, obj) {
				int keep = 0;

				for (int i = 2; i < argc; i++)
					keep |= !strcmp(bpf_program__name(prog), argv[i]);
				bpf_program__set_autoload(prog, keep);
			}
		}
		if (bpf_object__load(obj)) {
			fprintf(stderr, "load failed\n");
			bpf_object__close(obj);
			obj = NULL;
		}
	}
	if (!obj)
		return 1;
	bpf_object__for_each_program (prog, obj) {
		if (!bpf_program__autoload(prog))
			continue;
		if (!bpf_program__attach(prog)) {
			fprintf(stderr, "cannot attach %s\n", bpf_program__name(prog));
			return 1;
		}
		n++;
	}
	printf("Tracing: attached %d programs\n", n);
	fflush(stdout);
	while (!stop)
		pause();
	return 0;
}
