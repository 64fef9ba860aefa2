// The libraries of an arms run, each loaded with dlmopen(LM_ID_NEWLM) into a
// link-map namespace of its own: its own copy of the library, of libstdc++ and of
// libc (so the same path under two labels gives two independent copies, for A/A).
// Each namespace's zmq.h functions fill a ZmqTable (dispatch.cpp); its own libc's
// setenv/getenv set an arm's environment for that copy (a namespace has its own
// environ: setenv in the main namespace would not reach it).
#pragma once

#include <dlfcn.h>

#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arms_options.hpp"
#include "zmq_table.hpp"

namespace bench::arms {

struct LoadedLibrary {
    std::string label, path;
    std::string loaded_from;  // the file that provides zmq_version (realpath), proof of what ran
    std::string version;      // zmq_version of the copy
    long namespace_id = -1;   // the link-map list id glibc gave it
    void *handle = nullptr;
    ZmqTable table;
    // The namespace's own libc.
    int (*ns_setenv)(const char *, const char *, int) = nullptr;
    int (*ns_unsetenv)(const char *) = nullptr;
    char *(*ns_getenv)(const char *) = nullptr;
    void (*ns_ctype_init)() = nullptr;  // glibc's per-thread ctype set-up (GLIBC_PRIVATE)
};

// glibc.rtld.nns as this process was started with (GLIBC_TUNABLES; glibc's default 4).
int namespaces_reserved();

// Loads every --lib into a namespace of its own. glibc allows 15 namespaces besides
// the main program's, and sizes the static TLS that each namespace's libc needs by
// the tunable glibc.rtld.nns: at its default (4), 11 namespaces of libzmq or zlink
// loaded on this host (Debian glibc 2.36), the 12th failed with "cannot allocate
// memory in static TLS block". On that failure the program re-executes itself once
// with glibc.rtld.nns=16 (read only at start-up), which reserves room for all 15.
// Any other failure, more than 15 libraries, or a failure under valgrind (a
// re-exec would leave the tool) ends the run with exit 1, naming the label, the
// path and the loader's reason.
std::vector<LoadedLibrary> load_libraries(const std::vector<LibSpec> &libs, char **argv);

// Makes the calling thread fit to call into every namespace. A thread gets its
// per-thread libc state (the ctype tables isalnum and friends read through TLS) only
// from the libc that started it, so a thread of the main program calling a
// library's copy of libc would crash in isalnum (seen in zlink's address parsing).
// Call on every thread that calls a library, before its first call.
void prepare_thread(const std::vector<LoadedLibrary> &libs);

// Sets `env` in the library's namespace for the duration of `body` (serialised
// process-wide: setenv is not thread-safe), then restores what was there.
template <typename Body>
auto with_environment(const LoadedLibrary &lib,
                      const std::vector<std::pair<std::string, std::string>> &env, Body body);

// Implementation details of with_environment.
std::mutex &environment_mutex();
std::vector<std::pair<std::string, std::optional<std::string>>>
apply_environment(const LoadedLibrary &lib,
                  const std::vector<std::pair<std::string, std::string>> &env);
void restore_environment(
    const LoadedLibrary &lib,
    const std::vector<std::pair<std::string, std::optional<std::string>>> &old);

template <typename Body>
auto with_environment(const LoadedLibrary &lib,
                      const std::vector<std::pair<std::string, std::string>> &env, Body body) {
    std::lock_guard lock(environment_mutex());
    const auto old = apply_environment(lib, env);
    struct Restore {
        const LoadedLibrary &lib;
        const decltype(old) &saved;
        ~Restore() { restore_environment(lib, saved); }
    } restore{lib, old};
    return body();
}

}  // namespace bench::arms
