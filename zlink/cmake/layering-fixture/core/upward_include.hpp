// Fixture for the layering self-test: core must not include sockets/.
#include "sockets/pair.hpp"
