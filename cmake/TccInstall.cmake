# `cmake --install` lays out headers under include/, static libraries, the
# tcc command, and a CMake package: find_package(tcc) gives tcc::tcc.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(tcc_library PROPERTIES EXPORT_NAME tcc)
set(TCC_INSTALLED_LIBRARIES tcc_ir tcc_runtime tcc_permanent tcc_ism tcc_ism_runtime tcc_lowering tcc_frontend tcc_library)
if(TARGET tcc_jit)
  list(APPEND TCC_INSTALLED_LIBRARIES tcc_jit)
endif()
if(TARGET tcc_permanent_gpu)
  list(APPEND TCC_INSTALLED_LIBRARIES tcc_permanent_gpu)
endif()
install(TARGETS ${TCC_INSTALLED_LIBRARIES} EXPORT tccTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tcc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The installed command finds the shared permanent kernel beside it.
set_target_properties(tcc PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
foreach(folder ir runtime ism lowering lowering/jit compiler)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${folder}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()

set(TCC_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tcc)
install(EXPORT tccTargets NAMESPACE tcc:: DESTINATION ${TCC_PACKAGE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tccConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tccConfig.cmake INSTALL_DESTINATION ${TCC_PACKAGE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tccConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tccConfig.cmake ${PROJECT_BINARY_DIR}/tccConfigVersion.cmake
  DESTINATION ${TCC_PACKAGE_DIR})
