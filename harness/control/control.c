/* The run's control: the smallest honest hello server, measured in every run so that two runs can be
 * compared through it. One thread, one level-triggered epoll loop, no parsing: after each read of any
 * data it writes the 51-byte hello response in one call. SB_CONTROL_SPIN_NS adds a busy-wait of that
 * many nanoseconds (monotonic clock) before each response, to slow it by a known amount on purpose.
 * usage: control hello <host> <port> <workers> (workers is ignored: one thread), or control <port> */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char RESPONSE[] = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!";

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 2 && !(argc == 5 && strcmp(argv[1], "hello") == 0)) {
        fprintf(stderr, "usage: control hello <host> <port> <workers> | control <port> (the control answers hello only)\n");
        return 2;
    }
    const char *host = argc == 5 ? argv[2] : "127.0.0.1";
    int port = atoi(argc == 5 ? argv[3] : argv[1]);
    const char *spin = getenv("SB_CONTROL_SPIN_NS");
    long long spin_ns = spin ? atoll(spin) : 0;
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) { fprintf(stderr, "control: %s is not an IPv4 address\n", host); return 2; }
    if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) || listen(lfd, 4096)) { perror("listen"); return 1; }
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd}, events[512];
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
    char buf[16384];
    for (;;) {
        int n = epoll_wait(ep, events, 512, -1);
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == lfd) {
                int c;
                while ((c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    struct epoll_event cev = {.events = EPOLLIN, .data.fd = c};
                    epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev);
                }
                continue;
            }
            ssize_t r = read(fd, buf, sizeof buf);
            if (r > 0 && spin_ns > 0)
                for (long long until = now_ns() + spin_ns; now_ns() < until;)
                    ;
            if (r <= 0 || write(fd, RESPONSE, sizeof RESPONSE - 1) != sizeof RESPONSE - 1) close(fd);
        }
    }
}
