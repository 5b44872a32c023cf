/* c-epoll-shared: work-sharing. All `workers` threads wait on ONE epoll set; any of them takes the
 * next ready connection. EPOLLONESHOT hands each event to exactly one thread, which re-arms the
 * connection (EPOLL_CTL_MOD) once it has answered, so a connection is never handled twice at once.
 * work busy-waits in the thread that took the event (the other threads keep taking connections);
 * counter increments a shared atomic; file sends the file with sendfile(2) after its head (sb.h).
 * hello-timeout arms a timer when a read or a write starts and cancels it when the operation
 * completes, in per-worker timer heaps (sb_timers.h). */
#define _GNU_SOURCE
#include "sb.h"
#include "sb_timers.h"
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/sendfile.h>
#include <time.h>

#define MAX_EVENTS 16 /* small batches: a thread holding many events would keep them from the others */

struct worker;

struct conn {
    struct sb_timer timer;      /* hello-timeout: bounds the read or write under way, */
    struct worker *timer_owner; /* in the heap of the worker that armed it (NULL: none) */
    int fd;
    int closing;                /* work, counter, file: close once the output is written */
    size_t in_len;              /* work, counter, file: request bytes in buf not yet answered */
    char *out;                  /* out[out_off..out_len] still to be written, */
    size_t out_off, out_len;
    off_t file_off;             /* file: then file_left bytes of the file from file_off */
    size_t file_left;
    char buf[];                 /* echo: in and out; work, counter, file: in, then out */
};

/* hello-timeout. Each worker keeps the timers it arms in a heap of its own and sleeps in epoll_wait
 * until its nearest deadline. A connection is served by one thread at a time (EPOLLONESHOT) but not
 * always by the same one, so the operation that a worker's timer bounds may complete on another
 * thread: the heap has a lock of its own, which that thread takes to cancel it (contended only by
 * such a cancel, never by the whole pool). Expiry only shutdown()s the socket; the thread that gets
 * the resulting event closes it, so a connection is freed by its current owner, after its cancel. */
struct worker {
    pthread_mutex_t lock;
    struct sb_timers timers;
    long long now_ms; /* read when epoll_wait returns */
};

static struct sb_args args;
static int epfd, lfd;
static __thread struct worker *self;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* A read or a write starts (read: epoll is to report input; write: the answer goes out); the
 * connection's timer goes into this worker's heap. */
static void timer_start(struct conn *c)
{
    if (args.scenario != SB_HELLO_TIMEOUT) return;
    pthread_mutex_lock(&self->lock);
    sb_timer_arm(&self->timers, &c->timer, self->now_ms + args.timeout_ms);
    pthread_mutex_unlock(&self->lock);
    c->timer_owner = self;
}

/* ... and completes: its timer leaves the heap it is in. */
static void timer_stop(struct conn *c)
{
    struct worker *w = c->timer_owner;
    if (!w) return;
    pthread_mutex_lock(&w->lock);
    sb_timer_cancel(&w->timers, &c->timer);
    pthread_mutex_unlock(&w->lock);
    c->timer_owner = NULL;
}

/* Ends the operations of this worker's heap whose time is up; returns how long epoll_wait may sleep. */
static int timers_expire(void)
{
    if (args.scenario != SB_HELLO_TIMEOUT) return -1;
    long long now = now_ms();
    pthread_mutex_lock(&self->lock);
    for (struct sb_timer *t; (t = sb_timers_expired(&self->timers, now));) {
        sb_timer_cancel(&self->timers, t);
        shutdown(((struct conn *)((char *)t - offsetof(struct conn, timer)))->fd, SHUT_RDWR);
    }
    int wait_ms = sb_timers_wait_ms(&self->timers, now);
    pthread_mutex_unlock(&self->lock);
    return wait_ms;
}

static void conn_close(struct conn *c)
{
    timer_stop(c);
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
        /* MSG_MORE: a file's head waits to leave in the same packets as the file */
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, c->file_left ? MSG_MORE : 0);
        if (n < 0) return errno == EAGAIN ? 0 : -1;
        c->out_off += n;
    }
    c->out_off = c->out_len = 0;
    while (c->file_left) { /* from the page cache to the socket */
        ssize_t n = sendfile(c->fd, sb_file_fd, &c->file_off, c->file_left);
        if (n <= 0) return n < 0 && errno == EAGAIN ? 0 : -1;
        c->file_left -= n;
    }
    return 1;
}

