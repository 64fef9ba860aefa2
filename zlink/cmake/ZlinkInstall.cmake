# Install: headers, both libraries, CMake package zlink::zlink, pkg-config file.
include(CMakePackageConfigHelpers)
install(FILES include/zmq.h include/zmq_utils.h include/zlink.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS zlink zlink_static EXPORT zlinkTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT zlinkTargets NAMESPACE zlink:: FILE zlinkTargets.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/zlink)
configure_package_config_file(cmake/zlinkConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/zlinkConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/zlink)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/zlinkConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/zlinkConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/zlinkConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/zlink)
configure_file(zlink.pc.in ${CMAKE_CURRENT_BINARY_DIR}/zlink.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/zlink.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
