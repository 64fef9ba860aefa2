// Fixture: a legal include, so the self-test fails only for the upward one.
#include "wire/frame.hpp"
