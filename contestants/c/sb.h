/* sb.h: what every C contestant shares: the command line, the listening socket, the hello bytes,
 * the handlers of `work`, `counter` and `file`, and the request reader of servers without a parser. */
#ifndef SB_H
#define SB_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The scenarios from SB_WORK on parse `GET <path>` requests and answer through sb_answer_path. */
enum sb_scenario { SB_HELLO, SB_HELLO_TIMEOUT, SB_PLAINTEXT, SB_ECHO, SB_WORK, SB_COUNTER, SB_FILE };
static const char *const sb_scenario_names[] = { "hello", "hello-timeout", "plaintext", "echo", "work", "counter", "file" };
#define SB_SCENARIO_COUNT (int)(sizeof sb_scenario_names / sizeof *sb_scenario_names)

static const char SB_HELLO_RESPONSE[] = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!";
#define SB_HELLO_LEN (sizeof SB_HELLO_RESPONSE - 1)
#define SB_BUF_BYTES 16384 /* request buffers */
#define SB_ECHO_BYTES 512  /* echo reads what arrives into a buffer of this size */

/* work and counter: GET /work/<us> busy-waits `us` microseconds of running time and answers `us`;
 * GET /counter/<k> increments counter k and answers its new value; anything else is a 400. */
#define SB_WORK_MAX_US 1000000
#define SB_COUNTER_KEYS 65536
#define SB_ANSWER_MAX 96 /* the longest answer of sb_answer_path */
static const char SB_BAD_REQUEST[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
#define SB_BAD_LEN (sizeof SB_BAD_REQUEST - 1)
/* An HTTP/1.0 client keeps its connection only when both sides say so: the answer carries this. */
static const char SB_KEEP_ALIVE_HEADER[] = "Connection: keep-alive\r\n";

/* file: GET /file/4k answers the file $SB_FILES/4k, opened once by sb_parse and read from the page
 * cache at every request, never kept between requests: sent with sendfile(2) at an offset of each
 * response's own (c-epoll, c-epoll-shared, c-threads), so its bytes never pass through the server's
 * memory, or read at offset 0 into the connection's buffer by the library's own file read
 * (c-io_uring's ring, c-libuv's uv_fs_read); any other path is a 404. */
#define SB_FILE_NAME "4k"
static int sb_file_fd = -1;
static off_t sb_file_bytes;

/* The counters, shared by every thread: atomic_fetch_add on each, no lock. sb_parse maps them
 * MAP_SHARED before any worker starts, so forked workers (prefork) share them too; a 64-bit atomic
 * is lock-free on the machines this runs on, so it works across processes. */
static _Atomic uint64_t *sb_counters;

struct sb_args {
    enum sb_scenario scenario;
    const char *host, *port;
    int workers;
    int timeout_ms; /* SB_TIMEOUT_MS, used by hello-timeout */
};

static int sb_declared(const char *declared, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = declared; (p = strstr(p, name)); p += n)
        if ((p == declared || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
            return 1;
    return 0;
}

/* Parses `<scenario> <host> <port> <workers>` (argv[0] is the program); `declared` is a
 * space-separated list of the scenarios this server answers. Exits 2 on anything else. */
static struct sb_args sb_parse(int argc, char **argv, const char *declared)
{
    struct sb_args a = { 0 };
    if (argc != 5) {
        fprintf(stderr, "usage: %s <scenario> <host> <port> <workers>\n", argv[0]);
        exit(2);
    }
    int s = -1;
    for (int i = 0; i < SB_SCENARIO_COUNT; i++)
        if (strcmp(argv[1], sb_scenario_names[i]) == 0 && sb_declared(declared, argv[1]))
            s = i;
    if (s < 0) {
        fprintf(stderr, "%s: scenario '%s' is not declared (declared: %s)\n", argv[0], argv[1], declared);
        exit(2);
    }
    a.scenario = s;
    a.host = argv[2], a.port = argv[3], a.workers = atoi(argv[4]);
    if (a.workers < 1) a.workers = 1;
    const char *t = getenv("SB_TIMEOUT_MS");
    a.timeout_ms = t && atoi(t) > 0 ? atoi(t) : 5000;
    if (a.scenario == SB_COUNTER) { /* zero-filled */
        sb_counters = mmap(NULL, SB_COUNTER_KEYS * sizeof *sb_counters, PROT_READ | PROT_WRITE,
                           MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (sb_counters == MAP_FAILED) { perror("mmap counters"); exit(1); }
    }
    if (a.scenario == SB_FILE) {
        const char *dir = getenv("SB_FILES");
        char path[4096];
        struct stat st;
        if (!dir || !*dir) { fprintf(stderr, "%s: file needs SB_FILES, the folder of its files\n", argv[0]); exit(2); }
        snprintf(path, sizeof path, "%s/" SB_FILE_NAME, dir);
        if ((sb_file_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(sb_file_fd, &st) < 0) {
            fprintf(stderr, "%s: %s: %s\n", argv[0], path, strerror(errno));
            exit(2);
        }
        sb_file_bytes = st.st_size;
    }

    /* A peer that closes early must cost an EPIPE, not the process. */
    signal(SIGPIPE, SIG_IGN);
    /* Thousands of connections need more than the usual soft limit of 1024 descriptors. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    return a;
}

/* A listening TCP socket on host:port with SO_REUSEADDR (and SO_REUSEPORT when asked); exits 1 on failure. */
static int sb_listen(const struct sb_args *a, int reuseport, int nonblocking)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
    struct addrinfo *res;
    int err = getaddrinfo(a->host, a->port, &hints, &res);
    if (err) {
        fprintf(stderr, "getaddrinfo %s:%s: %s\n", a->host, a->port, gai_strerror(err));
        exit(1);
    }
    int fd = socket(res->ai_family, SOCK_STREAM | (nonblocking ? SOCK_NONBLOCK : 0), 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0
        || (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0)
        || bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, SOMAXCONN) < 0) {
        fprintf(stderr, "listen on %s:%s: %s\n", a->host, a->port, strerror(errno));
        exit(1);
    }
    freeaddrinfo(res);
    return fd;
}

/* Runs `workers` threads of `run` and waits on them; a server's loops never end, so neither does this. */
static inline int sb_run_workers(const struct sb_args *a, void *(*run)(void *))
{
    pthread_t threads[a->workers];
    for (int i = 0; i < a->workers; i++) pthread_create(&threads[i], NULL, run, NULL);
    pthread_join(threads[0], NULL);
    return 1;
}

/* Forks `processes` single-threaded workers, each running run(NULL) for good, pinned round robin over the
 * allowed CPUs when `pin` (prefork) or left to the scheduler (a process pool). The parent only waits: when
 * a worker ends, so does it, and the others with it (PR_SET_PDEATHSIG). Returns the exit status, 1. */
static inline int sb_fork_workers(int processes, int pin, void *(*run)(void *), const char *who)
{
    cpu_set_t allowed;
    sched_getaffinity(0, sizeof allowed, &allowed);
    pid_t parent = getpid();
    for (int i = 0, cpu = -1; i < processes; i++) {
        do cpu = (cpu + 1) % CPU_SETSIZE; while (!CPU_ISSET(cpu, &allowed));
        pid_t pid = fork();
        if (pid < 0) { perror("fork"); return 1; }
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGTERM); /* the children end with the parent */
            if (getppid() != parent) _exit(1);
            if (pin) {
                cpu_set_t one;
                CPU_ZERO(&one);
                CPU_SET(cpu, &one);
                sched_setaffinity(0, sizeof one, &one);
            }
            run(NULL);
            _exit(1);
        }
    }
    int status;
    pid_t pid = wait(&status); /* a worker died: end, and the others with us */
    fprintf(stderr, "%s: worker %d ended (status %d)\n", who, (int)pid, status);
    return 1;
}

/* Responses are written whole, so waiting for more bytes (Nagle) only adds latency. */
static inline void sb_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* A step of the spin longer than this means the thread was not running (descheduled, preempted):
 * that time was not spent on the request, so it is not counted. */
#define SB_WORK_GAP_NS 50000LL

/* work: spins on the monotonic clock until `us` microseconds of RUNNING time have passed, holding its
 * thread as real CPU work in a handler would: no sleep, no yield. Each step's delta counts only when
 * it is below SB_WORK_GAP_NS, so a preempted thread still spends `us` µs of CPU on the request. */
static inline void sb_busy_wait_us(long us)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    long long goal = us * 1000LL, total = 0, last = t.tv_sec * 1000000000LL + t.tv_nsec;
    while (total < goal) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        long long now = t.tv_sec * 1000000000LL + t.tv_nsec, d = now - last;
        if (d < SB_WORK_GAP_NS) total += d; /* a longer step: the thread was not running */
        last = now;
    }
}

