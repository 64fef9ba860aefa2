#include "record_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace faults {

RecordLog::RecordLog(const std::string &path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) {
        std::perror(path.c_str());
        std::exit(2);
    }
}

RecordLog::~RecordLog() {
    if (fd_ >= 0)
        ::close(fd_);
}

void RecordLog::add(Kind kind, bool ok, std::uint32_t epoch, std::uint64_t seq, std::int64_t t_ns,
                    std::int64_t aux, std::uint16_t conn) {
    const Record r{kind, std::uint8_t(ok ? 1 : 0), conn, epoch, seq, t_ns, aux};
    // A short write to a local file does not happen short of a full disk; a failed
    // one would lose accounting, so it ends the run instead of passing silently.
    if (::write(fd_, &r, sizeof r) != ssize_t(sizeof r)) {
        std::perror("record log write");
        std::_Exit(4);
    }
}

}  // namespace faults
