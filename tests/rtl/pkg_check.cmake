# Runs the decode-table generator and compares its output with the checked-in rtl/fp4sim_pkg.sv.
execute_process(COMMAND ${GEN} ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gen_fp4sim_pkg failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${REF} RESULT_VARIABLE diff)
if(NOT diff EQUAL 0)
  message(FATAL_ERROR "rtl/fp4sim_pkg.sv is out of date with the golden format table: "
                      "run `cmake --build <build> --target rtl_pkg_regen`")
endif()
