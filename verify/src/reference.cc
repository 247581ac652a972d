// The libtorch reference executor: with reference_symbolic.cc and reference_quantized.cc, the only
// translation units of Parity that include libtorch headers. Built as the module libparity_reference.so.
#include "parity/verify/reference.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ScalarOps.h>
#include <ATen/core/stack.h>
#include <torch/version.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "parity/error.h"
#include "parity/fs.h"
#include "reference_api.h"
#include "reference_layout.h"
#include "reference_quantized.h"
#include "reference_symbolic.h"
#include "reference_transformers.h"

namespace parity::verify {

namespace {

using pt2::Argument;
using json = nlohmann::json;

at::ScalarType to_aten(DType t) {
  switch (t) {
    case DType::kFloat32:
      return at::kFloat;
    case DType::kFloat64:
      return at::kDouble;
    case DType::kFloat16:
      return at::kHalf;
    case DType::kBFloat16:
      return at::kBFloat16;
    case DType::kInt8:
      return at::kChar;
    case DType::kInt16:
      return at::kShort;
    case DType::kInt32:
      return at::kInt;
    case DType::kInt64:
      return at::kLong;
    case DType::kUInt8:
      return at::kByte;
    case DType::kBool:
      return at::kBool;
    case DType::kUInt16:
      return at::kUInt16;
    case DType::kUInt32:
      return at::kUInt32;
    case DType::kUInt64:
      return at::kUInt64;
    default:
      throw Error({"verify"}, "dtype " + dtype_name(t) + " has no libtorch equivalent");
  }
}

DType from_aten(at::ScalarType t) {
  for (DType d :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8, DType::kInt16, DType::kInt32,
        DType::kInt64, DType::kUInt8, DType::kBool, DType::kUInt16, DType::kUInt32, DType::kUInt64})
    if (to_aten(d) == t) return d;
  throw Error({"verify"}, std::string("libtorch dtype ") + c10::toString(t) + " has no Parity equivalent");
}

at::Tensor to_aten(const Tensor& t) {
  std::vector<int64_t> shape(t.shape().begin(), t.shape().end());
  at::Tensor out = at::empty(shape, at::TensorOptions().dtype(to_aten(t.dtype())));
  if (t.nbytes()) std::memcpy(out.data_ptr(), t.raw(), t.nbytes());
  return out;
}

Tensor from_aten(const at::Tensor& src) {
  // Complex values as the exporter carries them: real tensors with a trailing (real, imaginary) dim.
  const at::Tensor t = (src.is_complex() ? at::view_as_real(src.resolve_conj()) : src).contiguous();
  Tensor out(from_aten(t.scalar_type()), Shape(t.sizes().begin(), t.sizes().end()));
  if (out.nbytes()) std::memcpy(out.mutable_raw(), t.const_data_ptr(), out.nbytes());
  return out;
}

// A complex value in the pair layout the case folders and the exporter use (docs/complex.md): a real tensor
// with a trailing dim of 2 (real, imaginary) back to libtorch's complex tensor.
at::Tensor complex_from_pairs(const at::Tensor& pairs, const std::string& name) {
  if (pairs.dim() == 0 || pairs.size(-1) != 2 || !pairs.is_floating_point())
    throw Error({"verify"}, "complex value '" + name + "' must be given as (real, imaginary) pairs: a float tensor " +
                                "with a trailing dim of 2, got " + c10::toString(pairs.scalar_type()) + " of " +
                                std::to_string(pairs.dim()) + " dims");
  return at::view_as_complex(pairs.contiguous());
}

// The export schema's enums -> c10's numbering.
int64_t scalar_type_from_schema(int64_t v) {
  if (v == 9) return static_cast<int64_t>(at::kComplexHalf);  // complex dtypes have no Parity DType
  if (v == 10) return static_cast<int64_t>(at::kComplexFloat);
  if (v == 11) return static_cast<int64_t>(at::kComplexDouble);
  const DType d = pt2::dtype_from_torch(static_cast<int32_t>(v));
  if (d == DType::kUndefined) throw Error({"verify"}, "unsupported scalar type " + std::to_string(v));
  return static_cast<int64_t>(to_aten(d));
}
int64_t layout_from_schema(int64_t v) {
  if (v != 7) throw Error({"verify"}, "only the strided layout is supported, got layout " + std::to_string(v));
  return static_cast<int64_t>(at::kStrided);
}
int64_t memory_format_from_schema(int64_t v) {
  switch (v) {
    case 1:
      return static_cast<int64_t>(at::MemoryFormat::Contiguous);
    case 2:
      return static_cast<int64_t>(at::MemoryFormat::ChannelsLast);
    case 3:
      return static_cast<int64_t>(at::MemoryFormat::ChannelsLast3d);
    case 4:
      return static_cast<int64_t>(at::MemoryFormat::Preserve);
    default:
      throw Error({"verify"}, "unknown memory format " + std::to_string(v));
  }
}

class Interpreter {
 public:
  explicit Interpreter(const pt2::Program& p) : program_(p) {}

