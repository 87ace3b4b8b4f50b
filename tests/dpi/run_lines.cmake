# cmake -DTB=Vtb_lines -DLINES=file.tf -DRESULTS=dut.txt -DPLUSARGS=a;b -DFP4SIM=fp4sim -DRC=0|1 -DREGEX=re
#       -P run_lines.cmake
# The line-vector route of docs/line-vectors.md: the testbench reads LINES and writes RESULTS (it must
# exit 0), then `fp4sim check --lines LINES --results RESULTS` must exit 0 (RC=0) or non-zero (RC=1);
# both outputs together must match REGEX.
file(REMOVE ${RESULTS})
execute_process(COMMAND ${TB} +lines=${LINES} +results=${RESULTS} ${PLUSARGS}
                RESULT_VARIABLE tb_rc OUTPUT_VARIABLE tb_out ERROR_VARIABLE tb_err)
message("${tb_out}${tb_err}")
if(NOT tb_rc EQUAL 0)
  message(FATAL_ERROR "the testbench exited with ${tb_rc}")
endif()
execute_process(COMMAND ${FP4SIM} check --lines ${LINES} --results ${RESULTS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(RC EQUAL 0 AND NOT rc EQUAL 0)
  message(FATAL_ERROR "fp4sim check: expected exit status 0, got ${rc}")
elseif(RC EQUAL 1 AND NOT rc EQUAL 1)
  message(FATAL_ERROR "fp4sim check: expected exit status 1, got ${rc}")
endif()
if(NOT "${tb_out}${tb_err}${out}${err}" MATCHES "${REGEX}")
  message(FATAL_ERROR "output does not match: ${REGEX}")
endif()
