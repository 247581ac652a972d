// Einsum, general form: explicit or implicit output, repeated labels (diagonals), ellipsis
// broadcasting. Computed by one contraction loop over every label (correctness first, not speed):
// floats accumulate in double, integers in wrapping uint64, and the sum is rounded once per output.
#include <algorithm>
#include <array>
#include <map>

#include "../src/dispatch.h"
#include "../src/kernel.h"

namespace parity::refrt {
namespace {

constexpr int kLetters = 52;  // 'A'..'Z' = 0..25, 'a'..'z' = 26..51 (ASCII order); ellipsis dims follow

struct Term {
  std::vector<int> letters;  // labels in order, with kEllipsis where "..." stands
  bool has_ellipsis = false;
};
constexpr int kEllipsis = -1;

Term parse_term(const NodeDef& node, const std::string& s) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.') {
      if (s.compare(i, 3, "...") != 0 || t.has_ellipsis)
        node.fail("equation term '" + s + "' has a malformed ellipsis");
      t.has_ellipsis = true;
      t.letters.push_back(kEllipsis);
      i += 2;
    } else if (c >= 'A' && c <= 'Z') {
      t.letters.push_back(c - 'A');
    } else if (c >= 'a' && c <= 'z') {
      t.letters.push_back(26 + c - 'a');
    } else {
      node.fail(std::string("equation has an invalid character '") + c + "'");
    }
  }
  return t;
}

struct Plan {
  std::vector<std::vector<int>> operand_labels;  // per operand, one label per dim (ellipsis dims expanded)
  std::vector<int> out_labels;
  std::map<int, int64_t> sizes;
};

Plan make_plan(const NodeDef& node, const std::string& equation, const std::vector<const Tensor*>& inputs) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<Term> terms;
  for (size_t begin = 0;;) {
    const size_t comma = lhs.find(',', begin);
    terms.push_back(
        parse_term(node, lhs.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin)));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  if (terms.size() != inputs.size())
    node.fail("equation '" + equation + "' has " + std::to_string(terms.size()) + " terms for " +
              std::to_string(inputs.size()) + " inputs");
  // Ellipsis dims: right-aligned across operands (numpy broadcasting), labels kLetters + j.
  int64_t ellipsis_rank = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    const int64_t named = static_cast<int64_t>(terms[k].letters.size()) - (terms[k].has_ellipsis ? 1 : 0);
    const int64_t rank = static_cast<int64_t>(inputs[k]->rank());
    if (terms[k].has_ellipsis ? rank < named : rank != named)
      node.fail("term " + std::to_string(k) + " of '" + equation + "' does not match input rank " +
                std::to_string(rank));
    if (terms[k].has_ellipsis) ellipsis_rank = std::max(ellipsis_rank, rank - named);
  }
  Plan plan;
  std::map<int, int> counts;
  for (size_t k = 0; k < terms.size(); ++k) {
    const Tensor& x = *inputs[k];
    std::vector<int>& labels = plan.operand_labels.emplace_back();
    const int64_t e = static_cast<int64_t>(x.rank()) - static_cast<int64_t>(terms[k].letters.size()) + 1;
    for (int l : terms[k].letters) {
      if (l != kEllipsis) {
        labels.push_back(l);
        continue;
      }
      for (int64_t j = 0; j < e; ++j) labels.push_back(kLetters + static_cast<int>(ellipsis_rank - e + j));
    }
    for (size_t d = 0; d < labels.size(); ++d) {
      const int l = labels[d];
      const int64_t size = x.dim(d);
      auto [it, fresh] = plan.sizes.emplace(l, size);
      if (!fresh && it->second != size) {
        const bool broadcastable = l >= kLetters && (it->second == 1 || size == 1);
        if (!broadcastable)
          node.fail("label of input " + std::to_string(k) + " dim " + std::to_string(d) + " has size " +
                    std::to_string(size) + ", elsewhere " + std::to_string(it->second));
        it->second = std::max(it->second, size);
      }
    }
    for (int l : terms[k].letters)
      if (l != kEllipsis) ++counts[l];
  }
  if (arrow != std::string::npos) {
    const Term out = parse_term(node, eq.substr(arrow + 2));
    for (int l : out.letters) {
      if (l == kEllipsis) {
        for (int64_t j = 0; j < ellipsis_rank; ++j) plan.out_labels.push_back(kLetters + static_cast<int>(j));
        continue;
      }
      if (!counts.count(l)) node.fail("output label of '" + equation + "' appears in no input");
      if (std::count(plan.out_labels.begin(), plan.out_labels.end(), l))
        node.fail("output of '" + equation + "' repeats a label");
      plan.out_labels.push_back(l);
    }
  } else {  // implicit: ellipsis dims, then the labels seen once, in ASCII order
    for (int64_t j = 0; j < ellipsis_rank; ++j) plan.out_labels.push_back(kLetters + static_cast<int>(j));
    for (const auto& [l, n] : counts)
      if (n == 1) plan.out_labels.push_back(l);
  }
  return plan;
}

struct Float16Like {};  // tag: float16/bfloat16 storage, accumulated as floats

