// zmq_sendiov / zmq_recviov (deprecated in libzmq, still exported): a
// multipart message out of an iovec array and back, with libzmq's rules for
// flags, counts and the malloc'd buffers.
#include <sys/uio.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "api_test_util.hpp"
#include "zmq.h"

namespace {

// Two inproc PAIR sockets; socket_owner closes them and terminates the context.
class Iov : public api_test::socket_owner {
protected:
    void SetUp() override {
        socket_owner::SetUp();
        in = socket(ZMQ_PAIR);
        out = socket(ZMQ_PAIR);
        ASSERT_EQ(zmq_bind(in, "inproc://iov"), 0);
        ASSERT_EQ(zmq_connect(out, "inproc://iov"), 0);
    }
    static iovec part(const char *text) { return {const_cast<char *>(text), std::strlen(text)}; }
    void *in = nullptr, *out = nullptr;
};

TEST_F(Iov, SendsPartsAsOneMessageAndReceivesThemBack) {
    iovec parts[3] = {part("one"), part(""), part("three!")};
    EXPECT_EQ(zmq_sendiov(out, parts, 3, ZMQ_SNDMORE), 6);  // the last part's size
    iovec got[4] = {};
    size_t count = 4;
    ASSERT_EQ(zmq_recviov(in, got, &count, 0), 3);
    ASSERT_EQ(count, 3u);
    const char *expect[] = {"one", "", "three!"};
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(std::string(static_cast<char *>(got[i].iov_base), got[i].iov_len), expect[i]);
        std::free(got[i].iov_base);
    }
}

TEST_F(Iov, SndmoreKeepsTheMessageOpenExceptOnTheLastPart) {
    iovec first[2] = {part("a"), part("b")};
    iovec last[1] = {part("c")};
    ASSERT_EQ(zmq_sendiov(out, first, 2, ZMQ_SNDMORE), 1);
    ASSERT_EQ(zmq_sendiov(out, last, 1, 0), 1);
    // libzmq clears SNDMORE on the last part of each call: "b" ends a message.
    iovec got[4] = {};
    size_t count = 4;
    ASSERT_EQ(zmq_recviov(in, got, &count, 0), 2);
    for (size_t i = 0; i < count; ++i)
        std::free(got[i].iov_base);
    count = 4;
    ASSERT_EQ(zmq_recviov(in, got, &count, 0), 1);
    std::free(got[0].iov_base);
}

TEST_F(Iov, TooFewSlotsLeaveTheRestOfTheMessageQueued) {
    iovec parts[3] = {part("x"), part("y"), part("z")};
    ASSERT_EQ(zmq_sendiov(out, parts, 3, ZMQ_SNDMORE), 1);
    iovec got[2] = {};
    size_t count = 2;
    ASSERT_EQ(zmq_recviov(in, got, &count, 0), 2);
    int more = 0;
    size_t len = sizeof more;
    zmq_getsockopt(in, ZMQ_RCVMORE, &more, &len);
    EXPECT_EQ(more, 1);
    for (size_t i = 0; i < count; ++i)
        std::free(got[i].iov_base);
    char rest[4];
    EXPECT_EQ(zmq_recv(in, rest, sizeof rest, 0), 1);
    EXPECT_EQ(rest[0], 'z');
}

TEST_F(Iov, WithoutSndmoreEachBufferIsAMessageOfItsOwn) {
    iovec parts[2] = {part("p"), part("q")};
    ASSERT_EQ(zmq_sendiov(out, parts, 2, 0), 1);
    iovec got[2] = {};
    size_t count = 2;
    ASSERT_EQ(zmq_recviov(in, got, &count, 0), 1);
    std::free(got[0].iov_base);
    count = 2;
    ASSERT_EQ(zmq_recviov(in, got, &count, 0), 1);
    std::free(got[0].iov_base);
}

TEST_F(Iov, NothingToReceiveIsEagainWithZeroCount) {
    iovec got[1] = {};
    size_t count = 1;
    errno = 0;
    EXPECT_EQ(zmq_recviov(in, got, &count, ZMQ_DONTWAIT), -1);
    EXPECT_EQ(errno, EAGAIN);
    EXPECT_EQ(count, 0u);
}

}  // namespace