  ReferenceResult run(const std::vector<Tensor>& user_inputs, bool keep,
                      const std::map<std::string, Tensor>* substitutes) {
    graph_ = &program_.graph;
    bind_inputs(user_inputs);
    if (substitutes)
      for (const auto& node : program_.graph.nodes)
        for (const auto& name : tensor_outputs(node)) producers_[name] = &node;
    ReferenceResult result;
    for (const auto& node : program_.graph.nodes) {
      try {
        run_node(node);
        if (substitutes) substitute(node, *substitutes, result.substituted);
        // Copied now: an in-place op further on (relu_) would otherwise change the recorded value.
        if (keep)
          for (const auto& name : tensor_outputs(node))
            if (auto it = tensors_.find(name); it != tensors_.end() && it->second.defined())
              result.intermediates[name] = from_aten(it->second);
      } catch (const Error& e) {
        throw e.with_context({"verify", program_.archive_path, node.name, node.target});
      } catch (const std::exception& e) {
        // libtorch's c10::Error carries a C++ backtrace after the first line; keep the message only.
        std::string msg = e.what();
        if (auto nl = msg.find('\n'); nl != std::string::npos) msg = msg.substr(0, nl);
        throw Error({"verify", program_.archive_path, node.name, node.target}, "libtorch: " + msg);
      }
    }
    for (const auto& a : program_.user_outputs())
      result.outputs.push_back(from_aten(a.is_tensor() ? tensor(a.tensor_name()) : number_tensor(a)));
    for (const auto& [message, times] : failed_assertions_)
      result.notes.push_back(message + " (" + std::to_string(times) + (times == 1 ? " time" : " times") +
                             "): a data-dependent value outside what torch.export assumed; eager never checked it "
                             "and torch's ExportedProgram.module() stops there; the reference ran past it, and the "
                             "comparison with eager decides");
    for (const auto& m : program_.mutations()) result.mutations.push_back(from_aten(tensor(m.fx_value)));
    if (keep)  // inputs, parameters and constants: no node produced them
      for (const auto& [name, t] : tensors_)
        if (t.defined() && !result.intermediates.count(name)) result.intermediates[name] = from_aten(t);
    return result;
  }

 private:
  void bind_inputs(const std::vector<Tensor>& user_inputs) {
    size_t next = 0;
    for (const auto& spec : program_.input_specs) {
      using Kind = pt2::InputSpec::Kind;
      if (spec.kind == Kind::kUserInput) {
        const bool symbolic = spec.arg.is_symbolic_scalar();
        if (!spec.arg.is_tensor() && !symbolic) continue;  // constants were baked in by torch.export
        if (next >= user_inputs.size())
          throw Error({"verify", program_.archive_path},
                      "the program takes more user inputs than the " + std::to_string(user_inputs.size()) + " given");
        const Tensor& given = user_inputs[next++];
        if (!symbolic) {
          const std::string& name = spec.arg.tensor_name();
          tensors_[name] = is_complex_value(name) ? complex_from_pairs(to_aten(given), name) : to_aten(given);
          continue;
        }
        // A symbolic scalar input arrives as a 0-d tensor (the case folder holds tensors only).
        if (given.numel() != 1)
          throw Error({"verify", program_.archive_path}, "symbolic scalar input '" + spec.arg.symbol() +
                                                             "' needs a one-element tensor, got shape " +
                                                             shape_str(given.shape()));
        const at::Tensor scalar = to_aten(given).reshape({});
        const std::string name = spec.arg.symbol();
        if (spec.arg.is(pt2::ArgKind::as_sym_int))
          ints_[name] = scalar.item<int64_t>();
        else if (spec.arg.is(pt2::ArgKind::as_sym_float))
          floats_[name] = scalar.item<double>();
        else
          bools_[name] = scalar.item<bool>();
      } else if (spec.kind == Kind::kParameter || spec.kind == Kind::kBuffer || spec.kind == Kind::kTensorConstant) {
        // A complex parameter or buffer is read in the pair layout (pt2_reader.cc): libtorch gets it complex.
        const std::string& name = spec.arg.tensor_name();
        const at::Tensor stored = stored_to_aten(program_.stored_tensor(spec));
        tensors_[name] = is_complex_value(name) ? complex_from_pairs(stored, name) : stored;
      } else if (spec.kind == Kind::kConstantInput) {
        continue;  // a Python scalar or None specialised at capture: the graph already holds its value
      } else {
        throw Error({"verify", program_.archive_path}, "input spec kind not supported by the reference executor yet");
      }
    }
    if (next != user_inputs.size())
      throw Error({"verify", program_.archive_path}, "the program takes " + std::to_string(next) + " user inputs, " +
                                                         std::to_string(user_inputs.size()) + " were given");
  }

  // Whether the program's value `name` is complex (complex32 / complex64 / complex128 in the schema's numbering).
  bool is_complex_value(const std::string& name) const {
    const auto it = program_.graph.tensor_values.find(name);
    if (it == program_.graph.tensor_values.end()) return false;
    const int32_t t = it->second.torch_dtype;
    return t == 9 || t == 10 || t == 11;
  }

  // A parameter, buffer or constant: the archive's own bytes, not a copy. The program's view of the archive is
  // read-only, and the graph may write a buffer in place (batch norm statistics, `add_`), so each run maps
  // the archive again privately copy-on-write: a write stays in this run, unread pages cost nothing.
  at::Tensor stored_to_aten(const Tensor& t) {
    const auto archive = t.nbytes() ? MappedFile::containing(t.raw()) : nullptr;
    if (!archive) return to_aten(t);  // an owned copy (a non-contiguous record was gathered at read time)
    auto& run_map = run_mappings_[archive->path()];
    if (!run_map) run_map = MappedFile::open_private_writable(archive->path(), "verify");
    if (run_map->size() != archive->size())
      throw Error({"verify", archive->path()}, "the archive changed on disk while it was being verified");
    const size_t offset = static_cast<size_t>(static_cast<const unsigned char*>(t.raw()) - archive->data());
    std::vector<int64_t> shape(t.shape().begin(), t.shape().end());
    std::shared_ptr<MappedFile> keep = run_map;
    return at::from_blob(
        run_map->mutable_data() + offset, shape, [keep](void*) {}, at::TensorOptions().dtype(to_aten(t.dtype())));
  }

