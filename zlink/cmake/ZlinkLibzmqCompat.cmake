# ZLINK_LIBZMQ_COMPAT: also build and install zlink under libzmq's names, so a
# program linked against libzmq 4.3.5 (DT_NEEDED libzmq.so.5) runs on zlink
# unchanged through the loader path, and `pkg-config libzmq` builds against it.
#
# Why a second shared library from the same objects rather than a shim that
# only DT_NEEDs libzlink.so.0: a shim resolves symbols for the program's own
# lookups, but dlopen("libzmq.so.5") + dlsym and RTLD_LOCAL bindings (ctypes,
# cffi, language runtimes) would see an object with no zmq_* symbols in it.
# Same objects means the same code; a process should load one of the two names,
# not both (they would hold separate, independent state).
#
# The file version follows libzmq 4.3.5's libtool version (libzmq.so.5.2.5), so
# the installed names line up with what the loader and ldconfig expect.
option(ZLINK_LIBZMQ_COMPAT "Also install lib/libzmq.so.5 and libzmq.pc (zlink as a binary drop-in for libzmq)" OFF)

set(ZLINK_LIBZMQ_ABI_VERSION 5.2.5)
set(ZLINK_LIBZMQ_API_VERSION 4.3.5)

if(ZLINK_LIBZMQ_COMPAT)
  add_library(zlink_libzmq SHARED $<TARGET_OBJECTS:zlink_objects>)
  if(TARGET zlink_wire)
    target_sources(zlink_libzmq PRIVATE $<TARGET_OBJECTS:zlink_wire>)
  endif()
  target_link_libraries(zlink_libzmq PUBLIC Threads::Threads)
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    # Refuse to link with an undefined symbol: a drop-in must load with RTLD_NOW
    # (Python's default) as well as lazily (what the perf tools exercise).
    target_link_options(zlink_libzmq PRIVATE "LINKER:-z,defs")
  endif()
  # The same crypto link as libzlink.so (pyzmq's RTLD_NOW import needs crypto_* defined).
  zlink_link_sodium(zlink_libzmq)
  set_target_properties(zlink_libzmq PROPERTIES
    OUTPUT_NAME zmq VERSION ${ZLINK_LIBZMQ_ABI_VERSION} SOVERSION 5)
  install(TARGETS zlink_libzmq
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  configure_file(cmake/libzmq.pc.in ${CMAKE_CURRENT_BINARY_DIR}/libzmq.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/libzmq.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
