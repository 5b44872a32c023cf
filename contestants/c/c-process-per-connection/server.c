/* c-process-per-connection: fork after accept, as inetd and CGI servers did. The parent only accepts;
 * each connection gets a child process that serves it with blocking I/O until the peer closes
 * (sb_blocking.h) and exits. SIGCHLD is ignored, so the kernel reaps the children (no zombies, no wait
 * loop). `workers` is ignored. counter's atomics are mapped MAP_SHARED by sb_parse before any fork, so
 * every child increments the same ones; work busy-waits in the connection's own process. */
#include "sb_blocking.h"

int main(int argc, char **argv)
{
    struct sb_args args = sb_parse(argc, argv, "hello hello-timeout echo work counter file");
    int lfd = sb_listen(&args, 0, 0);
    signal(SIGCHLD, SIG_IGN); /* children that exit are reaped by the kernel */
    pid_t parent = getpid();
    for (;;) {
        int fd = sb_accept_blocking(lfd);
        pid_t pid = fork();
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGTERM); /* the children end with the parent */
            if (getppid() != parent) _exit(1);
            close(lfd); /* the child serves one connection: the listener is the parent's */
            sb_blocking_serve(&args, fd);
            _exit(0);
        }
        if (pid < 0) perror("c-process-per-connection: fork"); /* out of processes: drop this connection */
        close(fd); /* the child holds it now */
    }
}
