/* sb_timers.h: the timers of an event loop beside epoll_wait, a binary min-heap of deadlines (libev's
 * and libuv's structure; nginx keeps a red-black tree): arm and cancel in O(log n), the nearest
 * deadline in O(1), so epoll_wait sleeps exactly until it. hello-timeout arms one when a read or a
 * write starts and cancels it when the operation completes. One heap per loop, never shared. */
#ifndef SB_TIMERS_H
#define SB_TIMERS_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* Embedded in what it times (a connection); the owner finds itself again with offsetof. */
struct sb_timer {
    long long deadline_ms;
    size_t slot; /* its index in the heap plus one; 0 while not armed */
};

struct sb_timers {
    struct sb_timer **heap; /* heap[0] is the nearest deadline */
    size_t len, cap;
};

static inline void sb_timers_put(struct sb_timers *t, size_t i, struct sb_timer *e)
{
    t->heap[i] = e;
    e->slot = i + 1;
}

/* Moves e from hole i towards the root, past every later deadline. */
static inline void sb_timers_up(struct sb_timers *t, size_t i, struct sb_timer *e)
{
    while (i > 0 && t->heap[(i - 1) / 2]->deadline_ms > e->deadline_ms) {
        sb_timers_put(t, i, t->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    sb_timers_put(t, i, e);
}

/* Moves e from hole i towards the leaves, past every earlier deadline. */
static inline void sb_timers_down(struct sb_timers *t, size_t i, struct sb_timer *e)
{
    for (size_t c; (c = 2 * i + 1) < t->len; i = c) {
        if (c + 1 < t->len && t->heap[c + 1]->deadline_ms < t->heap[c]->deadline_ms) c++;
        if (t->heap[c]->deadline_ms >= e->deadline_ms) break;
        sb_timers_put(t, i, t->heap[c]);
    }
    sb_timers_put(t, i, e);
}

static inline void sb_timer_cancel(struct sb_timers *t, struct sb_timer *e)
{
    if (!e->slot) return;
    size_t i = e->slot - 1;
    e->slot = 0;
    struct sb_timer *last = t->heap[--t->len];
    if (i == t->len) return; /* it was the last: nothing to move */
    if (i > 0 && t->heap[(i - 1) / 2]->deadline_ms > last->deadline_ms) sb_timers_up(t, i, last);
    else sb_timers_down(t, i, last);
}

static inline void sb_timer_arm(struct sb_timers *t, struct sb_timer *e, long long deadline_ms)
{
    sb_timer_cancel(t, e);
    if (t->len == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 1024;
        t->heap = realloc(t->heap, t->cap * sizeof *t->heap);
        if (!t->heap) { perror("timers"); exit(1); }
    }
    e->deadline_ms = deadline_ms;
    sb_timers_up(t, t->len++, e);
}

/* The timer that expires first, if its deadline has passed; NULL otherwise. */
static inline struct sb_timer *sb_timers_expired(const struct sb_timers *t, long long now_ms)
{
    return t->len && t->heap[0]->deadline_ms <= now_ms ? t->heap[0] : NULL;
}

/* epoll_wait's timeout: until the nearest deadline, -1 (forever) when none is armed. */
static inline int sb_timers_wait_ms(const struct sb_timers *t, long long now_ms)
{
    if (!t->len) return -1;
    long long left = t->heap[0]->deadline_ms - now_ms;
    return left > 0 ? (int)left : 0;
}

#endif
