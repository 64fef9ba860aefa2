// A tiny streaming JSON writer: enough for one flat-ish result object per run.
// Hand-written because the bench must build with nothing but a compiler and the
// library under test (no third-party headers that could differ between builds).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bench {

class JsonWriter {
public:
    JsonWriter &begin_object(std::string_view key = {});
    JsonWriter &end_object();
    JsonWriter &begin_array(std::string_view key = {});
    JsonWriter &end_array();
    JsonWriter &null(std::string_view key);
    JsonWriter &value(std::string_view key, std::string_view v);
    JsonWriter &value(std::string_view key, const char *v) {
        return value(key, std::string_view(v));
    }
    JsonWriter &value(std::string_view key, double v);
    JsonWriter &value(std::string_view key, std::uint64_t v);
    JsonWriter &value(std::string_view key, std::int64_t v);
    JsonWriter &value(std::string_view key, int v) {
        return value(key, static_cast<std::int64_t>(v));
    }
    JsonWriter &value(std::string_view key, bool v);
    const std::string &str() const { return out_; }

private:
    void key_prefix(std::string_view key);
    void quoted(std::string_view s);
    std::string out_;
    std::vector<bool> first_;  // per open container: nothing written yet
};

}  // namespace bench