/* The decimal after `prefix` that ends `path` (leading zeros allowed), or -1: none, a non-digit, > max. */
static inline long sb_path_number(const char *path, size_t len, const char *prefix, long max)
{
    size_t n = strlen(prefix);
    if (len <= n || memcmp(path, prefix, n)) return -1;
    long v = 0;
    for (const char *p = path + n; p < path + len; p++) {
        if (*p < '0' || *p > '9' || (v = v * 10 + (*p - '0')) > max) return -1;
    }
    return v;
}

/* Writes the decimal v at o: the end. */
static inline char *sb_decimal(char *o, uint64_t v)
{
    char digits[20];
    int d = 0;
    do digits[d++] = '0' + v % 10; while ((v /= 10));
    while (d) *o++ = digits[--d];
    return o;
}

/* Writes the head `HTTP/1.1 <status>\r\n[Connection: keep-alive\r\n]Content-Length: <n>\r\n\r\n` at o: the end. */
static inline char *sb_head(char *o, const char *status, int keep_alive_header, uint64_t content_bytes)
{
    o = stpcpy(stpcpy(stpcpy(o, "HTTP/1.1 "), status), "\r\n");
    if (keep_alive_header) o = stpcpy(o, SB_KEEP_ALIVE_HEADER);
    o = sb_decimal(stpcpy(o, "Content-Length: "), content_bytes);
    memcpy(o, "\r\n\r\n", 4);
    return o + 4;
}

