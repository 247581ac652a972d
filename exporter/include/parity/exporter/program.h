// In-memory form of a torch.export program read from a PT2 archive (schema major 8).
// Arguments keep their one-key JSON union form ({"as_tensor": {...}}); accessors interpret them.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parity/tensor.h"

namespace parity::pt2 {

using json = nlohmann::json;

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

// A node argument: the kind (the union key, e.g. "as_tensor") and its JSON payload.
struct Argument {
  std::string kind;
  json value;

  bool is_none() const { return kind == "as_none" || kind.empty(); }
  bool is_tensor() const { return kind == "as_tensor"; }
  std::string tensor_name() const;                   // as_tensor (throws otherwise)
  std::vector<std::string> tensor_names() const;     // as_tensors
  std::vector<std::optional<std::string>> optional_tensor_names() const;  // as_optional_tensors
  int64_t as_int() const;                            // as_int, or a static as_sym_int
  std::vector<int64_t> as_ints() const;              // as_ints
  double as_float() const;                           // as_float or as_int
  bool as_bool() const;
  std::string describe() const;                      // short text for error messages
};

struct NamedArgument {
  std::string name;
  Argument arg;
  int kind = 0;  // 1 positional, 2 keyword
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
  std::map<std::string, json> sym_int_values;
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
  enum class Kind { kUserOutput, kLossOutput, kBufferMutation, kGradientToParameter, kGradientToUserInput,
                    kUserInputMutation, kToken, kParameterMutation };
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

// A graph of the export schema (the root graph or a higher-order op's subgraph, e.g. a cond branch).
Graph parse_graph(const json& j);

// Reads and validates a PT2 archive written by torch.export.save. Throws parity::Error.
Program read_pt2(const std::string& path);

// The export schema's ScalarType number -> Parity dtype (kUndefined when Parity cannot store it).
DType dtype_from_torch(int32_t torch_scalar_type);
// Sympy srepr ("Symbol('s0', integer=True)") -> plain form ("s0"); plain text is returned as is.
std::string simplify_sym_expr(const std::string& expr);

}  // namespace parity::pt2
