# axon_set_warnings(target): the project's warning flags; errors with AXON_WERROR.
function(axon_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Wpedantic -Wno-missing-field-initializers>
    # GCC's spelling; clang (the sanitize preset) has no -Wshadow=local.
    $<$<COMPILE_LANG_AND_ID:CXX,GNU>:-Wshadow=local> $<$<COMPILE_LANG_AND_ID:C,GNU>:-Wshadow=local>
    $<$<AND:$<BOOL:${AXON_WERROR}>,$<COMPILE_LANGUAGE:CXX,C>>:-Werror>)
endfunction()
