# cmake -DCMD=prog -DARGS=a;b -DRC=0|1 -DREGEX=re -P run_expect.cmake: runs prog, requires its exit
# status to be 0 (RC=0) or non-zero (RC=1) and its output to match REGEX.
include(${CMAKE_CURRENT_LIST_DIR}/expect.cmake)
execute_process(COMMAND ${CMD} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
fp4sim_expect(${CMD} "${rc}" "${out}${err}")
