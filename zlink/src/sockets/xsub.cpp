#include "sockets/xsub.hpp"

#include <zmq.h>

#include <cstring>

#include "sockets/socket_util.hpp"

namespace zlink {

namespace {
std::span<const std::byte> topic_of(const msg_t &m) {
    const std::string_view b = body(m);
    return std::as_bytes(std::span(b.data(), b.size())).subspan(1);
}
}  // namespace

xsub_t::xsub_t(ctx_t *ctx, int type) : socket_base_t(ctx, type) {
    // As libzmq: closing a subscriber does not wait for subscriptions to
    // reach the wire.
    options.linger = 0;
    prefetched_.init();
}

xsub_t::~xsub_t() { prefetched_.close(); }

void xsub_t::xattach_pipe(pipe_t *pipe, bool) {
    fq_.attach(pipe);
    dist_.attach(pipe);
    // A publisher that appears late still learns every live subscription.
    send_subscriptions(pipe);
}

// The connection under a kept pipe came back: the publisher at the other end may
// be a restarted process that never saw our subscriptions (libzmq: xhiccuped).
void xsub_t::xhiccuped(pipe_t *pipe) { send_subscriptions(pipe); }

void xsub_t::send_subscriptions(pipe_t *pipe) {
    subscriptions_.for_each([pipe](std::span<const std::byte> prefix) {
        msg_t m;
        m.init_size(prefix.size() + 1);
        auto *d = static_cast<unsigned char *>(m.data());
        d[0] = 1;
        if (!prefix.empty())
            std::memcpy(d + 1, prefix.data(), prefix.size());
        if (!pipe->write(m))
            m.close();  // full: the publisher misses it, as libzmq
    });
    pipe->flush();
}

int xsub_t::xsend(msg_t &msg) {
    const std::string_view b = body(msg);
    const bool request = !more_send_ && !msg.has_more() && !b.empty() && (b[0] == 0 || b[0] == 1);
    more_send_ = msg.has_more();
    if (request && b[0] == 1) {
        // Forwarded every time (not only on 0 -> 1): an XPUB upstream in
        // verbose mode wants to see each one.
        subscriptions_.add(topic_of(msg));
    } else if (request && !subscriptions_.remove(topic_of(msg))) {
        drop_frame(msg);  // still subscribed (or never was): nothing to tell
        return 0;
    }
    dist_.send_to_all(msg, drop_frame);
    return 0;
}

// SUB's filter; ZMQ_INVERT_MATCHING turns it into "everything that does
// not match".
bool xsub_t::wanted(const msg_t &m) const {
    const std::string_view b = body(m);
    return subscriptions_.match(std::as_bytes(std::span(b.data(), b.size()))) !=
           options.invert_matching;
}

bool xsub_t::prefetch() {
    // Reads until a message passes the filter; non-matching messages are
    // discarded whole.
    while (fq_.recv(prefetched_)) {
        if (!filter_ || wanted(prefetched_)) {
            has_prefetched_ = true;
            return true;
        }
        bool more = prefetched_.has_more();
        drop_frame(prefetched_);
        while (more && fq_.recv(prefetched_)) {
            more = prefetched_.has_more();
            drop_frame(prefetched_);
        }
    }
    return false;
}

int xsub_t::xrecv(msg_t &msg) {
    if (more_recv_) {
        // Later frames of a message that passed the filter.
        if (!fq_.recv(msg))
            return fail(EAGAIN);
        more_recv_ = msg.has_more();
        return 0;
    }
    if (!has_prefetched_ && !prefetch())
        return fail(EAGAIN);
    msg.move(prefetched_);
    prefetched_.init();
    has_prefetched_ = false;
    more_recv_ = msg.has_more();
    return 0;
}

bool xsub_t::xhas_in() { return more_recv_ || has_prefetched_ || prefetch(); }
bool xsub_t::xhas_out() { return true; }  // never blocks: sends to all or drops
void xsub_t::xread_activated(pipe_t *pipe) { fq_.activated(pipe); }
void xsub_t::xwrite_activated(pipe_t *pipe) { dist_.activated(pipe); }

void xsub_t::xpipe_terminated(pipe_t *pipe) {
    fq_.terminated(pipe);
    dist_.terminated(pipe);
}

}  // namespace zlink
