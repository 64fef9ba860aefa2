// payload_check: the benchmark payload (common/payload.*) on messages it is told to
// make, for the tests in analysis/tests/test_bench_payload.py. Not a benchmark: no
// library.
//
//   payload_check SIZE SEQ CHECK_SEQ [FLIP ...]
//
// Makes message SEQ of SIZE bytes (on a buffer filled with 0x5A first, so bytes the
// maker leaves alone are visible), XORs 0xFF into each byte index FLIP, checks the
// result as message CHECK_SEQ and prints one JSON line: whether the check passed, its
// error, and the message's bytes in hex. Exit 2 on bad arguments.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../common/json_writer.hpp"
#include "../common/payload.hpp"

namespace {

[[noreturn]] void usage(const char *why) {
    std::fprintf(stderr, "payload_check: %s\nusage: payload_check SIZE SEQ CHECK_SEQ [FLIP ...]\n",
                 why);
    std::exit(2);
}

unsigned long long number(const char *arg, const char *what) {
    char *end = nullptr;
    const unsigned long long v = std::strtoull(arg, &end, 10);
    if (*arg == '\0' || *arg == '-' || *end != '\0')
        usage((std::string(what) + " must be a non-negative integer").c_str());
    return v;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 4)
        usage("three arguments expected");
    const auto size = number(argv[1], "SIZE");
    if (size > (1u << 24))
        usage("SIZE must be at most 16 MiB");
    const auto seq = number(argv[2], "SEQ");
    const auto check_seq = number(argv[3], "CHECK_SEQ");
    std::vector<std::uint8_t> msg(size, 0x5A);
    bench::PayloadMaker maker(size);
    maker.make_into(msg.data(), seq);
    for (int a = 4; a < argc; ++a) {
        const auto at = number(argv[a], "FLIP");
        if (at >= size)
            usage("FLIP must be below SIZE");
        msg[at] ^= 0xFF;
    }
    bench::Verifier verifier(size);
    const bool ok = verifier.check(msg.data(), msg.size(), check_seq);

    std::string hex;
    hex.reserve(2 * msg.size());
    for (const std::uint8_t b : msg) {
        char two[3];
        std::snprintf(two, sizeof two, "%02x", b);
        hex += two;
    }
    bench::JsonWriter w;
    w.begin_object();
    w.value("ok", ok);
    w.value("error", verifier.error());
    w.value("sampled", bench::is_sampled(seq));
    w.value("bytes", hex);
    w.end_object();
    std::printf("%s\n", w.str().c_str());
    return 0;
}
