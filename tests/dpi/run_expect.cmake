# cmake -DCMD=prog -DARGS=a;b -DRC=0|1 -DREGEX=re -P run_expect.cmake: runs prog, requires its exit
# status to be 0 (RC=0) or non-zero (RC=1) and its output to match REGEX.
execute_process(COMMAND ${CMD} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
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
