# What `cmake --install` puts under the prefix (GNUInstallDirs; LIBDIR is lib,
# or lib/<multiarch> under /usr):
#   LIBDIR/libonegpu.so, LIBDIR/libonegpu.a   the library, shared and static
#   include/onegpu.h, include/onegpu_formats.h
#   bin/ogtune
#   LIBDIR/pkgconfig/onegpu.pc
#   LIBDIR/cmake/onegpu/                      onegpuConfig.cmake: onegpu::onegpu (shared)
#                                             and onegpu::onegpu_static
#   share/onegpu/*.db                         pre-tuned databases, built from
#                                             db/pretuned/*.sql in <build>/pretuned/
include(CMakePackageConfigHelpers)

set(OG_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/onegpu)

install(TARGETS onegpu onegpu_shared EXPORT onegpuTargets)
install(TARGETS ogtune)
install(FILES runtime/onegpu.h runtime/onegpu_formats.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT onegpuTargets NAMESPACE onegpu:: DESTINATION ${OG_CMAKE_DIR})
# The same package from the build tree (-Donegpu_DIR=<build>): the targets
# exported there, on the build's libraries and runtime/'s headers, beside
# the one onegpuConfig.cmake both use.
export(EXPORT onegpuTargets NAMESPACE onegpu:: FILE ${PROJECT_BINARY_DIR}/onegpuTargets.cmake)
configure_package_config_file(cmake/onegpuConfig.cmake.in onegpuConfig.cmake
  INSTALL_DESTINATION ${OG_CMAKE_DIR})
# 0.x: a minor version may change the interface, as the soname says.
write_basic_package_version_file(onegpuConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/onegpuConfig.cmake ${PROJECT_BINARY_DIR}/onegpuConfigVersion.cmake
  DESTINATION ${OG_CMAKE_DIR})

# onegpu.pc, twice. Installed (<build>/install/onegpu.pc), it finds its
# prefix from its own directory, so it stays right under `cmake --install
# --prefix`. In the build tree (<build>/onegpu.pc, for
# PKG_CONFIG_PATH=<build>), it names the build's libraries and runtime/'s
# headers. Libs.private lists the static archives.
list(TRANSFORM OG_SHADERC_LIBS PREPEND -l OUTPUT_VARIABLE OG_PC_SHADERC)
list(JOIN OG_PC_SHADERC " " OG_PC_SHADERC)
file(RELATIVE_PATH OG_PC_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" OG_PC_PREFIX ${OG_PC_PREFIX})
set(OG_PC_PREFIX "\${pcfiledir}/${OG_PC_PREFIX}")
set(OG_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
set(OG_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
configure_file(cmake/onegpu.pc.in install/onegpu.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/install/onegpu.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
set(OG_PC_PREFIX ${PROJECT_BINARY_DIR})
set(OG_PC_LIBDIR "\${prefix}")
set(OG_PC_INCLUDEDIR ${PROJECT_SOURCE_DIR}/runtime)
configure_file(cmake/onegpu.pc.in onegpu.pc @ONLY)

# Pre-tuned databases: the *.db the og_pretuned target builds in
# <build>/pretuned from db/pretuned/*.sql; nothing when there are none.
install(DIRECTORY ${PROJECT_BINARY_DIR}/pretuned/ DESTINATION ${CMAKE_INSTALL_DATADIR}/onegpu
  OPTIONAL FILES_MATCHING PATTERN "*.db")
