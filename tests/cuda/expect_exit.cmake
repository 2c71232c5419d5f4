# Runs a command and checks its exit code and its output, for tests whose
# expected outcome is itself a failure or a skip (ctest alone would report
# those as failed or skipped rather than check them):
#
#   cmake -DEXPECT_EXIT=N -DEXPECT_OUTPUT=REGEX -P expect_exit.cmake -- COMMAND [ARGS...]
#
# Passes when the exit code is N and stdout+stderr match REGEX.
if(NOT DEFINED EXPECT_EXIT OR NOT DEFINED EXPECT_OUTPUT)
  message(FATAL_ERROR "expect_exit.cmake needs -DEXPECT_EXIT=N and -DEXPECT_OUTPUT=REGEX")
endif()
set(_command "")
set(_after_marker FALSE)
math(EXPR _last "${CMAKE_ARGC} - 1")
foreach(_i RANGE ${_last})
  if(_after_marker)
    list(APPEND _command "${CMAKE_ARGV${_i}}")
  elseif("${CMAKE_ARGV${_i}}" STREQUAL "--")
    set(_after_marker TRUE)
  endif()
endforeach()
if(NOT _command)
  message(FATAL_ERROR "expect_exit.cmake: no command after --")
endif()
execute_process(COMMAND ${_command} RESULT_VARIABLE _code OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
message("${_out}")
if(NOT "${_code}" STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "expected exit code ${EXPECT_EXIT}, got ${_code}")
endif()
if(NOT "${_out}" MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "the output does not match: ${EXPECT_OUTPUT}")
endif()
message("exit code ${_code} and output as expected")
