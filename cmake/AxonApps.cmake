# axon-apps: everything axon ships (the SDK's example plugins, core, API,
# plugins, apps and the C++ examples) without the tests and benchmarks, so
# the README's first command builds what the trainer needs in about half
# the time of the whole tree. Collected from the source directories, so a
# new app or plugin joins it without a list to keep.
function(axon_shipped_targets dir out)
  get_property(found DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    axon_shipped_targets(${sub} below)
    list(APPEND found ${below})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

function(axon_add_apps_target)
  add_custom_target(axon-apps)
  get_property(subdirs DIRECTORY ${CMAKE_SOURCE_DIR} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    if(sub MATCHES "/(tests|bench)$")
      continue()
    endif()
    axon_shipped_targets(${sub} targets)
    foreach(target IN LISTS targets)
      get_target_property(type ${target} TYPE)
      if(type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY|STATIC_LIBRARY)$")
        add_dependencies(axon-apps ${target})
      endif()
    endforeach()
  endforeach()
endfunction()
