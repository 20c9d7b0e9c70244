/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * An intrusive doubly-linked list (lib): the element embeds a struct
 * sl_link, the list keeps head, tail and length.  O(1) append and remove
 * of any element, no allocation.  The queueset's FIFOs and executing sets,
 * its global arrival list, and the workload scheduler's FIFOs are all one.
 */
#ifndef SLUICE_LIST_H
#define SLUICE_LIST_H

#include <stddef.h>

struct sl_link {
	struct sl_link *prev, *next;
};

struct sl_list {
	struct sl_link *head, *tail;
	size_t n;
};

#define sl_container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
/* The element a link belongs to, or NULL for a NULL link. */
#define sl_list_entry(link, type, member) \
	((link) ? sl_container_of((link), type, member) : (type *)NULL)

static inline void sl_list_append(struct sl_list *l, struct sl_link *e)
{
	e->next = NULL;
	e->prev = l->tail;
	if (l->tail)
		l->tail->next = e;
	else
		l->head = e;
	l->tail = e;
	l->n++;
}

/* e goes right after pos (pos NULL: at the head). */
static inline void sl_list_insert_after(struct sl_list *l, struct sl_link *pos, struct sl_link *e)
{
	struct sl_link *next = pos ? pos->next : l->head;

	e->prev = pos;
	e->next = next;
	if (pos)
		pos->next = e;
	else
		l->head = e;
	if (next)
		next->prev = e;
	else
		l->tail = e;
	l->n++;
}

static inline void sl_list_remove(struct sl_list *l, struct sl_link *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		l->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		l->tail = e->prev;
	e->prev = e->next = NULL;
	l->n--;
}

#endif
