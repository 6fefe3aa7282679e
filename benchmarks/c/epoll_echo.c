/*
 * epoll_echo: the smallest honest epoll echo server (RFC 862), a performance floor.
 *
 * One thread, level-triggered epoll, nonblocking sockets on 127.0.0.1:PORT. A readable
 * connection is read into one 16 KiB buffer and written straight back; what the socket
 * does not take is kept for that connection, which is then watched for EPOLLOUT only
 * (not read) until it is sent, so memory per connection stays under 16 KiB. A read of
 * 0 (the client shut down its write side) can only come once everything was echoed,
 * so the connection is closed there: half-close is handled.
 *
 *   cc -O2 -o epoll_echo epoll_echo.c && ./epoll_echo PORT     (port 0: any free port)
 *
 * Prints "listening on 127.0.0.1:PORT" once ready; exits 0 on SIGTERM or SIGINT.
 * A floor to measure against, not a server to deploy: no EMFILE handling, no timeouts.
 */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF_SIZE (16 * 1024)
#define MAX_EVENTS 1024

struct conn {          /* indexed by fd */
    char *unsent;      /* echo the socket did not take yet, or NULL */
    size_t off, len;   /* unsent[off..len) is still to send */
};

static volatile sig_atomic_t stop;
static struct conn *conns;
static int epfd;

static void on_signal(int sig) { (void)sig; stop = 1; }

static void watch(int op, int fd, unsigned events) {
    struct epoll_event ev = {.events = events, .data.fd = fd};
    if (epoll_ctl(epfd, op, fd, &ev) < 0) { perror("epoll_ctl"); exit(1); }
}

static void close_conn(int fd) {
    free(conns[fd].unsent);
    conns[fd] = (struct conn){0};
    close(fd); /* also removes it from the epoll set */
}

/* Sends what is left; returns 0 when all is sent, 1 when some is left, -1 on error. */
static int flush_conn(int fd) {
    struct conn *c = &conns[fd];
    while (c->off < c->len) {
        ssize_t n = send(fd, c->unsent + c->off, c->len - c->off, MSG_NOSIGNAL);
        if (n < 0) return (errno == EAGAIN || errno == EINTR) ? 1 : -1;
        c->off += (size_t)n;
    }
    free(c->unsent);
    *c = (struct conn){0};
    return 0;
}

static void on_readable(int fd, char *buf) {
    ssize_t n = read(fd, buf, BUF_SIZE);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) { close_conn(fd); return; }
    if (n < 0) return;
    ssize_t sent = send(fd, buf, (size_t)n, MSG_NOSIGNAL);
    if (sent < 0 && errno != EAGAIN && errno != EINTR) { close_conn(fd); return; }
    if (sent < 0) sent = 0;
    if (sent < n) { /* keep the rest, stop reading until it is sent */
        struct conn *c = &conns[fd];
        c->len = (size_t)(n - sent);
        c->off = 0;
        c->unsent = malloc(c->len);
        if (!c->unsent) { close_conn(fd); return; }
        memcpy(c->unsent, buf + sent, c->len);
        watch(EPOLL_CTL_MOD, fd, EPOLLOUT);
    }
}

static void on_writable(int fd) {
    int left = flush_conn(fd);
    if (left < 0) close_conn(fd);
    else if (left == 0) watch(EPOLL_CTL_MOD, fd, EPOLLIN);
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s PORT\n", argv[0]); return 2; }
    struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: epoll_wait returns EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(lfd, 4096) < 0) {
        perror("bind/listen");
        return 1;
    }
    socklen_t len = sizeof addr;
    getsockname(lfd, (struct sockaddr *)&addr, &len);

    long max_fds = sysconf(_SC_OPEN_MAX);
    conns = calloc((size_t)max_fds, sizeof *conns);
    epfd = epoll_create1(0);
    if (!conns || epfd < 0) { perror("setup"); return 1; }
    watch(EPOLL_CTL_ADD, lfd, EPOLLIN);
    printf("listening on 127.0.0.1:%d\n", ntohs(addr.sin_port));
    fflush(stdout);

    static char buf[BUF_SIZE];
    struct epoll_event events[MAX_EVENTS];
    while (!stop) {
        int ready = epoll_wait(epfd, events, MAX_EVENTS, -1);
        if (ready < 0) {
            if (errno == EINTR) continue;
            perror("epoll_wait");
            return 1;
        }
        for (int i = 0; i < ready; i++) {
            int fd = events[i].data.fd;
            if (fd == lfd) {
                int cfd;
                while ((cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    if (cfd >= max_fds) { close(cfd); continue; }
                    watch(EPOLL_CTL_ADD, cfd, EPOLLIN);
                }
            } else if (conns[fd].unsent) {
                on_writable(fd); /* whatever the event: never read past unsent echo */
            } else {
                on_readable(fd, buf);
            }
        }
    }
    return 0;
}
