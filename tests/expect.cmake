# Included by the -P scripts of tests/ (run_expect, dpi/run_lines, cocotb/run_cocotb):
# fp4sim_expect(WHAT rc output) fails the test unless the exit status rc agrees with RC (0: must be
# 0; 1: must be non-zero) and output matches REGEX.
function(fp4sim_expect what rc output)
  if(RC EQUAL 0 AND NOT rc EQUAL 0)
    message(FATAL_ERROR "${what}: expected exit status 0, got ${rc}")
  elseif(RC EQUAL 1 AND rc EQUAL 0)
    message(FATAL_ERROR "${what}: expected a non-zero exit status, got 0")
  endif()
  if(NOT output MATCHES "${REGEX}")
    message(FATAL_ERROR "output does not match: ${REGEX}")
  endif()
endfunction()
