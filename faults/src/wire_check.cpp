// The message format on given input, for analysis/tests/test_faults_wire.py:
//   wire_check make EPOCH SEQ SIZE      the body as hex on stdout
//   wire_check verify HEX               "ok EPOCH SEQ" or "bad EPOCH SEQ"
//   wire_check size SEQ MIN MAX         size_for(seq, min, max)
#include "wire.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char **argv) {
    using namespace faults;
    if (argc == 5 && !std::strcmp(argv[1], "make")) {
        const std::size_t n = std::strtoull(argv[4], nullptr, 10);
        std::vector<std::uint8_t> buf(n);
        fill(buf.data(), n, std::uint32_t(std::atol(argv[2])), std::strtoull(argv[3], nullptr, 10),
             123456789);
        for (const auto b : buf)
            std::printf("%02x", b);
        std::printf("\n");
        return 0;
    }
    if (argc == 3 && !std::strcmp(argv[1], "verify")) {
        const std::string hex = argv[2];
        std::vector<std::uint8_t> buf(hex.size() / 2);
        for (std::size_t i = 0; i < buf.size(); ++i)
            buf[i] = std::uint8_t(std::strtoul(hex.substr(2 * i, 2).c_str(), nullptr, 16));
        const Check c = verify(buf.data(), buf.size());
        std::printf("%s %u %llu\n", c.ok ? "ok" : "bad", c.epoch,
                    static_cast<unsigned long long>(c.seq));
        return 0;
    }
    if (argc == 5 && !std::strcmp(argv[1], "size")) {
        std::printf("%zu\n", size_for(std::strtoull(argv[2], nullptr, 10),
                                      std::strtoull(argv[3], nullptr, 10),
                                      std::strtoull(argv[4], nullptr, 10)));
        return 0;
    }
    std::fprintf(stderr, "usage: wire_check make EPOCH SEQ SIZE | verify HEX | size SEQ MIN MAX\n");
    return 2;
}
