#include "core/command.hpp"

#include "core/ctx.hpp"
#include "core/io_object.hpp"
#include "core/pipe.hpp"
#include "core/socket_base.hpp"

namespace zlink {

void dispatch(command &c) {
    switch (c.kind) {
    case command_kind::activate_read:
    case command_kind::activate_write:
    case command_kind::pipe_term:
    case command_kind::pipe_term_ack:
    case command_kind::pipe_drained:
    case command_kind::pipe_report:
    case command_kind::pipe_hwms: return c.pipe->process(c);
    case command_kind::attach_pipe:
    case command_kind::hiccup:
    case command_kind::own:
    case command_kind::owned_gone:
    case command_kind::stop:
    case command_kind::wake: return c.socket->process(c);
    case command_kind::reap: return c.socket->ctx()->process(c);
    case command_kind::io_start:
    case command_kind::io_stop: return c.object->process(c);
    }
}

}  // namespace zlink
