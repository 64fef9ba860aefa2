// The transport table: scheme -> transport (core/transport.hpp declares the
// lookup).  This file and transports.cpp are the only places that compare
// scheme strings; everything else asks the table.
#pragma once
#include <span>

#include "core/transport.hpp"

namespace zlink {

struct transport_entry {
    const char *scheme;
    const transport *ops;
};

// tcp, ipc, inproc.
std::span<const transport_entry> transport_table();

}  // namespace zlink
