/* sb_blocking.h: one connection served with blocking I/O until the peer closes it, by whichever thread or
 * process holds it: c-threads, c-thread-pool, c-process-pool and c-process-per-connection differ only in
 * who calls sb_blocking_serve and when. work busy-waits in the caller; counter increments the shared
 * atomics; file sends its head with MSG_MORE, then the file with sendfile(2) (sb.h). */
#ifndef SB_BLOCKING_H
#define SB_BLOCKING_H

#include "sb.h"
#include <sys/sendfile.h>
#include <sys/time.h>

/* Blocking write of all n bytes (flags: send(2)'s); 0 on success. */
static inline int sb_write_all(int fd, const char *p, size_t n, int flags)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, flags);
        if (w < 0) return -1; /* includes EAGAIN: SO_SNDTIMEO expired */
        p += w, n -= w;
    }
    return 0;
}

/* file: the whole file, from the page cache to the socket; 0 on success. */
static inline int sb_send_file(int fd)
{
    for (off_t off = 0; off < sb_file_bytes;)
        if (sendfile(fd, sb_file_fd, &off, sb_file_bytes - off) <= 0) return -1;
    return 0;
}

/* work, counter, file: answers the complete requests in in[0..*in_len); 0 to read on, -1 to close. */
static inline int sb_blocking_answer(const struct sb_args *a, int fd, char *in, size_t *in_len)
{
    char out[SB_BUF_BYTES];
    int last = 0, file = 0;
    for (size_t n; (n = sb_serve(a->scenario, in, in_len, out, sizeof out, &last, &file)) > 0; file = 0)
        /* MSG_MORE: a file's head waits to leave in the same packets as the file */
        if (sb_write_all(fd, out, n, file ? MSG_MORE : 0) || (file && sb_send_file(fd)) || last) return -1;
    return 0;
}

/* Reads and answers on fd until the peer closes it (or an error, or a hello-timeout), then closes it. */
static inline void sb_blocking_serve(const struct sb_args *a, int fd)
{
    char buf[SB_BUF_BYTES];
    size_t in_len = 0; /* work, counter, file: request bytes in buf not yet answered */
    sb_nodelay(fd);
    if (a->scenario == SB_HELLO_TIMEOUT) { /* the kernel bounds each read and write */
        struct timeval tv = { .tv_sec = a->timeout_ms / 1000, .tv_usec = a->timeout_ms % 1000 * 1000 };
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    }
    for (;;) {
        ssize_t n = read(fd, buf + in_len, a->scenario == SB_ECHO ? SB_ECHO_BYTES : sizeof buf - in_len);
        if (n <= 0) break; /* closed, error or timeout */
        if (a->scenario >= SB_WORK ? (in_len += n, sb_blocking_answer(a, fd, buf, &in_len))
            : a->scenario == SB_ECHO ? sb_write_all(fd, buf, n, 0)
                                     : sb_write_all(fd, SB_HELLO_RESPONSE, SB_HELLO_LEN, 0))
            break;
    }
    close(fd);
}

/* accept(2) that waits out a full descriptor table (a connection must end first) instead of spinning. */
static inline int sb_accept_blocking(int lfd)
{
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd >= 0) return fd;
        if (errno == EMFILE || errno == ENFILE) usleep(1000);
    }
}

/* A count from the environment (a pool's size), or `fallback` when unset or not a positive number. */
static inline int sb_env_count(const char *name, int fallback)
{
    const char *v = getenv(name);
    return v && atoi(v) > 0 ? atoi(v) : fallback;
}

#endif
