// Socket set-up shared by every role: the pattern's socket type for this role, the
// options the run asked for (and nothing else), CURVE with the bound side as server,
// bind or connect.
#pragma once

#include "options.hpp"

#include <string>

namespace faults {

int socket_type(const Options &o);
// A socket of this role with the run's options. Exits 3 naming the call if the
// library refuses anything (never silently runs with a setting missing).
void *make_socket(void *ctx, const Options &o);
// Bind or connect it (after a monitor is attached, so LISTENING/CONNECTED are seen).
void attach(void *s, const Options &o);
// The endpoint as bound (a tcp port of 0 or * read back), for the runner.
std::string last_endpoint(void *s);
void set_int(void *s, int option, int value, const char *name);
[[noreturn]] void zmq_failure(const char *what);

}  // namespace faults