/* Handles the request for `path` (work, counter or file) and writes its answer to out (room for
 * SB_ANSWER_MAX bytes): its length. A bad path answers 400 and sets *last: then close. file sets
 * *send_file when the answer is the head of the file, whose bytes must follow it. */
static inline size_t sb_answer_path(enum sb_scenario s, const char *path, size_t len, int keep_alive_header,
                                    char *out, int *last, int *send_file)
{
    if (s == SB_FILE) {
        *send_file = len == sizeof "/file/" SB_FILE_NAME - 1 && !memcmp(path, "/file/" SB_FILE_NAME, len);
        return sb_head(out, *send_file ? "200 OK" : "404 Not Found", keep_alive_header,
                       *send_file ? (uint64_t)sb_file_bytes : 0) - out;
    }
    uint64_t v;
    long n = s == SB_WORK ? sb_path_number(path, len, "/work/", SB_WORK_MAX_US)
                          : sb_path_number(path, len, "/counter/", SB_COUNTER_KEYS - 1);
    if (n < 0) {
        *last = 1;
        memcpy(out, SB_BAD_REQUEST, SB_BAD_LEN);
        return SB_BAD_LEN;
    }
    if (s == SB_WORK) sb_busy_wait_us(n), v = n;
    else v = atomic_fetch_add(&sb_counters[n], 1) + 1;
    char body[20];
    size_t body_len = sb_decimal(body, v) - body;
    char *o = sb_head(out, "200 OK", keep_alive_header, body_len);
    memcpy(o, body, body_len);
    return o + body_len - out;
}

/* Whether the connection stays open after a request whose header lines (each ending in CRLF) are
 * h[0..end): HTTP/1.1 unless it says `Connection: close`, HTTP/1.0 only if it says `keep-alive`. */
static inline int sb_keep_alive(const char *h, const char *end, int http10)
{
    int keep = !http10;
    for (const char *eol; h < end && (eol = memmem(h, end - h, "\r\n", 2)); h = eol + 2) {
        if (eol - h < 11 || strncasecmp(h, "connection:", 11)) continue;
        const char *v = h + 11, *v_end = eol;
        while (v < v_end && (*v == ' ' || *v == '\t')) v++;
        while (v_end > v && (v_end[-1] == ' ' || v_end[-1] == '\t')) v_end--;
        if (v_end - v == 5 && !strncasecmp(v, "close", 5)) keep = 0;
        if (v_end - v == 10 && !strncasecmp(v, "keep-alive", 10)) keep = 1;
    }
    return keep;
}

/* For servers without an HTTP parser of their own: answers the complete requests at the start of
 * in[0..*in_len) while out (`room` bytes) can take another answer, drops them from in, and returns
 * the bytes written to out (0: the next request is not all here yet). A request is `GET <path>
 * HTTP/1.x`, headers up to the empty line, no body. A malformed request, or one that does not fit
 * SB_BUF_BYTES, is a bad request: 400, *last set, stop. A request that does not keep the
 * connection (sb_keep_alive) sets *last too: close once out is written. file: an answer that
 * sets *send_file ends out (the file's bytes must follow it); servers without file pass NULL. */
static inline size_t sb_serve(enum sb_scenario s, char *in, size_t *in_len, char *out, size_t room, int *last,
                              int *send_file)
{
    size_t used = 0, n = 0;
    while (!*last && !(send_file && *send_file) && n + SB_ANSWER_MAX <= room) {
        char *req = in + used;
        size_t left = *in_len - used;
        char *end = memmem(req, left, "\r\n\r\n", 4);
        if (!end && (used > 0 || left < SB_BUF_BYTES)) break;
        /* the request line: GET <path> HTTP/1.x (too large: no end, a bad request) */
        char *line_end = end ? memmem(req, end + 2 - req, "\r\n", 2) : NULL, *path = req + 4, *path_end = NULL;
        if (line_end && line_end - req > 4 && !memcmp(req, "GET ", 4)) path_end = memchr(path, ' ', line_end - path);
        if (!path_end || line_end - path_end != 9 || memcmp(path_end, " HTTP/1.", 8) || (path_end[8] != '0' && path_end[8] != '1')) {
            memcpy(out + n, SB_BAD_REQUEST, SB_BAD_LEN);
            n += SB_BAD_LEN, *last = 1;
            break;
        }
        int http10 = path_end[8] == '0', keep = sb_keep_alive(line_end + 2, end + 2, http10);
        n += sb_answer_path(s, path, path_end - path, http10 && keep, out + n, last, send_file);
        if (!keep) *last = 1;
        used = end + 4 - in;
    }
    memmove(in, in + used, *in_len - used);
    *in_len -= used;
    return n;
}

#endif