/* work, counter, file: answers the complete requests in buf, flushing as the output fills (and
 * after each file's head); as conn_flush. */
static int conn_serve(struct conn *c)
{
    for (;;) {
        int send_file = 0;
        c->out_len = sb_serve(args.scenario, c->buf, &c->in_len, c->out, SB_BUF_BYTES, &c->closing, &send_file);
        if (send_file) c->file_off = 0, c->file_left = sb_file_bytes;
        if (c->out_len == 0) return 1; /* all answered: read on */
        int r = conn_flush(c);
        if (r <= 0) return r;
        if (c->closing) return -1; /* the last answer of the connection (sb_serve) */
    }
}

static void conn_on_event(struct conn *c)
{
    int parsed = args.scenario >= SB_WORK;
    int r = 1; /* 1: answered, 0: output waits for room, -1: close */
    if (c->out_len || c->file_left) {
        r = conn_flush(c);
        if (r > 0 && c->closing) r = -1;
        else if (r > 0 && parsed) r = conn_serve(c);
    } else {
        char scratch[SB_BUF_BYTES];
        char *dst = args.scenario == SB_ECHO ? c->buf : parsed ? c->buf + c->in_len : scratch;
        ssize_t n = read(c->fd, dst, args.scenario == SB_ECHO ? SB_ECHO_BYTES : SB_BUF_BYTES - c->in_len);
        if (n == 0 || (n < 0 && errno != EAGAIN)) r = -1;
        else if (n < 0) { conn_arm(c, EPOLLIN, EPOLL_CTL_MOD); return; } /* nothing after all: the read goes on */
        else if (parsed) c->in_len += n, r = conn_serve(c);
        else if (args.scenario == SB_ECHO) c->out_len = n, r = conn_flush(c);
        else {
            timer_stop(c);  /* the read has completed */
            timer_start(c); /* the write; hello writes its response in one call or gives up */
            if (write(c->fd, SB_HELLO_RESPONSE, SB_HELLO_LEN) != SB_HELLO_LEN) r = -1;
            timer_stop(c);
        }
    }
    if (r < 0) { conn_close(c); return; }
    if (r > 0) timer_start(c); /* the next read */
    conn_arm(c, r ? EPOLLIN : EPOLLOUT, EPOLL_CTL_MOD); /* from here another thread may own c */
}

static void accept_all(void)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
        if (fd < 0) return; /* EAGAIN (another thread took it), or out of descriptors */
        size_t bytes = args.scenario == SB_ECHO ? SB_ECHO_BYTES : args.scenario >= SB_WORK ? 2 * SB_BUF_BYTES : 0;
        struct conn *c = calloc(1, sizeof *c + bytes);
        c->fd = fd;
        c->out = args.scenario >= SB_WORK ? c->buf + SB_BUF_BYTES : c->buf;
        sb_nodelay(fd);
        timer_start(c); /* the first read */
        conn_arm(c, EPOLLIN, EPOLL_CTL_ADD);
    }
}

static void *worker_run(void *unused)
{
    (void)unused;
    self = calloc(1, sizeof *self);
    pthread_mutex_init(&self->lock, NULL);
    struct epoll_event events[MAX_EVENTS];
    for (;;) {
        int n = epoll_wait(epfd, events, MAX_EVENTS, timers_expire());
        if (args.scenario == SB_HELLO_TIMEOUT) self->now_ms = now_ms(); /* the clock of this pass's timers */
        for (int i = 0; i < n; i++) {
            if (events[i].data.ptr) conn_on_event(events[i].data.ptr);
            else accept_all();
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    args = sb_parse(argc, argv, "hello hello-timeout echo work counter file");
    lfd = sb_listen(&args, 0, 1);
    epfd = epoll_create1(0);
    /* Level-triggered, so a thread that finds the backlog empty loses nothing; EPOLLEXCLUSIVE
     * asks the kernel to wake one waiter per new connection rather than every thread. */
    struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = NULL };
    epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev);
    return sb_run_workers(&args, worker_run);
}
