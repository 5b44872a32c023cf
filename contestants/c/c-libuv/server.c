/* c-libuv: per-core libuv loops. Each of `workers` threads runs its own uv_loop_t with its own
 * SO_REUSEPORT listener. libuv 1.44 cannot ask for SO_REUSEPORT (UV_TCP_REUSEPORT arrived in
 * 1.49), so the socket is made by hand and handed over with uv_tcp_open. work busy-waits inside the
 * read callback, holding up the loop's every connection (a libuv user might hand CPU work to
 * uv_queue_work's thread pool; the scenario measures the handler on the loop, so it does not);
 * counter increments a shared atomic (sb.h). file reads the file with uv_fs_read (on libuv's thread
 * pool, from the page cache) behind its head and writes both with the stream's own writes.
 * hello-timeout starts a uv_timer_t when a read or a write starts and stops it when the operation
 * completes. */
#include "sb.h"
#include <pthread.h>
#include <uv.h>

struct conn {
    uv_tcp_t tcp;
    uv_timer_t timer;   /* hello-timeout: bounds the read or write under way */
    uv_write_t write;   /* echo, work, counter, file: the rest of an output the socket refused */
    uv_fs_t read;       /* file: the read of the file into out, */
    size_t out_len;     /* behind the answers before it */
    int open_handles;   /* freed when the last handle has closed */
    int closing;        /* work, counter, file: close once the output is written (sb_serve's last) */
    size_t in_len;      /* work, counter, file: request bytes in buf not yet answered */
    char buf[];         /* echo: in and out; work, counter, file: in, then out (and the file) */
};

static struct sb_args args;
static __thread char scratch[SB_BUF_BYTES]; /* hello reads land here: nothing of them is kept */

static void on_closed(uv_handle_t *h)
{
    struct conn *c = h->data;
    if (--c->open_handles == 0) free(c);
}

static void conn_close(struct conn *c)
{
    if (uv_is_closing((uv_handle_t *)&c->tcp)) return;
    uv_close((uv_handle_t *)&c->tcp, on_closed);
    if (args.scenario == SB_HELLO_TIMEOUT) uv_close((uv_handle_t *)&c->timer, on_closed);
}

static void on_timeout(uv_timer_t *t) { conn_close(t->data); }

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    struct conn *c = h->data;
    if (args.scenario >= SB_WORK) *buf = uv_buf_init(c->buf + c->in_len, SB_BUF_BYTES - c->in_len);
    else if (args.scenario == SB_ECHO) *buf = uv_buf_init(c->buf, SB_ECHO_BYTES);
    else *buf = uv_buf_init(scratch, SB_BUF_BYTES);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);
static void conn_answer(struct conn *c);

/* The output is all written: close if the last answer said so, else read on and answer what waits. */
static void conn_written(struct conn *c)
{
    if (c->closing) { conn_close(c); return; }
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    if (args.scenario >= SB_WORK) conn_answer(c); /* requests may still wait in the input */
}

static void on_written(uv_write_t *req, int status)
{
    if (status < 0) conn_close(req->data);
    else conn_written(req->data);
}

/* Writes data; what the socket refuses goes out through uv_write, and reading pauses until it has,
 * so the buffer is never overwritten. 1: all written at once, 0: the rest is queued, -1: closed. */
static int conn_write(struct conn *c, char *data, size_t len)
{
    uv_stream_t *s = (uv_stream_t *)&c->tcp;
    uv_buf_t b = uv_buf_init(data, len);
    int n = uv_try_write(s, &b, 1);
    if (n == (int)len) return 1;
    if (n < 0 && n != UV_EAGAIN) { conn_close(c); return -1; }
    if (n < 0) n = 0;
    b = uv_buf_init(data + n, len - n);
    uv_read_stop(s);
    c->write.data = c;
    uv_write(&c->write, s, &b, 1, on_written);
    return 0;
}

/* file: the file's bytes have been read behind the answers before them; all of it goes out. */
static void on_file_read(uv_fs_t *req)
{
    struct conn *c = req->data;
    ssize_t got = req->result;
    uv_fs_req_cleanup(req);
    if (got != sb_file_bytes) { conn_close(c); return; } /* an error, or the file shrank */
    if (conn_write(c, c->buf + SB_BUF_BYTES, c->out_len + got) > 0) conn_written(c);
}

