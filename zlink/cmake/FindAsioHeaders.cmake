# Standalone Asio is header-only; we only need its include directory.
# Asio stays private to zlink: the public headers never include it.
find_path(ZLINK_ASIO_INCLUDE_DIR asio.hpp
  HINTS ${ASIO_ROOT} ENV ASIO_ROOT PATH_SUFFIXES include)
if(NOT ZLINK_ASIO_INCLUDE_DIR)
  message(FATAL_ERROR "zlink: standalone Asio (asio.hpp) not found; install libasio-dev "
                      "or set ASIO_ROOT to a prefix containing include/asio.hpp")
endif()
add_library(zlink_asio INTERFACE)
target_include_directories(zlink_asio SYSTEM INTERFACE ${ZLINK_ASIO_INCLUDE_DIR})
target_compile_definitions(zlink_asio INTERFACE ASIO_STANDALONE ASIO_NO_DEPRECATED)
