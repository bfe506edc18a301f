// SPDX-License-Identifier: GPL-2.0
/*
 * Reader for the kvmmmu CSV format v1 and v2. Strict: the compare command and the
 * tests rely on it to reject anything that is not exactly what we write, with
 * the line number and the reason.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csv.h"

#define CSV_FIELDS 10 /* v3; v2 has the first 9, v1 the first 8 */
/* Longer lines are refused as they arrive: /dev/zero, or a binary file, is an error at once. */
#define CSV_MAX_LINE 65536

struct cursor {
	const char *p, *end;
	long line;
	char *err;
	size_t err_len;
};

static int fail(struct cursor *c, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	n = snprintf(c->err, c->err_len, "line %ld: ", c->line);
	va_start(ap, fmt);
	if (n < c->err_len)
		vsnprintf(c->err + n, c->err_len - n, fmt, ap);
	va_end(ap);
	/* one line, whatever the field quoted in it held (a quoted newline, say) */
	for (char *p = c->err; c->err_len && *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return -EINVAL;
}

/* Returns the next physical line (without its CR/LF) as a malloc()ed string. */
static char *next_line(struct cursor *c)
{
	const char *nl = memchr(c->p, '\n', c->end - c->p);
	const char *stop = nl ? nl : c->end;
	size_t len = stop - c->p;
	char *s;

	if (len && c->p[len - 1] == '\r')
		len--;
	s = strndup(c->p, len);
	c->p = nl ? nl + 1 : c->end;
	c->line++;
	return s;
}

/*
 * Splits one record into fields per RFC 4180. A quoted field may span lines,
 * so this reads from the cursor rather than from a line.
 */
static int read_record(struct cursor *c, char **fields, int *n_fields)
{
	size_t cap = 64, len = 0;
	char *buf = malloc(cap);
	int n = 0;
	long start_line = c->line + 1;

	if (!buf)
		return -ENOMEM;
	c->line = start_line;
	for (;;) {
		bool quoted = false;

		len = 0;
		if (c->p < c->end && *c->p == '"') {
			quoted = true;
			c->p++;
		}
		for (;;) {
			char ch;

			if (c->p >= c->end) {
				if (quoted) {
					free(buf);
					c->line = start_line; /* where the quote opened */
					return fail(c, "unterminated quoted field");
				}
				break;
			}
			ch = *c->p;
			if (quoted) {
				if (ch == '"') {
					if (c->p + 1 < c->end && c->p[1] == '"') {
						c->p++;
					} else {
						c->p++;
						quoted = false;
						if (c->p < c->end && *c->p != ',' &&
						    *c->p != '\n' && *c->p != '\r') {
							free(buf);
							return fail(c,
								    "text after a closing quote");
						}
						continue;
					}
				} else if (ch == '\n') {
					c->line++;
				}
			} else if (ch == ',' || ch == '\n' || ch == '\r') {
				break;
			} else if (ch == '"') {
				free(buf);
				return fail(c, "quote inside an unquoted field");
			}
			if (len + 2 > cap) {
				char *nb = realloc(buf, cap *= 2);

				if (!nb) {
					free(buf);
					return -ENOMEM;
				}
				buf = nb;
			}
			buf[len++] = ch;
			c->p++;
		}
		buf[len] = '\0';
		if (n == CSV_FIELDS) {
			free(buf);
			return fail(c, "more than %d fields", CSV_FIELDS);
		}
		fields[n++] = strdup(buf);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			continue;
		}
		if (c->p < c->end && *c->p == '\r')
			c->p++;
		if (c->p < c->end && *c->p == '\n')
			c->p++;
		break;
	}
	free(buf);
	*n_fields = n;
	return 0;
}

static bool parse_number(const char *s, double *out)
{
	char *end;

	if (!*s || isspace((unsigned char)*s))
		return false;
	errno = 0;
	*out = strtod(s, &end);
	return !errno && !*end && isfinite(*out);
}