/* file: the answers so far end with the file's head; the file is read (at offset 0) behind them in
 * out. Reading stops until the answer is written, so nothing touches the connection meanwhile. */
static void conn_read_file(struct conn *c, size_t out_len)
{
    uv_read_stop((uv_stream_t *)&c->tcp);
    c->out_len = out_len, c->read.data = c;
    uv_buf_t b = uv_buf_init(c->buf + SB_BUF_BYTES + out_len, sb_file_bytes);
    int err = uv_fs_read(c->tcp.loop, &c->read, sb_file_fd, &b, 1, 0, on_file_read);
    if (err < 0) conn_close(c);
}

/* work, counter, file: answers the complete requests in the input, in order. */
static void conn_answer(struct conn *c)
{
    char *out = c->buf + SB_BUF_BYTES;
    int file = 0;
    for (size_t n; (n = sb_serve(args.scenario, c->buf, &c->in_len, out, SB_BUF_BYTES, &c->closing, &file)) > 0;) {
        if (file) { conn_read_file(c, n); return; } /* on_file_read goes on */
        if (conn_write(c, out, n) <= 0) return;
        if (c->closing) { conn_close(c); return; }
    }
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct conn *c = s->data;
    if (nread < 0) { conn_close(c); return; } /* UV_EOF or an error */
    if (nread == 0) return;
    if (args.scenario >= SB_WORK) {
        c->in_len += nread;
        conn_answer(c);
        return;
    }
    if (args.scenario != SB_ECHO) {
        int timed = args.scenario == SB_HELLO_TIMEOUT;
        if (timed) { /* the read has completed; the write starts */
            uv_timer_stop(&c->timer);
            uv_timer_start(&c->timer, on_timeout, args.timeout_ms, 0);
        }
        uv_buf_t resp = uv_buf_init((char *)SB_HELLO_RESPONSE, SB_HELLO_LEN);
        int written = uv_try_write(s, &resp, 1) == SB_HELLO_LEN; /* one write or give up */
        if (timed) uv_timer_stop(&c->timer);
        if (!written) conn_close(c);
        else if (timed) uv_timer_start(&c->timer, on_timeout, args.timeout_ms, 0); /* the next read */
        return;
    }
    conn_write(c, buf->base, nread); /* echo: straight from the read buffer */
}

static void on_connection(uv_stream_t *server, int status)
{
    if (status < 0) return;
    size_t bytes = args.scenario == SB_ECHO ? SB_ECHO_BYTES
                 : args.scenario >= SB_WORK ? 2 * SB_BUF_BYTES + sb_file_bytes : 0;
    struct conn *c = calloc(1, sizeof *c + bytes);
    uv_tcp_init(server->loop, &c->tcp);
    c->tcp.data = c, c->open_handles = 1;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) < 0) { uv_close((uv_handle_t *)&c->tcp, on_closed); return; }
    uv_tcp_nodelay(&c->tcp, 1);
    if (args.scenario == SB_HELLO_TIMEOUT) {
        uv_timer_init(server->loop, &c->timer);
        c->timer.data = c, c->open_handles = 2;
        uv_timer_start(&c->timer, on_timeout, args.timeout_ms, 0); /* the first read */
    }
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

static void *loop_run(void *unused)
{
    (void)unused;
    uv_loop_t loop;
    uv_tcp_t server;
    uv_loop_init(&loop);
    uv_tcp_init(&loop, &server);
    int err = uv_tcp_open(&server, sb_listen(&args, 1, 1));
    if (!err) err = uv_listen((uv_stream_t *)&server, SOMAXCONN, on_connection);
    if (err) {
        fprintf(stderr, "c-libuv: listen: %s\n", uv_strerror(err));
        exit(1);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    return NULL;
}

int main(int argc, char **argv)
{
    args = sb_parse(argc, argv, "hello hello-timeout echo work counter file");
    return sb_run_workers(&args, loop_run);
}
