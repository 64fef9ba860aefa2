// Pieces of the JSON line that bench_<pattern> and bench_arms_<pattern> write the
// same way, whatever the library.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "options.hpp"
#include "placement.hpp"
#include "report.hpp"

namespace bench {

class JsonWriter;

// Environment variables that may change a library's or the harness's behaviour
// (ZMQ_ASIO_*, BENCH_*), sorted by name.
std::vector<std::pair<std::string, std::string>> relevant_env();
void write_placement(JsonWriter &w, const Options &o);
void write_threads(JsonWriter &w, const std::vector<ThreadInfo> &threads);
// `library_reports`: what the library said it runs with (null: not read).
void write_library_reports(JsonWriter &w, const LibrarySettings &lib);
// The compiler that built the harness ("gcc 12.2.0").
const char *compiler_id();

}  // namespace bench