  const at::Tensor& tensor(const std::string& name) const {
    auto it = tensors_.find(name);
    if (it == tensors_.end()) throw Error({"verify"}, "value '" + name + "' is used before it is defined");
    return it->second;
  }

  int64_t sym_int(const pt2::schema::SymIntArgument& s) const {
    if (s.kind() == pt2::schema::SymIntArgument::Kind::as_int) return s.as_int();
    return lookup(ints_, s.as_name());
  }

  // A number (int, float, bool; a symbol or a constant) as a 0-d tensor: how capture saves numbers, how the
  // export returns them and how they travel in and out of subgraphs here.
  at::Tensor number_tensor(const Argument& a) const {
    using K = pt2::ArgKind;
    if (a.is(K::as_sym_float) || a.is(K::as_float))
      return at::scalar_tensor(a.is_symbolic_scalar() ? lookup(floats_, a.symbol()) : a.as_float(), at::kDouble);
    if (a.is(K::as_sym_bool) || a.is(K::as_bool))
      return at::scalar_tensor(a.is_symbolic_scalar() ? lookup(bools_, a.symbol()) : a.as_bool(), at::kBool);
    return at::scalar_tensor(a.is_symbolic_scalar() ? lookup(ints_, a.symbol()) : a.as_int(), at::kLong);
  }

  // Binds the symbol of a formal number (a subgraph input, a higher-order op's output) from a 0-d tensor.
  void bind_number(const Argument& formal, const at::Tensor& t) {
    if (!formal.is_symbolic_scalar()) return;  // a constant: nothing to bind
    if (formal.is(pt2::ArgKind::as_sym_float))
      floats_[formal.symbol()] = t.item<double>();
    else if (formal.is(pt2::ArgKind::as_sym_bool))
      bools_[formal.symbol()] = t.item<bool>();
    else
      ints_[formal.symbol()] = t.item<int64_t>();
  }

  c10::IValue to_ivalue(const Argument& a, const c10::Argument& formal) const {
    using K = pt2::ArgKind;
    const auto kind = formal.type()->kind();
    const auto& t = a.typed();
    switch (a.kind()) {
      case K::as_none:
        return c10::IValue();
      case K::as_tensor:
        return tensor(a.tensor_name());
      default:
        break;
    }
    // A Python number where the schema wants a Tensor (`x * 2` serialised as mul.Tensor): a wrapped
    // number, which takes part in type promotion like the Python scalar did.
    if (kind == c10::TypeKind::TensorType && is_scalar_kind(a.kind()))
      return at::native::wrapped_scalar_tensor(scalar_of(a));
    switch (a.kind()) {
      case K::as_tensors: {
        std::vector<at::Tensor> list;
        for (const auto& n : a.tensor_names()) list.push_back(tensor(n));
        return list;
      }
      case K::as_optional_tensors: {
        c10::List<std::optional<at::Tensor>> list;
        for (const auto& n : a.optional_tensor_names())
          list.push_back(n ? std::optional<at::Tensor>(tensor(*n)) : std::nullopt);
        return list;
      }
      case K::as_int:
        if (kind == c10::TypeKind::FloatType) return static_cast<double>(a.as_int());
        return a.as_int();
      case K::as_ints:
        return a.as_ints();
      case K::as_float:
        return a.as_float();
      case K::as_floats:
        return a.as_floats();
      case K::as_bool:
        return a.as_bool();
      case K::as_bools: {
        c10::List<bool> list;
        for (const bool b : t.as_bools()) list.push_back(b);
        return list;
      }
      case K::as_string:
        return a.as_string();
      case K::as_sym_int:
        return sym_int(t.as_sym_int());
      case K::as_sym_float:
        return a.is_symbolic_scalar() ? lookup(floats_, a.symbol()) : a.as_float();
      case K::as_sym_bool:
        return a.is_symbolic_scalar() ? lookup(bools_, a.symbol()) : a.as_bool();
      case K::as_sym_ints: {
        std::vector<int64_t> v;
        for (const auto& s : t.as_sym_ints()) v.push_back(sym_int(s));
        return v;
      }
      case K::as_scalar_type:
        return scalar_type_from_schema(static_cast<int64_t>(t.as_scalar_type()));
      case K::as_layout:
        return layout_from_schema(static_cast<int64_t>(t.as_layout()));
      case K::as_memory_format:
        return memory_format_from_schema(static_cast<int64_t>(t.as_memory_format()));
      case K::as_device:
        return c10::Device(t.as_device().type);
      case K::as_complex:  // a Scalar formal (mul.Scalar(z, 2j))
        return scalar_of(a);
      default:
        throw Error({"verify"}, "argument '" + formal.name() + "' of kind " + a.kind_name() +
                                    " is not supported by the reference executor yet");
    }
  }

  static bool is_scalar_kind(pt2::ArgKind k) {
    using K = pt2::ArgKind;
    return k == K::as_int || k == K::as_float || k == K::as_bool || k == K::as_sym_int || k == K::as_sym_float ||
           k == K::as_sym_bool || k == K::as_complex;
  }

