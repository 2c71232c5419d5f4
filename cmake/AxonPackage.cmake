# The installed package: `find_package(axon)` gives axon::sdk (plugin authors),
# axon::core (programs that embed the runtime) and axon::axon (the C++ API,
# docs/cpp-api.md). Included last by the top-level CMakeLists, after every
# target that joins the axonTargets export.
include(CMakePackageConfigHelpers)

set(AXON_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/axon)

install(EXPORT axonTargets
  NAMESPACE axon::
  FILE axonTargets.cmake
  DESTINATION ${AXON_CMAKE_INSTALL_DIR})

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/axonConfig.cmake.in
  ${CMAKE_BINARY_DIR}/axonConfig.cmake
  INSTALL_DESTINATION ${AXON_CMAKE_INSTALL_DIR}
  PATH_VARS AXON_PLUGIN_INSTALL_DIR CMAKE_INSTALL_INCLUDEDIR)

# 0.x: a new minor version may change the ABI, so only the same minor matches.
write_basic_package_version_file(
  ${CMAKE_BINARY_DIR}/axonConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)

install(FILES ${CMAKE_BINARY_DIR}/axonConfig.cmake ${CMAKE_BINARY_DIR}/axonConfigVersion.cmake
  DESTINATION ${AXON_CMAKE_INSTALL_DIR})
