// In-memory form of a torch.export program read from a PT2 archive (schema major 8).
// The JSON of the archive is read into the schema's own types (schema::*, generated at build time from the
// schema.yaml of the installed torch); this header adds what the exporter needs on top: dtypes Parity can
// store, symbolic sizes in plain form, and accessors that explain what was expected when a kind is wrong.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "parity/exporter/pt2_schema.h"
#include "parity/tensor.h"

namespace parity::pt2 {

// One dimension of a tensor: a static size or a symbolic expression (sympy srepr or plain form).
struct SymDim {
  std::optional<int64_t> value;  // set when static
  std::string expr;              // e.g. "s77" or "s77 + 1" (srepr already simplified) when symbolic
  int64_t hint = -1;             // example value seen at capture, when known
};

struct TensorMeta {
  DType dtype = DType::kUndefined;
  int32_t torch_dtype = 0;  // the export schema's ScalarType number, for messages
  std::vector<SymDim> sizes;
  std::vector<int64_t> strides;  // empty when symbolic
  int64_t storage_offset = 0;
};

struct Graph;
using ArgKind = schema::Argument::Kind;

// A node argument: one alternative of the schema's Argument union, with the lenient accessors translations
// use (as_int() also takes a static SymInt, as_float() an int). A wrong kind throws an Error saying what
// was expected and what was found.
class Argument {
 public:
  Argument() = default;  // unset: an absent optional argument
  Argument(schema::Argument a) : a_(std::move(a)) {}
  static Argument tensor(const std::string& name);  // {"as_tensor": {"name": name}}

  const schema::Argument& typed() const { return a_; }
  ArgKind kind() const { return a_.kind(); }
  bool is(ArgKind k) const { return a_.kind() == k; }
  const char* kind_name() const { return a_.kind_name(); }  // "as_tensor"
  bool is_none() const { return is(ArgKind::as_none) || is(ArgKind::unset); }
  bool is_tensor() const { return is(ArgKind::as_tensor); }
  // A SymInt/SymFloat/SymBool argument (or list element) that names a symbol rather than holding a value.
  bool is_symbolic_scalar() const;
  // An int, float or bool argument: a constant or a symbol (SymInt / SymFloat / SymBool).
  bool is_number() const;

  std::string tensor_name() const;                                        // as_tensor (throws otherwise)
  std::vector<std::string> tensor_names() const;                          // as_tensors
  std::vector<std::optional<std::string>> optional_tensor_names() const;  // as_optional_tensors (or as_tensors)
  int64_t as_int() const;                                                 // as_int, or a static as_sym_int
  std::vector<int64_t> as_ints() const;                                   // as_ints, or as_sym_ints that are all static
  double as_float() const;                                                // as_float, as_int, or a static as_sym_float
  std::vector<double> as_floats() const;                                  // as_floats
  size_t list_length() const;            // the length of any list kind (as_ints, as_tensors, ...)
  bool as_bool() const;                  // as_bool, or a static as_sym_bool
  const std::string& as_string() const;  // as_string
  std::string symbol() const;            // the symbol of a symbolic as_sym_int/float/bool
  Graph subgraph() const;                // as_graph, as a Parity graph
  std::string value_text() const;        // the value alone, short: "3", "[1, 2]", "x_1"
  std::string describe() const;          // kind and value, for error messages

 private:
  [[noreturn]] void wrong_kind(const char* wanted) const;
  schema::Argument a_;
};

struct NamedArgument {
  std::string name;
  Argument arg;
  schema::ArgumentKind kind = schema::ArgumentKind::UNKNOWN;  // positional or keyword
};

struct Node {
  std::string name;
  std::string target;  // "torch.ops.aten.linear.default"
  std::vector<NamedArgument> inputs;
  std::vector<Argument> outputs;
  std::map<std::string, std::string> metadata;  // stack_trace, nn_module_stack, torch_fn, ...

