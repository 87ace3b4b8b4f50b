# cmake -DMAKE=make -DMAKEFILE=examples/cocotb/Makefile -DOK=ON|OFF -DWHY=text -DSIM_BUILD=dir
#       -DRESULTS=file.xml -DPYTHONPATH=dir -DVARS=A=1;B=2 -DRC=0|1 -DREGEX=re -P run_cocotb.cmake
# Runs the cocotb example's `make check` (its exit status says whether the test passed) with VARS as
# make variables; requires exit status 0 (RC=0) or non-zero (RC=1) and the output to match REGEX.
if(NOT OK)
  message(FATAL_ERROR "${WHY}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PYTHONPATH}
                        ${MAKE} -s -f ${MAKEFILE} check SIM_BUILD=${SIM_BUILD} COCOTB_RESULTS_FILE=${RESULTS} ${VARS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
message("${all}")
if(RC EQUAL 0 AND NOT rc EQUAL 0)
  message(FATAL_ERROR "expected exit status 0, got ${rc}")
elseif(RC EQUAL 1 AND rc EQUAL 0)
  message(FATAL_ERROR "expected a non-zero exit status, got 0")
endif()
if(NOT all MATCHES "${REGEX}")
  message(FATAL_ERROR "output does not match: ${REGEX}")
endif()
