/* c-epoll: per-core event loops. Each of `workers` threads (processes with --prefork) owns a
 * SO_REUSEPORT listener and an epoll set; the kernel spreads connections over the listeners and a
 * connection stays on its loop for life. Level-triggered by default, --edge for EPOLLET.
 * plaintext, work, counter and file parse HTTP here; work busy-waits in the loop's own thread (so it
 * holds up every connection of that loop), counter increments a shared atomic, file sends the file with
 * sendfile(2) after its head (sb.h). hello-timeout arms a timer of the loop's heap (sb_timers.h) when a
 * read or a write starts and cancels it when the operation completes, as nginx's ngx_add_timer and
 * ngx_del_timer do; epoll_wait sleeps until the nearest deadline. */
#define _GNU_SOURCE
#include "sb.h"
#include "sb_timers.h"
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/sendfile.h>
#include <time.h>

#define MAX_EVENTS 256
#define MAX_RESPONSE_BYTES 192

struct conn {
    struct sb_timer timer;   /* hello-timeout: bounds the read or write under way */
    int fd, closing;         /* closing: close once the output is written (HTTP scenarios) */
    int queued;              /* --edge: on the loop's list of connections to read again */
    struct conn *again;      /* --edge: the next one on that list */
    size_t in_len;           /* HTTP scenarios: request bytes not yet answered */
    char *out;               /* bytes out[out_off..out_len] still to be written, */
    size_t out_off, out_len;
    off_t file_off;          /* file: then file_left bytes of the file from file_off */
    size_t file_left;
    char buf[];              /* echo: in; plaintext, work, counter, file: in + responses; hello: none */
};

enum { RESP_OK, RESP_NOT_FOUND, RESP_BAD, RESP_COUNT };

struct loop {
    int epfd, lfd;
    long long now_ms;        /* read once per pass of the loop, as nginx's ngx_current_msec */
    struct sb_timers timers;
    time_t date_s;           /* plaintext responses carry a Date rebuilt once per second */
    /* [1]: for an HTTP/1.0 request that keeps its connection (with Connection: keep-alive) */
    struct { char bytes[MAX_RESPONSE_BYTES]; size_t len; } resp[2][RESP_COUNT];
    char scratch[SB_BUF_BYTES]; /* hello reads land here: nothing of them is kept */
    struct conn *again_head, *again_tail; /* --edge: connections that may hold more input, in turn */
};

static struct sb_args args;
static int edge;

/* The scenarios whose requests are parsed: plaintext, work, counter. */
static int http_scenario(void) { return args.scenario == SB_PLAINTEXT || args.scenario >= SB_WORK; }

static void loop_clock(struct loop *l)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    l->now_ms = ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
    if (args.scenario != SB_PLAINTEXT) return;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    if (ts.tv_sec == l->date_s) return;
    l->date_s = ts.tv_sec;
    char date[40];
    struct tm tm;
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", gmtime_r(&ts.tv_sec, &tm));
    static const char *const status[] = { "200 OK", "404 Not Found", "400 Bad Request" };
    static const char *const body[] = { "Hello, World!", "", "" };
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < RESP_COUNT; i++)
            l->resp[k][i].len = snprintf(l->resp[k][i].bytes, MAX_RESPONSE_BYTES,
                "HTTP/1.1 %s\r\nServer: c-epoll\r\nDate: %s\r\n%sContent-Type: text/plain\r\nContent-Length: %zu\r\n\r\n%s",
                status[i], date, i == RESP_BAD ? "Connection: close\r\n" : k ? SB_KEEP_ALIVE_HEADER : "",
                strlen(body[i]), body[i]);
}

/* hello-timeout: a read or a write starts (read: epoll is to report input; write: the answer goes out). */
static void timer_start(struct loop *l, struct conn *c)
{
    if (args.scenario == SB_HELLO_TIMEOUT) sb_timer_arm(&l->timers, &c->timer, l->now_ms + args.timeout_ms);
}

/* ... and completes. */
static void timer_stop(struct loop *l, struct conn *c) { sb_timer_cancel(&l->timers, &c->timer); }

static void conn_close(struct loop *l, struct conn *c)
{
    timer_stop(l, c);
    close(c->fd);
    if (c->queued) { c->fd = -1; return; } /* freed when its turn on the list comes */
    free(c);
}

/* --edge: epoll reports a connection once per arrival, so one that was served may still hold input.
 * Reading it again at once would serve it for as long as its client keeps sending (a fast client's next
 * request arrives before the loop's next read) and starve the others; it goes to the back of this list
 * instead and is read again after every connection that was ready before it. */
static void again_push(struct loop *l, struct conn *c)
{
    if (c->queued) return;
    c->queued = 1, c->again = NULL;
    if (l->again_tail) l->again_tail->again = c;
    else l->again_head = c;
    l->again_tail = c;
}

static struct conn *again_pop(struct loop *l)
{
    struct conn *c = l->again_head;
    l->again_head = c->again;
    if (!l->again_head) l->again_tail = NULL;
    c->queued = 0;
    return c;
}

