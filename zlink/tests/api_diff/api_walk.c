/* api_walk: prints what a libzmq-API library answers to every call of the
 * differential API test (zlink/tests/api_diff/README.md). It is built once
 * against zlink and once against libzmq 4.3.5 from this one source; each line
 * is "key<TAB>answer", and api_diff.py joins the two outputs by key.
 *
 * Option numbers are walked as numbers (0..MAX_OPTION), not only the names of
 * the stable zmq.h: libzmq 4.3.5 also accepts some numbers that its header
 * names only in the draft part (ZMQ_LOOPBACK_FASTPATH, ZMQ_MULTICAST_LOOP...),
 * and bindings such as pyzmq pass them. Answers never print addresses, file
 * descriptor numbers or ports, which differ between any two runs. */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#define MAX_OPTION 130
#define MAX_CTX_OPTION 20
#define FIRST_TYPE 0
#define LAST_TYPE 20 /* 12..20 are draft types: a stable build refuses them */

static const char *err_name(int e) {
    switch (e) {
    case EINVAL: return "EINVAL";
    case EFAULT: return "EFAULT";
    case ENOTSUP: return "ENOTSUP";
    case ENOTSOCK: return "ENOTSOCK";
    case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
    case ETERM: return "ETERM";
    case EAGAIN: return "EAGAIN";
    case EFSM: return "EFSM";
    case EMFILE: return "EMFILE";
    case ENOENT: return "ENOENT";
    case EADDRINUSE: return "EADDRINUSE";
    case ENODEV: return "ENODEV";
    case EHOSTUNREACH: return "EHOSTUNREACH";
    case ENOCOMPATPROTO: return "ENOCOMPATPROTO";
    case EINTR: return "EINTR";
    case ENOMEM: return "ENOMEM";
    case EACCES: return "EACCES";
    default: {
        static char buf[32];
        snprintf(buf, sizeof buf, "errno%d", e);
        return buf;
    }
    }
}

/* A buffer as text: printable bytes as they are, others as \xNN. */
static void put_bytes(char *out, size_t cap, const unsigned char *p, size_t n) {
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < cap; ++i) {
        if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
            out[o++] = (char)p[i];
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", p[i]);
    }
    out[o] = 0;
}

/* getsockopt with an int buffer, an 8-byte buffer and a 256-byte buffer: the
 * sizes the options of zmq.h take (libzmq requires the exact size for
 * numbers). ZMQ_FD's value is a descriptor number: printed as "fd". */
static void describe_get(void *s, int option, char *out, size_t cap) {
    size_t o = 0;
    static const size_t sizes[] = {sizeof(int), 8, 256};
    for (int k = 0; k < 3; ++k) {
        unsigned char buf[256];
        memset(buf, 0xa5, sizeof buf);
        size_t len = sizes[k];
        int rc = zmq_getsockopt(s, option, buf, &len);
        const char *sep = k ? " " : "";
        if (rc != 0) {
            o += (size_t)snprintf(out + o, cap - o, "%s%zu:%s", sep, sizes[k], err_name(errno));
            continue;
        }
        if (option == ZMQ_FD) {
            o += (size_t)snprintf(out + o, cap - o, "%s%zu:fd/len%zu", sep, sizes[k], len);
        } else if (len == sizeof(int) && sizes[k] == sizeof(int)) {
            int v;
            memcpy(&v, buf, sizeof v);
            o += (size_t)snprintf(out + o, cap - o, "%s%zu:%d", sep, sizes[k], v);
        } else if (len == 8 && sizes[k] == 8) {
            int64_t v;
            memcpy(&v, buf, sizeof v);
            o += (size_t)snprintf(out + o, cap - o, "%s%zu:%lld", sep, sizes[k], (long long)v);
        } else {
            char text[600];
            put_bytes(text, sizeof text, buf, len < sizeof buf ? len : sizeof buf);
            o += (size_t)snprintf(out + o, cap - o, "%s%zu:len%zu'%s'", sep, sizes[k], len, text);
        }
        if (o >= cap)
            return;
    }
}

struct set_probe {
    const char *name;
    const void *val;
    size_t len;
};

