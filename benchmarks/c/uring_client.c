/*
 * uring_client: the smallest honest closed-loop io_uring echo client, a performance floor.
 *
 * One thread, one ring (liburing), CONNECTIONS TCP connections to HOST:PORT, each with one
 * 128-byte request in flight: send it, receive its whole echo, compare every byte with what
 * was sent, send it again. Each connection has one multishot recv drawing from a provided
 * buffer ring (registered by hand: liburing 2.3 has no io_uring_setup_buf_ring); a multishot
 * recv that ends (no IORING_CQE_F_MORE, e.g. -ENOBUFS) is re-armed, a short send resubmitted
 * for the rest. After SECONDS no request is started; the ones in flight get one more second.
 *
 *   cc -O2 -o uring_client uring_client.c -luring
 *   ./uring_client HOST PORT CONNECTIONS SECONDS [WAIT]
 *
 * WAIT (default 16) is how many completions one io_uring_enter waits for, never more than
 * the connections with a request in flight, and every wait has a timeout (the deadline),
 * so a dead or stalled server cannot hang it. Ring flags: IORING_SETUP_SINGLE_ISSUER |
 * IORING_SETUP_DEFER_TASKRUN, or none (with a note) if the kernel refuses them.
 * Prints one line, measured from when all connections are established to the last echo:
 *   requests N seconds S cpu_user U cpu_sys Y mismatches M
 * (mismatches: requests whose echo differed from what was sent). Any error: a message on
 * stderr and exit 1. Exit 0 otherwise, mismatches or not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <liburing.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MSG 128          /* request size, bytes */
#define BUF_SIZE 1024    /* one provided buffer; an echo of MSG bytes fits in one */
#define DRAIN_S 1.0      /* after the deadline, how long the requests in flight get */

enum op { RECV, SEND };

struct conn {
    int fd;
    size_t sent, got;    /* bytes of the current request sent (completed) and echoed */
    int bad;             /* this request's echo differed from what was sent */
    char req[MSG];
};

static struct io_uring ring;
static struct io_uring_buf_ring *br;
static char *bufs;
static unsigned nbufs, returned;        /* buffers given back, not yet made visible */
static struct conn *conns;
static long requests, mismatches;
static int busy, sending = 1;           /* connections with a request in flight */