static void conn_watch(struct loop *l, struct conn *c, uint32_t events)
{
    struct epoll_event ev = { .events = events | (edge ? EPOLLET : 0), .data.ptr = c };
    epoll_ctl(l->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static int conn_pending(const struct conn *c) { return c->out_len || c->file_left; }

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

struct request {
    int get, keep_alive;     /* HTTP/1.1: unless it says Connection: close; HTTP/1.0: if it says keep-alive */
    int http10;
    const char *path;        /* the target without its query */
    size_t path_len;
};

/* Parses one HTTP/1.1 request at p into *r: its length, 0 while incomplete, -1 if malformed or too large. */
static long http_parse(const char *p, size_t len, struct request *r)
{
    const char *end = memmem(p, len, "\r\n\r\n", 4);
    if (!end) return len >= SB_BUF_BYTES ? -1 : 0;
    end += 2; /* the empty line */
    const char *q = p, *method = q;
    while (q < end && *q >= 'A' && *q <= 'Z') q++;
    size_t method_len = q - method;
    if (method_len == 0 || *q++ != ' ') return -1;
    const char *path = q;
    while (q < end && *q > ' ' && *q < 127) q++;
    const char *query = memchr(path, '?', q - path);
    size_t path_len = (query ? query : q) - path;
    if (q == path || *q++ != ' ' || end - q < 10 || memcmp(q, "HTTP/1.", 7) || (q[7] != '0' && q[7] != '1')
        || q[8] != '\r' || q[9] != '\n') return -1;
    r->http10 = q[7] == '0';
    r->keep_alive = !r->http10;
    q += 10;
    size_t body = 0;
    while (q < end) { /* header lines: name ':' value CRLF */
        const char *name = q;
        while (q < end && *q > ' ' && *q < 127 && *q != ':') q++;
        size_t name_len = q - name;
        if (name_len == 0 || *q++ != ':') return -1;
        while (*q == ' ' || *q == '\t') q++;
        const char *value = q;
        while (q < end && (*q >= ' ' || *q == '\t') && *q != 127) q++;
        size_t value_len = q - value;
        if (*q++ != '\r' || *q++ != '\n') return -1;
        while (value_len && (value[value_len - 1] == ' ' || value[value_len - 1] == '\t')) value_len--;
        if (name_len == 14 && !strncasecmp(name, "content-length", 14)) {
            char *stop;
            body = strtoul(value, &stop, 10);
            if (stop != value + value_len || value_len == 0 || body > SB_BUF_BYTES) return -1;
        } else if (name_len == 10 && !strncasecmp(name, "connection", 10)) {
            if (value_len == 5 && !strncasecmp(value, "close", 5)) r->keep_alive = 0;
            if (value_len == 10 && !strncasecmp(value, "keep-alive", 10)) r->keep_alive = 1;
        } else if (name_len == 17 && !strncasecmp(name, "transfer-encoding", 17)) {
            return -1; /* no request here has a chunked body */
        }
    }
    size_t total = (size_t)(end + 2 - p) + body;
    if (total > SB_BUF_BYTES) return -1;
    r->get = method_len == 3 && !memcmp(method, "GET", 3);
    r->path = path, r->path_len = path_len;
    return total > len ? 0 : (long)total;
}

/* Answers every complete request in the input, in order, with one write per full output buffer (and
 * per file). Returns -1 to close; otherwise conn_pending means output waits for EPOLLOUT. */
static int http_serve(struct loop *l, struct conn *c)
{
    char *in = c->buf;
    size_t used = 0;
    for (;;) {
        while (!c->closing && !c->file_left && c->out_len + MAX_RESPONSE_BYTES <= SB_BUF_BYTES) {
            struct request rq = { 0 };
            long n = http_parse(in + used, c->in_len - used, &rq);
            if (n == 0) break;
            int bad = n < 0, keep_alive_header = !bad && rq.http10 && rq.keep_alive, send_file = 0;
            if (args.scenario == SB_PLAINTEXT) {
                int r = bad ? RESP_BAD
                      : rq.get && rq.path_len == 10 && !memcmp(rq.path, "/plaintext", 10) ? RESP_OK : RESP_NOT_FOUND;
                memcpy(c->out + c->out_len, l->resp[keep_alive_header][r].bytes, l->resp[keep_alive_header][r].len);
                c->out_len += l->resp[keep_alive_header][r].len;
            } else if (bad || !rq.get) { /* work, counter, file */
                memcpy(c->out + c->out_len, SB_BAD_REQUEST, SB_BAD_LEN);
                c->out_len += SB_BAD_LEN, bad = 1;
            } else {
                c->out_len += sb_answer_path(args.scenario, rq.path, rq.path_len, keep_alive_header,
                                             c->out + c->out_len, &bad, &send_file);
            }
            if (send_file) c->file_off = 0, c->file_left = sb_file_bytes;
            c->closing = bad || !rq.keep_alive;
            used += n < 0 ? 0 : n;
        }
        if (!conn_pending(c)) break;
        int r = conn_flush(c);
        if (r <= 0) { if (r < 0) return -1; break; }
        if (c->closing) return -1;
    }
    memmove(in, in + used, c->in_len - used);
    c->in_len -= used;
    return 0;
}

static void conn_on_event(struct loop *l, struct conn *c)
{
    if (conn_pending(c)) { /* the socket has room again for what was left */
        int r = conn_flush(c);
        if (r < 0 || (r > 0 && c->closing)) goto close;
        if (r > 0 && http_scenario() && http_serve(l, c) < 0) goto close;
        if (!conn_pending(c)) conn_watch(l, c, EPOLLIN);
        return;
    }
    char *dst = args.scenario <= SB_HELLO_TIMEOUT ? l->scratch : c->buf + c->in_len;
    ssize_t n = read(c->fd, dst, args.scenario == SB_ECHO ? SB_ECHO_BYTES : SB_BUF_BYTES - c->in_len);
    if (n == 0 || (n < 0 && errno != EAGAIN)) goto close;
    if (n < 0) return; /* nothing more (edge-triggered: epoll reports the next arrival) */
    timer_stop(l, c); /* the read has completed */
    int r = 1; /* 1: all answered, 0: output waits for room, -1: close */
    if (args.scenario == SB_ECHO) {
        c->out_len = n;
        r = conn_flush(c);
    } else if (http_scenario()) {
        c->in_len += n;
        r = http_serve(l, c) < 0 ? -1 : !conn_pending(c);
    } else {
        timer_start(l, c); /* the write; hello writes its response in one call or gives up */
        if (write(c->fd, SB_HELLO_RESPONSE, SB_HELLO_LEN) != SB_HELLO_LEN) r = -1;
        timer_stop(l, c);
    }
    if (r < 0) goto close;
    if (r == 0) { conn_watch(l, c, EPOLLOUT); return; }
    timer_start(l, c); /* the next read */
    /* Level-triggered, epoll reports what is left; edge-triggered, it is read in its turn. */
    if (edge) again_push(l, c);
    return;
close:
    conn_close(l, c);
}

static void loop_accept(struct loop *l)
{
    static const size_t buf_bytes[] = { [SB_ECHO] = SB_ECHO_BYTES, [SB_PLAINTEXT] = 2 * SB_BUF_BYTES,
                                        [SB_WORK] = 2 * SB_BUF_BYTES, [SB_COUNTER] = 2 * SB_BUF_BYTES,
                                        [SB_FILE] = 2 * SB_BUF_BYTES };
    for (;;) {
        int fd = accept4(l->lfd, NULL, NULL, SOCK_NONBLOCK);
        if (fd < 0) return; /* EAGAIN, or out of descriptors: the backlog waits */
        struct conn *c = calloc(1, sizeof *c + buf_bytes[args.scenario]);
        c->fd = fd;
        c->out = http_scenario() ? c->buf + SB_BUF_BYTES : c->buf;
        sb_nodelay(fd);
        struct epoll_event ev = { .events = EPOLLIN | (edge ? EPOLLET : 0), .data.ptr = c };
        epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev);
        timer_start(l, c); /* the first read */
    }
}

static void *loop_run(void *unused)
{
    (void)unused;
    struct loop *l = calloc(1, sizeof *l);
    l->lfd = sb_listen(&args, 1, 1);
    l->epfd = epoll_create1(0);
    struct epoll_event ev = { .events = EPOLLIN | (edge ? EPOLLET : 0), .data.ptr = NULL };
    epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->lfd, &ev);
    struct epoll_event events[MAX_EVENTS];
    for (;;) {
        int n = epoll_wait(l->epfd, events, MAX_EVENTS, l->again_head ? 0 : sb_timers_wait_ms(&l->timers, l->now_ms));
        loop_clock(l);
        for (int i = 0; i < n; i++) {
            if (events[i].data.ptr) conn_on_event(l, events[i].data.ptr);
            else loop_accept(l);
        }
        /* --edge: one more read for each connection that was on the list before this pass */
        for (struct conn *last = l->again_tail; l->again_head;) {
            struct conn *c = again_pop(l);
            int was_last = c == last;
            if (c->fd < 0) free(c); /* closed while it waited */
            else conn_on_event(l, c);
            if (was_last) break;
        }
        for (struct sb_timer *t; (t = sb_timers_expired(&l->timers, l->now_ms));)
            conn_close(l, (struct conn *)((char *)t - offsetof(struct conn, timer)));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int forking = 0;
    for (; argc > 1 && !strncmp(argv[1], "--", 2); argv[1] = argv[0], argv++, argc--) {
        if (!strcmp(argv[1], "--edge")) edge = 1;
        else if (!strcmp(argv[1], "--prefork")) forking = 1;
        else { fprintf(stderr, "%s: unknown option %s\n", argv[0], argv[1]); return 2; }
    }
    args = sb_parse(argc, argv, "hello hello-timeout plaintext echo work counter file");
    if (forking) return sb_fork_workers(args.workers, 1, loop_run, "c-epoll"); /* pinned, one per CPU */
    return sb_run_workers(&args, loop_run);
}