static const int v_zero = 0, v_one = 1, v_minus = -1, v_big = 1000;
static const int64_t v_64 = 1000;

static const struct set_probe set_probes[] = {
    {"int0", &v_zero, sizeof(int)},
    {"int1", &v_one, sizeof(int)},
    {"int-1", &v_minus, sizeof(int)},
    {"int1000", &v_big, sizeof(int)},
    {"i64_1000", &v_64, sizeof(int64_t)},
    {"str'10.0.0.1'", "10.0.0.1", 8},
    {"null0", NULL, 0},
};

static void walk_socket_options(void) {
    for (int type = FIRST_TYPE; type <= LAST_TYPE; ++type) {
        void *ctx = zmq_ctx_new();
        void *s = zmq_socket(ctx, type);
        printf("socket/%d\t%s\n", type, s ? "ok" : err_name(errno));
        if (!s) {
            zmq_ctx_term(ctx);
            continue;
        }
        for (int option = 0; option <= MAX_OPTION; ++option) {
            char out[2048];
            describe_get(s, option, out, sizeof out);
            printf("get/%d/%d\t%s\n", type, option, out);
        }
        zmq_close(s);
        for (int option = 0; option <= MAX_OPTION; ++option) {
            if (option == ZMQ_USE_FD)
                continue; /* an fd to listen on: probed by hand below */
            for (size_t p = 0; p < sizeof set_probes / sizeof set_probes[0]; ++p) {
                void *t = zmq_socket(ctx, type);
                if (!t) {
                    printf("set/%d/%d/%s\tsocket %s\n", type, option, set_probes[p].name,
                           err_name(errno));
                    continue;
                }
                int rc = zmq_setsockopt(t, option, set_probes[p].val, set_probes[p].len);
                char out[2048] = "";
                if (rc == 0)
                    describe_get(t, option, out, sizeof out);
                printf("set/%d/%d/%s\t%s%s%s\n", type, option, set_probes[p].name,
                       rc == 0 ? "ok" : err_name(errno), rc == 0 ? " then " : "", out);
                zmq_close(t);
            }
        }
        zmq_ctx_term(ctx);
    }
}

static void walk_ctx(void) {
    for (int option = 0; option <= MAX_CTX_OPTION; ++option) {
        void *ctx = zmq_ctx_new();
        int v = zmq_ctx_get(ctx, option);
        printf("ctx_get/%d\t%d%s%s\n", option, v, v < 0 ? " " : "", v < 0 ? err_name(errno) : "");
        zmq_ctx_term(ctx);
        static const int values[] = {0, 1, 2, -1};
        for (int k = 0; k < 4; ++k) {
            ctx = zmq_ctx_new();
            int rc = zmq_ctx_set(ctx, option, values[k]);
            int e = errno;
            int back = zmq_ctx_get(ctx, option);
            printf("ctx_set/%d/%d\t%s then %d\n", option, values[k], rc == 0 ? "ok" : err_name(e),
                   back);
            zmq_ctx_term(ctx);
        }
    }
    printf("ctx_get/null\t%d %s\n", zmq_ctx_get(NULL, ZMQ_IO_THREADS), err_name(errno));
}

static void walk_has(void) {
    static const char *caps[] = {"ipc",   "pgm",  "epgm", "tipc", "norm", "curve", "gssapi",
                                 "draft", "vmci", "ws",   "wss",  "udp",  "bogus"};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; ++i)
        printf("has/%s\t%d\n", caps[i], zmq_has(caps[i]));
}

static void msg_props(const char *key, zmq_msg_t *m) {
    printf("msg/%s/size\t%zu\n", key, zmq_msg_size(m));
    printf("msg/%s/more\t%d\n", key, zmq_msg_more(m));
    static const int props[] = {ZMQ_MORE, ZMQ_SRCFD, ZMQ_SHARED, 0, 4, 100};
    for (size_t i = 0; i < sizeof props / sizeof props[0]; ++i) {
        int v = zmq_msg_get(m, props[i]);
        if (props[i] == ZMQ_SRCFD && v >= 0)
            printf("msg/%s/get%d\tfd\n", key, props[i]);
        else
            printf("msg/%s/get%d\t%d%s%s\n", key, props[i], v, v < 0 ? " " : "",
                   v < 0 ? err_name(errno) : "");
    }
    static const char *names[] = {"Socket-Type", "Identity",     "Routing-Id",
                                  "User-Id",     "Peer-Address", "X-None"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        const char *v = zmq_msg_gets(m, names[i]);
        printf("msg/%s/gets/%s\t%s%s\n", key, names[i], v ? v : "NULL ", v ? "" : err_name(errno));
    }
}