  // The value of a scalar argument (constant or symbolic) as a c10::Scalar.
  c10::Scalar scalar_of(const Argument& a) const {
    using K = pt2::ArgKind;
    switch (a.kind()) {
      case K::as_int:
        return c10::Scalar(a.as_int());
      case K::as_float:
        return c10::Scalar(a.as_float());
      case K::as_bool:
        return c10::Scalar(a.as_bool());
      case K::as_sym_int:
        return c10::Scalar(sym_int(a.typed().as_sym_int()));
      case K::as_sym_float:
        return c10::Scalar(a.is_symbolic_scalar() ? lookup(floats_, a.symbol()) : a.as_float());
      case K::as_sym_bool:
        return c10::Scalar(a.is_symbolic_scalar() ? lookup(bools_, a.symbol()) : a.as_bool());
      case K::as_complex:  // a complex Python number (`z * 1j`)
        return c10::Scalar(c10::complex<double>(a.typed().as_complex().real, a.typed().as_complex().imag));
      default:
        throw Error({"verify"}, std::string("argument of kind ") + a.kind_name() + " is not a scalar");
    }
  }

  // Python's operator module on symbolic scalars (`_operator.sub`, `_operator.ge`, ...), concretely.
  void run_python_operator(const pt2::Node& node) {
    const std::string op = node.target.substr(std::string("_operator.").size());
    std::vector<c10::Scalar> in;
    for (const auto& i : node.inputs) in.push_back(scalar_of(i.arg));
    auto need = [&](size_t n) {
      if (in.size() != n) throw Error({"verify"}, "operator." + op + " takes " + std::to_string(n) + " arguments");
    };
    const bool floating = std::any_of(in.begin(), in.end(), [](const c10::Scalar& x) { return x.isFloatingPoint(); });
    auto i = [&](size_t k) { return in[k].toLong(); };
    auto d = [&](size_t k) { return in[k].toDouble(); };
    c10::Scalar r;
    if (op == "neg")
      need(1), r = floating ? c10::Scalar(-d(0)) : c10::Scalar(-i(0));
    else if (op == "not_")
      need(1), r = c10::Scalar(!in[0].toBool());
    else {
      need(2);
      if (op == "add")
        r = floating ? c10::Scalar(d(0) + d(1)) : c10::Scalar(i(0) + i(1));
      else if (op == "sub")
        r = floating ? c10::Scalar(d(0) - d(1)) : c10::Scalar(i(0) - i(1));
      else if (op == "mul")
        r = floating ? c10::Scalar(d(0) * d(1)) : c10::Scalar(i(0) * i(1));
      else if (op == "truediv")
        r = c10::Scalar(d(0) / d(1));
      else if (op == "floordiv" || op == "mod") {
        if (floating) {
          const double q = std::floor(d(0) / d(1));
          r = op == "floordiv" ? c10::Scalar(q) : c10::Scalar(d(0) - q * d(1));
        } else {
          if (i(1) == 0) throw Error({"verify"}, "integer division by zero");
          int64_t q = i(0) / i(1);
          if ((i(0) % i(1) != 0) && ((i(0) < 0) != (i(1) < 0))) --q;  // Python floors
          r = op == "floordiv" ? c10::Scalar(q) : c10::Scalar(i(0) - q * i(1));
        }
      } else if (op == "pow")
        r = floating ? c10::Scalar(std::pow(d(0), d(1)))
                     : c10::Scalar(static_cast<int64_t>(std::llround(std::pow(d(0), d(1)))));
      else if (op == "eq")
        r = c10::Scalar(floating ? d(0) == d(1) : i(0) == i(1));
      else if (op == "ne")
        r = c10::Scalar(floating ? d(0) != d(1) : i(0) != i(1));
      else if (op == "lt")
        r = c10::Scalar(floating ? d(0) < d(1) : i(0) < i(1));
      else if (op == "le")
        r = c10::Scalar(floating ? d(0) <= d(1) : i(0) <= i(1));
      else if (op == "gt")
        r = c10::Scalar(floating ? d(0) > d(1) : i(0) > i(1));
      else if (op == "ge")
        r = c10::Scalar(floating ? d(0) >= d(1) : i(0) >= i(1));
      else if (op == "and_")
        r = c10::Scalar(in[0].toBool() && in[1].toBool());
      else if (op == "or_")
        r = c10::Scalar(in[0].toBool() || in[1].toBool());
      else
        throw Error({"verify"}, "operator." + op + " is not supported by the reference executor yet",
                    ErrorKind::kUnsupported);
    }
    if (node.outputs.size() != 1) throw Error({"verify"}, "operator." + op + " must have one output");
    const Argument& out = node.outputs[0];
    if (!out.is_symbolic_scalar()) return;  // a static result: nothing to bind
    const std::string name = out.symbol();
    if (out.is(pt2::ArgKind::as_sym_int))
      ints_[name] = r.toLong();
    else if (out.is(pt2::ArgKind::as_sym_float))
      floats_[name] = r.toDouble();
    else if (out.is(pt2::ArgKind::as_sym_bool))
      bools_[name] = r.toBool();
    else
      throw Error({"verify"},
                  "output of kind " + std::string(out.kind_name()) + " is not supported for operator." + op);
  }

