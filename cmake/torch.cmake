# libtorch from the venv's torch wheel. Only verify/ links it.
execute_process(
  COMMAND ${PARITY_PYTHON} -c "import torch; print(torch.utils.cmake_prefix_path)"
  OUTPUT_VARIABLE TORCH_CMAKE_PREFIX OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _torch_rc)
if(NOT _torch_rc EQUAL 0)
  message(FATAL_ERROR "torch not importable through ${PARITY_PYTHON}; run scripts/setup.sh first")
endif()
list(APPEND CMAKE_PREFIX_PATH ${TORCH_CMAKE_PREFIX})
find_package(Torch REQUIRED)
# TorchConfig adds its flags globally through TORCH_CXX_FLAGS; we keep them on verify's targets only.
get_filename_component(TORCH_LIB_DIR "${TORCH_LIBRARY}" DIRECTORY)
# torch's torch_cpu target names the system's libprotobuf as an interface library, though libtorch carries
# its own protobuf inside and nothing of ours that links torch uses it: the link would record a dependency
# on the system libprotobuf (and its libz) that the wheel would then have to carry.
get_target_property(_torch_cpu_links torch_cpu INTERFACE_LINK_LIBRARIES)
if(_torch_cpu_links)
  list(REMOVE_ITEM _torch_cpu_links protobuf::libprotobuf)
  set_target_properties(torch_cpu PROPERTIES INTERFACE_LINK_LIBRARIES "${_torch_cpu_links}")
endif()
