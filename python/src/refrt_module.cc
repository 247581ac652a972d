// parity._refrt: refrt in-process for Python (pybind11). The thin layer under parity.runtime: a session
// from a file or bytes, its inputs/outputs, and run() on numpy arrays. Inputs are read in place (C-contiguous
// arrays, kept alive for the call); outputs become numpy arrays that own the refrt buffer (no copy).
// Every parity::Error surfaces as parity._refrt.RefrtError (a parity.ParityError) with Parity's message.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "parity/error.h"
#include "parity/refrt/cpu_isa.h"
#include "parity/refrt/session.h"
#include "parity/refrt/value.h"

namespace py = pybind11;

namespace parity::python {
namespace {

// numpy dtype -> refrt dtype; kUndefined for what refrt cannot take (object, str, complex, ...).
DType dtype_of(const py::dtype& dt) {
  // Read through Python attributes: pybind11 2.10's descriptor accessors predate numpy 2's layout.
  const char kind = dt.attr("kind").cast<std::string>()[0];
  const auto size = dt.attr("itemsize").cast<int>();
  if (kind == 'b') return DType::kBool;
  if (kind == 'f')
    return size == 4 ? DType::kFloat32 : size == 8 ? DType::kFloat64 : size == 2 ? DType::kFloat16 : DType::kUndefined;
  if (kind == 'i')
    return size == 1   ? DType::kInt8
           : size == 2 ? DType::kInt16
           : size == 4 ? DType::kInt32
           : size == 8 ? DType::kInt64
                       : DType::kUndefined;
  if (kind == 'u')
    return size == 1   ? DType::kUInt8
           : size == 2 ? DType::kUInt16
           : size == 4 ? DType::kUInt32
           : size == 8 ? DType::kUInt64
                       : DType::kUndefined;
  // ml_dtypes.bfloat16 (what onnx and ORT use for bfloat16 arrays) is a 2-byte user type named "bfloat16".
  if (size == 2 && dt.attr("name").cast<std::string>() == "bfloat16") return DType::kBFloat16;
  return DType::kUndefined;
}

py::dtype numpy_dtype(DType t) {
  switch (t) {
    case DType::kFloat32:
      return py::dtype::of<float>();
    case DType::kFloat64:
      return py::dtype::of<double>();
    case DType::kFloat16:
      return py::dtype("float16");
    case DType::kBFloat16:
      return py::dtype::from_args(py::module_::import("ml_dtypes").attr("bfloat16"));
    case DType::kInt8:
      return py::dtype::of<int8_t>();
    case DType::kInt16:
      return py::dtype::of<int16_t>();
    case DType::kInt32:
      return py::dtype::of<int32_t>();
    case DType::kInt64:
      return py::dtype::of<int64_t>();
    case DType::kUInt8:
      return py::dtype::of<uint8_t>();
    case DType::kUInt16:
      return py::dtype::of<uint16_t>();
    case DType::kUInt32:
      return py::dtype::of<uint32_t>();
    case DType::kUInt64:
      return py::dtype::of<uint64_t>();
    case DType::kBool:
      return py::dtype::of<bool>();
    default:
      throw Error({"python"}, "an output of dtype " + dtype_name(t) + " has no numpy equivalent");
  }
}

// (name, ONNX element type number, dims: int, dim_param string or None; None for no shape at all)
py::list describe(const std::vector<refrt::ValueInfo>& values) {
  py::list out;
  for (const auto& v : values) {
    py::object dims = py::none();
    if (v.has_shape) {
      py::list d;
      for (const auto& dim : v.dims) {
        if (dim.value >= 0)
          d.append(dim.value);
        else if (!dim.param.empty())
          d.append(dim.param);
        else
          d.append(py::none());
      }
      dims = d;
    }
    out.append(py::make_tuple(v.name, static_cast<int>(v.dtype), dims, refrt::value_kind_name(v.kind)));
  }
  return out;
}

// A read-only refrt view of `array` (the caller keeps the array alive for the run).
Tensor view_of(const py::array& array, const std::string& name) {
  if (!(array.flags() & py::array::c_style))
    throw Error({"python"}, "input '" + name + "' is not C-contiguous (np.ascontiguousarray first)");
  const DType dtype = dtype_of(array.dtype());
  if (dtype == DType::kUndefined)
    throw Error({"python"},
                "input '" + name + "' has numpy dtype " + array.dtype().attr("name").cast<std::string>() +
                    ", which refrt does not take",
                ErrorKind::kUnsupported);
  Shape shape(array.shape(), array.shape() + array.ndim());
  static const std::shared_ptr<const void> kNoOwner(static_cast<const void*>(nullptr), [](const void*) {});
  return Tensor::view(dtype, std::move(shape), kNoOwner, array.data());
}

// An owning numpy array over the tensor's buffer: the tensor moves into the array's base capsule.
py::array to_numpy(Tensor t) {
  const py::dtype dt = numpy_dtype(t.dtype());
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  if (t.numel() == 0) return py::array(dt, shape, std::vector<py::ssize_t>(shape.size(), 0));
  void* data = t.mutable_raw();  // copies a read-only view (a session constant, an input) first
  auto* owned = new Tensor(std::move(t));
  py::capsule base(owned, [](void* p) { delete static_cast<Tensor*>(p); });
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = static_cast<py::ssize_t>(dtype_size(owned->dtype()));
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return py::array(dt, shape, strides, data, base);
}

// A sequence input from a list of arrays, an optional from None or its element (views of the arrays).
std::shared_ptr<const refrt::Value> value_of(const py::object& item, const refrt::ValueInfo& info) {
  const bool optional =
      info.kind == refrt::ValueKind::kOptionalTensor || info.kind == refrt::ValueKind::kOptionalSequence;
  if (optional && item.is_none()) return refrt::Value::empty_optional(info.kind, info.dtype);
  if (info.kind == refrt::ValueKind::kOptionalTensor)
    return refrt::Value::optional_tensor(view_of(item.cast<py::array>(), info.name));
  if (!py::isinstance<py::list>(item) && !py::isinstance<py::tuple>(item))
    throw Error({"python"},
                "input '" + info.name + "' is a " + refrt::value_kind_name(info.kind) + ": pass a list of arrays");
  std::vector<Tensor> elements;
  for (const auto& e : item) elements.push_back(view_of(e.cast<py::array>(), info.name));
  const DType elem = info.dtype != DType::kUndefined ? info.dtype
                     : elements.empty()              ? DType::kUndefined
                                                     : elements[0].dtype();
  auto seq = refrt::Value::sequence(std::move(elements), elem);
  return optional ? refrt::Value::optional_sequence(*seq) : seq;
}

py::object value_to_python(const refrt::Value& v) {
  if (v.is_optional() && !v.has_element) return py::none();
  if (v.kind == refrt::ValueKind::kOptionalTensor) return to_numpy(v.tensors.at(0).clone());
  py::list items;
  for (const Tensor& t : v.tensors) items.append(to_numpy(t.clone()));
  return std::move(items);
}

class PySession {
 public:
  PySession(std::unique_ptr<refrt::Session> s) : session_(std::move(s)) {}

