# C++ types of the torch.export serialization schema, generated at build time from the schema.yaml that
# ships in the venv's torch wheel (exporter/tools/gen_pt2_schema.py). Nothing of torch's is copied into
# the repository; a new torch brings its schema with it.
execute_process(
  COMMAND ${PARITY_PYTHON} -c "import importlib.util as u; print(u.find_spec('torch').submodule_search_locations[0])"
  OUTPUT_VARIABLE _torch_pkg_dir OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _torch_pkg_rc)
set(PARITY_PT2_SCHEMA "${_torch_pkg_dir}/_export/serde/schema.yaml" CACHE FILEPATH "torch.export schema.yaml")
if(NOT EXISTS "${PARITY_PT2_SCHEMA}")
  message(FATAL_ERROR "torch's export schema not found at '${PARITY_PT2_SCHEMA}' (through ${PARITY_PYTHON}); "
                      "run scripts/setup.sh first")
endif()

set(PT2_SCHEMA_GEN_DIR ${CMAKE_BINARY_DIR}/gen)
set(PT2_SCHEMA_HDR ${PT2_SCHEMA_GEN_DIR}/parity/exporter/pt2_schema.h)
set(PT2_SCHEMA_SRC ${PT2_SCHEMA_GEN_DIR}/parity/exporter/pt2_schema.cc)
add_custom_command(
  OUTPUT ${PT2_SCHEMA_HDR} ${PT2_SCHEMA_SRC}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PT2_SCHEMA_GEN_DIR}/parity/exporter
  COMMAND ${PARITY_PYTHON} ${CMAKE_SOURCE_DIR}/exporter/tools/gen_pt2_schema.py ${PARITY_PT2_SCHEMA}
          ${PT2_SCHEMA_HDR} ${PT2_SCHEMA_SRC}
  DEPENDS ${PARITY_PT2_SCHEMA} ${CMAKE_SOURCE_DIR}/exporter/tools/gen_pt2_schema.py
  COMMENT "Generating the PT2 schema types from ${PARITY_PT2_SCHEMA}")

# The types and their JSON readers as one library, linked by the exporter and the PT2 fuzz targets.
add_library(parity_pt2_schema STATIC ${PT2_SCHEMA_SRC} ${CMAKE_SOURCE_DIR}/exporter/src/pt2_schema_read.cc)
target_include_directories(parity_pt2_schema PUBLIC ${PT2_SCHEMA_GEN_DIR} PRIVATE ${CMAKE_SOURCE_DIR}/exporter/src)
target_link_libraries(parity_pt2_schema PUBLIC nlohmann_json::nlohmann_json)
target_compile_options(parity_pt2_schema PRIVATE ${PARITY_WARNINGS})
set_target_properties(parity_pt2_schema PROPERTIES POSITION_INDEPENDENT_CODE ON)
