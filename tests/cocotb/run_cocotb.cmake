# cmake -DMAKE=make -DMAKEFILE=examples/cocotb/Makefile -DOK=ON|OFF -DWHY=text -DSIM_BUILD=dir
#       -DRESULTS=file.xml -DPYTHONPATH=dir -DVARS=A=1;B=2 -DRC=0|1 -DREGEX=re -P run_cocotb.cmake
# Runs the cocotb example's `make check` (its exit status says whether the test passed) with VARS as
# make variables; requires exit status 0 (RC=0) or non-zero (RC=1) and the output to match REGEX.
if(NOT OK)
  message(FATAL_ERROR "${WHY}")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/../expect.cmake)
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PYTHONPATH}
                        ${MAKE} -s -f ${MAKEFILE} check SIM_BUILD=${SIM_BUILD} COCOTB_RESULTS_FILE=${RESULTS} ${VARS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
fp4sim_expect("make check" "${rc}" "${out}${err}")
