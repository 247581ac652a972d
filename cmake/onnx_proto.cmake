# ONNX protobuf classes, generated at build time from the .proto shipped in the venv's onnx package.
# Nothing from onnx is copied into the repository.
# A wheel build may find onnx among pip's build requirements rather than in the venv (cmake/wheel.cmake).
set(_onnx_env)
if(DEFINED PARITY_BUILD_PYTHONPATH)
  set(_onnx_env ${CMAKE_COMMAND} -E env "PYTHONPATH=${PARITY_BUILD_PYTHONPATH}")
endif()
execute_process(
  COMMAND ${_onnx_env} ${PARITY_PYTHON} -c "import onnx, os; print(os.path.dirname(onnx.__file__))"
  OUTPUT_VARIABLE ONNX_PKG_DIR OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _onnx_rc)
if(NOT _onnx_rc EQUAL 0 OR NOT EXISTS "${ONNX_PKG_DIR}/onnx-ml.proto")
  message(FATAL_ERROR "onnx package not found through ${PARITY_PYTHON}; run scripts/setup.sh first")
endif()

set(ONNX_GEN_DIR ${CMAKE_BINARY_DIR}/gen)
# onnx-data.proto: SequenceProto / OptionalProto, the backend-test files of sequence and optional values.
set(ONNX_GEN_SRC ${ONNX_GEN_DIR}/onnx/onnx-ml.pb.cc ${ONNX_GEN_DIR}/onnx/onnx-data.pb.cc)
set(ONNX_GEN_HDR ${ONNX_GEN_DIR}/onnx/onnx-ml.pb.h ${ONNX_GEN_DIR}/onnx/onnx-data.pb.h)
# protoc wants the .proto under an import root that matches its package path (onnx/...).
add_custom_command(
  OUTPUT ${ONNX_GEN_SRC} ${ONNX_GEN_HDR}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${ONNX_GEN_DIR}/proto/onnx
  COMMAND ${CMAKE_COMMAND} -E copy ${ONNX_PKG_DIR}/onnx-ml.proto ${ONNX_GEN_DIR}/proto/onnx/onnx-ml.proto
  COMMAND ${CMAKE_COMMAND} -E copy ${ONNX_PKG_DIR}/onnx-data.proto ${ONNX_GEN_DIR}/proto/onnx/onnx-data.proto
  COMMAND protobuf::protoc --cpp_out=${ONNX_GEN_DIR} -I ${ONNX_GEN_DIR}/proto ${ONNX_GEN_DIR}/proto/onnx/onnx-ml.proto
          ${ONNX_GEN_DIR}/proto/onnx/onnx-data.proto
  DEPENDS ${ONNX_PKG_DIR}/onnx-ml.proto ${ONNX_PKG_DIR}/onnx-data.proto
  COMMENT "Generating ONNX protobuf classes from ${ONNX_PKG_DIR}/onnx-ml.proto and onnx-data.proto")

add_library(onnx_proto STATIC ${ONNX_GEN_SRC})
target_include_directories(onnx_proto SYSTEM PUBLIC ${ONNX_GEN_DIR})
target_link_libraries(onnx_proto PUBLIC protobuf::libprotobuf-lite)
set_target_properties(onnx_proto PROPERTIES POSITION_INDEPENDENT_CODE ON)