template <typename T>
using Acc = std::conditional_t<std::is_floating_point_v<T> || std::is_same_v<T, Float16Like>, double, uint64_t>;

template <typename T>
Acc<T> load(const Tensor& t, int64_t i) {
  if constexpr (std::is_same_v<T, Float16Like>) {
    const uint16_t bits = t.data<uint16_t>()[i];
    return t.dtype() == DType::kFloat16 ? half_to_float(bits) : bf16_to_float(bits);
  } else {
    return static_cast<Acc<T>>(t.data<T>()[i]);
  }
}

template <typename T>
void contract(const Plan& plan, const std::vector<const Tensor*>& inputs, Tensor& out, DType dtype) {
  // Loop labels: output labels (outer), then the summed ones (inner).
  std::vector<int> loop = plan.out_labels;
  for (const auto& [l, size] : plan.sizes)
    if (!std::count(loop.begin(), loop.end(), l)) loop.push_back(l);
  const size_t n_out = plan.out_labels.size(), n_loop = loop.size(), n_ops = inputs.size();
  Shape loop_sizes(n_loop);
  for (size_t i = 0; i < n_loop; ++i) loop_sizes[i] = plan.sizes.at(loop[i]);
  // Per operand and loop label, the element stride (summed over repeated labels: a diagonal; 0 where a
  // broadcast dim of size 1 meets a larger one).
  std::vector<std::vector<int64_t>> strides(n_ops, std::vector<int64_t>(n_loop, 0));
  for (size_t k = 0; k < n_ops; ++k) {
    const std::vector<int64_t> rs = row_major_strides(inputs[k]->shape());
    for (size_t d = 0; d < rs.size(); ++d) {
      const size_t i =
          static_cast<size_t>(std::find(loop.begin(), loop.end(), plan.operand_labels[k][d]) - loop.begin());
      if (inputs[k]->dim(d) != 1 || loop_sizes[i] == 1) strides[k][i] += rs[d];
    }
  }
  const int64_t out_count = out.numel();
  int64_t inner_count = 1;
  for (size_t i = n_out; i < n_loop; ++i) inner_count *= loop_sizes[i];
  std::vector<int64_t> index(n_loop, 0), offs(n_ops, 0);
  using A = Acc<T>;
  for (int64_t o = 0; o < out_count; ++o) {
    A sum = 0;
    if (inner_count > 0) {
      for (int64_t c = 0; c < inner_count; ++c) {
        A prod = 1;
        for (size_t k = 0; k < n_ops; ++k) prod = static_cast<A>(prod * load<T>(*inputs[k], offs[k]));
        sum = static_cast<A>(sum + prod);
        for (size_t i = n_loop; i-- > n_out;) {  // inner odometer
          for (size_t k = 0; k < n_ops; ++k) offs[k] += strides[k][i];
          if (++index[i] < loop_sizes[i]) break;
          for (size_t k = 0; k < n_ops; ++k) offs[k] -= strides[k][i] * index[i];
          index[i] = 0;
        }
      }
    }
    if constexpr (std::is_same_v<T, Float16Like>)
      out.data<uint16_t>()[o] =
          dtype == DType::kFloat16 ? float_to_half(static_cast<float>(sum)) : float_to_bf16(static_cast<float>(sum));
    else
      out.data<T>()[o] = static_cast<T>(sum);
    for (size_t i = n_out; i-- > 0;) {  // outer odometer
      for (size_t k = 0; k < n_ops; ++k) offs[k] += strides[k][i];
      if (++index[i] < loop_sizes[i]) break;
      for (size_t k = 0; k < n_ops; ++k) offs[k] -= strides[k][i] * index[i];
      index[i] = 0;
    }
  }
}

class EinsumKernel : public Kernel {
 public:
  explicit EinsumKernel(const NodeDef& node) : node_(node) {
    const Attribute* a = node.attr("equation", Attribute::Type::kString);
    if (!a) node.fail("missing required attribute 'equation'");
    equation_ = a->s;
  }
  void compute(KernelIO& io) const override {
    if (io.inputs.empty()) node_.fail("needs at least one input");
    std::vector<const Tensor*> inputs;
    for (size_t i = 0; i < io.inputs.size(); ++i) {
      inputs.push_back(&io.in(i));
      if (inputs.back()->dtype() != inputs[0]->dtype()) node_.fail("input dtypes differ");
    }
    const Plan plan = make_plan(node_, equation_, inputs);
    Shape out_shape;
    for (int l : plan.out_labels) out_shape.push_back(plan.sizes.at(l));
    const DType t = inputs[0]->dtype();
    Tensor out(t, out_shape);
    if (out.numel() > 0) {
      if (is_float16_like(t))
        contract<Float16Like>(plan, inputs, out, t);
      else if (!dispatch_numeric(t, [&](auto tag) { contract<decltype(tag)>(plan, inputs, out, t); }))
        node_.fail("dtype " + dtype_name(t) + " is not implemented", ErrorKind::kUnsupported);
    }
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  std::string equation_;
};

}  // namespace

// Einsum 12.
PARITY_KERNEL("Einsum", 12, EinsumKernel, kAllNumericTypes);

}  // namespace parity::refrt
