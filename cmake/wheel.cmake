# The wheel of `pip install <checkout>` (pyproject.toml, scikit-build-core sets SKBUILD): the torch it is
# built against, and what it carries: the binary and its libraries in parity/_native/, the refrt module
# in parity/, tolerances.json beside the scenarios that read it (parity/scenarios/). libtorch is not copied:
# it is the venv's.

# pip's build isolation runs the build with the installing venv's interpreter and hides that venv's packages
# behind PYTHONPATH (a sitecustomize that puts the build requirements in their place): the question to torch
# must see the venv's; the build requirements (onnx's .proto files here, pyyaml for the PT2 schema generator
# at build time, whose environment is pip's) are found with pip's PYTHONPATH (cmake/onnx_proto.cmake).
set(PARITY_BUILD_PYTHONPATH "$ENV{PYTHONPATH}")
unset(ENV{PYTHONPATH})
unset(ENV{PYTHONNOUSERSITE})

# The torch of the venv the package goes into: the interpreter running the build (pip
# --no-build-isolation), else, when that is pip's throw-away build venv, the activated venv ($VIRTUAL_ENV);
# -Ccmake.define.PARITY_WHEEL_PYTHON=... names it explicitly.
set(PARITY_WHEEL_PYTHON "" CACHE FILEPATH "Python whose torch the wheel is built against (default: the installing one)")
set(_wheel_python "${PARITY_WHEEL_PYTHON}")
if(NOT _wheel_python)
  set(_wheel_python "${Python_EXECUTABLE}")
  execute_process(COMMAND "${_wheel_python}" -c "import importlib.util as u, sys; sys.exit(u.find_spec('torch') is None)"
                  RESULT_VARIABLE _no_torch OUTPUT_QUIET ERROR_QUIET)
  if(NOT _no_torch EQUAL 0 AND EXISTS "$ENV{VIRTUAL_ENV}/bin/python")
    set(_wheel_python "$ENV{VIRTUAL_ENV}/bin/python")
  endif()
endif()
execute_process(COMMAND "${_wheel_python}" -c "import torch" RESULT_VARIABLE _no_torch OUTPUT_QUIET ERROR_QUIET)
if(NOT _no_torch EQUAL 0)
  message(FATAL_ERROR "torch is not importable through ${_wheel_python}: install into a venv that has torch "
                      "(the version of pyproject.toml), or activate that venv, or name its python with "
                      "-Ccmake.define.PARITY_WHEEL_PYTHON=...")
endif()
set(PARITY_PYTHON "${_wheel_python}" CACHE FILEPATH "Python of the project venv" FORCE)
if(NOT PARITY_WITH_TORCH)
  message(FATAL_ERROR "the wheel carries the parity binary, which needs PARITY_WITH_TORCH=ON")
endif()

function(parity_wheel_install)
  set(native parity/_native)
  # Everything of ours is found beside itself. libtorch through ../../torch/lib when torch sits in the same
  # site-packages, else through LD_LIBRARY_PATH, which the package sets for the binary (parity/_paths.py).
  set_target_properties(parity parity_common parity_exporter parity_refrt parity_verify PROPERTIES INSTALL_RPATH "$ORIGIN")
  set_target_properties(parity_reference PROPERTIES INSTALL_RPATH "$ORIGIN;$ORIGIN/../../torch/lib")
  set_target_properties(parity_demo_translations PROPERTIES INSTALL_RPATH "$ORIGIN/..")
  set_target_properties(parity_demo_ops PROPERTIES INSTALL_RPATH "$ORIGIN/../../../torch/lib")
  set_target_properties(parity_refrt_python PROPERTIES INSTALL_RPATH "$ORIGIN/_native")
  install(TARGETS parity RUNTIME DESTINATION ${native})
  # libparity_reference.so must sit beside libparity_verify.so, which dlopens it from there.
  install(TARGETS parity_common parity_exporter parity_refrt parity_verify parity_reference LIBRARY DESTINATION ${native})
  # <PARITY_BUILD_DIR>/custom_ops/, where scenarios/cases/custom_ops.py looks (the package sets the variable).
  install(TARGETS parity_demo_ops parity_demo_translations LIBRARY DESTINATION ${native}/custom_ops)
  install(TARGETS parity_refrt_python LIBRARY DESTINATION parity)
  install(FILES ${CMAKE_SOURCE_DIR}/common/tolerances.json DESTINATION parity/scenarios)
endfunction()
