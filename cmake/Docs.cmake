# Docs.cmake - the `docs` target: the API reference, Doxygen over the public
# headers (runtime/include/cg), into <build>/docs/api/html.
#
# Not part of `all`: a user building the project needs no Doxygen. CI builds
# it (scripts/test), and any Doxygen warning fails it (docs/Doxyfile.in). It
# runs whenever asked, which takes about a second, rather than track every
# header. Where Doxygen is missing, `docs` still exists and fails saying so,
# rather than the build saying there is no such target.
find_package(Doxygen 1.9 QUIET) # 1.9: WARN_AS_ERROR = FAIL_ON_WARNINGS

set(CG_DOCS_OUTPUT ${PROJECT_BINARY_DIR}/docs/api)
configure_file(${PROJECT_SOURCE_DIR}/docs/Doxyfile.in ${CG_DOCS_OUTPUT}/Doxyfile @ONLY)

if(DOXYGEN_FOUND)
  add_custom_target(docs
    # A page of a header since removed must not survive.
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${CG_DOCS_OUTPUT}/html
    COMMAND Doxygen::doxygen ${CG_DOCS_OUTPUT}/Doxyfile
    WORKING_DIRECTORY ${CG_DOCS_OUTPUT}
    COMMENT "API reference: Doxygen over runtime/include/cg, warnings as errors"
    VERBATIM)
else()
  add_custom_target(docs
    COMMAND ${CMAKE_COMMAND} -E echo
            "docs: the API reference needs Doxygen 1.9 or later (Debian: apt-get install doxygen)"
    COMMAND ${CMAKE_COMMAND} -E false
    VERBATIM)
endif()

# The reference fails on a warning: the same Doxyfile over a header whose doc
# comment names a parameter that is not there must exit non-zero, quoting it.
# Once, in the plain build: a sanitizer build changes nothing of it.
if(DOXYGEN_FOUND AND CG_BUILD_TESTS AND NOT CG_SANITIZE)
  set(planted ${CG_DOCS_OUTPUT}/planted-warning)
  file(CONFIGURE OUTPUT ${planted}/planted.hpp
    CONTENT "namespace cg {\n/// Does nothing.\n/// \\param missing a parameter planted() does not have\nint planted(int count);\n} // namespace cg\n")
  add_test(NAME docs.ApiReferenceFailsOnADoxygenWarning
    COMMAND sh -c "out=$({ cat \"$1/Doxyfile\"; echo \"INPUT = $2/planted.hpp\"; echo \"OUTPUT_DIRECTORY = $2/out\"; } | \"$0\" - 2>&1); status=$?; echo \"$out\"; test $status -ne 0 && echo \"$out\" | grep -F \"$2/planted.hpp:3: error: argument 'missing' of command @param is not found in the argument list of cg::planted(int count)\""
            $<TARGET_FILE:Doxygen::doxygen> ${CG_DOCS_OUTPUT} ${planted})
endif()