/* VALUE: a decimal integer is read as one (a double is exact only to 2^53), else a number. */
static int parse_value(const char *s, struct csv_record *r)
{
	if (*s && s[strspn(s, "0123456789")] == '\0') {
		errno = 0;
		r->u64 = strtoull(s, NULL, 10);
		if (errno)
			return -ERANGE;
		r->kind = CSV_U64;
		r->value = (double)r->u64;
		return 0;
	}
	if (!parse_number(s, &r->value))
		return -EINVAL;
	r->kind = CSV_F64;
	return 0;
}

static bool parse_int(const char *s, int *out)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v > INT32_MAX)
		return false;
	*out = (int)v;
	return true;
}

static int check_record(struct cursor *c, char **f, struct csv_record *r)
{
	double le;

	if (!parse_number(f[0], &r->ts) || r->ts < 0)
		return fail(c, "ts '%s' is not a non-negative number", f[0]);
	if (!parse_int(f[1], &r->pid))
		return fail(c, "pid '%s' is not a non-negative integer", f[1]);
	if (!*f[3])
		r->vcpu = CSV_NO_VCPU;
	else if (!parse_int(f[3], &r->vcpu))
		return fail(c, "vcpu '%s' is neither empty nor a non-negative integer", f[3]);
	if (!*f[4])
		return fail(c, "source is empty");
	if (!*f[5])
		return fail(c, "metric is empty");
	/* a slow fault's stack frame (--stack) is the one le that is text */
	if (!strcmp(f[4], "slow") && !strcmp(f[5], "slow_fault_stack")) {
		if (!*f[6])
			return fail(c, "slow_fault_stack without its frame (le is empty)");
	} else if (*f[6] && strcmp(f[6], "+Inf") && !parse_number(f[6], &le)) {
		return fail(c, "le '%s' is neither empty, a number nor +Inf", f[6]);
	}
	switch (parse_value(f[7], r)) {
	case 0:
		break;
	case -ERANGE:
		return fail(c, "value '%s' is beyond 2^64 - 1", f[7]);
	default:
		return fail(c, "value '%s' is not a number", f[7]);
	}
	r->comm = f[2];
	r->source = f[4];
	r->metric = f[5];
	r->le = *f[6] ? f[6] : NULL;
	r->vm = f[8] && *f[8] ? f[8] : NULL;
	/* before v3 every process had one VM as far as kvmmmu knew */
	r->vm_index = r->pid ? 1 : 0;
	if (f[9] && !*f[9])
		r->vm_index = 0;
	else if (f[9] && (!parse_int(f[9], &r->vm_index) || !r->vm_index))
		return fail(c, "vm_index '%s' is neither empty nor a positive integer", f[9]);
	return 0;
}

