/* c-epoll-shared: work-sharing. All `workers` threads wait on ONE epoll set; any of them takes the
 * next ready connection. EPOLLONESHOT hands each event to exactly one thread, which re-arms the
 * connection (EPOLL_CTL_MOD) once it has answered, so a connection is never handled twice at once.
 * work busy-waits in the thread that took the event (the other threads keep taking connections);
 * counter increments a shared atomic (sb.h). */
#define _GNU_SOURCE
#include "sb.h"
#include <pthread.h>
#include <sys/epoll.h>
#include <time.h>

#define MAX_EVENTS 16 /* small batches: a thread holding many events would keep them from the others */

struct conn {
    struct conn *prev, *next; /* hello-timeout: place in the shared list, least recently active first */
    long long deadline_ms;
    int fd, timed;            /* timed: linked in the list (cleared when it expires) */
    int closing;              /* work, counter: close once the output is written (a bad request) */
    size_t in_len;            /* work, counter: request bytes in buf not yet answered */
    char *out;                /* out[out_off..out_len] still to be written */
    size_t out_off, out_len;
    char buf[];               /* echo: in and out; work, counter: in, then out */
};

/* hello-timeout. A timerfd per connection would be a second fd whose events race with the
 * connection's own on another thread, needing a lock per connection anyway. Instead one list
 * under one mutex: all timeouts are equal, so activity order is deadline order and a touch is O(1).
 * Expiry only shutdown()s the socket; the thread that gets the resulting event closes it, so the
 * connection is freed by its current owner and never under another thread's feet. */
static struct { pthread_mutex_t lock; struct conn head; } timers = { PTHREAD_MUTEX_INITIALIZER, { 0 } };

static struct sb_args args;
static int epfd, lfd;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void timer_unlink(struct conn *c)
{
    c->prev->next = c->next, c->next->prev = c->prev;
}

static void timer_touch(struct conn *c, int fresh)
{
    if (args.scenario != SB_HELLO_TIMEOUT) return;
    pthread_mutex_lock(&timers.lock);
    if (fresh || c->timed) {
        if (c->timed) timer_unlink(c);
        c->timed = 1;
        c->deadline_ms = now_ms() + args.timeout_ms;
        c->prev = timers.head.prev, c->next = &timers.head;
        timers.head.prev->next = c, timers.head.prev = c;
    }
    pthread_mutex_unlock(&timers.lock);
}

/* Ends the expired connections; returns how long epoll_wait may sleep. */
static int timers_expire(void)
{
    if (args.scenario != SB_HELLO_TIMEOUT) return -1;
    int wait_ms = -1;
    long long now = now_ms();
    pthread_mutex_lock(&timers.lock);
    for (struct conn *c; (c = timers.head.next) != &timers.head;) {
        if (c->deadline_ms > now) { wait_ms = (int)(c->deadline_ms - now); break; }
        timer_unlink(c);
        c->timed = 0;
        shutdown(c->fd, SHUT_RDWR);
    }
    pthread_mutex_unlock(&timers.lock);
    return wait_ms;
}

static void conn_close(struct conn *c)
{
    if (args.scenario == SB_HELLO_TIMEOUT) {
        pthread_mutex_lock(&timers.lock);
        if (c->timed) timer_unlink(c);
        pthread_mutex_unlock(&timers.lock);
    }
    close(c->fd);
    free(c);
}

static void conn_arm(struct conn *c, uint32_t events, int op)
{
    struct epoll_event ev = { .events = events | EPOLLONESHOT, .data.ptr = c };
    epoll_ctl(epfd, op, c->fd, &ev);
}

/* Writes what is pending: 1 when all is written, 0 when the socket is full, -1 on error. */
static int conn_flush(struct conn *c)
{
    while (c->out_off < c->out_len) {
        ssize_t n = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
        if (n < 0) return errno == EAGAIN ? 0 : -1;
        c->out_off += n;
    }
    c->out_off = c->out_len = 0;
    return 1;
}

/* work, counter: answers the complete requests in buf, flushing as the output fills; as conn_flush. */
static int conn_serve(struct conn *c)
{
    for (;;) {
        c->out_len = sb_serve(args.scenario, c->buf, &c->in_len, c->out, SB_BUF_BYTES, &c->closing);
        if (c->out_len == 0) return 1; /* all answered: read on */
        int r = conn_flush(c);
        if (r <= 0) return r;
        if (c->closing) return -1; /* a bad request was answered */
    }
}

static void conn_on_event(struct conn *c)
{
    int parsed = args.scenario >= SB_WORK;
    int r = 1; /* 1: answered, 0: output waits for room, -1: close */
    if (c->out_len) {
        r = conn_flush(c);
        if (r > 0 && c->closing) r = -1;
        else if (r > 0 && parsed) r = conn_serve(c);
    } else {
        char scratch[SB_BUF_BYTES];
        char *dst = args.scenario == SB_ECHO ? c->buf : parsed ? c->buf + c->in_len : scratch;
        ssize_t n = read(c->fd, dst, SB_BUF_BYTES - c->in_len);
        if (n == 0 || (n < 0 && errno != EAGAIN)) r = -1;
        else if (n < 0) r = 1; /* nothing after all */
        else if (parsed) c->in_len += n, r = conn_serve(c);
        else if (args.scenario == SB_ECHO) c->out_len = n, r = conn_flush(c);
        else if (write(c->fd, SB_HELLO_RESPONSE, SB_HELLO_LEN) != SB_HELLO_LEN) r = -1;
        else timer_touch(c, 0);
    }
    if (r < 0) conn_close(c);
    else conn_arm(c, r ? EPOLLIN : EPOLLOUT, EPOLL_CTL_MOD);
}

static void accept_all(void)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
        if (fd < 0) return; /* EAGAIN (another thread took it), or out of descriptors */
        size_t bytes = args.scenario == SB_ECHO ? SB_BUF_BYTES : args.scenario >= SB_WORK ? 2 * SB_BUF_BYTES : 0;
        struct conn *c = calloc(1, sizeof *c + bytes);
        c->fd = fd;
        c->out = args.scenario >= SB_WORK ? c->buf + SB_BUF_BYTES : c->buf;
        sb_nodelay(fd);
        timer_touch(c, 1);
        conn_arm(c, EPOLLIN, EPOLL_CTL_ADD);
    }
}

static void *worker_run(void *unused)
{
    (void)unused;
    struct epoll_event events[MAX_EVENTS];
    for (;;) {
        int n = epoll_wait(epfd, events, MAX_EVENTS, timers_expire());
        for (int i = 0; i < n; i++) {
            if (events[i].data.ptr) conn_on_event(events[i].data.ptr);
            else accept_all();
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    args = sb_parse(argc, argv, "hello hello-timeout echo work counter");
    timers.head.prev = timers.head.next = &timers.head;
    lfd = sb_listen(&args, 0, 1);
    epfd = epoll_create1(0);
    /* Level-triggered, so a thread that finds the backlog empty loses nothing; EPOLLEXCLUSIVE
     * asks the kernel to wake one waiter per new connection rather than every thread. */
    struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = NULL };
    epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev);
    return sb_run_workers(&args, worker_run);
}
