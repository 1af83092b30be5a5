/* SPDX-License-Identifier: MIT */
/*
 * The library's intrusive list: circular and doubly linked, so that adding
 * and removing are O(1) and need no allocation. A struct list_node is both
 * the head of a list and the link embedded in each element; an empty head,
 * or a node on no list, points to itself. Not installed.
 *
 *	struct list_node lru;            the head
 *	struct list_node node;           in each element
 *
 *	list_for_each(n, &lru)
 *		use(list_entry(n, struct ttm_bo, node));
 *
 * Nothing here locks: the owner of the list says what protects it.
 */
#ifndef TTMSIM_UTIL_LIST_H
#define TTMSIM_UTIL_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "util/compiler.h"

/*
 * The node is struct ttm_list_node, which ttmsim/bo.h also defines
 * (struct ttm_bo embeds one and is public); the same guard keeps the two
 * definitions from clashing.
 */
#ifndef TTM_LIST_NODE_DEFINED
#define TTM_LIST_NODE_DEFINED
struct ttm_list_node {
	struct ttm_list_node *prev, *next;
};
#endif
#define list_node ttm_list_node

/*
 * A link store. Relaxed atomic: the same plain store on every target, but
 * a reader outside the list's lock (bo_lru_prefetch(), a hint) reads the
 * links with relaxed atomic loads, and the pair is then no data race
 * (for C11 and ThreadSanitizer).
 */
#define list_link_set(field, value) \
	__atomic_store_n(&(field), (value), __ATOMIC_RELAXED)

/* An empty list, or a node on none. */
static inline void list_init(struct list_node *node)
{
	list_link_set(node->prev, node);
	list_link_set(node->next, node);
}

static inline bool list_empty(const struct list_node *head)
{
	return head->next == head;
}

/* Link @node in front of @pos: at the tail when @pos is the head. */
static inline void list_add_before(struct list_node *node,
				   struct list_node *pos)
{
	list_link_set(node->prev, pos->prev);
	list_link_set(node->next, pos);
	list_link_set(pos->prev->next, node);
	list_link_set(pos->prev, node);
}

static inline void list_add_tail(struct list_node *node,
				 struct list_node *head)
{
	list_add_before(node, head);
}

/* Unlink @node, which is then on no list (deleting it again is harmless). */
static inline void list_del(struct list_node *node)
{
	list_link_set(node->prev->next, node->next);
	list_link_set(node->next->prev, node->prev);
	list_init(node);
}

static inline void list_move_tail(struct list_node *node,
				  struct list_node *head)
{
	list_del(node);
	list_add_tail(node, head);
}

/* The element that embeds @node as its @member. */
#define list_entry(node, type, member) container_of(node, type, member)

/* The first element of @head, or NULL if it is empty. */
#define list_first_entry_or_null(head, type, member)                    \
	(list_empty(head) ? NULL : list_entry((head)->next, type, member))

/* @n walks the nodes of @head, head to tail; @n must stay on the list. */
#define list_for_each(n, head) \
	for ((n) = (head)->next; (n) != (head); (n) = (n)->next)

/* From the tail back to the head. */
#define list_for_each_reverse(n, head) \
	for ((n) = (head)->prev; (n) != (head); (n) = (n)->prev)

#endif /* TTMSIM_UTIL_LIST_H */