  // torch.sym_max, sym_float, sym_ite, math.ceil, ... (reference_symbolic.cc), concretely.
  void run_symbolic_helper(const pt2::Node& node) {
    std::vector<SymScalar> in;
    for (const auto& i : node.inputs) {
      const c10::Scalar x = scalar_of(i.arg);
      in.push_back(x.isBoolean()         ? SymScalar::of_bool(x.toBool())
                   : x.isFloatingPoint() ? SymScalar::of_float(x.toDouble())
                                         : SymScalar::of_int(x.toLong()));
    }
    const SymScalar r = eval_symbolic_helper(node.target, in);
    if (node.outputs.size() != 1) throw Error({"verify", node.name}, node.target + " must have one output");
    const Argument& out = node.outputs[0];
    if (!out.is_symbolic_scalar()) return;  // a static result: nothing to bind
    if (out.is(pt2::ArgKind::as_sym_int))
      ints_[out.symbol()] = r.kind == SymScalar::Kind::kFloat  ? static_cast<int64_t>(r.d)
                            : r.kind == SymScalar::Kind::kBool ? r.b
                                                               : r.i;
    else if (out.is(pt2::ArgKind::as_sym_float))
      floats_[out.symbol()] = r.as_double();
    else if (out.is(pt2::ArgKind::as_sym_bool))
      bools_[out.symbol()] = r.truthy();
    else
      throw Error({"verify", node.name},
                  "output of kind " + std::string(out.kind_name()) + " is not supported for " + node.target);
  }

  static std::vector<std::string> tensor_outputs(const pt2::Node& node) {
    std::vector<std::string> names;
    for (const auto& o : node.outputs) {
      if (o.is(pt2::ArgKind::as_tensor)) names.push_back(o.tensor_name());
      if (o.is(pt2::ArgKind::as_tensors))
        for (const auto& n : o.tensor_names()) names.push_back(n);
    }
    return names;
  }

  // Replaces the node's outputs named in `substitutes`, recording how far libtorch's own result was.
  const at::Tensor* value_of(const pt2::Node& node, const char* arg) const {
    const Argument* a = node.input(arg);
    if (!a || !a->is_tensor()) return nullptr;
    auto it = tensors_.find(a->tensor_name());
    return it == tensors_.end() ? nullptr : &it->second;
  }

  // The value a quantize node rounds (x * (1 / scale), before the zero point is added), in double; undefined
  // for a form this does not know. The decomposed form (an 8-bit cast of clamp(round(v) + zp), maybe behind
  // views) reads v from the round node's input.
  at::Tensor unrounded(const pt2::Node& node) const {
    const std::string& t = node.target;
    const at::Tensor* x = value_of(node, t.rfind("torch.ops.aten.", 0) == 0 ? "self" : "input");
    if (!x) return {};
    if (t.rfind("torch.ops.quantized_decomposed.quantize_per_tensor", 0) == 0) {
      const Argument* s = node.input("scale");
      const at::Tensor* st = value_of(node, "scale");
      const double scale = st ? st->item<double>() : s->as_float();
      return x->to(at::kDouble) * (1.0 / scale);
    }
    if (t.rfind("torch.ops.quantized_decomposed.quantize_per_channel", 0) == 0) {
      const at::Tensor* scales = value_of(node, "scales");
      if (!scales) return {};
      std::vector<int64_t> shape(static_cast<size_t>(x->dim()), 1);
      const int64_t axis = node.input("axis")->as_int();
      shape[static_cast<size_t>(axis < 0 ? axis + x->dim() : axis)] = -1;
      return x->to(at::kDouble) * scales->to(at::kDouble).reshape(shape).reciprocal();
    }
    if (t.rfind("torch.ops.torchao.quantize_affine.", 0) == 0) {
      const at::Tensor* scale = value_of(node, "scale");
      return scale ? torchao_unrounded(*x, node.input("block_size")->as_ints(), *scale) : at::Tensor();
    }
    // Decomposed: back through views, the clamp and the zero point's add to the round.
    const pt2::Node* at = &node;
    for (int hops = 0; hops < 8; ++hops) {
      const Argument* a = at->input("self");
      if (!a || !a->is_tensor()) return {};
      auto p = producers_.find(a->tensor_name());
      if (p == producers_.end()) return {};
      at = p->second;
      if (at->target == "torch.ops.aten.round.default") {
        const at::Tensor* v = value_of(*at, "self");
        return v ? v->to(at::kDouble).reshape(x->sizes()) : at::Tensor();
      }
    }
    return {};
  }

  void substitute(const pt2::Node& node, const std::map<std::string, Tensor>& substitutes,
                  std::map<std::string, Substitution>& record) {
    for (const auto& name : tensor_outputs(node)) {
      const auto sub = substitutes.find(name);
      const auto own = tensors_.find(name);
      if (sub == substitutes.end() || own == tensors_.end()) continue;
      at::Tensor replacement = to_aten(sub->second);
      if (replacement.sizes() != own->second.sizes() || replacement.scalar_type() != own->second.scalar_type())
        throw Error({"verify"}, "the substitute for " + name + " differs in shape or dtype from libtorch's value");
      const at::Tensor diff = (own->second.to(at::kDouble) - replacement.to(at::kDouble)).abs();
      Substitution s;
      s.max_diff = diff.numel() ? diff.max().item<double>() : 0.0;
      s.differing = diff.ne(0).sum().item<int64_t>();
      if (s.differing > 0) {
        const at::Tensor v = unrounded(node);
        if (v.defined() && v.numel() == diff.numel()) {
          const at::Tensor from_tie = (v - v.floor() - 0.5).abs().reshape(diff.sizes());
          s.max_tie_distance = from_tie.masked_select(diff.ne(0)).max().item<double>();
        } else {
          s.max_tie_distance = NAN;
        }
      }
      record[name] = s;
      own->second = replacement;
    }
  }

