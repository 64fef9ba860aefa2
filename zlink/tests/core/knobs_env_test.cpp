// Knobs from the environment: valid values apply, malformed ones are
// reported once on stderr (naming variable and value used) and ignored.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "zlink.h"

TEST(KnobsEnv, ValidValueApplies) {
    setenv("ZMQ_ASIO_OUT_BATCH_SIZE_TCP", "16384", 1);
    void *ctx = zmq_ctx_new();
    EXPECT_EQ(zmq_ctx_get(ctx, ZMQ_ASIO_OUT_BATCH_SIZE_TCP), 16384);
    zmq_ctx_term(ctx);
    unsetenv("ZMQ_ASIO_OUT_BATCH_SIZE_TCP");
}

TEST(KnobsEnv, MalformedValueIsReportedAndDefaultUsed) {
    setenv("ZMQ_ASIO_IN_BATCH_SIZE", "lots", 1);
    testing::internal::CaptureStderr();
    void *ctx = zmq_ctx_new();
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(zmq_ctx_get(ctx, ZMQ_ASIO_IN_BATCH_SIZE), 8192);
    EXPECT_NE(err.find("ZMQ_ASIO_IN_BATCH_SIZE='lots'"), std::string::npos) << err;
    EXPECT_NE(err.find("using 8192"), std::string::npos) << err;
    zmq_ctx_term(ctx);
    // Once per process: a second context stays quiet.
    testing::internal::CaptureStderr();
    ctx = zmq_ctx_new();
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
    zmq_ctx_term(ctx);
    unsetenv("ZMQ_ASIO_IN_BATCH_SIZE");
}

TEST(KnobsEnv, ZeroTransferMeansDefaultAndAbsurdIsRejected) {
    setenv("ZMQ_ASIO_TCP_MAX_TRANSFER", "0", 1);
    void *ctx = zmq_ctx_new();
    EXPECT_EQ(zmq_ctx_get(ctx, ZMQ_ASIO_TCP_MAX_TRANSFER), 0);
    zmq_ctx_term(ctx);
    setenv("ZMQ_ASIO_TCP_MAX_TRANSFER", "99999999999", 1);
    testing::internal::CaptureStderr();
    ctx = zmq_ctx_new();
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(zmq_ctx_get(ctx, ZMQ_ASIO_TCP_MAX_TRANSFER), 0);
    EXPECT_NE(err.find("ZMQ_ASIO_TCP_MAX_TRANSFER"), std::string::npos);
    zmq_ctx_term(ctx);
    unsetenv("ZMQ_ASIO_TCP_MAX_TRANSFER");
}