  const Argument* input(const std::string& name) const;  // nullptr when absent (the schema default)
  std::string stack_trace() const;
};

struct Graph {
  std::vector<Argument> inputs;
  std::vector<Argument> outputs;
  std::vector<Node> nodes;
  std::map<std::string, TensorMeta> tensor_values;
  std::map<std::string, schema::SymInt> sym_int_values;
  const TensorMeta& meta(const std::string& tensor, const std::string& where) const;
};

// How a graph input is fed: a parameter, buffer, constant or a user input.
struct InputSpec {
  enum class Kind { kUserInput, kParameter, kBuffer, kTensorConstant, kCustomObj, kTokenInput, kConstantInput };
  Kind kind = Kind::kUserInput;
  Argument arg;        // the placeholder (as_tensor / as_int / ...)
  std::string target;  // parameter/buffer/constant FQN
  bool persistent = true;
};

struct OutputSpec {
  enum class Kind {
    kUserOutput,
    kLossOutput,
    kBufferMutation,
    kGradientToParameter,
    kGradientToUserInput,
    kUserInputMutation,
    kToken,
    kParameterMutation
  };
  Kind kind = Kind::kUserOutput;
  Argument arg;
  std::string target;
};

struct RangeConstraint {
  std::optional<int64_t> min, max;
};

struct Program {
  std::string archive_path;
  std::string model_name;  // "model"
  int schema_major = 0, schema_minor = 0;
  std::string torch_version;
  Graph graph;
  std::vector<InputSpec> input_specs;
  std::vector<OutputSpec> output_specs;
  std::map<std::string, RangeConstraint> range_constraints;  // symbol -> range
  std::map<std::string, std::string> dim_names;              // symbol -> user Dim name (parity_dims.json)
  std::map<std::string, Tensor> weights;                     // parameter/buffer FQN -> tensor
  std::map<std::string, Tensor> constants;                   // lifted constant name -> tensor
  std::string in_spec, out_spec;                             // pytree specs of the root module call
  std::vector<std::string> forward_arg_names;

  // The stored value of a parameter, buffer or tensor-constant input. torch.export.save keeps parameters
  // and persistent buffers with the weights, non-persistent buffers and lifted constants with the
  // constants; a missing entry is an Error naming the input and both records.
  const Tensor& stored_tensor(const InputSpec& spec) const;

  // User inputs (placeholder names) in flattened pytree order.
  std::vector<std::string> user_input_names() const;
  // The user's outputs in order: tensors and numbers (ints, floats, bools: symbols or constants, e.g. a
  // cond branch's int); None and other kinds are not outputs of the ONNX model.
  std::vector<Argument> user_outputs() const;
  // Their names, index for index: a tensor's FX name, a number's symbol, "" for a constant number.
  std::vector<std::string> user_output_names() const;
  // State the program mutates (buffers, parameters, user inputs): the FX value that holds the new state and
  // the ONNX output name it gets ("mutated_buffer.bn.running_mean", "mutated_input.x"). Functionalised
  // programs list them as output specs; training-IR programs write placeholders in place (then the FX
  // value is the placeholder itself, whose value after the graph is the new state).
  struct Mutation {
    std::string fx_value;
    std::string output_name;
  };
  std::vector<Mutation> mutations() const;
};

// An FX call target split once: "torch.ops.aten.relu_.default" -> {torch_ops, "aten", "relu_", "default"};
// "_operator.add" -> {false, "_operator", "add", ""}; "torch.ops.higher_order.cond" has no overload.
struct OpTarget {
  bool torch_ops = false;  // the target was "torch.ops.<ns>.<op>[.<overload>]"
  std::string ns, op, overload;

  static OpTarget parse(const std::string& fx_target);
  std::string key() const;        // the translation registry key: "aten::relu_.default", "higher_order::cond"
  std::string qualified() const;  // "aten.relu_.default" (the target without "torch.ops.")
  bool is_aten() const { return torch_ops && ns == "aten"; }
  // An aten op whose name ends in one underscore (relu_, add_; not __and__).
  bool is_in_place() const;
};

// An aten op whose result shares its input's storage (slice, view, transpose, split, ...): a write to either
// is seen through the other.
bool is_view_target(const std::string& fx_target);

// A graph of the export schema (the root graph or a higher-order op's subgraph, e.g. a cond branch).
Graph to_graph(const schema::Graph& g);
TensorMeta to_tensor_meta(const schema::TensorMeta& m);

// Reads and validates a PT2 archive written by torch.export.save. Throws parity::Error.
Program read_pt2(const std::string& path);

// The export schema's ScalarType number -> Parity dtype (kUndefined when Parity cannot store it).
DType dtype_from_torch(int32_t torch_scalar_type);
// Sympy srepr ("Symbol('s0', integer=True)") -> plain form ("s0"); plain text is returned as is.
std::string simplify_sym_expr(const std::string& expr);

}  // namespace parity::pt2
