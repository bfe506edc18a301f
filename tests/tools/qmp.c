// SPDX-License-Identifier: GPL-2.0
/*
 * Test helper: one QMP command to a QEMU's "-qmp unix:SOCKET,server=on".
 *
 *   qmp SOCKET COMMAND [ARGUMENTS-JSON]
 *
 * Connects, negotiates capabilities, sends COMMAND and prints its "return"
 * value (one line of JSON) on stdout; asynchronous events are skipped. Exits
 * 1 with QEMU's error description when the command fails, 2 on a broken
 * connection. The harness's guest has no socat and busybox's nc has no Unix
 * sockets, hence this.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* QMP answers one JSON object per line; a query-stats reply is a few KiB. */
static char *read_line(FILE *f)
{
	char *line = NULL;
	size_t cap = 0;

	if (getline(&line, &cap, f) < 0) {
		free(line);
		return NULL;
	}
	return line;
}

/* The next greeting, return or error: events ({"timestamp": ..., "event": ...}) are skipped. */
static char *read_reply(FILE *f)
{
	char *line;

	while ((line = read_line(f)) && strncmp(line, "{\"QMP\"", 6) &&
	       strncmp(line, "{\"return\"", 9) && strncmp(line, "{\"error\"", 8))
		free(line);
	return line;
}

/* Sends one command; prints its return value when PRINT. Returns the exit code. */
static int execute(FILE *f, const char *cmd, const char *args, int print)
{
	char *reply, *value, *end;

	if (args)
		fprintf(f, "{\"execute\": \"%s\", \"arguments\": %s}\n", cmd, args);
	else
		fprintf(f, "{\"execute\": \"%s\"}\n", cmd);
	fflush(f);
	reply = read_reply(f);
	if (!reply) {
		fprintf(stderr, "qmp: %s: connection closed\n", cmd);
		return 2;
	}
	if (!strncmp(reply, "{\"error\"", 8)) {
		fprintf(stderr, "qmp: %s: %s", cmd, reply);
		free(reply);
		return 1;
	}
	value = strstr(reply, "\"return\": ");
	end = strrchr(reply, '}');
	if (!value || !end) {
		fprintf(stderr, "qmp: %s: unexpected reply: %s", cmd, reply);
		free(reply);
		return 2;
	}
	if (print)
		printf("%.*s\n", (int)(end - value - 10), value + 10);
	free(reply);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	char *greeting;
	FILE *f;
	int fd, rc;

	if (argc < 3 || argc > 4 || strlen(argv[1]) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "usage: qmp SOCKET COMMAND [ARGUMENTS-JSON]\n");
		return 2;
	}
	strcpy(addr.sun_path, argv[1]);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		fprintf(stderr, "qmp: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	f = fdopen(fd, "r+");
	if (!f) {
		fprintf(stderr, "qmp: %s\n", strerror(errno));
		close(fd);
		return 2;
	}
	greeting = read_reply(f);
	if (!greeting || !strstr(greeting, "\"QMP\"")) {
		fprintf(stderr, "qmp: %s: no QMP greeting\n", argv[1]);
		free(greeting);
		fclose(f);
		return 2;
	}
	free(greeting);
	rc = execute(f, "qmp_capabilities", NULL, 0);
	if (!rc)
		rc = execute(f, argv[2], argc > 3 ? argv[3] : NULL, 1);
	fclose(f);
	return rc;
}
