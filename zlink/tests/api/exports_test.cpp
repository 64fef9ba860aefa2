// Every function libzmq 4.3.5 exports is exported by libzlink.so too, so a
// program (or a binding like pyzmq) linked against libzmq finds all its
// symbols.  The list is libzmq's own (libzmq-4.3.5-exports.txt, from nm);
// check_exports.py keeps that list equal to the baseline library.
#include <dlfcn.h>

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "zmq.h"  // constants only: the calls go through dlsym

namespace {

std::vector<std::string> libzmq_exports() {
    std::ifstream in(ZLINK_API_EXPORTS_LIST);
    std::vector<std::string> names;
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && line[0] != '#')
            names.push_back(line);
    return names;
}

}  // namespace

TEST(Exports, ListIsReadable) {
    // libzmq 4.3.5 has 70 stable exports; a truncated file must not pass quietly.
    EXPECT_EQ(libzmq_exports().size(), 70u) << ZLINK_API_EXPORTS_LIST;
}

TEST(Exports, EveryLibzmqSymbolIsInTheSharedLibrary) {
    void *lib = dlopen(ZLINK_SHARED_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib, nullptr) << dlerror();
    std::vector<std::string> missing;
    for (const auto &name : libzmq_exports())
        if (!dlsym(lib, name.c_str()))
            missing.push_back(name);
    dlclose(lib);
    std::string list;
    for (const auto &m : missing)
        list += " " + m;
    EXPECT_TRUE(missing.empty()) << "libzlink.so lacks:" << list;
}

// libzlink.so is built with -ftls-model=initial-exec (CMakeLists.txt): its
// thread-locals (asio's, on every IO thread) sit in the static TLS block glibc
// keeps spare for libraries loaded later. Loaded with dlopen, as a binding
// does, it must still run: a message over tcp goes through both IO threads.
TEST(Exports, TheSharedLibraryRunsWhenLoadedWithDlopen) {
    void *lib = dlopen(ZLINK_SHARED_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib, nullptr) << dlerror();
    auto fn = [lib](const char *name) {
        void *f = dlsym(lib, name);
        EXPECT_NE(f, nullptr) << name;
        return f;
    };
    auto ctx_new = reinterpret_cast<void *(*)()>(fn("zmq_ctx_new"));
    auto socket = reinterpret_cast<void *(*)(void *, int)>(fn("zmq_socket"));
    auto bind = reinterpret_cast<int (*)(void *, const char *)>(fn("zmq_bind"));
    auto connect = reinterpret_cast<int (*)(void *, const char *)>(fn("zmq_connect"));
    auto getsockopt =
        reinterpret_cast<int (*)(void *, int, void *, size_t *)>(fn("zmq_getsockopt"));
    auto send = reinterpret_cast<int (*)(void *, const void *, size_t, int)>(fn("zmq_send"));
    auto recv = reinterpret_cast<int (*)(void *, void *, size_t, int)>(fn("zmq_recv"));
    auto close = reinterpret_cast<int (*)(void *)>(fn("zmq_close"));
    auto ctx_term = reinterpret_cast<int (*)(void *)>(fn("zmq_ctx_term"));
    ASSERT_FALSE(HasFailure());

    void *ctx = ctx_new();
    ASSERT_NE(ctx, nullptr);
    void *rx = socket(ctx, ZMQ_PAIR);
    void *tx = socket(ctx, ZMQ_PAIR);
    ASSERT_EQ(bind(rx, "tcp://127.0.0.1:*"), 0);
    char endpoint[256];
    size_t len = sizeof endpoint;
    ASSERT_EQ(getsockopt(rx, ZMQ_LAST_ENDPOINT, endpoint, &len), 0);
    ASSERT_EQ(connect(tx, endpoint), 0);
    EXPECT_EQ(send(tx, "through dlopen", 14, 0), 14);
    char got[32] = {};
    EXPECT_EQ(recv(rx, got, sizeof got, 0), 14);
    EXPECT_STREQ(got, "through dlopen");
    close(tx);
    close(rx);
    EXPECT_EQ(ctx_term(ctx), 0);
    dlclose(lib);
}