static void walk_msg(void *ctx) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    msg_props("empty", &m);
    zmq_msg_close(&m);
    zmq_msg_init_size(&m, 10);
    msg_props("size10", &m);
    zmq_msg_t c;
    zmq_msg_init(&c);
    zmq_msg_copy(&c, &m);
    msg_props("copy10", &c);
    zmq_msg_close(&c);
    zmq_msg_close(&m);
    zmq_msg_init_size(&m, 1000);
    zmq_msg_init(&c);
    zmq_msg_copy(&c, &m);
    msg_props("size1000_shared", &m);
    zmq_msg_close(&c);
    zmq_msg_close(&m);
    /* a received message over tcp, two frames, from a DEALER to a ROUTER */
    void *r = zmq_socket(ctx, ZMQ_ROUTER), *d = zmq_socket(ctx, ZMQ_DEALER);
    zmq_setsockopt(d, ZMQ_ROUTING_ID, "dealer1", 7);
    zmq_bind(r, "tcp://127.0.0.1:*");
    char ep[256];
    size_t len = sizeof ep;
    zmq_getsockopt(r, ZMQ_LAST_ENDPOINT, ep, &len);
    zmq_connect(d, ep);
    zmq_send(d, "a", 1, ZMQ_SNDMORE);
    zmq_send(d, "bc", 2, 0);
    static const char *keys[] = {"recv_rid", "recv_a", "recv_bc"};
    for (int i = 0; i < 3; ++i) {
        zmq_msg_init(&m);
        int rc = zmq_msg_recv(&m, r, 0);
        printf("msg/%s/rc\t%d\n", keys[i], rc);
        msg_props(keys[i], &m);
        zmq_msg_close(&m);
    }
    printf("msg/close_twice\t%d\n", zmq_msg_close(&m) == 0 ? 0 : -1);
    zmq_close(d);
    zmq_close(r);
}

static void poll_line(const char *key, zmq_pollitem_t *items, int n, long timeout) {
    int rc = zmq_poll(items, n, timeout);
    printf("poll/%s\t%d%s%s", key, rc, rc < 0 ? " " : "", rc < 0 ? err_name(errno) : "");
    for (int i = 0; i < n && items; ++i)
        printf(" r%d=%d", i, items[i].revents);
    printf("\n");
}

static void walk_poll(void *ctx) {
    void *a = zmq_socket(ctx, ZMQ_PAIR), *b = zmq_socket(ctx, ZMQ_PAIR);
    zmq_bind(a, "inproc://api-walk-poll");
    zmq_connect(b, "inproc://api-walk-poll");
    int fds[2];
    if (pipe(fds) != 0)
        return;
    zmq_pollitem_t items[3] = {
        {a, 0, ZMQ_POLLIN | ZMQ_POLLOUT, 0}, {b, 0, ZMQ_POLLIN, 0}, {NULL, fds[0], ZMQ_POLLIN, 0}};
    poll_line("idle", items, 3, 0);
    zmq_send(a, "x", 1, 0);
    poll_line("after_send", items, 3, 100);
    if (write(fds[1], "x", 1) != 1)
        return;
    poll_line("after_pipe_write", items, 3, 100);
    char buf[4];
    zmq_recv(b, buf, sizeof buf, 0);
    poll_line("after_recv", items, 3, 0);
    zmq_pollitem_t out_only = {NULL, fds[1], ZMQ_POLLOUT, 0};
    poll_line("raw_pollout", &out_only, 1, 0);
    poll_line("none_timeout0", NULL, 0, 0);
    poll_line("null_items", NULL, 1, 0);
    zmq_pollitem_t bad = {ctx, 0, ZMQ_POLLIN, 0};
    poll_line("ctx_as_socket", &bad, 1, 0);
    close(fds[0]);
    close(fds[1]);
    zmq_close(a);
    zmq_close(b);
}