  py::list inputs() const { return describe(session_->inputs()); }
  py::list outputs() const { return describe(session_->outputs()); }

  // Arrays for tensor inputs; for a sequence input a list of arrays, for an optional None or its element.
  py::list run(const std::vector<py::object>& items) const {
    const auto& infos = session_->inputs();
    if (items.size() != infos.size())
      throw Error({"python"},
                  "expected " + std::to_string(infos.size()) + " inputs, got " + std::to_string(items.size()));
    std::vector<Tensor> inputs(items.size());
    refrt::ValueList values(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      if (infos[i].kind == refrt::ValueKind::kTensor)
        inputs[i] = view_of(items[i].cast<py::array>(), infos[i].name);
      else
        values[i] = value_of(items[i], infos[i]);
    }
    refrt::RunResult result;
    {
      py::gil_scoped_release release;
      result = session_->run_values(inputs, values);
      inputs.clear();  // views of the arrays: released before the arrays may go
      values.clear();
    }
    py::list out;
    for (size_t i = 0; i < result.outputs.size(); ++i) {
      if (i < result.values.size() && result.values[i]) {  // a sequence: a list; an optional: None or its element
        out.append(value_to_python(*result.values[i]));
        continue;
      }
      // Two outputs on one buffer (the same value twice) must not alias in Python.
      bool shared = false;
      for (size_t j = 0; j < i && !shared; ++j) shared = result.outputs[j].raw() == result.outputs[i].raw();
      out.append(to_numpy(shared ? result.outputs[i].clone() : std::move(result.outputs[i])));
    }
    return out;
  }

