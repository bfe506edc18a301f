// SPDX-License-Identifier: GPL-2.0
/*
 * threadstorm: many short-lived threads that contend on kernel locks
 * (mmap_lock through mmap/munmap, a futex through a shared mutex), as an
 * unrelated busy host does while a traced VM runs. Used by test_scale.sh:
 * none of them may take a place in kvmmmu's per-thread maps.
 *
 * Usage: threadstorm THREADS [WAVE]   (THREADS in waves of WAVE at once)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;

static void *contend(void *arg)
{
	(void)arg;
	for (int i = 0; i < 64; i++) {
		void *p = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		if (p != MAP_FAILED) {
			*(volatile char *)p = 1; /* a page fault under mmap_lock */
			munmap(p, 1 << 16);
		}
		pthread_mutex_lock(&shared);
		pthread_mutex_unlock(&shared);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long total = argc > 1 ? strtol(argv[1], NULL, 10) : 5000;
	long wave = argc > 2 ? strtol(argv[2], NULL, 10) : 50;
	pthread_t *t;
	long started = 0;

	if (total <= 0 || wave <= 0 || wave > 4096) {
		fprintf(stderr, "usage: threadstorm THREADS [WAVE]\n");
		return 2;
	}
	t = calloc((size_t)wave, sizeof(*t));
	if (!t)
		return 1;
	while (started < total) {
		long n = total - started < wave ? total - started : wave;

		for (long i = 0; i < n; i++)
			if (pthread_create(&t[i], NULL, contend, NULL)) {
				perror("threadstorm: pthread_create");
				return 1;
			}
		for (long i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		started += n;
	}
	printf("%ld threads\n", started);
	free(t);
	return 0;
}
