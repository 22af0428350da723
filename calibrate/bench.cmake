# bench.cmake - tpp_bench: the micro-benchmark harness of `tpplan calibrate`
# (bench.c) over its backends: cpu (MPI + CBLAS, always) and cuda (cuBLAS +
# NCCL, when TPP_WITH_CUDA and TPP_WITH_NCCL are ON).  Built only with MPI;
# cli/CMakeLists.txt links it into tpplan when the target exists.
# Included from calibrate/CMakeLists.txt.
if(NOT TPP_WITH_MPI)
  return()
endif()

# BLAS with the C interface: prefer OpenBLAS (Debian: libopenblas-dev, which
# scripts/deps.sh installs), else any BLAS that ships cblas.h.
if(NOT BLA_VENDOR)
  set(BLA_VENDOR OpenBLAS)
  find_package(BLAS QUIET)
  unset(BLA_VENDOR)
endif()
if(NOT BLAS_FOUND)
  find_package(BLAS)
endif()
find_path(TPP_CBLAS_INCLUDE_DIR cblas.h
  PATH_SUFFIXES openblas openblas-pthread
                ${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread
                ${CMAKE_LIBRARY_ARCHITECTURE})
mark_as_advanced(TPP_CBLAS_INCLUDE_DIR)
if(NOT BLAS_FOUND OR NOT TPP_CBLAS_INCLUDE_DIR)
  message(FATAL_ERROR
    "TPP_WITH_MPI is ON but no BLAS with cblas.h was found, which "
    "`tpplan calibrate` needs for its GEMM benchmark.  Install OpenBLAS "
    "(sh scripts/deps.sh, or apt-get install libopenblas-dev), or configure "
    "with -DTPP_WITH_MPI=OFF.")
endif()

# The CBLAS that tpp_bench and tpp_exec (its fp64 reference) use: one
# interface target, so exec/ does not look for it again.
add_library(tpp_cblas INTERFACE)
target_include_directories(tpp_cblas INTERFACE ${TPP_CBLAS_INCLUDE_DIR})
if(TARGET BLAS::BLAS)
  target_link_libraries(tpp_cblas INTERFACE BLAS::BLAS)
else()
  target_link_libraries(tpp_cblas INTERFACE ${BLAS_LIBRARIES})
endif()

# GSL's imported target links GSL's own reference CBLAS (libgslcblas).  Two
# CBLAS libraries in one process means whichever the loader meets first
# serves cblas_sgemm for everyone -- here that was gslcblas, which made the
# GEMM benchmark measure a textbook triple loop.  Do what the GSL manual
# recommends instead: link GSL against the optimized CBLAS (it provides the
# whole CBLAS interface GSL uses).
if(TARGET GSL::gsl)
  get_target_property(_tpp_gsl_libs GSL::gsl INTERFACE_LINK_LIBRARIES)
  if(_tpp_gsl_libs)
    list(REMOVE_ITEM _tpp_gsl_libs GSL::gslcblas)
  else()
    set(_tpp_gsl_libs "")
  endif()
  list(APPEND _tpp_gsl_libs ${BLAS_LIBRARIES})
  set_property(TARGET GSL::gsl PROPERTY INTERFACE_LINK_LIBRARIES "${_tpp_gsl_libs}")
endif()

set(_tpp_bench_cuda OFF)
if(TPP_WITH_CUDA AND TPP_WITH_NCCL)
  set(_tpp_bench_cuda ON)
endif()

add_library(tpp_bench STATIC ${CMAKE_CURRENT_SOURCE_DIR}/bench.c
            ${CMAKE_CURRENT_SOURCE_DIR}/backend_ext.c
            ${CMAKE_CURRENT_SOURCE_DIR}/backend_cpu.c)
target_include_directories(tpp_bench PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(tpp_bench PUBLIC tpp_calibrate MPI::MPI_C)
target_link_libraries(tpp_bench PRIVATE tpp_cblas)

# The cuda backend is a module that bench.c loads (dlopen) the first time a
# command asks for it: cuBLAS, cuBLASLt and NCCL take ~0.2 s and ~200 MB to
# load, which every `tpplan plan` / `validate` would otherwise pay.  It is
# written next to the tpplan executable, where bench.c looks first; it
# takes tpp_err_set / tpp_strlcpy / tpp_prec_names from the executable,
# which exports its symbols for it (cli/CMakeLists.txt).
if(_tpp_bench_cuda)
  add_library(tpp_backend_cuda MODULE
              ${CMAKE_CURRENT_SOURCE_DIR}/backend_cuda.c
              ${CMAKE_CURRENT_SOURCE_DIR}/backend_cuda_kernels.cu)
  set_target_properties(tpp_backend_cuda PROPERTIES PREFIX ""
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/cli)
  # CUDA_ARCHITECTURES: CMAKE_CUDA_ARCHITECTURES (default 80;90, set in
  # the top-level CMakeLists.txt before enable_language(CUDA))
  target_include_directories(tpp_backend_cuda PRIVATE
    $<TARGET_PROPERTY:tpp_bench,INTERFACE_INCLUDE_DIRECTORIES>
    $<TARGET_PROPERTY:tpp_calibrate,INTERFACE_INCLUDE_DIRECTORIES>
    $<TARGET_PROPERTY:tpp_costmodel,INTERFACE_INCLUDE_DIRECTORIES>
    $<TARGET_PROPERTY:tpp_common,INTERFACE_INCLUDE_DIRECTORIES>)
  target_compile_definitions(tpp_backend_cuda PRIVATE TPP_HAVE_CUDA_BACKEND=1)
  target_link_libraries(tpp_backend_cuda PRIVATE MPI::MPI_C CUDA::cudart
                        CUDA::cublas NCCL::NCCL)
  target_compile_definitions(tpp_bench PRIVATE TPP_HAVE_CUDA_BACKEND=1
                             TPP_CUDA_MODULE="tpp_backend_cuda.so")
  target_link_libraries(tpp_bench PRIVATE ${CMAKE_DL_LIBS})
  add_dependencies(tpp_bench tpp_backend_cuda)
endif()
if(_tpp_bench_cuda)
  message(STATUS "tpplan calibrate backends: cpu (BLAS ${BLAS_LIBRARIES}), cuda")
else()
  message(STATUS "tpplan calibrate backends: cpu (BLAS ${BLAS_LIBRARIES})")
endif()
