/*
 * list.h - the one intrusive doubly-linked list of the library.
 *
 * A list head and its nodes are the same type, embedded in the objects they
 * link; rpcrdma__container_of() gets back from a node to its object.  A head
 * is circular: an empty list points at itself.  A removed node is left
 * pointing at itself, so removing it twice is harmless.  Nothing here locks.
 */
#ifndef RPCRDMA_COMMON_LIST_H
#define RPCRDMA_COMMON_LIST_H

#include <stdbool.h>
#include <stddef.h>

/* The object of type @type whose member @member is at @ptr. */
#define rpcrdma__container_of(ptr, type, member)                                                   \
	((type *)(void *)((char *)(ptr)-offsetof(type, member)))

struct rpcrdma__list {
	struct rpcrdma__list *prev, *next;
};

/**
 * rpcrdma__list_init - make @h an empty list (or a node linked to nothing)
 * @h: the head or node
 */
static inline void rpcrdma__list_init(struct rpcrdma__list *h)
{
	h->prev = h->next = h;
}

/**
 * rpcrdma__list_add_head - link @n first in @h
 * @h: the list
 * @n: a node not on any list
 */
static inline void rpcrdma__list_add_head(struct rpcrdma__list *h, struct rpcrdma__list *n)
{
	n->next = h->next;
	n->prev = h;
	h->next->prev = n;
	h->next = n;
}

/**
 * rpcrdma__list_add_tail - link @n last in @h
 * @h: the list
 * @n: a node not on any list
 */
static inline void rpcrdma__list_add_tail(struct rpcrdma__list *h, struct rpcrdma__list *n)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

/**
 * rpcrdma__list_del - unlink @n from its list and leave it pointing at itself
 * @n: a node, linked or not
 */
static inline void rpcrdma__list_del(struct rpcrdma__list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = n;
}

/**
 * rpcrdma__list_empty - whether @h links no node
 * @h: the list
 */
static inline bool rpcrdma__list_empty(const struct rpcrdma__list *h)
{
	return h->next == h;
}

/**
 * rpcrdma__list_first - the first node of @h
 * @h: the list
 *
 * Return: the first node, or NULL when @h is empty.
 */
static inline struct rpcrdma__list *rpcrdma__list_first(const struct rpcrdma__list *h)
{
	return h->next == h ? NULL : h->next;
}

/**
 * rpcrdma__list_last - the last node of @h
 * @h: the list
 *
 * Return: the last node, or NULL when @h is empty.
 */
static inline struct rpcrdma__list *rpcrdma__list_last(const struct rpcrdma__list *h)
{
	return h->prev == h ? NULL : h->prev;
}

/* Visit each node @it of @h; the body must not unlink @it. */
#define rpcrdma__list_foreach(it, h) for ((it) = (h)->next; (it) != (h); (it) = (it)->next)

/* Visit each node @it of @h; the body may unlink @it (@nx holds the next). */
#define rpcrdma__list_foreach_safe(it, nx, h)                                                      \
	for ((it) = (h)->next, (nx) = (it)->next; (it) != (h); (it) = (nx), (nx) = (it)->next)

#endif
