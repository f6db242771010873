# The include half of the layering check (TccdHelpers.cmake declares the layers and checks the
# link half). Written for both CMake modes: tccd_check_layering calls it at configure time, and
# the ctest `layering_includes` runs it as a script (check_layering.cmake) over the source tree
# as it is then, with the manifest the configure step wrote (${build}/tccd_layering.cmake):
#   TCCD_CHECKED_DIRS           top-level directories whose files are checked
#   TCCD_LAYER_<layer>_BELOW    the layers <layer> may use (its USES, transitively)
#   TCCD_EXTERNAL_INCLUDES      "prefix=layer" pairs: include-path prefixes a layer owns
#   _tccd_file_<path>           the layer of a file named in a library's SRCS or HDRS
#   _tccd_dir_<dir>             a directory's default layer ("" where none is below the rest)
#
# A file's layer: the one its library names (SRCS or HDRS); else, for a header, that of its .cc;
# else the default of the nearest directory that declares libraries: the layer of that
# directory's libraries that all its other libraries use (the bottom one, so that an unclaimed
# file gets the strictest rule).

string(CONCAT TCCD_LAYERING_HINT
    "Move the code, not the rule. A file has its library's layer (named in its SRCS or HDRS, or "
    "its .cc is); a header no library names has its directory's bottom layer: name it in the "
    "HDRS of the library it belongs to.")

# Sets `out` to the layer of `rel` (a path relative to the source root), or "" if it has none.
function(_tccd_layer_of_file rel out)
  if(DEFINED "_tccd_file_${rel}")
    set(${out} "${_tccd_file_${rel}}" PARENT_SCOPE)
    return()
  endif()
  string(REGEX REPLACE "(_inl)?\\.(h|inc)$" ".cc" source "${rel}")
  if(NOT source STREQUAL rel AND DEFINED "_tccd_file_${source}")
    set(${out} "${_tccd_file_${source}}" PARENT_SCOPE)
    return()
  endif()
  get_filename_component(dir "${rel}" DIRECTORY)
  while(dir)
    if(DEFINED "_tccd_dir_${dir}")
      set(${out} "${_tccd_dir_${dir}}" PARENT_SCOPE)
      return()
    endif()
    get_filename_component(dir "${dir}" DIRECTORY)
  endwhile()
  set(${out} "" PARENT_SCOPE)
endfunction()

# Sets `out` to the layer an include of `path` (from a file in `from_dir`, relative to the source
# root) reaches: a project file's, an owned external prefix's (the longest that matches), or ""
# for anything else (the standard library, Abseil, generated headers of no layer).
function(_tccd_layer_of_include source_dir from_dir path out)
  set(layer "")
  if(EXISTS "${source_dir}/${path}" AND NOT IS_DIRECTORY "${source_dir}/${path}")
    _tccd_layer_of_file("${path}" layer)
  elseif(from_dir AND EXISTS "${source_dir}/${from_dir}/${path}")
    get_filename_component(abs "${source_dir}/${from_dir}/${path}" ABSOLUTE)
    file(RELATIVE_PATH rel "${source_dir}" "${abs}")
    _tccd_layer_of_file("${rel}" layer)
  else()
    set(longest -1)
    foreach(pair IN LISTS TCCD_EXTERNAL_INCLUDES)
      string(FIND "${pair}" "=" eq REVERSE)
      string(SUBSTRING "${pair}" 0 ${eq} prefix)
      string(LENGTH "${prefix}" length)
      string(FIND "${path}" "${prefix}" at)
      if(at EQUAL 0 AND length GREATER longest)
        math(EXPR eq "${eq} + 1")
        string(SUBSTRING "${pair}" ${eq} -1 layer)
        set(longest ${length})
      endif()
    endforeach()
  endif()
  set(${out} "${layer}" PARENT_SCOPE)
endfunction()

# Checks every #include of every .h/.cc/.c/.inc under TCCD_CHECKED_DIRS; appends one line per
# broken rule to `errors`. TCCD_INJECT ("file|include line") adds a line to one file first: the
# test that proves the check can fail.
function(tccd_check_includes source_dir errors)
  set(found "")
  set(globs "")
  foreach(dir IN LISTS TCCD_CHECKED_DIRS)
    list(APPEND globs ${source_dir}/${dir}/*.h ${source_dir}/${dir}/*.cc ${source_dir}/${dir}/*.c
         ${source_dir}/${dir}/*.inc)
  endforeach()
  file(GLOB_RECURSE files ${globs})
  set(inject_file "")
  if(TCCD_INJECT MATCHES "^([^|]+)\\|(.*)$")
    set(inject_file "${CMAKE_MATCH_1}")
    set(inject_line "${CMAKE_MATCH_2}")
  endif()
  foreach(file IN LISTS files)
    file(RELATIVE_PATH rel "${source_dir}" "${file}")
    file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
    if(rel STREQUAL inject_file)
      list(APPEND lines "${inject_line}")
    endif()
    if(NOT lines)
      continue()
    endif()
    _tccd_layer_of_file("${rel}" layer)
    if(NOT layer)
      string(APPEND found "  ${rel} belongs to no layer: name it in the SRCS or HDRS of its library\n")
      continue()
    endif()
    get_filename_component(from_dir "${rel}" DIRECTORY)
    foreach(line IN LISTS lines)
      if(NOT line MATCHES "include[ \t]*[<\"]([^>\"]+)[>\"]")
        continue()
      endif()
      set(path "${CMAKE_MATCH_1}")
      _tccd_layer_of_include("${source_dir}" "${from_dir}" "${path}" reached)
      if(reached AND NOT reached STREQUAL layer AND NOT reached IN_LIST TCCD_LAYER_${layer}_BELOW)
        string(APPEND found "  ${rel} (layer ${layer}) must not include ${path} (layer ${reached})\n")
      endif()
    endforeach()
  endforeach()
  set(${errors} "${found}" PARENT_SCOPE)
endfunction()
