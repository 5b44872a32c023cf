/* c-io_uring: per-core rings. Each of `workers` threads owns an io_uring and a SO_REUSEPORT
 * listener. One multishot accept feeds the ring with connections; each connection runs
 * recv -> send -> recv, receiving into a ring of provided buffers so an idle connection holds no
 * buffer. hello-timeout links a timeout to every recv and send (IOSQE_IO_LINK + LINK_TIMEOUT).
 * work, counter and file copy what arrives into the connection's own input buffer and answer the
 * complete requests in it; work busy-waits in the ring's thread, holding up its every connection;
 * counter increments a shared atomic (sb.h); file reads the file with the ring (IORING_OP_READ, from
 * the page cache) behind its head and links the send to that read. --prefork runs each ring in a
 * process of its own, pinned to its own CPU (sb_fork_workers), as c-epoll's --prefork does. */
#include "sb.h"
#include <liburing.h>
#include <pthread.h>
#include <sys/mman.h>

#define RING_ENTRIES 1024
#define BUF_COUNT 512 /* provided buffers per ring, SB_BUF_BYTES each; a power of two */
#define BUF_GROUP 0

enum { TAG_IGNORE, TAG_ACCEPT }; /* user_data that is not a connection */

struct conn {
    int fd, bid;          /* bid: echo's provided buffer being sent back, or -1 */
    int sending;          /* which operation is in flight: recv or send */
    int closing;          /* work, counter, file: close once the answers are sent (sb_serve's last) */
    const char *data;     /* the bytes data[off..len] are being sent */
    size_t off, len;
    struct conn *parked;  /* next connection waiting for a free buffer */
    size_t in_len;        /* work, counter, file: request bytes in buf not yet answered */
    char buf[];           /* work, counter, file: in, then out (file: with room for the file) */
};

struct loop {
    struct io_uring ring;
    struct io_uring_buf_ring *br;
    char *bufs;
    int lfd;
    struct __kernel_timespec timeout;
    struct conn *parked;  /* recv found no free buffer (echo holds them while sending) */
};

static struct sb_args args;

static void die(const char *what, int err)
{
    fprintf(stderr, "c-io_uring: %s: %s\n", what, strerror(err));
    exit(1);
}

/* n free submission slots, so a linked pair never straddles two submissions. */
static struct io_uring_sqe *sqe_get(struct loop *l, unsigned n)
{
    if (io_uring_sq_space_left(&l->ring) < n) io_uring_submit(&l->ring);
    return io_uring_get_sqe(&l->ring);
}

static void sqe_bounded(struct loop *l, struct io_uring_sqe *sqe)
{
    if (args.scenario != SB_HELLO_TIMEOUT) return;
    sqe->flags |= IOSQE_IO_LINK;
    struct io_uring_sqe *t = io_uring_get_sqe(&l->ring);
    io_uring_prep_link_timeout(t, &l->timeout, 0);
    io_uring_sqe_set_data64(t, TAG_IGNORE);
}

