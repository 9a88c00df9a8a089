# Install rules: library, headers, exported targets, package config, pkg-config file.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(EMBER_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ember)

install(TARGETS ember EXPORT ember-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ember DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/include/ember/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ember)
install(EXPORT ember-targets NAMESPACE ember:: DESTINATION ${EMBER_CMAKE_DIR})
# Build-tree export, for projects that point ember_DIR at a build folder.
export(EXPORT ember-targets NAMESPACE ember:: FILE ${PROJECT_BINARY_DIR}/ember-targets.cmake)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ember-config.cmake.in
  ${PROJECT_BINARY_DIR}/ember-config.cmake INSTALL_DESTINATION ${EMBER_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ember-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ember-config.cmake
              ${PROJECT_BINARY_DIR}/ember-config-version.cmake
        DESTINATION ${EMBER_CMAKE_DIR})

configure_file(${PROJECT_SOURCE_DIR}/cmake/ember.pc.in ${PROJECT_BINARY_DIR}/ember.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ember.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
