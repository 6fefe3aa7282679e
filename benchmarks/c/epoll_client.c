/*
 * epoll_client: the smallest honest closed-loop epoll echo client, a performance floor.
 *
 * One thread, edge-triggered epoll, nonblocking sockets; CONNECTIONS TCP connections to
 * HOST:PORT, each with one 128-byte request in flight: send it, read its whole echo,
 * compare every byte with what was sent, send it again. A readable connection is read
 * until a read comes back short of the 16 KiB buffer (the socket is then drained, and with
 * edge triggering new data raises a new event), so a whole echo costs one read, as in
 * `echolab load`. A short send is finished on EPOLLOUT, watched only while it is pending.
 * After SECONDS no request is started; the ones in flight get one more second.
 *
 *   cc -O2 -o epoll_client epoll_client.c
 *   ./epoll_client HOST PORT CONNECTIONS SECONDS
 *
 * Prints one line, measured from when all connections are established to the last echo:
 *   requests N seconds S cpu_user U cpu_sys Y mismatches M
 * (mismatches: requests whose echo differed from what was sent). Any error: a message on
 * stderr and exit 1. Exit 0 otherwise, mismatches or not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MSG 128           /* request size, bytes */
#define BUF_SIZE (16 * 1024)
#define MAX_EVENTS 1024
#define DRAIN_S 1.0       /* after the deadline, how long the requests in flight get */

struct conn {
    int fd;
    size_t sent, got;     /* bytes of the current request sent and echoed */
    int bad;              /* this request's echo differed from what was sent */
    char req[MSG];
};

static struct conn *conns;
static int epfd, busy, sending = 1;     /* busy: connections with a request in flight */
static long requests, mismatches;

static void die(const char *what, int err) {
    fprintf(stderr, "epoll_client: %s: %s\n", what, strerror(err));
    exit(1);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double tv(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec / 1e6; }

static void watch(int op, int i, unsigned events) {
    struct epoll_event ev = {.events = events | EPOLLET, .data.u32 = (uint32_t)i};
    if (epoll_ctl(epfd, op, conns[i].fd, &ev) < 0) die("epoll_ctl", errno);
}

/* Sends what is left of the request; the rest, if any, waits for EPOLLOUT. */
static void flush(int i, int armed) {
    struct conn *c = &conns[i];
    while (c->sent < MSG) {
        ssize_t n = send(c->fd, c->req + c->sent, MSG - c->sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno != EAGAIN) die("send", errno);
        if (n < 0) { if (!armed) watch(EPOLL_CTL_MOD, i, EPOLLIN | EPOLLOUT); return; }
        c->sent += (size_t)n;
    }
    if (armed) watch(EPOLL_CTL_MOD, i, EPOLLIN);
}

static void on_readable(int i, char *buf) {
    struct conn *c = &conns[i];
    for (;;) {
        ssize_t n = read(c->fd, buf, BUF_SIZE);
        if (n == 0) { fprintf(stderr, "epoll_client: the server closed a connection\n"); exit(1); }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        if (n < 0) die("read", errno);
        if (c->got + (size_t)n > c->sent) {
            fprintf(stderr, "epoll_client: %zu bytes echoed, %zu sent\n", c->got + (size_t)n, c->sent);
            exit(1);
        }
        if (memcmp(buf, c->req + c->got, (size_t)n) != 0) c->bad = 1;
        c->got += (size_t)n;
        if (c->got == MSG) { /* the whole echo: the next request */
            requests++;
            mismatches += c->bad;
            c->sent = c->got = 0;
            c->bad = 0;
            if (sending) flush(i, 0);
            else busy--;
        }
        if (n < BUF_SIZE) return; /* drained: new data raises a new event */
    }
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: %s HOST PORT CONNECTIONS SECONDS\n", argv[0]); return 2; }
    int n = atoi(argv[3]);
    double seconds = atof(argv[4]);
    if (n < 1 || seconds <= 0) { fprintf(stderr, "epoll_client: bad arguments\n"); return 2; }

    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai;
    int err = getaddrinfo(argv[1], argv[2], &hints, &ai);
    if (err) { fprintf(stderr, "epoll_client: %s: %s\n", argv[1], gai_strerror(err)); return 1; }
    conns = calloc((size_t)n, sizeof *conns);
    if ((epfd = epoll_create1(0)) < 0 || !conns) die("setup", errno);
    for (int i = 0, one = 1; i < n; i++) {
        struct conn *c = &conns[i];
        if ((c->fd = socket(ai->ai_family, SOCK_STREAM, 0)) < 0) die("socket", errno);
        if (connect(c->fd, ai->ai_addr, ai->ai_addrlen) < 0) die("connect", errno);
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        fcntl(c->fd, F_SETFL, O_NONBLOCK);
        watch(EPOLL_CTL_ADD, i, EPOLLIN);
        for (int k = 0; k < MSG; k++) c->req[k] = (char)('a' + (i + k) % 26);
    }

    static char buf[BUF_SIZE];
    struct epoll_event events[MAX_EVENTS];
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    double t0 = now(), end = t0 + seconds;
    for (int i = 0; i < n; i++) flush(i, 0);
    busy = n;

    while (busy > 0) {
        double t = now();
        if (sending && t >= end) sending = 0; /* from here on, requests in flight only */
        double until = sending ? end : end + DRAIN_S;
        if (t >= until) {
            fprintf(stderr, "epoll_client: %d echoes still missing %.0f s after the deadline\n", busy, DRAIN_S);
            return 1;
        }
        int ready = epoll_wait(epfd, events, MAX_EVENTS, (int)((until - t) * 1000) + 1);
        if (ready < 0 && errno != EINTR) die("epoll_wait", errno);
        for (int e = 0; e < ready; e++) {
            int i = (int)events[e].data.u32;
            if ((events[e].events & EPOLLOUT) && conns[i].sent < MSG) flush(i, 1);
            if (events[e].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) on_readable(i, buf);
        }
    }
    double t1 = now();
    getrusage(RUSAGE_SELF, &r1);
    printf("requests %ld seconds %.3f cpu_user %.3f cpu_sys %.3f mismatches %ld\n", requests, t1 - t0,
           tv(r1.ru_utime) - tv(r0.ru_utime), tv(r1.ru_stime) - tv(r0.ru_stime), mismatches);
    return 0;
}
