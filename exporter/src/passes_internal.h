// Internal: graph helpers shared by the exporter's pass files (passes.cc, passes_fuse.cc).
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "passes.h"

namespace parity::exporter::pass_detail {

using Names = std::set<std::string>;
using Renames = std::map<std::string, std::string>;  // old value name -> the value read instead

bool default_domain(const onnx::NodeProto& n);
std::vector<const onnx::GraphProto*> subgraphs(const onnx::NodeProto& n);
std::vector<onnx::GraphProto*> subgraphs(onnx::NodeProto& n);
Names defined_names(const onnx::GraphProto& g);
Names output_names(const onnx::GraphProto& g);
// Every value a node reads: its explicit inputs, then the outer values its subgraphs read.
std::vector<std::string> node_reads(const onnx::NodeProto& n);
// How often each value is read in `g`; a graph output counts as a read.
std::map<std::string, int> read_counts(const onnx::GraphProto& g);
// Value name -> index of the node producing it.
std::map<std::string, int> producers(const onnx::GraphProto& g);
void rename(std::string& name, const Renames& renames);
// Applies `renames` to every read in `g` and its nested subgraphs (outputs of `g` too when asked).
void rename_reads(onnx::GraphProto& g, const Renames& renames, bool outputs_too);
void collect_nested_outputs(const onnx::GraphProto& g, Names& out);
// Names no pass may rename away or merge into another (see passes.h).
Names protected_names(const onnx::GraphProto& g, const OptimizeOptions& options);
// The narrower set the cleanup rewrites keep: graph inputs and outputs, nested outputs and the caller's
// protected names. A name protected only by its value_info (an FX intermediate) may vanish when its
// node is merged into another or is an alias: the verifier skips FX values without an ONNX value.
Names identity_keep(const onnx::GraphProto& g, const OptimizeOptions& options);
int erase_nodes(onnx::GraphProto& g, const std::vector<bool>& drop);
void make_identity(onnx::NodeProto& n, const std::string& input);

// Removes the elements for which drop(element, original index) holds, keeping the others' order.
template <typename T, typename Drop>
int erase_if(google::protobuf::RepeatedPtrField<T>* field, Drop drop) {
  const int size = field->size();
  int kept = 0;
  for (int i = 0; i < size; ++i) {
    if (drop(field->Get(i), i)) continue;  // swaps below only touch positions < i
    if (kept != i) field->SwapElements(kept, i);
    ++kept;
  }
  field->DeleteSubrange(kept, size - kept);
  return size - kept;
}

}  // namespace parity::exporter::pass_detail