static int parse_meta(struct cursor *c, struct csv_table *t, char *line)
{
	char *eq = strchr(line + 2, '=');
	struct csv_meta_kv *kv;

	if (!eq || eq == line + 2)
		return fail(c, "metadata line is not '# key=value'");
	kv = realloc(t->meta, (t->n_meta + 1) * sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	t->meta = kv;
	*eq = '\0';
	kv[t->n_meta].key = strdup(line + 2);
	kv[t->n_meta].value = strdup(eq + 1);
	t->n_meta++;
	return 0;
}

static int parse_preamble(struct cursor *c, struct csv_table *t)
{
	char *line = next_line(c);
	int err = 0;

	const char *header = CSV_HEADER;

	if (strncmp(line, "# kvmmmu-csv ", 13)) {
		err = fail(c, "not a kvmmmu CSV file (expected '%s')", CSV_MAGIC);
	} else if (!strcmp(line, CSV_MAGIC)) {
		t->version = 3;
	} else if (!strcmp(line, CSV_MAGIC_V2)) {
		t->version = 2;
		header = CSV_HEADER_V2;
	} else if (!strcmp(line, CSV_MAGIC_V1)) {
		t->version = 1;
		header = CSV_HEADER_V1;
	} else {
		err = fail(c, "unsupported format version '%s' (this reader knows 1, 2 and 3)",
			   line + 13);
	}
	free(line);
	while (!err) {
		if (c->p >= c->end)
			return fail(c, "missing header line '%s'", header);
		line = next_line(c);
		if (!strncmp(line, "# ", 2))
			err = parse_meta(c, t, line);
		else if (strcmp(line, header))
			err = fail(c, "expected header '%s'", header);
		else {
			free(line);
			return 0;
		}
		free(line);
	}
	return err;
}

int csv_read_stream(FILE *f, struct csv_table *t, char *err, size_t err_len)
{
	struct cursor c = {.err = err, .err_len = err_len};
	char *data = NULL;
	size_t size = 0, cap = 0, rd;
	int ret, nfields;

	size_t line_len = 0;
	long lines = 1;

	memset(t, 0, sizeof(*t));
	do {
		if (size + 65536 > cap) {
			char *nd = realloc(data, cap = cap * 2 + 65536);

			if (!nd) {
				free(data);
				return -ENOMEM;
			}
			data = nd;
		}
		rd = fread(data + size, 1, cap - size, f);
		/* what no kvmmmu CSV holds, said as soon as it arrives */
		for (size_t i = size; i < size + rd; i++) {
			if (!data[i]) {
				free(data);
				snprintf(err, err_len, "line %ld: a NUL byte (not a text file)",
					 lines);
				return -EINVAL;
			}
			line_len = data[i] == '\n' ? 0 : line_len + 1;
			lines += data[i] == '\n';
			if (line_len > CSV_MAX_LINE) {
				free(data);
				snprintf(err, err_len, "line %ld: longer than %d bytes", lines,
					 CSV_MAX_LINE);
				return -EINVAL;
			}
		}
		size += rd;
	} while (rd);
	if (ferror(f)) {
		free(data);
		snprintf(err, err_len, "read error");
		return -EIO;
	}
	c.p = data;
	c.end = data + size;
	ret = parse_preamble(&c, t);
	nfields = CSV_FIELDS - (3 - t->version); /* each version added a column */
	while (!ret && c.p < c.end) {
		char *fields[CSV_FIELDS] = {};
		struct csv_record *rows;
		int n = 0;

		ret = read_record(&c, fields, &n);
		if (!ret && n != nfields)
			ret = fail(&c, "expected %d fields, found %d", nfields, n);
		if (!ret) {
			rows = realloc(t->rows, (t->n_rows + 1) * sizeof(*rows));
			if (!rows) {
				ret = -ENOMEM;
			} else {
				t->rows = rows;
				ret = check_record(&c, fields, &rows[t->n_rows]);
			}
		}
		if (!ret) {
			struct csv_record *r = &t->rows[t->n_rows++];

			r->line = c.line;
			/* comm, source, metric, le and a value that is no integer now belong to the
			 * row */
			r->value_text = r->kind == CSV_F64 ? fields[7] : NULL;
			free(fields[0]);
			free(fields[1]);
			free(fields[3]);
			if (!*fields[6])
				free(fields[6]);
			if (!r->value_text)
				free(fields[7]);
			if (fields[8] && !*fields[8])
				free(fields[8]);
			free(fields[9]);
		} else {
			for (int i = 0; i < CSV_FIELDS; i++)
				free(fields[i]);
		}
	}
	free(data);
	if (ret)
		csv_table_free(t);
	return ret;
}

int csv_read_file(const char *path, struct csv_table *t, char *err, size_t err_len)
{
	FILE *f = fopen(path, "r");
	struct stat st;
	int ret;

	if (!f) {
		ret = -errno;
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		return ret;
	}
	if (!fstat(fileno(f), &st) && S_ISDIR(st.st_mode)) {
		fclose(f);
		snprintf(err, err_len, "%s: %s", path, strerror(EISDIR));
		return -EISDIR;
	}
	ret = csv_read_stream(f, t, err, err_len);
	fclose(f);
	return ret;
}

const char *csv_table_meta(const struct csv_table *t, const char *key)
{
	for (size_t i = 0; i < t->n_meta; i++)
		if (!strcmp(t->meta[i].key, key))
			return t->meta[i].value;
	return NULL;
}

void csv_table_free(struct csv_table *t)
{
	for (size_t i = 0; i < t->n_meta; i++) {
		free(t->meta[i].key);
		free(t->meta[i].value);
	}
	for (size_t i = 0; i < t->n_rows; i++) {
		free(t->rows[i].comm);
		free(t->rows[i].source);
		free(t->rows[i].metric);
		free(t->rows[i].le);
		free(t->rows[i].value_text);
		free(t->rows[i].vm);
	}
	free(t->meta);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