static void conn_recv(struct loop *l, struct conn *c)
{
    struct io_uring_sqe *sqe = sqe_get(l, 2);
    /* A provided buffer is filled up to the length asked: no more than the input buffer has room for. */
    io_uring_prep_recv(sqe, c->fd, NULL, args.scenario == SB_ECHO ? SB_ECHO_BYTES : SB_BUF_BYTES - c->in_len, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = BUF_GROUP;
    io_uring_sqe_set_data(sqe, c);
    c->sending = 0;
    sqe_bounded(l, sqe);
}

static void conn_send(struct loop *l, struct conn *c)
{
    struct io_uring_sqe *sqe = sqe_get(l, 2);
    io_uring_prep_send(sqe, c->fd, c->data + c->off, c->len - c->off, 0);
    io_uring_sqe_set_data(sqe, c);
    c->sending = 1;
    sqe_bounded(l, sqe);
}

/* file: the answers so far end with the file's head; the ring reads the file (at offset 0, from the
 * page cache) into out behind them, and the send of it all is linked to that read, so it starts once
 * the read completes. A failed or short read cancels the send (-ECANCELED: the connection closes);
 * a read that succeeds posts no completion of its own (CQE_SKIP_SUCCESS). */
static void conn_send_file(struct loop *l, struct conn *c)
{
    struct io_uring_sqe *sqe = sqe_get(l, 3); /* the read and conn_send's two: one submission */
    io_uring_prep_read(sqe, sb_file_fd, (char *)c->data + c->len, sb_file_bytes, 0);
    sqe->flags |= IOSQE_IO_LINK | IOSQE_CQE_SKIP_SUCCESS;
    io_uring_sqe_set_data64(sqe, TAG_IGNORE);
    c->len += sb_file_bytes;
    conn_send(l, c);
}

static void buf_return(struct loop *l, int bid)
{
    io_uring_buf_ring_add(l->br, l->bufs + (size_t)bid * SB_BUF_BYTES, SB_BUF_BYTES, bid,
                          io_uring_buf_ring_mask(BUF_COUNT), 0);
    io_uring_buf_ring_advance(l->br, 1);
    struct conn *c = l->parked;
    if (c) l->parked = c->parked, conn_recv(l, c);
}

static void conn_close(struct loop *l, struct conn *c)
{
    if (c->bid >= 0) buf_return(l, c->bid);
    close(c->fd);
    free(c);
}

/* work, counter, file: sends the answers to the complete requests in the input; 0 when there are none. */
static int conn_answer(struct loop *l, struct conn *c)
{
    char *out = c->buf + SB_BUF_BYTES;
    int file = 0;
    c->len = sb_serve(args.scenario, c->buf, &c->in_len, out, SB_BUF_BYTES, &c->closing, &file);
    if (c->len == 0) return 0;
    c->data = out, c->off = 0;
    if (file) conn_send_file(l, c);
    else conn_send(l, c);
    return 1;
}

static void accept_start(struct loop *l)
{
    struct io_uring_sqe *sqe = sqe_get(l, 1);
    io_uring_prep_multishot_accept(sqe, l->lfd, NULL, NULL, 0);
    io_uring_sqe_set_data64(sqe, TAG_ACCEPT);
}

static void on_cqe(struct loop *l, struct io_uring_cqe *cqe)
{
    int res = cqe->res;
    if (cqe->user_data == TAG_IGNORE) return; /* a linked timeout or file read: the send or recv reports */
    if (cqe->user_data == TAG_ACCEPT) {
        if (res >= 0) {
            struct conn *c = calloc(1, sizeof *c + (args.scenario >= SB_WORK ? 2 * SB_BUF_BYTES + sb_file_bytes : 0));
            c->fd = res, c->bid = -1;
            sb_nodelay(res);
            conn_recv(l, c);
        }
        if (!(cqe->flags & IORING_CQE_F_MORE)) accept_start(l); /* the multishot ended: re-arm */
        return;
    }
    struct conn *c = io_uring_cqe_get_data(cqe);
    if (!c->sending) {
        int bid = cqe->flags & IORING_CQE_F_BUFFER ? (int)(cqe->flags >> IORING_CQE_BUFFER_SHIFT) : -1;
        if (res == -ENOBUFS) { c->parked = l->parked, l->parked = c; return; }
        if (res <= 0) { /* closed, failed, or cancelled by its timeout */
            if (bid >= 0) buf_return(l, bid);
            conn_close(l, c);
            return;
        }
        if (args.scenario >= SB_WORK) {
            memcpy(c->buf + c->in_len, l->bufs + (size_t)bid * SB_BUF_BYTES, res);
            c->in_len += res;
            buf_return(l, bid);
            if (!conn_answer(l, c)) conn_recv(l, c); /* no complete request yet */
            return;
        }
        if (args.scenario == SB_ECHO) {
            c->bid = bid, c->data = l->bufs + (size_t)bid * SB_BUF_BYTES, c->len = res;
        } else {
            buf_return(l, bid);
            c->data = SB_HELLO_RESPONSE, c->len = SB_HELLO_LEN;
        }
        c->off = 0;
        conn_send(l, c);
        return;
    }
    if (res <= 0) { conn_close(l, c); return; }
    c->off += res;
    if (c->off < c->len) {
        if (args.scenario <= SB_HELLO_TIMEOUT) conn_close(l, c); /* hello sends in one call or gives up */
        else conn_send(l, c);
        return;
    }
    if (c->bid >= 0) buf_return(l, c->bid), c->bid = -1;
    if (c->closing) { conn_close(l, c); return; }
    if (args.scenario >= SB_WORK && conn_answer(l, c)) return; /* more requests were waiting */
    conn_recv(l, c);
}

static void *loop_run(void *unused)
{
    (void)unused;
    struct loop *l = calloc(1, sizeof *l);
    l->timeout.tv_sec = args.timeout_ms / 1000;
    l->timeout.tv_nsec = args.timeout_ms % 1000 * 1000000LL;
    /* One thread submits and reaps, so completions may wait for it (DEFER_TASKRUN, Linux 6.1). */
    int err = io_uring_queue_init(RING_ENTRIES, &l->ring, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
    if (err == -EINVAL) err = io_uring_queue_init(RING_ENTRIES, &l->ring, 0);
    if (err < 0) die("io_uring_queue_init (io_uring is not available here: kernel too old, "
                     "kernel.io_uring_disabled, or blocked by seccomp)", -err);

    l->br = mmap(NULL, BUF_COUNT * sizeof(struct io_uring_buf), PROT_READ | PROT_WRITE,
                 MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    l->bufs = malloc((size_t)BUF_COUNT * SB_BUF_BYTES);
    if (l->br == MAP_FAILED || !l->bufs) die("buffer allocation", ENOMEM);
    struct io_uring_buf_reg reg = { .ring_addr = (unsigned long)l->br, .ring_entries = BUF_COUNT, .bgid = BUF_GROUP };
    if ((err = io_uring_register_buf_ring(&l->ring, &reg, 0)) < 0) die("io_uring_register_buf_ring", -err);
    io_uring_buf_ring_init(l->br);
    for (int i = 0; i < BUF_COUNT; i++)
        io_uring_buf_ring_add(l->br, l->bufs + (size_t)i * SB_BUF_BYTES, SB_BUF_BYTES, i,
                              io_uring_buf_ring_mask(BUF_COUNT), i);
    io_uring_buf_ring_advance(l->br, BUF_COUNT);

    l->lfd = sb_listen(&args, 1, 0);
    accept_start(l);
    for (;;) {
        err = io_uring_submit_and_wait(&l->ring, 1);
        if (err < 0 && err != -EINTR) die("io_uring_submit_and_wait", -err);
        unsigned head, seen = 0;
        struct io_uring_cqe *cqe;
        io_uring_for_each_cqe(&l->ring, head, cqe) {
            on_cqe(l, cqe);
            seen++;
        }
        io_uring_cq_advance(&l->ring, seen);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    /* --prefork: a process per worker instead of a thread, each with its ring, pinned to its own CPU */
    int forking = argc > 1 && !strcmp(argv[1], "--prefork");
    if (forking) argv[1] = argv[0], argv++, argc--;
    args = sb_parse(argc, argv, "hello hello-timeout echo work counter file");
    if (forking) return sb_fork_workers(args.workers, 1, loop_run, "c-io_uring");
    return sb_run_workers(&args, loop_run);
}