 private:
  std::unique_ptr<refrt::Session> session_;
};

refrt::SessionOptions options_of(int threads, bool optimize, int weight_only_accuracy,
                                 const std::vector<std::string>& disabled_passes) {
  refrt::SessionOptions o;
  o.threads = threads;
  o.optimize = optimize;
  o.weight_only_accuracy = weight_only_accuracy;
  o.disabled_passes.insert(disabled_passes.begin(), disabled_passes.end());
  return o;
}

}  // namespace
}  // namespace parity::python

PYBIND11_MODULE(_refrt, m) {
  using namespace parity;
  using python::PySession;
  m.doc() = "refrt, Parity's CPU runtime, in-process (use parity.runtime.InferenceSession)";
  // A subclass of parity.ParityError (a RuntimeError), so `except parity.ParityError` catches refrt's errors too.
  static py::object base = py::module_::import("parity._paths").attr("ParityError");
  py::register_exception<Error>(m, "RefrtError", base.ptr());
  py::class_<PySession>(m, "Session")
      .def_static(
          "load_file",
          [](const std::string& path, int threads, bool optimize, int weight_only_accuracy,
             const std::vector<std::string>& disabled_passes) {
            py::gil_scoped_release release;
            return PySession(refrt::Session::load_file(
                path, python::options_of(threads, optimize, weight_only_accuracy, disabled_passes)));
          },
          py::arg("path"), py::arg("threads"), py::arg("optimize") = true, py::arg("weight_only_accuracy") = -1,
          py::arg("disabled_passes") = std::vector<std::string>{})
      .def_static(
          "load_bytes",
          [](const py::bytes& bytes, int threads, bool optimize, int weight_only_accuracy,
             const std::vector<std::string>& disabled_passes) {
            std::string data = bytes;
            py::gil_scoped_release release;
            return PySession(refrt::Session::load_bytes(
                data, "<bytes>", python::options_of(threads, optimize, weight_only_accuracy, disabled_passes)));
          },
          py::arg("data"), py::arg("threads"), py::arg("optimize") = true, py::arg("weight_only_accuracy") = -1,
          py::arg("disabled_passes") = std::vector<std::string>{})
      .def("inputs", &PySession::inputs)
      .def("outputs", &PySession::outputs)
      .def("run", &PySession::run, py::arg("inputs"));
  m.def("optimization_passes", &refrt::optimization_passes, "refrt's load-time passes, in the order they run");
  m.def(
      "isa_level", [] { return std::string(refrt::isa_name(refrt::isa_level())); },
      "the ISA level refrt's hand-written kernels use (PARITY_REFRT_ISA caps it)");
  m.def(
      "cpu_isa_level", [] { return std::string(refrt::isa_name(refrt::isa_info().cpu)); },
      "the highest ISA level this CPU can execute");
  m.def(
      "isa_note", [] { return refrt::isa_info().note; }, "set when PARITY_REFRT_ISA is above the CPU's level");
}
