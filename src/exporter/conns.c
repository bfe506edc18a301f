// SPDX-License-Identifier: GPL-2.0
/*
 * The connections of every listen address, and those of them that wait for
 * a request header (oldest first). libmicrohttpd's timeout is per read: a
 * client that trickles a header a byte at a time (slowloris) keeps its slot
 * for as long as it likes, and 1,024 such clients once held every slot
 * while scrapes were refused. Here a header must be whole within
 * --web.timeout of the connection or of the previous answer, and at the
 * limit a new connection takes the slot of the one that has waited longest
 * for its header: a scraper's header comes in one packet, so it is never
 * the one pushed out, and it is answered while any number trickle.
 */
#include <stdlib.h>
#include <sys/socket.h>

#include "exporter.h"
#include "sysinfo.h"

struct exporter_conn {
	struct exporter_conn *prev, *next; /* in the waiting list */
	double since;			   /* waiting for a header since (sysinfo_monotonic) */
	int fd;
	bool waiting, evicted;
};

static void append(struct exporter_conns *c, struct exporter_conn *x)
{
	x->since = sysinfo_monotonic();
	x->prev = c->tail;
	x->next = NULL;
	if (c->tail)
		c->tail->next = x;
	else
		c->head = x;
	c->tail = x;
	x->waiting = true;
}

static void unlink_waiting(struct exporter_conns *c, struct exporter_conn *x)
{
	if (!x->waiting)
		return;
	if (x->prev)
		x->prev->next = x->next;
	else
		c->head = x->next;
	if (x->next)
		x->next->prev = x->prev;
	else
		c->tail = x->prev;
	x->prev = x->next = NULL;
	x->waiting = false;
}

/*
 * X's socket shut down: libmicrohttpd reads its end and closes it. Under the
 * lock, so never after it was closed (its number another's by then): it is
 * told of the close (conns_closed) before it closes the socket.
 */
static void evict(struct exporter_conns *c, struct exporter_conn *x)
{
	unlink_waiting(c, x);
	x->evicted = true;
	c->evicted++;
	shutdown(x->fd, SHUT_RDWR);
}

void conns_init(struct exporter_conns *c)
{
	pthread_mutex_init(&c->lock, NULL);
}

struct exporter_conn *conns_opened(struct exporter_conns *c, int fd)
{
	struct exporter_conn *x = calloc(1, sizeof(*x));

	pthread_mutex_lock(&c->lock);
	c->open++;
	if (x) {
		x->fd = fd;
		append(c, x);
	}
	pthread_mutex_unlock(&c->lock);
	return x;
}

void conns_closed(struct exporter_conns *c, struct exporter_conn *x)
{
	pthread_mutex_lock(&c->lock);
	c->open--;
	if (x) {
		unlink_waiting(c, x);
		if (x->evicted)
			c->evicted--;
	}
	pthread_mutex_unlock(&c->lock);
	free(x);
}

void conns_request(struct exporter_conns *c, struct exporter_conn *x)
{
	if (!x)
		return;
	pthread_mutex_lock(&c->lock);
	unlink_waiting(c, x);
	pthread_mutex_unlock(&c->lock);
}

void conns_answered(struct exporter_conns *c, struct exporter_conn *x)
{
	if (!x)
		return;
	pthread_mutex_lock(&c->lock);
	if (!x->waiting && !x->evicted)
		append(c, x);
	pthread_mutex_unlock(&c->lock);
}

bool conns_admit(struct exporter_conns *c, unsigned int max)
{
	bool yes;

	pthread_mutex_lock(&c->lock);
	yes = c->open - c->evicted < max;
	if (!yes && c->head) {
		evict(c, c->head);
		yes = true;
	}
	pthread_mutex_unlock(&c->lock);
	return yes;
}

void conns_expire(struct exporter_conns *c, double deadline_s)
{
	double now = sysinfo_monotonic();

	pthread_mutex_lock(&c->lock);
	while (c->head && now - c->head->since >= deadline_s)
		evict(c, c->head);
	pthread_mutex_unlock(&c->lock);
}

void conns_free(struct exporter_conns *c)
{
	pthread_mutex_destroy(&c->lock);
}
