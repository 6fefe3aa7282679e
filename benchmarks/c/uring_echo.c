/*
 * uring_echo: the smallest honest io_uring echo server (RFC 862), a performance floor.
 *
 * One thread, one ring (liburing), 127.0.0.1:PORT. Everything is a request on the ring
 * and the loop only reacts to completions: an accept is re-armed after each new
 * connection; each connection has a 16 KiB buffer and one request in flight at a time:
 * recv into the buffer, then send it back (a short send is resubmitted for the rest),
 * then recv again. A recv of 0 (the client shut down its write side) can only come
 * once everything was echoed, so the connection is closed there: half-close is handled.
 *
 *   cc -O2 -o uring_echo uring_echo.c -luring && ./uring_echo PORT   (port 0: any free port)
 *
 * Prints "listening on 127.0.0.1:PORT" once ready; exits 0 on SIGTERM or SIGINT.
 * A floor to measure against, not a server to deploy: no EMFILE handling, no timeouts.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF_SIZE (16 * 1024)
#define RING_ENTRIES 4096

enum op { ACCEPT, RECV, SEND };

struct conn {          /* indexed by fd */
    char *buf;         /* allocated on the first recv, freed on close */
    size_t off, len;   /* while sending: buf[off..len) is still to send */
};

static volatile sig_atomic_t stop;
static struct io_uring ring;
static struct conn *conns;

static void on_signal(int sig) { (void)sig; stop = 1; }

/* A free submission entry; a full queue is submitted first, never dropped. */
static struct io_uring_sqe *sqe_for(enum op op, int fd) {
    struct io_uring_sqe *sqe;
    while (!(sqe = io_uring_get_sqe(&ring))) io_uring_submit(&ring);
    io_uring_sqe_set_data64(sqe, (uint64_t)fd << 2 | op);
    return sqe;
}

static void arm_accept(int lfd) { io_uring_prep_accept(sqe_for(ACCEPT, lfd), lfd, NULL, NULL, 0); }

static void arm_recv(int fd) {
    io_uring_prep_recv(sqe_for(RECV, fd), fd, conns[fd].buf, BUF_SIZE, 0);
}

static void arm_send(int fd) {
    struct conn *c = &conns[fd];
    io_uring_prep_send(sqe_for(SEND, fd), fd, c->buf + c->off, c->len - c->off, MSG_NOSIGNAL);
}

static void close_conn(int fd) {
    free(conns[fd].buf);
    conns[fd] = (struct conn){0};
    close(fd); /* nothing of this fd is in flight: one request per connection */
}

static void on_completion(struct io_uring_cqe *cqe, int lfd, long max_fds) {
    int fd = (int)(cqe->user_data >> 2), res = cqe->res;
    switch ((enum op)(cqe->user_data & 3)) {
    case ACCEPT:
        arm_accept(lfd);
        if (res < 0) break;
        if (res >= max_fds || !(conns[res].buf = malloc(BUF_SIZE))) { close(res); break; }
        arm_recv(res);
        break;
    case RECV:
        if (res <= 0) { close_conn(fd); break; } /* 0: the client is done and all echoed */
        conns[fd].off = 0;
        conns[fd].len = (size_t)res;
        arm_send(fd);
        break;
    case SEND:
        if (res < 0) { close_conn(fd); break; }
        conns[fd].off += (size_t)res;
        if (conns[fd].off < conns[fd].len) arm_send(fd);
        else arm_recv(fd);
        break;
    }
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s PORT\n", argv[0]); return 2; }
    struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: waiting returns EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
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
    int err = io_uring_queue_init(RING_ENTRIES, &ring, 0);
    if (!conns || err < 0) { fprintf(stderr, "io_uring_queue_init: %s\n", strerror(-err)); return 1; }
    arm_accept(lfd);
    printf("listening on 127.0.0.1:%d\n", ntohs(addr.sin_port));
    fflush(stdout);

    while (!stop) {
        err = io_uring_submit_and_wait(&ring, 1);
        if (err < 0 && err != -EINTR) { fprintf(stderr, "io_uring_enter: %s\n", strerror(-err)); return 1; }
        struct io_uring_cqe *cqe;
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe) {
            on_completion(cqe, lfd, max_fds);
            seen++;
        }
        io_uring_cq_advance(&ring, seen);
    }
    return 0;
}
