// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <malloc.h>
#include <microhttpd.h>
#include <nettle/sha2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "auth.h"

#define AUTH_WORKERS 2
#define AUTH_QUEUE 64 /* checks waiting at most: past that, 503 */

struct auth_request {
	struct MHD_Connection *conn;
	char *user, *password;
	enum auth_verdict verdict;
	struct auth_request *next;
};

struct auth {
	const struct web_config *cfg;
	unsigned char salt[16];
	/* each user's last good password, salted and hashed */
	unsigned char good[WEB_MAX_USERS][SHA256_DIGEST_SIZE];
	bool has_good[WEB_MAX_USERS];
	pthread_mutex_t lock;
	pthread_cond_t work;
	struct auth_request *head, **tail;
	size_t queued;
	bool stopping;
	pthread_t workers[AUTH_WORKERS];
	int n_workers;
};

static void digest(const struct auth *a, const char *password, unsigned char *out)
{
	struct sha256_ctx ctx;

	sha256_init(&ctx);
	sha256_update(&ctx, sizeof(a->salt), a->salt);
	sha256_update(&ctx, strlen(password), (const uint8_t *)password);
	sha256_digest(&ctx, SHA256_DIGEST_SIZE, out);
	explicit_bzero(&ctx, sizeof(ctx)); /* its block holds the password's last bytes */
}

static int user_index(const struct auth *a, const char *user)
{
	for (size_t i = 0; i < a->cfg->n_users; i++)
		if (!strcmp(a->cfg->users[i].name, user))
			return (int)i;
	return -1;
}

/* Whether USER's PASSWORD was good before (in constant time over the digest). */
static bool known_good(struct auth *a, const char *user, const char *password)
{
	unsigned char d[SHA256_DIGEST_SIZE], diff = 0;
	int u = user_index(a, user);
	bool has;

	if (u < 0)
		return false;
	digest(a, password, d);
	pthread_mutex_lock(&a->lock);
	has = a->has_good[u];
	for (size_t i = 0; i < sizeof(d); i++)
		diff |= d[i] ^ a->good[u][i];
	pthread_mutex_unlock(&a->lock);
	explicit_bzero(d, sizeof(d));
	return has && !diff;
}

static void remember_good(struct auth *a, const char *user, const char *password)
{
	unsigned char d[SHA256_DIGEST_SIZE];
	int u = user_index(a, user);

	if (u < 0)
		return;
	digest(a, password, d);
	pthread_mutex_lock(&a->lock);
	memcpy(a->good[u], d, sizeof(d));
	a->has_good[u] = true;
	pthread_mutex_unlock(&a->lock);
	explicit_bzero(d, sizeof(d));
}

static void forget_credentials(struct auth_request *r)
{
	/*
	 * libmicrohttpd 0.9.75 makes the user name by cutting a copy of
	 * "user:password" at the ':', so the password also lies past the user
	 * name's NUL: the whole allocation is cleared.
	 */
	if (r->user) {
		explicit_bzero(r->user, malloc_usable_size(r->user));
		MHD_free(r->user);
	}
	if (r->password) {
		explicit_bzero(r->password, malloc_usable_size(r->password));
		MHD_free(r->password);
	}
	r->user = r->password = NULL;
}

static void *worker(void *arg)
{
	struct auth *a = arg;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		struct auth_request *r;

		while (!a->head && !a->stopping)
			pthread_cond_wait(&a->work, &a->lock);
		if (!a->head)
			break;
		r = a->head;
		a->head = r->next;
		if (!a->head)
			a->tail = &a->head;
		a->queued--;
		if (a->stopping) {
			r->verdict = AUTH_DENIED;
		} else {
			pthread_mutex_unlock(&a->lock);
			/* bcrypt: the slow part, on this thread, not the HTTP one */
			r->verdict = web_config_check_user(a->cfg, r->user, r->password)
					     ? AUTH_OK
					     : AUTH_DENIED;
			if (r->verdict == AUTH_OK)
				remember_good(a, r->user, r->password);
			pthread_mutex_lock(&a->lock);
		}
		forget_credentials(r);
		pthread_mutex_unlock(&a->lock);
		/* the handler runs again with the verdict */
		MHD_resume_connection(r->conn);
		pthread_mutex_lock(&a->lock);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

struct auth *auth_start(const struct web_config *cfg)
{
	struct auth *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->cfg = cfg;
	a->tail = &a->head;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->work, NULL);
	if (getrandom(a->salt, sizeof(a->salt), 0) != sizeof(a->salt)) {
		auth_free(a);
		return NULL;
	}
	for (; cfg->n_users && a->n_workers < AUTH_WORKERS; a->n_workers++) {
		int err = pthread_create(&a->workers[a->n_workers], NULL, worker, a);

		if (err) {
			auth_free(a);
			errno = err;
			return NULL;
		}
	}
	return a;
}

void auth_stop(struct auth *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stopping = true;
	pthread_cond_broadcast(&a->work);
	pthread_mutex_unlock(&a->lock);
	for (int i = 0; i < a->n_workers; i++)
		pthread_join(a->workers[i], NULL);
	a->n_workers = 0;
}

void auth_free(struct auth *a)
{
	if (!a)
		return;
	auth_stop(a);
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->work);
	explicit_bzero(a, sizeof(*a));
	free(a);
}

enum auth_verdict auth_check(struct auth *a, struct MHD_Connection *conn, void **req_cls)
{
	struct auth_request *r = *req_cls;

	if (!a->cfg->n_users)
		return AUTH_OK;
	if (r) /* called again: resumed with the worker's verdict (or still waiting) */
		return r->verdict;
	r = calloc(1, sizeof(*r));
	if (!r)
		return AUTH_BUSY;
	*req_cls = r;
	r->conn = conn;
	r->user = MHD_basic_auth_get_username_password(conn, &r->password);
	if (!r->user || !r->password) {
		forget_credentials(r);
		return r->verdict = AUTH_DENIED;
	}
	if (known_good(a, r->user, r->password)) {
		forget_credentials(r);
		return r->verdict = AUTH_OK;
	}
	/* a new password, a wrong one or an unknown user: bcrypt (a dummy hash for
	 * an unknown user, the same time), on a worker */
	pthread_mutex_lock(&a->lock);
	if (a->queued >= AUTH_QUEUE || a->stopping) {
		pthread_mutex_unlock(&a->lock);
		forget_credentials(r);
		return r->verdict = AUTH_BUSY;
	}
	r->verdict = AUTH_PENDING;
	/* suspended before queued: a worker may resume it at once */
	MHD_suspend_connection(conn);
	*a->tail = r;
	a->tail = &r->next;
	a->queued++;
	pthread_cond_signal(&a->work);
	pthread_mutex_unlock(&a->lock);
	return AUTH_PENDING;
}

void auth_request_done(void *req_cls)
{
	struct auth_request *r = req_cls;

	if (!r)
		return;
	forget_credentials(r);
	free(r);
}