  void run_node(const pt2::Node& node) {
    if (node.target.rfind("_operator.", 0) == 0) return run_python_operator(node);
    if (is_symbolic_helper(node.target)) return run_symbolic_helper(node);
    if (node.target.rfind("torch.ops.higher_order.", 0) == 0) return run_higher_order(node);
    if (node.target == "torch.ops.aten._assert_scalar.default" && runs_past_failed_assertion(node)) return;
    const std::string prefix = "torch.ops.";
    if (node.target.rfind(prefix, 0) != 0)
      throw Error({"verify"}, "non-operator target is not supported by the reference executor yet");
    // torch.ops.<ns>.<op>.<overload>
    const std::string rest = node.target.substr(prefix.size());
    const auto d1 = rest.find('.');
    const auto d2 = rest.rfind('.');
    if (d1 == std::string::npos || d1 == d2) throw Error({"verify"}, "cannot parse target");
    const std::string op_name = rest.substr(0, d1) + "::" + rest.substr(d1 + 1, d2 - d1 - 1);
    std::string overload = rest.substr(d2 + 1);
    if (overload == "default") overload = "";
    const auto handle = c10::Dispatcher::singleton().findSchema({op_name, overload});
    if (!handle)
      throw Error({"verify"}, "libtorch has no operator " + op_name + (overload.empty() ? "" : "." + overload));
    const c10::FunctionSchema& schema = handle->schema();

    torch::jit::Stack stack;
    for (const auto& formal : schema.arguments()) {
      const Argument* actual = node.input(formal.name());
      if (actual)
        stack.push_back(to_ivalue(*actual, formal));
      else if (formal.default_value())
        stack.push_back(*formal.default_value());
      else
        throw Error({"verify"}, "missing argument '" + formal.name() + "' and the schema has no default");
    }
    handle->callBoxed(&stack);
    if (stack.size() != node.outputs.size() &&
        !(node.outputs.size() == 1 && node.outputs[0].is(pt2::ArgKind::as_tensors)))
      throw Error({"verify"}, "operator returned " + std::to_string(stack.size()) + " values, the graph expects " +
                                  std::to_string(node.outputs.size()));
    for (size_t i = 0; i < node.outputs.size() && i < stack.size(); ++i) {
      // A fresh tensor (no alias annotation: not a view, not in-place) takes the layout the program recorded.
      if (i < schema.returns().size() && !schema.returns()[i].alias_info() && stack[i].isTensor() &&
          node.outputs[i].is_tensor())
        stack[i] = in_recorded_layout(stack[i].toTensor(), node.outputs[i].tensor_name());
      bind_output(node.outputs[i], stack[i]);
    }
  }

  // `t` laid out as the program recorded the value (reference_layout.h: a decomposed program's views rely on
  // it); copied only when libtorch's kernel chose another dim order.
  at::Tensor in_recorded_layout(const at::Tensor& t, const std::string& name) const {
    if (!graph_ || !t.defined() || t.is_quantized() || t.layout() != at::kStrided || t.dim() < 2) return t;
    const auto it = graph_->tensor_values.find(name);
    // Symbolic strides are not kept by the PT2 reader (TensorMeta::strides is empty): such a value keeps
    // libtorch's layout.
    if (it == graph_->tensor_values.end() || it->second.strides.size() != static_cast<size_t>(t.dim())) return t;
    std::vector<int64_t> hinted;  // the sizes at capture, which the recorded strides describe
    for (const auto& d : it->second.sizes) hinted.push_back(d.value.value_or(d.hint));
    const auto order = dense_dim_order(hinted, it->second.strides);
    if (!order) return t;
    const std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
    const std::vector<int64_t> want = dense_strides(sizes, *order);
    if (same_layout(sizes, std::vector<int64_t>(t.strides().begin(), t.strides().end()), want)) return t;
    return at::empty_strided(sizes, want, t.options()).copy_(t);
  }

  // torch.export's runtime assertion on an unbacked (data-dependent) value that does not hold: recorded and run
  // past (reference_layout.h says why). Any other assertion runs through libtorch's kernel, failing as torch does.
  bool runs_past_failed_assertion(const pt2::Node& node) const {
    const Argument* cond = node.input("self");
    const Argument* msg = node.input("assert_msg");
    if (!cond || !msg || !msg->is(pt2::ArgKind::as_string) || !is_scalar_kind(cond->kind())) return false;
    if (scalar_of(*cond).toBool()) return false;
    const auto expr = unbacked_assertion(msg->as_string());
    if (!expr) return false;
    ++failed_assertions_["runtime assertion `" + *expr + "` (node '" + node.name + "') failed"];
    return true;
  }

  // --- higher-order ops, interpreted: each subgraph runs in a child interpreter that sees the outer
  // symbolic scalars; its inputs are bound positionally, as torch passes them. ---
  std::vector<at::Tensor> run_subgraph(const pt2::Graph& graph, const std::vector<at::Tensor>& inputs) const {
    if (graph.inputs.size() != inputs.size())
      throw Error({"verify"}, "a subgraph takes " + std::to_string(graph.inputs.size()) + " inputs, " +
                                  std::to_string(inputs.size()) + " were given");
    Interpreter child(program_);
    child.graph_ = &graph;
    child.ints_ = ints_;
    child.floats_ = floats_;
    child.bools_ = bools_;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (graph.inputs[i].is_tensor())
        child.tensors_[graph.inputs[i].tensor_name()] = inputs[i];
      else if (inputs[i].defined())  // a number carried as a 0-d tensor (undefined: bound by the caller)
        child.bind_number(graph.inputs[i], inputs[i]);
    for (const auto& node : graph.nodes) {
      try {
        child.run_node(node);
      } catch (const Error& e) {
        throw e.with_context({"verify", program_.archive_path, node.name, node.target});
      }
    }
    for (const auto& [message, times] : child.failed_assertions_) failed_assertions_[message] += times;
    std::vector<at::Tensor> out;
    for (const auto& o : graph.outputs)
      out.push_back(o.is_tensor() ? child.tensor(o.tensor_name()) : child.number_tensor(o));
    return out;
  }

