#include "json_writer.hpp"

#include <cmath>
#include <cstdio>

namespace bench {

void JsonWriter::key_prefix(std::string_view key) {
    if (!first_.empty()) {
        if (!first_.back())
            out_ += ',';
        first_.back() = false;
    }
    if (!key.empty()) {
        quoted(key);
        out_ += ':';
    }
}

void JsonWriter::quoted(std::string_view s) {
    out_ += '"';
    for (unsigned char c : s) {
        switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\n': out_ += "\\n"; break;
        case '\t': out_ += "\\t"; break;
        case '\r': out_ += "\\r"; break;
        default:
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out_ += buf;
            } else {
                out_ += static_cast<char>(c);
            }
        }
    }
    out_ += '"';
}

JsonWriter &JsonWriter::begin_object(std::string_view key) {
    key_prefix(key);
    out_ += '{';
    first_.push_back(true);
    return *this;
}

JsonWriter &JsonWriter::end_object() {
    out_ += '}';
    first_.pop_back();
    return *this;
}

JsonWriter &JsonWriter::begin_array(std::string_view key) {
    key_prefix(key);
    out_ += '[';
    first_.push_back(true);
    return *this;
}

JsonWriter &JsonWriter::end_array() {
    out_ += ']';
    first_.pop_back();
    return *this;
}

JsonWriter &JsonWriter::null(std::string_view key) {
    key_prefix(key);
    out_ += "null";
    return *this;
}

JsonWriter &JsonWriter::value(std::string_view key, std::string_view v) {
    key_prefix(key);
    quoted(v);
    return *this;
}

JsonWriter &JsonWriter::value(std::string_view key, double v) {
    key_prefix(key);
    if (!std::isfinite(v)) {
        out_ += "null";  // JSON has no NaN/inf; a reader must see "no value"
        return *this;
    }
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    out_ += buf;
    return *this;
}

JsonWriter &JsonWriter::value(std::string_view key, std::uint64_t v) {
    key_prefix(key);
    out_ += std::to_string(v);
    return *this;
}

JsonWriter &JsonWriter::value(std::string_view key, std::int64_t v) {
    key_prefix(key);
    out_ += std::to_string(v);
    return *this;
}

JsonWriter &JsonWriter::value(std::string_view key, bool v) {
    key_prefix(key);
    out_ += v ? "true" : "false";
    return *this;
}

}  // namespace bench
