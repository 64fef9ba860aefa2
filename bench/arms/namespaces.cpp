#include "namespaces.hpp"

#include <link.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "../common/process.hpp"
#include "valgrind_marks.hpp"

extern char **environ;

namespace bench::arms {

namespace {

constexpr int kDefaultNns = 4;  // glibc's default for glibc.rtld.nns
constexpr int kMaxNns = 16;     // DL_NNS: glibc's hard limit
constexpr const char *kReexecMark = "BENCH_ARMS_REEXEC";

// glibc.rtld.nns as this process was started with (GLIBC_TUNABLES), else the default.
int tunable_nns() {
    const char *t = std::getenv("GLIBC_TUNABLES");
    if (!t)
        return kDefaultNns;
    const std::string_view all(t);
    const std::string_view key = "glibc.rtld.nns=";
    const auto at = all.find(key);
    if (at == std::string_view::npos)
        return kDefaultNns;
    return std::atoi(t + at + key.size());
}

std::string tunables_with_nns(int nns) {
    std::string out;
    if (const char *t = std::getenv("GLIBC_TUNABLES")) {
        std::string_view rest(t);
        while (!rest.empty()) {  // keep every other tunable
            const auto colon = rest.find(':');
            const std::string_view one = rest.substr(0, colon);
            if (one.rfind("glibc.rtld.nns=", 0) != 0 && !one.empty())
                out += std::string(out.empty() ? "" : ":") + std::string(one);
            rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
        }
    }
    return out + (out.empty() ? "" : ":") + "glibc.rtld.nns=" + std::to_string(nns);
}

template <typename F>
F symbol(void *handle, const char *name, const LibSpec &lib, bool required = true) {
    void *p = dlsym(handle, name);
    if (!p && required)
        exit_error("--lib " + lib.label + "=" + lib.path + ": no symbol " + name +
                   " (not a libzmq-API library?)");
    return reinterpret_cast<F>(p);
}

std::string real_file_of(void *address) {
    Dl_info info{};
    if (!dladdr(address, &info) || !info.dli_fname)
        return "";
    char real[PATH_MAX];
    return realpath(info.dli_fname, real) ? real : info.dli_fname;
}

// Runs this program again with glibc.rtld.nns=16, once.
[[noreturn]] void reexec_with_more_tls(char **argv, const std::string &why) {
    const std::string want = tunables_with_nns(kMaxNns);
    if (std::getenv(kReexecMark) || running_on_valgrind())
        exit_error(why + "; GLIBC_TUNABLES=" + want + " reserves the most static TLS" +
                   (running_on_valgrind() ? ": start the program under valgrind with it (it "
                                            "cannot re-execute itself there)"
                                          : ", and this run already had it"));
    // The environment is built as a new array: setenv in this process would detach
    // the namespaces' environ from ours.
    std::vector<std::string> vars;
    for (char **e = environ; e && *e; ++e)
        if (std::strncmp(*e, "GLIBC_TUNABLES=", 15) != 0)
            vars.emplace_back(*e);
    vars.push_back("GLIBC_TUNABLES=" + want);
    vars.push_back(std::string(kReexecMark) + "=1");
    std::vector<char *> envp;
    for (auto &v : vars)
        envp.push_back(v.data());
    envp.push_back(nullptr);
    ::execve("/proc/self/exe", argv, envp.data());
    exit_error(why + "; re-executing with GLIBC_TUNABLES=" + want +
               " failed: " + std::strerror(errno));
}

}  // namespace

int namespaces_reserved() { return tunable_nns(); }

std::vector<LoadedLibrary> load_libraries(const std::vector<LibSpec> &libs, char **argv) {
    if (libs.size() > kMaxNns - 1)
        exit_error(std::to_string(libs.size()) + " --lib given; glibc allows at most " +
                   std::to_string(kMaxNns - 1) + " namespaces besides the main program's");
    std::vector<LoadedLibrary> out;
    out.reserve(libs.size());
    for (const LibSpec &spec : libs) {
        void *h = dlmopen(LM_ID_NEWLM, spec.path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *err = dlerror();
            const std::string why = "--lib " + spec.label + "=" + spec.path +
                                    ": dlmopen into namespace " + std::to_string(out.size() + 1) +
                                    " failed: " + (err ? err : "?") + " (glibc.rtld.nns " +
                                    std::to_string(tunable_nns()) + ")";
            if (err && std::strstr(err, "static TLS"))
                reexec_with_more_tls(argv, why);
            exit_error(why);
        }
        LoadedLibrary lib;
        lib.label = spec.label;
        lib.path = spec.path;
        lib.handle = h;
        Lmid_t id = -1;
        if (dlinfo(h, RTLD_DI_LMID, &id) == 0)
            lib.namespace_id = id;
#define BENCH_ARMS_RESOLVE(name) lib.table.name = symbol<decltype(lib.table.name)>(h, #name, spec);
        BENCH_ARMS_ZMQ_FUNCTIONS(BENCH_ARMS_RESOLVE)
#undef BENCH_ARMS_RESOLVE
        lib.ns_setenv = symbol<decltype(lib.ns_setenv)>(h, "setenv", spec);
        lib.ns_unsetenv = symbol<decltype(lib.ns_unsetenv)>(h, "unsetenv", spec);
        lib.ns_getenv = symbol<decltype(lib.ns_getenv)>(h, "getenv", spec);
        lib.ns_ctype_init = symbol<decltype(lib.ns_ctype_init)>(h, "__ctype_init", spec, false);
        if (lib.ns_ctype_init)
            lib.ns_ctype_init();  // for this (the main) thread
        lib.loaded_from = real_file_of(reinterpret_cast<void *>(lib.table.zmq_version));
        int major = 0, minor = 0, patch = 0;
        lib.table.zmq_version(&major, &minor, &patch);
        lib.version =
            std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
        out.push_back(std::move(lib));
    }
    return out;
}

void prepare_thread(const std::vector<LoadedLibrary> &libs) {
    for (const LoadedLibrary &lib : libs)
        if (lib.ns_ctype_init)
            lib.ns_ctype_init();
}

std::mutex &environment_mutex() {
    static std::mutex m;
    return m;
}

std::vector<std::pair<std::string, std::optional<std::string>>>
apply_environment(const LoadedLibrary &lib,
                  const std::vector<std::pair<std::string, std::string>> &env) {
    std::vector<std::pair<std::string, std::optional<std::string>>> old;
    for (const auto &[name, value] : env) {
        const char *was = lib.ns_getenv(name.c_str());
        old.emplace_back(name, was ? std::optional<std::string>(was) : std::nullopt);
        if (lib.ns_setenv(name.c_str(), value.c_str(), 1) != 0)
            exit_error("setenv " + name + " in the namespace of --lib " + lib.label + " failed");
    }
    return old;
}

void restore_environment(
    const LoadedLibrary &lib,
    const std::vector<std::pair<std::string, std::optional<std::string>>> &old) {
    for (const auto &[name, value] : old) {
        if (value)
            lib.ns_setenv(name.c_str(), value->c_str(), 1);
        else
            lib.ns_unsetenv(name.c_str());
    }
}

}  // namespace bench::arms
