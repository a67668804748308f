# cmake -DLIB=path/to/_C.so -P check_shared_libstdcxx.cmake
# Fails the build when the extension carries its own copy of libstdc++'s
# iostream code (a static libstdc++ linked in, by flags from the environment
# or a compiler wrapper). Such a copy has its own locale state: integers in
# C++ error messages are then dropped (seen here) or crash the process (seen on
# a GPU machine, docs/gpu.md). A shared libstdc++ leaves these undefined.
find_program(TOCL_NM nm)
if(NOT TOCL_NM)
  return()
endif()
execute_process(COMMAND ${TOCL_NM} -C --defined-only ${LIB} OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
if(rc EQUAL 0 AND syms MATCHES "std::ostream::_M_insert<long>|std::basic_ostream<char, std::char_traits<char> >::_M_insert<long>")
  message(FATAL_ERROR "torch_ocl: ${LIB} contains a static copy of libstdc++ (std::ostream::_M_insert<long> is "
                      "defined in it). It must use the shared libstdc++ that torch uses: remove -static-libstdc++ "
                      "from CXXFLAGS/LDFLAGS/CMAKE_ARGS and rebuild.")
endif()
