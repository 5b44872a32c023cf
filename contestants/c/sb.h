/* sb.h: what every C contestant shares: the command line, the listening socket, the hello bytes. */
#ifndef SB_H
#define SB_H

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

enum sb_scenario { SB_HELLO, SB_HELLO_TIMEOUT, SB_PLAINTEXT, SB_ECHO };
static const char *const sb_scenario_names[] = { "hello", "hello-timeout", "plaintext", "echo" };

static const char SB_HELLO_RESPONSE[] = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!";
#define SB_HELLO_LEN (sizeof SB_HELLO_RESPONSE - 1)
#define SB_BUF_BYTES 16384 /* echo and request buffers */

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
    for (int i = 0; i < 4; i++)
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

/* Responses are written whole, so waiting for more bytes (Nagle) only adds latency. */
static inline void sb_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

#endif
