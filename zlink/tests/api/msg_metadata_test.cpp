// Connection metadata on messages (the storage behind zmq_msg_gets): shared
// by copies, carried by moves, released with the last message, and the
// deprecated "Identity" name answered from "Routing-Id" as in libzmq.
// Also ZMQ_SHARED for constant bodies.
#include <string>

#include <gtest/gtest.h>

#include "core/msg.hpp"
#include "zmq.h"

namespace {

using zlink::metadata_t;
using zlink::msg_t;

// A metadata_t whose destruction the test can observe.
struct counted_metadata {
    static metadata_t *make() {
        return new metadata_t(
            {{"Socket-Type", "DEALER"}, {"Routing-Id", "peer-7"}, {"Peer-Address", "127.0.0.1"}});
    }
};

TEST(MsgMetadata, PropertiesAreReadThroughZmqMsgGets) {
    metadata_t *meta = counted_metadata::make();
    zmq_msg_t m;
    zmq_msg_init_size(&m, 100);
    reinterpret_cast<msg_t *>(&m)->set_metadata(meta);
    meta->release();  // the message now holds the only reference
    EXPECT_STREQ(zmq_msg_gets(&m, "Socket-Type"), "DEALER");
    EXPECT_STREQ(zmq_msg_gets(&m, "Peer-Address"), "127.0.0.1");
    EXPECT_STREQ(zmq_msg_gets(&m, "Identity"), "peer-7");  // deprecated alias
    errno = 0;
    EXPECT_EQ(zmq_msg_gets(&m, "User-Id"), nullptr);
    EXPECT_EQ(errno, EINVAL);
    zmq_msg_close(&m);  // frees the metadata (LSan would report a leak)
}

TEST(MsgMetadata, CopiesShareAndMovesCarry) {
    metadata_t *meta = counted_metadata::make();
    zmq_msg_t a, b, c;
    zmq_msg_init(&a);
    zmq_msg_init(&b);
    zmq_msg_init(&c);
    reinterpret_cast<msg_t *>(&a)->set_metadata(meta);
    meta->release();
    ASSERT_EQ(zmq_msg_copy(&b, &a), 0);
    ASSERT_EQ(zmq_msg_move(&c, &a), 0);
    EXPECT_EQ(zmq_msg_gets(&a, "Socket-Type"), nullptr);  // moved-from: empty
    EXPECT_STREQ(zmq_msg_gets(&b, "Socket-Type"), "DEALER");
    EXPECT_STREQ(zmq_msg_gets(&c, "Socket-Type"), "DEALER");
    zmq_msg_close(&c);
    EXPECT_STREQ(zmq_msg_gets(&b, "Socket-Type"), "DEALER");  // b still holds it
    zmq_msg_close(&b);
    zmq_msg_close(&a);
}

TEST(MsgMetadata, ReinitialisingDropsNothingItDoesNotOwn) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    EXPECT_EQ(zmq_msg_gets(&m, "Socket-Type"), nullptr);
    zmq_msg_close(&m);
    zmq_msg_init_data(&m, const_cast<char *>("abc"), 3, nullptr, nullptr);
    EXPECT_EQ(zmq_msg_gets(&m, "Socket-Type"), nullptr);
    EXPECT_EQ(zmq_msg_get(&m, ZMQ_SHARED), 1);  // a constant body counts as shared
    zmq_msg_close(&m);
}

}  // namespace
