/* zmq_utils.h: kept for programs written for older libzmq releases, which
   included it for zmq_stopwatch_*, zmq_sleep and zmq_threadstart.  As in
   libzmq 4.3.5, everything it offered is declared in zmq.h. */
#ifndef ZLINK_ZMQ_UTILS_H_INCLUDED
#define ZLINK_ZMQ_UTILS_H_INCLUDED

#include "zmq.h"

#endif
