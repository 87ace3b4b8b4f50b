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
include(${CMAKE_CURRENT_LIST_DIR}/../expect.cmake)
execute_process(COMMAND ${FP4SIM} check --lines ${LINES} --results ${RESULTS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
fp4sim_expect("fp4sim check" "${rc}" "${tb_out}${tb_err}${out}${err}")