/* Monitor events: names only (values are fds and errnos), in arrival order,
 * until a quiet 300 ms. */
static void drain_monitor(const char *key, void *mon) {
    printf("monitor/%s\t", key);
    for (int n = 0; mon && n < 32; ++n) {
        zmq_pollitem_t it = {mon, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&it, 1, 300) <= 0)
            break;
        zmq_msg_t head, addr;
        zmq_msg_init(&head);
        zmq_msg_init(&addr);
        uint16_t ev = 0;
        if (zmq_msg_recv(&head, mon, 0) >= 6 && zmq_msg_more(&head))
            memcpy(&ev, zmq_msg_data(&head), 2);
        zmq_msg_recv(&addr, mon, 0);
        printf("%#x ", ev);
        zmq_msg_close(&head);
        zmq_msg_close(&addr);
    }
    printf("\n");
}

static void walk_monitor(void *ctx) {
    void *server = zmq_socket(ctx, ZMQ_REP), *client = zmq_socket(ctx, ZMQ_REQ);
    if (!server || !client) {
        printf("monitor/sockets\t%s\n", err_name(errno));
        return;
    }
    printf("monitor/bad_endpoint\t%s\n",
           zmq_socket_monitor(server, "tcp://127.0.0.1:1", ZMQ_EVENT_ALL) == 0 ? "ok"
                                                                               : err_name(errno));
    zmq_socket_monitor(server, "inproc://mon-server", ZMQ_EVENT_ALL);
    zmq_socket_monitor(client, "inproc://mon-client", ZMQ_EVENT_ALL);
    void *ms = zmq_socket(ctx, ZMQ_PAIR), *mc = zmq_socket(ctx, ZMQ_PAIR);
    zmq_connect(ms, "inproc://mon-server");
    zmq_connect(mc, "inproc://mon-client");
    zmq_bind(server, "tcp://127.0.0.1:*");
    char ep[256];
    size_t len = sizeof ep;
    zmq_getsockopt(server, ZMQ_LAST_ENDPOINT, ep, &len);
    zmq_connect(client, ep);
    zmq_send(client, "ping", 4, 0);
    char buf[8];
    zmq_recv(server, buf, sizeof buf, 0);
    zmq_send(server, "pong", 4, 0);
    zmq_recv(client, buf, sizeof buf, 0);
    drain_monitor("server_connected", ms);
    drain_monitor("client_connected", mc);
    zmq_close(client);
    drain_monitor("server_after_client_close", ms);
    drain_monitor("client_after_close", mc);
    zmq_close(server);
    drain_monitor("server_after_close", ms);
    zmq_close(ms);
    zmq_close(mc);
}

/* ZMQ_FD readable (poll, 0 ms) after each step of a PULL's life: the
 * edge-triggered contract event loops build on. */
static int fd_ready(void *s) {
    int fd;
    size_t len = sizeof fd;
    zmq_getsockopt(s, ZMQ_FD, &fd, &len);
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, 0);
}

static int events_of(void *s) {
    int e = -1;
    size_t len = sizeof e;
    zmq_getsockopt(s, ZMQ_EVENTS, &e, &len);
    return e;
}