  std::vector<at::Tensor> tensor_list(const pt2::Node& node, size_t i) const {
    if (i >= node.inputs.size()) throw Error({"verify"}, "missing argument #" + std::to_string(i));
    const Argument& a = node.inputs[i].arg;
    std::vector<at::Tensor> out;
    if (a.is(pt2::ArgKind::as_tensors)) {
      // Strict captures may name an .item() symbol among the carried tensors.
      for (const auto& n : a.tensor_names())
        out.push_back(!tensors_.count(n) && ints_.count(n) ? at::scalar_tensor(ints_.at(n), at::kLong) : tensor(n));
    } else if (a.is(pt2::ArgKind::as_ints)) {  // numbers carried by a loop or passed to a branch: 0-d tensors
      for (int64_t v : a.as_ints()) out.push_back(at::scalar_tensor(v, at::kLong));
    } else if (a.is(pt2::ArgKind::as_sym_ints)) {
      for (const auto& v : a.typed().as_sym_ints()) out.push_back(at::scalar_tensor(sym_int(v), at::kLong));
    } else if (!a.is_none())
      throw Error({"verify"}, "argument #" + std::to_string(i) + " is not a tensor list: " + a.describe());
    return out;
  }

  static std::vector<at::Tensor> concat(std::vector<at::Tensor> a, const std::vector<at::Tensor>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }

  static bool truth(const at::Tensor& t) {
    if (t.numel() != 1) throw Error({"verify"}, "a predicate has " + std::to_string(t.numel()) + " elements, not 1");
    return t.item<bool>();
  }

  // Scan over axis 0 of `xs`: combine(carry..., x_t..., additional...) -> (carry..., y_t...); the ys are
  // stacked. map_impl is the carry-free case.
  std::vector<at::Tensor> scan(const pt2::Graph& combine, std::vector<at::Tensor> carry,
                               const std::vector<at::Tensor>& xs, const std::vector<at::Tensor>& additional,
                               size_t n_outputs) const {
    if (xs.empty()) throw Error({"verify"}, "a scan without scanned inputs");
    const int64_t steps = xs[0].size(0);
    std::vector<std::vector<at::Tensor>> ys(n_outputs - carry.size());
    for (int64_t t = 0; t < steps; ++t) {
      std::vector<at::Tensor> in = carry;
      for (const auto& x : xs) in.push_back(x.select(0, t));
      const auto out = run_subgraph(combine, concat(in, additional));
      if (out.size() != n_outputs)
        throw Error({"verify"}, "the combine graph returns " + std::to_string(out.size()) + " values");
      for (size_t k = 0; k < carry.size(); ++k) carry[k] = out[k];
      for (size_t k = 0; k < ys.size(); ++k) ys[k].push_back(out[carry.size() + k]);
    }
    if (steps == 0) throw Error({"verify"}, "a scan over a dimension of size 0 is not supported by the reference");
    for (auto& y : ys) carry.push_back(at::stack(y, 0));
    return carry;
  }

  void run_higher_order(const pt2::Node& node) {
    const std::string op = node.target.substr(std::string("torch.ops.higher_order.").size());
    // Parsed once per node, not per iteration of a loop or scan.
    auto graph_at = [&](size_t i) {
      if (i >= node.inputs.size() || !node.inputs[i].arg.is(pt2::ArgKind::as_graph))
        throw Error({"verify"}, "argument #" + std::to_string(i) + " is not a subgraph");
      return node.inputs[i].arg.subgraph();
    };
    size_t n_outputs = 0;
    for (const auto& o : node.outputs) n_outputs += o.is(pt2::ArgKind::as_tensors) ? o.tensor_names().size() : 1;
    std::vector<at::Tensor> results;
    if (op == "cond") {
      const Argument& pred = node.inputs.at(0).arg;
      const bool taken = pred.is_tensor() ? truth(tensor(pred.tensor_name())) : to_ivalue_bool(pred);
      results = run_subgraph(graph_at(taken ? 1 : 2), tensor_list(node, 3));
    } else if (op == "while_loop") {
      const auto additional = tensor_list(node, 3);
      const pt2::Graph cond = graph_at(0), body = graph_at(1);
      results = tensor_list(node, 2);
      while (truth(run_subgraph(cond, concat(results, additional)).at(0)))
        results = run_subgraph(body, concat(results, additional));
    } else if (op == "scan") {
      results = scan(graph_at(0), tensor_list(node, 1), tensor_list(node, 2), tensor_list(node, 3), n_outputs);
    } else if (op == "map_impl") {
      results = scan(graph_at(0), {}, tensor_list(node, 1), tensor_list(node, 2), n_outputs);
    } else if (op == "wrap_with_set_grad_enabled") {
      // (enabled, subgraph, args...): a no_grad()/enable_grad() region; the reference computes no gradients.
      // A symbolic argument (a sequence length) binds the region's formal symbol; the child sees it.
      const pt2::Graph& region = graph_at(1);
      std::vector<at::Tensor> args;
      for (size_t i = 2; i < node.inputs.size(); ++i) {
        const Argument& a = node.inputs[i].arg;
        const size_t k = i - 2;
        if (a.is_tensor()) {
          args.push_back(tensor(a.tensor_name()));
          continue;
        }
        if (!a.is_symbolic_scalar() || k >= region.inputs.size() || !region.inputs[k].is_symbolic_scalar())
          throw Error({"verify"},
                      "region argument #" + std::to_string(i) + " is not a tensor or symbolic scalar: " + a.describe());
        const std::string formal = region.inputs[k].symbol();
        if (a.is(pt2::ArgKind::as_sym_int))
          ints_[formal] = lookup(ints_, a.symbol());
        else if (a.is(pt2::ArgKind::as_sym_float))
          floats_[formal] = lookup(floats_, a.symbol());
        else
          bools_[formal] = lookup(bools_, a.symbol());
        args.push_back(at::Tensor());
      }
      results = run_subgraph(region, args);
    } else {
      throw Error({"verify"}, "the reference executor does not interpret higher-order op " + op + " yet");
    }
    std::vector<Argument> outs;  // one per value returned: a tensor, or a number (bound by its symbol)
    for (const auto& o : node.outputs) {
      if (o.is(pt2::ArgKind::as_tensors))
        for (const auto& n : o.tensor_names()) outs.push_back(Argument::tensor(n));
      else
        outs.push_back(o);
    }
    if (outs.size() != results.size())
      throw Error({"verify"}, op + " returned " + std::to_string(results.size()) + " values, the graph expects " +
                                  std::to_string(outs.size()));
    for (size_t i = 0; i < outs.size(); ++i) {
      if (outs[i].is_tensor())
        tensors_[outs[i].tensor_name()] = results[i];
      else if (results[i].defined())
        bind_number(outs[i], results[i]);
    }
  }

