# `cmake --install` (docs/install.md): the golden headers and library with the exported target
# fp4sim::golden, the header-only suite reader (fp4sim::suite_reader), the CLI when built, a CMake
# package (find_package(fp4sim CONFIG)) and a pkg-config file. The per-target rules for
# fp4sim_golden live in golden/CMakeLists.txt; this file writes the package around them.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(FP4SIM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/fp4sim)

# Dependency-free: a CUDA test binary includes it without linking anything.
set(_reader ${PROJECT_SOURCE_DIR}/sim/include/fp4sim/suite_reader.hpp)
if(EXISTS ${_reader})
  add_library(fp4sim_suite_reader INTERFACE)
  add_library(fp4sim::suite_reader ALIAS fp4sim_suite_reader)
  set_target_properties(fp4sim_suite_reader PROPERTIES EXPORT_NAME suite_reader)
  target_include_directories(fp4sim_suite_reader INTERFACE
                             $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/sim/include>
                             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(fp4sim_suite_reader INTERFACE cxx_std_20)
  install(TARGETS fp4sim_suite_reader EXPORT fp4simTargets)
  install(FILES ${_reader} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fp4sim)
endif()

if(TARGET fp4sim)
  install(TARGETS fp4sim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  if(TARGET fp4sim_mpi)  # dlopen'ed from beside the executable under mpirun / srun
    install(TARGETS fp4sim_mpi LIBRARY DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endif()

# libfp4sim_dpi (docs/dpi.md): the shared library (fp4sim::dpi), its C header and the SystemVerilog
# package a testbench compiles, with its own pkg-config file fp4sim-dpi.pc.
if(TARGET fp4sim_dpi)
  install(TARGETS fp4sim_dpi EXPORT fp4simTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/dpi/include/fp4sim_dpi.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/dpi/fp4sim_dpi_pkg.sv DESTINATION ${CMAKE_INSTALL_DATADIR}/fp4sim/sv)
endif()

install(EXPORT fp4simTargets NAMESPACE fp4sim:: DESTINATION ${FP4SIM_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/fp4simConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/fp4simConfig.cmake
                              INSTALL_DESTINATION ${FP4SIM_CMAKE_DIR} PATH_VARS CMAKE_INSTALL_DATADIR)
# 0.x: a minor version may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/fp4simConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/fp4simConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/fp4simConfigVersion.cmake
        DESTINATION ${FP4SIM_CMAKE_DIR})

# pkg-config: the prefix is found from the .pc file's own place (${pcfiledir}), since
# `cmake --install --prefix P` chooses it after configure.
file(RELATIVE_PATH FP4SIM_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
configure_file(${PROJECT_SOURCE_DIR}/cmake/fp4sim.pc.in ${CMAKE_CURRENT_BINARY_DIR}/fp4sim.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/fp4sim.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(TARGET fp4sim_dpi)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/fp4sim-dpi.pc.in ${CMAKE_CURRENT_BINARY_DIR}/fp4sim-dpi.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/fp4sim-dpi.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
