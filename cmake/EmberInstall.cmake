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

set(EMBER_STATIC_LIBRARY ON)
if(BUILD_SHARED_LIBS)
  set(EMBER_STATIC_LIBRARY OFF)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ember-config.cmake.in
  ${PROJECT_BINARY_DIR}/ember-config.cmake INSTALL_DESTINATION ${EMBER_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ember-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ember-config.cmake
              ${PROJECT_BINARY_DIR}/ember-config-version.cmake
        DESTINATION ${EMBER_CMAKE_DIR})

# pkg-config: paths relative to the .pc file, so that `cmake --install --prefix X` (or moving
# the prefix) keeps it valid. A static libember needs its dependencies at link time
# (`pkg-config --static`): sentencepiece, PCRE2, and the C++ runtime for C programs.
set(EMBER_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
function(ember_pc_path out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "\${prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()
if(IS_ABSOLUTE "${EMBER_PC_DIR}")
  set(EMBER_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH EMBER_PC_UP "/prefix/${EMBER_PC_DIR}" "/prefix")
  set(EMBER_PC_PREFIX "\${pcfiledir}/${EMBER_PC_UP}")
endif()
ember_pc_path(EMBER_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
ember_pc_path(EMBER_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
if(BUILD_SHARED_LIBS)
  set(EMBER_PC_REQUIRES_PRIVATE "")
  set(EMBER_PC_LIBS_PRIVATE "")
else()
  set(EMBER_PC_REQUIRES_PRIVATE "sentencepiece libpcre2-8")
  set(EMBER_PC_LIBS_PRIVATE "-lpthread -lstdc++ -lm")
endif()
# ember.pc for C++ (Cflags carry -std=c++20), ember-c.pc for C programs on ember/ember.h.
foreach(pc ember ember-c)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${EMBER_PC_DIR})
endforeach()
