# axon_set_warnings(target): the project's warning flags; errors with AXON_WERROR.
function(axon_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Wpedantic -Wshadow=local -Wno-missing-field-initializers>
    $<$<AND:$<BOOL:${AXON_WERROR}>,$<COMPILE_LANGUAGE:CXX,C>>:-Werror>)
endfunction()
