#include "sockets/xpub.hpp"

#include <zmq.h>

#include <cstring>

#include "sockets/socket_util.hpp"

namespace zlink {

xpub_t::xpub_t(ctx_t *ctx, int type) : socket_base_t(ctx, type) { welcome_.init(); }

xpub_t::~xpub_t() {
    for (pending_t &p : pending_)
        p.msg.close();
    welcome_.close();
}

bool xpub_t::is_pub() const { return options.type == ZMQ_PUB; }

void xpub_t::xattach_pipe(pipe_t *pipe, bool) {
    dist_.attach(pipe);
    if (welcome_.size() > 0) {
        msg_t copy;
        copy.init();
        copy.copy(welcome_);
        if (pipe->write(copy))
            pipe->flush();
        else
            copy.close();
    }
    // Subscriptions may already be waiting in the pipe.
    xread_activated(pipe);
}

void xpub_t::xread_activated(pipe_t *pipe) {
    msg_t msg;
    msg.init();
    bool more = false;  // inside a multipart user message from this pipe
    while (pipe->read(msg)) {
        const std::string_view b = body(msg);
        const bool request = !more && !msg.has_more() && !b.empty() && (b[0] == 0 || b[0] == 1);
        if (!request) {
            more = msg.has_more();
            if (is_pub())
                drop_frame(msg);  // RFC 29: PUB discards what subscribers send
            else
                deliver_upward(msg, pipe);
            continue;
        }
        apply_request(b[0] == 1, std::as_bytes(std::span(b.data(), b.size())).subspan(1), pipe);
        drop_frame(msg);
    }
    msg.close();
}

// What the application hears of a request, as libzmq: a subscription when it
// is new (or verbose), a cancel unless others keep the prefix (or verboser);
// in manual mode every request, applied by the application itself.
void xpub_t::apply_request(bool subscribe, bytes prefix, pipe_t *pipe) {
    const unsigned char kind = subscribe ? 1 : 0;
    if (manual_) {
        if (subscribe)
            requested_.add(prefix, pipe);
        else
            requested_.remove(prefix, pipe);
        deliver_upward(kind, prefix, pipe);
        return;
    }
    const bool notify = subscribe ? subscriptions_.add(prefix, pipe) || verbose_subs_
                                  : subscriptions_.remove(prefix, pipe) !=
                                            pipe_trie<pipe_t>::removed::others_remain ||
                                        verbose_unsubs_;
    if (notify)
        deliver_upward(kind, prefix, pipe);
}

void xpub_t::deliver_upward(msg_t &msg, pipe_t *from) {
    pending_.push_back({msg_t{}, from});
    pending_.back().msg.init();
    pending_.back().msg.move(msg);
    msg.init();
}

void xpub_t::deliver_upward(unsigned char kind, bytes prefix, pipe_t *from) {
    if (is_pub())
        return;
    msg_t m;
    m.init_size(prefix.size() + 1);
    auto *d = static_cast<unsigned char *>(m.data());
    d[0] = kind;
    if (!prefix.empty())
        std::memcpy(d + 1, prefix.data(), prefix.size());
    deliver_upward(m, from);
}

void xpub_t::select_recipients(const msg_t &first_frame) {
    dist_.unmatch();
    const std::string_view b = body(first_frame);
    subscriptions_.match(std::as_bytes(std::span(b.data(), b.size())),
                         [this](pipe_t *p) { dist_.match(p); });
    if (options.invert_matching)
        dist_.reverse_match();
}

int xpub_t::xsend(msg_t &msg) {
    const bool more = msg.has_more();
    if (!more_send_) {
        select_recipients(msg);
        if (nodrop_ && !dist_.check_hwm()) {
            dist_.unmatch();
            return fail(EAGAIN);  // msg untouched: the caller blocks or reports
        }
    }
    dist_.send_to_matching(msg, drop_frame);
    more_send_ = more;  // msg is left empty: written (moved from) or dropped
    return 0;
}

int xpub_t::xrecv(msg_t &msg) {
    if (is_pub())
        return fail(ENOTSUP);
    if (pending_.empty())
        return fail(EAGAIN);
    if (manual_)
        last_pipe_ = pending_.front().from;
    msg.move(pending_.front().msg);
    pending_.pop_front();
    return 0;
}

bool xpub_t::xhas_in() { return !is_pub() && !pending_.empty(); }
bool xpub_t::xhas_out() { return !nodrop_ || dist_.has_out(); }
void xpub_t::xwrite_activated(pipe_t *pipe) { dist_.activated(pipe); }

void xpub_t::xpipe_terminated(pipe_t *pipe) {
    // RFC 29, XPUB: "SHALL, if the subscriber peer disconnects prematurely,
    // generate a suitable unsubscribe request for the calling application."
    auto cancel = [this](bytes p) { deliver_upward(0, p, nullptr); };
    if (manual_) {
        // Cancel what it asked for; what the application gave it just goes.
        requested_.remove_pipe(pipe, cancel, /*only_last=*/false);
        subscriptions_.remove_pipe(pipe, [](bytes) {}, false);
    } else {
        subscriptions_.remove_pipe(pipe, cancel, /*only_last=*/!verbose_unsubs_);
    }
    if (pipe == last_pipe_)
        last_pipe_ = nullptr;
    for (pending_t &p : pending_)
        if (p.from == pipe)
            p.from = nullptr;
    dist_.terminated(pipe);
}

int xpub_t::xsetsockopt(int option, const void *val, size_t len) {
    switch (option) {
    case ZMQ_XPUB_VERBOSE:
        verbose_unsubs_ = false;
        return parse_flag_option(val, len, verbose_subs_);
    case ZMQ_XPUB_VERBOSER:
        if (parse_flag_option(val, len, verbose_subs_) != 0)
            return -1;
        verbose_unsubs_ = verbose_subs_;
        return 0;
    case ZMQ_XPUB_NODROP: return parse_flag_option(val, len, nodrop_);
    case ZMQ_XPUB_MANUAL: return parse_flag_option(val, len, manual_);
    case ZMQ_XPUB_WELCOME_MSG: return set_welcome(val, len);
    case ZMQ_SUBSCRIBE:
    case ZMQ_UNSUBSCRIBE: return manual_ ? manual_subscription(option, val, len) : fail(EINVAL);
    default: return fail(EINVAL);
    }
}

// Manual mode: (un)subscribe the sender of the last request the application
// read; a no-op when there is none (or it has gone), as in libzmq.
int xpub_t::manual_subscription(int option, const void *val, size_t len) {
    if (len > 0 && val == nullptr)
        return fail(EINVAL);
    if (last_pipe_ == nullptr)
        return 0;
    const bytes prefix(static_cast<const std::byte *>(val), len);
    if (option == ZMQ_SUBSCRIBE)
        subscriptions_.add(prefix, last_pipe_);
    else
        subscriptions_.remove(prefix, last_pipe_);
    return 0;
}

int xpub_t::set_welcome(const void *val, size_t len) {
    if (len > 0 && val == nullptr)
        return fail(EINVAL);
    welcome_.close();
    if (len == 0 || welcome_.init_size(len) != 0) {
        welcome_.init();
        return len == 0 ? 0 : fail(ENOMEM);
    }
    std::memcpy(welcome_.data(), val, len);
    return 0;
}

}  // namespace zlink
