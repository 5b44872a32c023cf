/* c-process-per-connection: fork after accept, as inetd and CGI servers did. The parent only accepts;
 * each connection gets a child process that serves it with blocking I/O until the peer closes
 * (sb_blocking.h) and exits. A SIGCHLD handler reaps the children with waitpid (no zombies).
 * `workers` is ignored. counter's atomics are mapped MAP_SHARED by sb_parse before any fork, so
 * every child increments the same ones; work busy-waits in the connection's own process. */
#include "sb_blocking.h"

/* Reaps every child that has ended. waitpid rather than ignoring SIGCHLD: only a child that is waited
 * for adds its CPU time to the parent's (getrusage's RUSAGE_CHILDREN, cutime in /proc), so the server's
 * CPU time still covers the children that served and left. */
static void reap(int sig)
{
    (void)sig;
    int saved = errno;
    while (waitpid(-1, NULL, WNOHANG) > 0) continue;
    errno = saved;
}

int main(int argc, char **argv)
{
    struct sb_args args = sb_parse(argc, argv, "hello hello-timeout echo work counter file");
    int lfd = sb_listen(&args, 0, 0);
    /* SA_RESTART: an accept interrupted by a child's end goes on */
    struct sigaction sa = { .sa_handler = reap, .sa_flags = SA_RESTART | SA_NOCLDSTOP };
    sigaction(SIGCHLD, &sa, NULL);
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