  bool to_ivalue_bool(const Argument& a) const {
    if (a.is(pt2::ArgKind::as_bool)) return a.as_bool();
    if (a.is(pt2::ArgKind::as_sym_bool)) return a.is_symbolic_scalar() ? lookup(bools_, a.symbol()) : a.as_bool();
    throw Error({"verify"}, std::string("a cond predicate of kind ") + a.kind_name() + " is not supported");
  }

  void bind_output(const Argument& out, const c10::IValue& v) {
    if (out.is(pt2::ArgKind::as_tensor)) {
      tensors_[out.tensor_name()] = v.toTensor();
    } else if (out.is(pt2::ArgKind::as_tensors)) {
      const auto list = v.toTensorVector();
      const auto names = out.tensor_names();
      if (list.size() != names.size()) throw Error({"verify"}, "operator returned a list of the wrong length");
      for (size_t i = 0; i < names.size(); ++i) tensors_[names[i]] = list[i];
    } else if (out.is_symbolic_scalar() && out.is(pt2::ArgKind::as_sym_int)) {
      ints_[out.symbol()] = v.isDouble() ? static_cast<int64_t>(v.toDouble()) : v.toInt();
    } else if (out.is_symbolic_scalar() && out.is(pt2::ArgKind::as_sym_float)) {
      floats_[out.symbol()] = v.toDouble();
    } else if (out.is_symbolic_scalar() && out.is(pt2::ArgKind::as_sym_bool)) {
      bools_[out.symbol()] = v.toBool();
    } else if (out.is(pt2::ArgKind::as_int) || out.is_none() || out.is(pt2::ArgKind::as_sym_int)) {
      // statically known or absent: nothing to bind
    } else {
      throw Error({"verify"},
                  "output of kind " + std::string(out.kind_name()) + " is not supported by the reference executor yet");
    }
  }

  const pt2::Program& program_;
  const pt2::Graph* graph_ = nullptr;  // the graph being run (the program's, or a subgraph): recorded layouts
  mutable std::map<std::string, int> failed_assertions_;  // note -> times, from this graph and its subgraphs
  std::map<std::string, at::Tensor> tensors_;
  std::map<std::string, const pt2::Node*> producers_;                // FX tensor -> its node (a substituted run's only)
  std::map<std::string, std::shared_ptr<MappedFile>> run_mappings_;  // archive path -> this run's mapping
  std::map<std::string, int64_t> ints_;
  std::map<std::string, double> floats_;
  std::map<std::string, bool> bools_;

  template <typename T>
  static T lookup(const std::map<std::string, T>& values, const std::string& name) {
    auto it = values.find(name);
    if (it == values.end()) throw Error({"verify"}, "symbolic scalar '" + name + "' is used before it is defined");
    return it->second;
  }
};

ReferenceResult run_libtorch(const pt2::Program& program, const std::vector<Tensor>& user_inputs,
                             bool keep_intermediates, const std::map<std::string, Tensor>* substitutes) {
  at::NoGradGuard no_grad;
  register_quantized_decomposed_ops();
  register_torchao_ops();
  register_transformers_ops();
  // Pages of read-only mappings that other stages touched (the exporter's view of the archive, refrt's
  // external data) go back to the page cache, so that the weights are resident once, not once per engine.
  MappedFile::release_all_pages();
  ReferenceResult result;
  {
    Interpreter interp(program);
    result = interp.run(user_inputs, keep_intermediates, substitutes);
  }
  MappedFile::release_all_pages();
  return result;
}

std::string torch_version() { return TORCH_VERSION; }

void load_library(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error({"reference", path}, "cannot load torch library (TORCH_LIBRARY custom ops): no such file");
  if (!dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
    const char* why = dlerror();
    throw Error({"reference", path},
                std::string("cannot load torch library (TORCH_LIBRARY custom ops): ") + (why ? why : "dlopen failed"));
  }
}

}  // namespace

}  // namespace parity::verify

extern "C" const parity::verify::ReferenceApi* parity_reference_api() {
  static const parity::verify::ReferenceApi api{parity::verify::run_libtorch, parity::verify::torch_version,
                                                parity::verify::load_library};
  return &api;
}
