# Layering the build enforces. Each engine component is one folder: its sources and private
# headers side by side, and the headers other components may include in
# <folder>/include/oomlab/<folder>/. That include root is the component's only public include
# folder, passed on through CMake's usage requirements, so an include of a component it does not
# link fails to compile. The layering test (tests/layering) checks the rest against the manifest
# written here: what each component, workbench folder and program declares, torch and Qt headers
# only where they belong, private headers only beside their sources, no cycles.

# Called by oomlab_component for the component in the current folder.
function(oomlab_layering_component name)
    get_filename_component(folder ${CMAKE_CURRENT_SOURCE_DIR} NAME)
    if(IS_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include)
        target_include_directories(${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
    endif()
    oomlab_layering_unit(${name} engine/${folder})
endfunction()

# A unit the test checks: a target whose sources live in `folder` (relative to the project).
function(oomlab_layering_unit name folder)
    set_property(GLOBAL APPEND PROPERTY OOMLAB_LAYERING_UNITS "${name}=${folder}")
endfunction()

# The workbench's folders, "FOLDER:FOLDERS IT MAY INCLUDE", all in target `target`.
function(oomlab_layering_ui_folders target)
    set_property(GLOBAL APPEND PROPERTY OOMLAB_LAYERING_UI ${ARGN})
    set_property(GLOBAL PROPERTY OOMLAB_LAYERING_UI_TARGET ${target})
endfunction()

# The project's own targets among `libraries` (links such as Threads::Threads dropped, and
# the private links that INTERFACE_LINK_LIBRARIES lists as $<LINK_ONLY:...>: those pass no
# headers on).
function(oomlab_layering_own out libraries)
    get_property(units GLOBAL PROPERTY OOMLAB_LAYERING_UNITS)
    set(own "")
    foreach(library IN LISTS libraries)
        if(library MATCHES "LINK_ONLY")
            continue()
        endif()
        foreach(unit IN LISTS units)
            if(unit MATCHES "^${library}=")
                list(APPEND own ${library})
            endif()
        endforeach()
    endforeach()
    set(${out} "${own}" PARENT_SCOPE)
endfunction()

# Writes the manifest: one line per unit,
#   unit NAME FOLDER TORCH(0|1) QT(0|1) | DECLARED... | PASSED_ON...
# and one per workbench folder, `ui FOLDER | FOLDERS...`.
function(oomlab_write_layering_manifest file)
    get_property(units GLOBAL PROPERTY OOMLAB_LAYERING_UNITS)
    set(text "")
    foreach(unit IN LISTS units)
        string(REPLACE "=" ";" parts "${unit}")
        list(GET parts 0 name)
        list(GET parts 1 folder)
        get_target_property(declared ${name} LINK_LIBRARIES)
        get_target_property(passed ${name} INTERFACE_LINK_LIBRARIES)
        set(torch 0)
        set(qt 0)
        foreach(library IN LISTS declared)
            if(library MATCHES "oomlab::torch|oomlab_torch$")
                set(torch 1)
            elseif(library MATCHES "^Qt6::|QCustomPlot")
                set(qt 1)
            endif()
        endforeach()
        oomlab_layering_own(declared "${declared}")
        oomlab_layering_own(passed "${passed}")
        string(REPLACE ";" " " declared "${declared}")
        string(REPLACE ";" " " passed "${passed}")
        string(APPEND text "unit ${name} ${folder} ${torch} ${qt} | ${declared} | ${passed}\n")
    endforeach()
    get_property(ui_folders GLOBAL PROPERTY OOMLAB_LAYERING_UI)
    foreach(entry IN LISTS ui_folders)
        string(REPLACE ":" " | " entry "${entry}")
        string(APPEND text "ui ${entry}\n")
    endforeach()
    file(WRITE ${file} "${text}")
endfunction()
