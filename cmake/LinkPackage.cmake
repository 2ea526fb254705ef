# Links every entry of the Python package source folder SRC into DST (the dev package).
file(MAKE_DIRECTORY "${DST}")
file(GLOB _entries RELATIVE "${SRC}" "${SRC}/*")
foreach(_e ${_entries})
  if(NOT _e STREQUAL "__pycache__" AND NOT EXISTS "${DST}/${_e}")
    file(CREATE_LINK "${SRC}/${_e}" "${DST}/${_e}" SYMBOLIC)
  endif()
endforeach()