static void die(const char *what, int err) {
    fprintf(stderr, "uring_client: %s: %s\n", what, strerror(err));
    exit(1);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double tv(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec / 1e6; }

/* A free submission entry; a full queue is submitted first, never dropped. */
static struct io_uring_sqe *sqe_for(enum op op, int i) {
    struct io_uring_sqe *sqe;
    while (!(sqe = io_uring_get_sqe(&ring))) io_uring_submit(&ring);
    io_uring_sqe_set_data64(sqe, (uint64_t)i << 1 | op);
    return sqe;
}

static void arm_recv(int i) {
    struct io_uring_sqe *sqe = sqe_for(RECV, i);
    io_uring_prep_recv_multishot(sqe, conns[i].fd, NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = 0;
}

static void arm_send(int i) {
    struct conn *c = &conns[i];
    io_uring_prep_send(sqe_for(SEND, i), c->fd, c->req + c->sent, MSG - c->sent, MSG_NOSIGNAL);
}

/* The request is done once it is all sent and all echoed, in whichever order those came. */
static void maybe_done(int i) {
    struct conn *c = &conns[i];
    if (c->sent < MSG || c->got < MSG) return;
    requests++;
    mismatches += c->bad;
    c->sent = c->got = 0;
    c->bad = 0;
    if (sending) arm_send(i);
    else busy--;
}

static void on_completion(struct io_uring_cqe *cqe) {
    if (cqe->user_data == LIBURING_UDATA_TIMEOUT) return; /* liburing's own, old kernels */
    int i = (int)(cqe->user_data >> 1), res = cqe->res;
    struct conn *c = &conns[i];
    if ((cqe->user_data & 1) == SEND) {
        if (res < 0) die("send", -res);
        c->sent += (size_t)res;
        if (c->sent < MSG) arm_send(i); /* short send: the rest */
        else maybe_done(i);
        return;
    }
    if (res == -ENOBUFS) { arm_recv(i); return; } /* ran out of buffers: no data lost */
    if (res == 0) { fprintf(stderr, "uring_client: the server closed a connection\n"); exit(1); }
    if (res < 0) die("recv", -res);
    unsigned bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
    char *buf = bufs + (size_t)bid * BUF_SIZE;
    if (c->got + (size_t)res > MSG) {
        fprintf(stderr, "uring_client: %zu bytes echoed for a %d-byte request\n", c->got + (size_t)res, MSG);
        exit(1);
    }
    if (memcmp(buf, c->req + c->got, (size_t)res) != 0) c->bad = 1;
    c->got += (size_t)res;
    io_uring_buf_ring_add(br, buf, BUF_SIZE, (unsigned short)bid, io_uring_buf_ring_mask(nbufs), (int)returned++);
    if (!(cqe->flags & IORING_CQE_F_MORE)) arm_recv(i);
    maybe_done(i);
}

static unsigned pow2_at_least(unsigned n) { unsigned p = 1; while (p < n) p <<= 1; return p; }

int main(int argc, char **argv) {
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: %s HOST PORT CONNECTIONS SECONDS [WAIT]\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[3]), wait = argc > 5 ? atoi(argv[5]) : 16;
    double seconds = atof(argv[4]);
    if (n < 1 || seconds <= 0 || wait < 1) { fprintf(stderr, "uring_client: bad arguments\n"); return 2; }
    signal(SIGPIPE, SIG_IGN);

    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai;
    int err = getaddrinfo(argv[1], argv[2], &hints, &ai);
    if (err) { fprintf(stderr, "uring_client: %s: %s\n", argv[1], gai_strerror(err)); return 1; }
    conns = calloc((size_t)n, sizeof *conns);
    if (!conns) die("calloc", errno);
    for (int i = 0, one = 1; i < n; i++) {
        conns[i].fd = socket(ai->ai_family, SOCK_STREAM, 0);
        if (conns[i].fd < 0) die("socket", errno);
        if (connect(conns[i].fd, ai->ai_addr, ai->ai_addrlen) < 0) die("connect", errno);
        setsockopt(conns[i].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        for (int k = 0; k < MSG; k++) conns[i].req[k] = (char)('a' + (i + k) % 26);
    }

    /* Enough CQ room for every connection's send and recv completions and a re-armed recv. */
    unsigned sq = pow2_at_least((unsigned)n < 2048 ? 2 * (unsigned)n : 4096);
    struct io_uring_params p = {.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
                                         IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP,
                                .cq_entries = 4 * (unsigned)n > 2 * sq ? 4 * (unsigned)n : 2 * sq};
    if ((err = io_uring_queue_init_params(sq, &ring, &p)) == -EINVAL) {
        fprintf(stderr, "uring_client: no SINGLE_ISSUER|DEFER_TASKRUN here, ring flags 0\n");
        p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP;
        err = io_uring_queue_init_params(sq, &ring, &p);
    }
    if (err < 0) die("io_uring_queue_init", -err);

    /* The provided buffer ring, registered by hand: two buffers per connection. */
    nbufs = pow2_at_least((unsigned)n * 2 < 64 ? 64 : (unsigned)n * 2 > 32768 ? 32768 : (unsigned)n * 2);
    if (posix_memalign((void **)&br, 4096, nbufs * sizeof(struct io_uring_buf)) ||
        !(bufs = malloc((size_t)nbufs * BUF_SIZE)))
        die("memory", ENOMEM);
    io_uring_buf_ring_init(br);
    struct io_uring_buf_reg reg = {.ring_addr = (unsigned long)br, .ring_entries = nbufs, .bgid = 0};
    if ((err = io_uring_register_buf_ring(&ring, &reg, 0)) < 0) die("io_uring_register_buf_ring", -err);
    for (unsigned b = 0; b < nbufs; b++)
        io_uring_buf_ring_add(br, bufs + (size_t)b * BUF_SIZE, BUF_SIZE, (unsigned short)b,
                              io_uring_buf_ring_mask(nbufs), (int)b);
    io_uring_buf_ring_advance(br, (int)nbufs);

    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    double t0 = now(), end = t0 + seconds;
    for (int i = 0; i < n; i++) { arm_recv(i); arm_send(i); }
    busy = n;

    while (busy > 0) {
        double t = now();
        if (sending && t >= end) sending = 0; /* from here on, requests in flight only */
        double until = sending ? end : end + DRAIN_S;
        if (t >= until) {
            fprintf(stderr, "uring_client: %d echoes still missing %.0f s after the deadline\n", busy, DRAIN_S);
            return 1;
        }
        struct __kernel_timespec ts = {.tv_sec = (long long)(until - t)};
        ts.tv_nsec = (long long)((until - t - (double)ts.tv_sec) * 1e9);
        struct io_uring_cqe *cqe;
        unsigned want = (unsigned)(wait < busy ? wait : busy); /* never more than can arrive */
        err = io_uring_submit_and_wait_timeout(&ring, &cqe, want, &ts, NULL);
        if (err < 0 && err != -ETIME && err != -EINTR) die("io_uring_enter", -err);
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe) {
            on_completion(cqe);
            seen++;
        }
        io_uring_cq_advance(&ring, seen);
        io_uring_buf_ring_advance(br, (int)returned);
        returned = 0;
    }
    double t1 = now();
    getrusage(RUSAGE_SELF, &r1);
    printf("requests %ld seconds %.3f cpu_user %.3f cpu_sys %.3f mismatches %ld\n", requests, t1 - t0,
           tv(r1.ru_utime) - tv(r0.ru_utime), tv(r1.ru_stime) - tv(r0.ru_stime), mismatches);
    return 0;
}
