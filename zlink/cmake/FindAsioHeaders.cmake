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
# ASIO_DISABLE_STD_ALIGNED_ALLOC: Asio picks aligned_alloc/free or operator new/delete
# per translation unit, depending on whether libstdc++'s config was included before
# Asio's; units that disagree free with one what the other allocated (ASan:
# alloc-dealloc-mismatch). One fixed choice for every unit removes the mismatch.
target_compile_definitions(zlink_asio INTERFACE ASIO_STANDALONE ASIO_NO_DEPRECATED
  ASIO_DISABLE_STD_ALIGNED_ALLOC)
