# The fake CUDA driver (tests/cuda/fake_cuda.c -> libfakecuda.so) and the tests that load it
# through WEFT_CUDA_DRIVER: the device path of the CUDA target runs without a GPU. Built only
# with the CUDA target (NVRTC found); otherwise those tests report that they skip.
if(WEFT_WITH_CUDA)
  add_library(fakecuda SHARED ${PROJECT_SOURCE_DIR}/tests/cuda/fake_cuda.c)
  target_include_directories(fakecuda PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(fakecuda PRIVATE ${WEFT_WARN} -fvisibility=hidden)
  target_link_libraries(fakecuda PRIVATE Threads::Threads)
  if(TARGET targets_test_cuda_run)
    target_compile_definitions(targets_test_cuda_run PRIVATE FAKECUDA_LIB="$<TARGET_FILE:fakecuda>")
    add_dependencies(targets_test_cuda_run fakecuda)
  endif()
  set(WEFT_FAKECUDA_LIB $<TARGET_FILE:fakecuda>)
else()
  set(WEFT_FAKECUDA_LIB "")
endif()
# weft run / bench model / bench op --target cuda: one clear line without a driver; with the
# fake driver past compile and launch, every allocation freed, driver errors named
add_test(NAME cli_cuda COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cuda/cli.sh $<TARGET_FILE:weft_cli> "${WEFT_FAKECUDA_LIB}"
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_cuda PROPERTIES LABELS "cli;cuda" TIMEOUT 300 SKIP_RETURN_CODE 77)
# on a real device only (label gpu, scripts/gpu-run.sh): skipped with exit 77 elsewhere
if(TARGET targets_test_cuda_device)
  set_tests_properties(targets_test_cuda_device PROPERTIES LABELS "targets;gpu" SKIP_RETURN_CODE 77)
endif()
# weft tune --target cuda on the fake driver: workers, device key, check, errors, timeout, resume
if(WEFT_TEST_HOOKS)
  set(WEFT_TUNE_SH_HOOKS ON)
else()
  set(WEFT_TUNE_SH_HOOKS OFF)
endif()
add_test(NAME cli_cuda_tune COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cuda/tune.sh $<TARGET_FILE:weft_cli> "${WEFT_FAKECUDA_LIB}"
         ${WEFT_TUNE_SH_HOOKS}
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_cuda_tune PROPERTIES LABELS "cli;cuda" TIMEOUT 300 SKIP_RETURN_CODE 77)
