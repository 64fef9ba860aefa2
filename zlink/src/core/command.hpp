// command: the closed set of requests one thread sends to an object that lives
// on another thread (libzmq's command_t idea, own implementation).
//
// Why typed commands and not posted closures: every kind names its target and
// the thread that runs it ("owner"), the arguments are plain fields that can
// be read in a debugger or a log, and no closure captures a raw pointer whose
// lifetime nobody states. Targets and their owners:
//
//   pipe_t         the thread of the pipe end's sink (a socket's application
//                  thread, or a session's IO thread)
//   socket_base_t  the application thread using the socket (commands run
//                  inside its next zmq_* call, or on the reaper once closed)
//   ctx_t          the reaper thread (kind reap)
//   io_object      its IO thread (listeners, sessions)
//
// Lifetime rules: a pipe end or socket is only freed after the last command
// to it has run (pipe: term/term_ack handshake; socket: the reaper waits for
// pipes and owned IO objects). An io_object is held by a shared_ptr inside
// the command itself, so it lives at least until the command has run.
#pragma once
#include <cstdint>
#include <memory>

namespace zlink {

class io_object;
class pipe_t;
class socket_base_t;

enum class command_kind : std::uint8_t {
    // ---- to a pipe end (field `pipe`) ----
    activate_read,   // the peer flushed into the pipe after we found it empty
    activate_write,  // `value`: messages the peer has read (HWM credit)
    pipe_term,       // the peer ended the pipe; a delimiter follows its data;
                     // `value`: pipe_t::term_reason (1 = its owner is closing)
    pipe_term_ack,   // the peer has seen our pipe_term
    pipe_drained,    // self-sent: the delimiter was read while draining
    pipe_report,     // self-sent: tell the sink pipe_terminated, then free
    pipe_hwms,       // `value`: new HWMs, out << 32 | in (inproc connect before bind)
    // ---- to a socket (field `socket`) ----
    attach_pipe,  // `pipe`: a new peer pipe; `value` 1 = this side connected
    hiccup,       // `pipe`: the socket's end of a pipe whose peer reconnected
    own,          // `object`: an IO object that now belongs to the socket
    owned_gone,   // `object`: an IO object of the socket has finished
    stop,         // the context is terminating: blocking calls fail (ETERM)
    wake,         // no work: makes ZMQ_FD readable after a bind/connect/unbind/
                  // disconnect, where libzmq's own commands to the socket do
    // ---- to the context's reaper (field `socket`) ----
    reap,  // finish closing `socket` (pipes, lingering sessions), delete it
    // ---- to an IO object (field `object`) ----
    io_start,  // begin work (listen, connect, run an adopted connection)
    io_stop,   // begin shutdown, honouring LINGER; ends with owned_gone
};

struct command {
    command_kind kind;
    pipe_t *pipe = nullptr;
    socket_base_t *socket = nullptr;
    std::shared_ptr<io_object> object = nullptr;
    std::uint64_t value = 0;
};

// Runs a command on the calling thread, which must be the target's owner.
void dispatch(command &c);

}  // namespace zlink
