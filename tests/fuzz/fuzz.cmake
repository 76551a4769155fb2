# Fuzz targets (tests/fuzz/fuzz_*.c). Each builds two ways:
#   fuzz_NAME_replay: with replay_main.c, in every build; ctest replays the seed corpus
#     tests/fuzz/corpus/NAME and the regression inputs tests/fuzz/regress/NAME (under ASan in
#     the sanitizer build of scripts/test.sh).
#   fuzz_NAME: the libFuzzer binary, with WEFT_FUZZ (clang); scripts/fuzz.sh runs them.
set(WEFT_FUZZ_TARGETS onnx steps db_import cost_model)
add_custom_target(weft_fuzz_all)
foreach(t ${WEFT_FUZZ_TARGETS})
  set(src ${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_${t}.c)
  add_executable(fuzz_${t}_replay ${src} ${PROJECT_SOURCE_DIR}/tests/fuzz/replay_main.c)
  target_compile_options(fuzz_${t}_replay PRIVATE ${WEFT_WARN})
  target_include_directories(fuzz_${t}_replay SYSTEM PRIVATE ${XGBOOST_INC})
  target_link_libraries(fuzz_${t}_replay PRIVATE weft m)
  set(dirs ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/${t})
  if(EXISTS ${PROJECT_SOURCE_DIR}/tests/fuzz/regress/${t})
    list(APPEND dirs ${PROJECT_SOURCE_DIR}/tests/fuzz/regress/${t})
  endif()
  add_test(NAME fuzz_${t}_replay COMMAND fuzz_${t}_replay ${dirs} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(fuzz_${t}_replay PROPERTIES LABELS fuzz TIMEOUT 600)
  if(WEFT_FUZZ)
    add_executable(fuzz_${t} ${src})
    target_compile_options(fuzz_${t} PRIVATE ${WEFT_WARN})
    target_include_directories(fuzz_${t} SYSTEM PRIVATE ${XGBOOST_INC})
    target_link_libraries(fuzz_${t} PRIVATE weft m)
    target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer)
    add_dependencies(weft_fuzz_all fuzz_${t})
  endif()
endforeach()
# Writes the small cost-model seeds of tests/fuzz/corpus/cost_model (run by hand, see the file).
add_executable(fuzz_make_cost_model_seeds ${PROJECT_SOURCE_DIR}/tests/fuzz/make_cost_model_seeds.c)
target_compile_options(fuzz_make_cost_model_seeds PRIVATE ${WEFT_WARN})
target_include_directories(fuzz_make_cost_model_seeds SYSTEM PRIVATE ${XGBOOST_INC})
target_link_libraries(fuzz_make_cost_model_seeds PRIVATE weft)
