// The state a result is written from (run info, verification, what the library
// reports), kept apart from the renderers: it uses only the zmq.h API and no
// library identity, so bench_<pattern> and bench_arms_<pattern> share it.
#include <unistd.h>

#include <cstdio>
#include <mutex>

#include <zmq.h>

#include "process.hpp"
#include "report.hpp"

namespace bench {

namespace {

RunInfo g_info;
VerifyState g_verify;
LibrarySettings g_lib;
std::mutex g_lib_mutex;
FailureLine g_failure_line = nullptr;

int read_int_option(void *s, int option) {
    int value = 0;
    std::size_t len = sizeof value;
    if (zmq_getsockopt(s, option, &value, &len) != 0)
        return -2;  // "could not read" (never a real value)
    return value;
}

void read_socket(LibrarySettings &lib, void *socket) {
    lib.sndhwm = read_int_option(socket, ZMQ_SNDHWM);
    lib.rcvhwm = read_int_option(socket, ZMQ_RCVHWM);
    lib.sndbuf = read_int_option(socket, ZMQ_SNDBUF);
    lib.rcvbuf = read_int_option(socket, ZMQ_RCVBUF);
}

}  // namespace

void set_run_info(const RunInfo &info) { g_info = info; }

void record_socket_settings(void *socket) {
    std::lock_guard lock(g_lib_mutex);
    if (g_lib.sndhwm)
        return;
    read_socket(g_lib, socket);
}

void record_context_settings(void *context) {
    std::lock_guard lock(g_lib_mutex);
    if (!g_lib.io_threads)
        g_lib.io_threads = zmq_ctx_get(context, ZMQ_IO_THREADS);
}

LibrarySettings library_settings() {
    std::lock_guard lock(g_lib_mutex);
    return g_lib;
}

LibrarySettings read_library_settings(void *socket, void *context) {
    LibrarySettings lib;
    read_socket(lib, socket);
    lib.io_threads = zmq_ctx_get(context, ZMQ_IO_THREADS);
    return lib;
}

RunInfo &run_info() { return g_info; }
VerifyState &verify_state() { return g_verify; }

void set_failure_line(FailureLine render) { g_failure_line = render; }

void exit_verify(const std::string &error) {
    static std::mutex m;
    m.lock();  // never unlocked: the process ends here
    g_verify.ok = false;
    g_verify.error = error;
    if (g_failure_line)
        std::fprintf(stdout, "%s\n", g_failure_line().c_str());
    std::fprintf(stderr, "%s: verification failed: %s\n", program_name().c_str(), error.c_str());
    std::fflush(stdout);
    std::fflush(stderr);
    cleanup_paths();
    ::_exit(kExitVerify);
}

}  // namespace bench
