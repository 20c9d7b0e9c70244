// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "daemon/journal.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <systemd/sd-journal.h>

#include "lib/log.h"
#include "lib/logfmt.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"
#define MAX_FIELDS 32
#define FIELD_MAX 256

struct fields {
	struct iovec iov[MAX_FIELDS];
	char text[MAX_FIELDS][FIELD_MAX];
	size_t n;
};

static void add_text(struct fields *f, const char *name, const char *value);

/* journald's rule for a field name: A-Z, 0-9 and _, not starting with _
 * or a digit, at most 64 characters.  Keys that name journald's own
 * fields are left to it. */
static int add_pair(const char *key, size_t klen, const char *value, void *arg)
{
	struct fields *f = arg;
	char name[65];

	if (f->n >= MAX_FIELDS || !klen || klen >= sizeof(name) || key[0] == '_' ||
	    (key[0] >= '0' && key[0] <= '9'))
		return 0;
	for (size_t i = 0; i < klen; i++) {
		char c = key[i];

		name[i] = c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c == '-' || c == '.' ? '_' : c;
	}
	name[klen] = '\0';
	if (!strcmp(name, "MESSAGE") || !strcmp(name, "PRIORITY") || !strncmp(name, "SYSLOG_", 7) ||
	    !strncmp(name, "CODE_", 5))
		return 0;
	add_text(f, name, value);
	return 0;
}

static void add_text(struct fields *f, const char *name, const char *value)
{
	snprintf(f->text[f->n], FIELD_MAX, "%s=%s", name, value);
	f->iov[f->n].iov_base = f->text[f->n];
	f->iov[f->n].iov_len = strlen(f->text[f->n]);
	f->n++;
}

static bool journal_sink(int priority, const char *line)
{
	/* On the stack: the reload job's thread logs too (default stack). */
	struct fields f;
	char message[8 + 4096];
	char value[FIELD_MAX], prio[4];

	/* MESSAGE whole (the log's line is at most 4096 bytes). */
	snprintf(message, sizeof(message), "MESSAGE=%s", line);
	f.iov[0].iov_base = message;
	f.iov[0].iov_len = strlen(message);
	f.n = 1;
	snprintf(prio, sizeof(prio), "%d", priority);
	add_text(&f, "PRIORITY", prio);
	add_text(&f, "SYSLOG_IDENTIFIER", "sluiced");
	if (!strncmp(line, "event=", 6))
		sl_logfmt_each(line, value, sizeof(value), add_pair, &f);
	return sd_journal_sendv(f.iov, (int)f.n) >= 0;
}

/* sd_journal_sendv succeeds silently when journald's socket is missing
 * (the line would be lost): only with the socket there is the sink used. */
void sl_journal_fields_init(void)
{
	if (sl_log_to_journal() && !access(JOURNAL_SOCKET, W_OK))
		sl_log_set_journal_sink(journal_sink);
}
