// Every function libzmq 4.3.5 exports is exported by libzlink.so too, so a
// program (or a binding like pyzmq) linked against libzmq finds all its
// symbols.  The list is libzmq's own (libzmq-4.3.5-exports.txt, from nm);
// check_exports.py keeps that list equal to the baseline library.
#include <dlfcn.h>

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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
