/* zlink.h: zlink-only extensions to zmq.h.  Include after (or instead of)
   zmq.h; everything here is absent from libzmq, so portable programs guard
   their use with #ifdef ZLINK_VERSION_MAJOR. */
#ifndef ZLINK_H_INCLUDED
#define ZLINK_H_INCLUDED

#include "zmq.h"

/* zlink's own release.  The single source of the version: CMake (project
   version, soname, zlink.pc) and the testbed's library metadata read these
   three lines.  zmq_version() reports the libzmq API level instead (4.3.5). */
#define ZLINK_VERSION_MAJOR 0
#define ZLINK_VERSION_MINOR 1
#define ZLINK_VERSION_PATCH 0
#define ZLINK_MAKE_VERSION(major, minor, patch) ((major) * 10000 + (minor) * 100 + (patch))
#define ZLINK_VERSION                                                                              \
    ZLINK_MAKE_VERSION(ZLINK_VERSION_MAJOR, ZLINK_VERSION_MINOR, ZLINK_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif
/* The release of the zlink library actually loaded (may differ from the
   header a program was compiled with). */
#if defined __GNUC__
__attribute__((visibility("default")))
#endif
void zlink_version(int *major_, int *minor_, int *patch_);
#ifdef __cplusplus
}
#endif

/* Context options (zmq_ctx_set / zmq_ctx_get) for the I/O tuning knobs.
   Each is first read from the environment variable of the same name when the
   context is created; zmq_ctx_set overrides it for sockets created later.
   Sizes are bytes.  A per-transport batch size, when set (> 0), wins over the
   global one; -1 means "not set, use the global value".  Unset, a
   connection's batches adapt (8 KiB growing to 64 KiB while small messages
   stream); a size that is set is static.  See README.md for defaults and
   limits. */
#define ZMQ_ASIO_IN_BATCH_SIZE 0x5a4c01
#define ZMQ_ASIO_OUT_BATCH_SIZE 0x5a4c02
#define ZMQ_ASIO_IN_BATCH_SIZE_TCP 0x5a4c03
#define ZMQ_ASIO_OUT_BATCH_SIZE_TCP 0x5a4c04
#define ZMQ_ASIO_IN_BATCH_SIZE_IPC 0x5a4c05
#define ZMQ_ASIO_OUT_BATCH_SIZE_IPC 0x5a4c06
#define ZMQ_ASIO_IN_BATCH_SIZE_INPROC 0x5a4c07
#define ZMQ_ASIO_OUT_BATCH_SIZE_INPROC 0x5a4c08
/* Maximum bytes handed to one write system call on tcp; 0 = library default. */
#define ZMQ_ASIO_TCP_MAX_TRANSFER 0x5a4c09

/* SOCKS5 username/password authentication (RFC 1929) for ZMQ_SOCKS_PROXY:
   libzmq 4.3.5 has these as draft socket options, with these values. */
#ifndef ZMQ_SOCKS_USERNAME
#define ZMQ_SOCKS_USERNAME 99
#endif
#ifndef ZMQ_SOCKS_PASSWORD
#define ZMQ_SOCKS_PASSWORD 100
#endif

#endif
