# The API reference, generated from the comments of the public headers by Doxygen where it is
# installed: cmake --build build --target slimeccl-api-docs writes build/docs/api/html/index.html.
# Every declaration must carry a comment: an undocumented one fails the build of the target.
find_package(Doxygen QUIET)
if(DOXYGEN_FOUND)
  set(DOXYGEN_PROJECT_NAME slimeccl)
  set(DOXYGEN_PROJECT_NUMBER ${PROJECT_VERSION})
  set(DOXYGEN_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/docs/api)
  set(DOXYGEN_OPTIMIZE_OUTPUT_FOR_C YES)
  set(DOXYGEN_JAVADOC_AUTOBRIEF YES)
  set(DOXYGEN_GENERATE_LATEX NO)
  set(DOXYGEN_WARN_IF_UNDOCUMENTED YES)
  set(DOXYGEN_WARN_NO_PARAMDOC NO)
  set(DOXYGEN_WARN_AS_ERROR FAIL_ON_WARNINGS)
  set(DOXYGEN_QUIET YES)
  doxygen_add_docs(slimeccl-api-docs ${PROJECT_SOURCE_DIR}/include/slimeccl.h
    COMMENT "The API reference in ${PROJECT_BINARY_DIR}/docs/api/html")
endif()