static void walk_fd(void *ctx) {
    void *push = zmq_socket(ctx, ZMQ_PUSH), *pull = zmq_socket(ctx, ZMQ_PULL);
    zmq_bind(push, "tcp://127.0.0.1:*");
    char ep[256];
    size_t len = sizeof ep;
    zmq_getsockopt(push, ZMQ_LAST_ENDPOINT, ep, &len);
    printf("fd/new\t%d\n", fd_ready(pull));
    printf("fd/events_new\t%d\n", events_of(pull));
    printf("fd/after_events\t%d\n", fd_ready(pull));
    zmq_connect(pull, ep);
    printf("fd/after_connect\t%d\n", fd_ready(pull));
    usleep(200000);
    printf("fd/events_connected\t%d\n", events_of(pull));
    printf("fd/after_events2\t%d\n", fd_ready(pull));
    zmq_send(push, "m", 1, 0);
    int fd;
    len = sizeof fd;
    zmq_getsockopt(pull, ZMQ_FD, &fd, &len);
    struct pollfd p = {fd, POLLIN, 0};
    printf("fd/wakes_on_arrival\t%d\n", poll(&p, 1, 2000));
    printf("fd/events_arrived\t%d\n", events_of(pull));
    char buf[4];
    printf("fd/recv\t%d\n", zmq_recv(pull, buf, sizeof buf, ZMQ_DONTWAIT));
    printf("fd/events_drained\t%d\n", events_of(pull));
    printf("fd/after_drain\t%d\n", fd_ready(pull));
    zmq_close(push);
    zmq_close(pull);
}

static void walk_errors(void *ctx) {
    printf("err/setsockopt_null\t%s\n",
           zmq_setsockopt(NULL, ZMQ_LINGER, &v_zero, sizeof v_zero) == 0 ? "ok" : err_name(errno));
    size_t len = sizeof(int);
    int v;
    printf("err/getsockopt_null\t%s\n",
           zmq_getsockopt(NULL, ZMQ_LINGER, &v, &len) == 0 ? "ok" : err_name(errno));
    void *s = zmq_socket(ctx, ZMQ_PAIR);
    static const char *eps[] = {"",
                                "tcp://",
                                "tcp://127.0.0.1",
                                "bogus://x",
                                "ipc://",
                                "inproc://",
                                "tcp://127.0.0.1:99999",
                                "pgm://eth0;239.1.1.1:5555",
                                "udp://127.0.0.1:5555",
                                "tcp://no.such.host.invalid:5555"};
    for (size_t i = 0; i < sizeof eps / sizeof eps[0]; ++i) {
        printf("err/bind/%s\t%s\n", eps[i], zmq_bind(s, eps[i]) == 0 ? "ok" : err_name(errno));
        printf("err/connect/%s\t%s\n", eps[i],
               zmq_connect(s, eps[i]) == 0 ? "ok" : err_name(errno));
    }
    printf("err/unbind_unknown\t%s\n",
           zmq_unbind(s, "tcp://127.0.0.1:1") == 0 ? "ok" : err_name(errno));
    printf("err/disconnect_unknown\t%s\n",
           zmq_disconnect(s, "tcp://127.0.0.1:1") == 0 ? "ok" : err_name(errno));
    printf("err/recv_pair_dontwait\t%s\n",
           zmq_recv(s, &v, sizeof v, ZMQ_DONTWAIT) >= 0 ? "ok" : err_name(errno));
    zmq_close(s);
    void *req = zmq_socket(ctx, ZMQ_REQ);
    printf("err/req_recv_first\t%s\n",
           zmq_recv(req, &v, sizeof v, ZMQ_DONTWAIT) >= 0 ? "ok" : err_name(errno));
    zmq_close(req);
    void *sub = zmq_socket(ctx, ZMQ_SUB);
    printf("err/sub_send\t%s\n", zmq_send(sub, "x", 1, ZMQ_DONTWAIT) >= 0 ? "ok" : err_name(errno));
    zmq_close(sub);
    printf("err/strerror_efsm\t%s\n", zmq_strerror(EFSM));
    printf("err/strerror_eterm\t%s\n", zmq_strerror(ETERM));
    printf("err/strerror_enocompat\t%s\n", zmq_strerror(ENOCOMPATPROTO));
}

int main(void) {
    int major, minor, patch;
    zmq_version(&major, &minor, &patch);
    printf("version\t%d.%d.%d\n", major, minor, patch);
    void *ctx = zmq_ctx_new();
    walk_has();
    walk_ctx();
    walk_socket_options();
    walk_msg(ctx);
    walk_poll(ctx);
    walk_monitor(ctx);
    walk_fd(ctx);
    walk_errors(ctx);
    printf("ctx_term\t%d\n", zmq_ctx_term(ctx));
    return 0;
}
