# CURVE needs libsodium. ZLINK_WITH_CURVE says whether to use it:
#   AUTO (default)  use libsodium when found, else build without CURVE (says so)
#   ON              libsodium is required; configuring fails without it
#   OFF             never: zmq_has("curve") is false, CURVE options fail with ENOTSUP
# libsodium is looked for in sodium_ROOT (a prefix with include/sodium.h and
# lib/libsodium.*; the testbed passes its pinned, static build), then through
# pkg-config, then in the default paths. A static libsodium must be built with PIC
# (it ends up inside libzlink.so).
# Result: ZLINK_CURVE (TRUE/FALSE) and, when TRUE, the target zlink_sodium.
set(ZLINK_WITH_CURVE AUTO CACHE STRING "Build CURVE on libsodium: AUTO, ON or OFF")
set_property(CACHE ZLINK_WITH_CURVE PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${ZLINK_WITH_CURVE}" _zlink_curve_mode)
if(NOT _zlink_curve_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "zlink: ZLINK_WITH_CURVE='${ZLINK_WITH_CURVE}' is not AUTO, ON or OFF")
endif()

set(ZLINK_CURVE FALSE)
if(NOT _zlink_curve_mode STREQUAL "OFF")
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(ZLINK_PC_SODIUM QUIET libsodium)
  endif()
  set(_hints ${sodium_ROOT} $ENV{sodium_ROOT})
  find_path(ZLINK_SODIUM_INCLUDE_DIR sodium.h
    HINTS ${_hints} ${ZLINK_PC_SODIUM_INCLUDE_DIRS} PATH_SUFFIXES include)
  find_library(ZLINK_SODIUM_LIBRARY NAMES sodium libsodium
    HINTS ${_hints} ${ZLINK_PC_SODIUM_LIBRARY_DIRS} PATH_SUFFIXES lib lib64)
  if(ZLINK_SODIUM_INCLUDE_DIR AND ZLINK_SODIUM_LIBRARY)
    set(ZLINK_CURVE TRUE)
    add_library(zlink_sodium INTERFACE)
    target_include_directories(zlink_sodium SYSTEM INTERFACE ${ZLINK_SODIUM_INCLUDE_DIR})
    target_link_libraries(zlink_sodium INTERFACE ${ZLINK_SODIUM_LIBRARY} Threads::Threads)
    message(STATUS "zlink: CURVE on, libsodium ${ZLINK_SODIUM_LIBRARY}")
  elseif(_zlink_curve_mode STREQUAL "ON")
    message(FATAL_ERROR "zlink: ZLINK_WITH_CURVE=ON but libsodium was not found "
                        "(sodium.h: ${ZLINK_SODIUM_INCLUDE_DIR}, library: ${ZLINK_SODIUM_LIBRARY}); "
                        "set sodium_ROOT to its prefix, or ZLINK_WITH_CURVE=OFF")
  else()
    message(STATUS "zlink: CURVE off (libsodium not found; set sodium_ROOT or ZLINK_WITH_CURVE=ON)")
  endif()
else()
  message(STATUS "zlink: CURVE off (ZLINK_WITH_CURVE=OFF)")
endif()

# zlink_link_sodium(TARGET): link a shared or static zlink library with libsodium when
# CURVE is on. A shared library keeps a static libsodium's symbols inside (not
# exported), so a program with its own libsodium never binds to ours or the other way
# round; and it must link it at all, or the CURVE objects leave crypto_* undefined,
# which only a lazily binding program survives.
function(zlink_link_sodium target)
  if(NOT ZLINK_CURVE)
    return()
  endif()
  target_link_libraries(${target} PRIVATE ${ZLINK_SODIUM_LIBRARY})
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "SHARED_LIBRARY" AND ZLINK_SODIUM_LIBRARY MATCHES "\\.a$")
    target_link_options(${target} PRIVATE "LINKER:--exclude-libs,libsodium.a")
  endif()
endfunction()
