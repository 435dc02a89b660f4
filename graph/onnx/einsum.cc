#include "graph/onnx/einsum.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "absl/strings/str_split.h"

namespace placement::onnx_import {
namespace {

// Right-aligned broadcast of b into a (numpy rules); false when incompatible.
bool BroadcastInto(std::vector<int64_t>* a, const std::vector<int64_t>& b) {
  if (b.size() > a->size()) a->insert(a->begin(), b.size() - a->size(), 1);
  size_t offset = a->size() - b.size();
  for (size_t i = 0; i < b.size(); ++i) {
    int64_t& x = (*a)[offset + i];
    if (x != b[i] && x != 1 && b[i] != 1) return false;
    x = std::max(x, b[i]);
  }
  return true;
}

}  // namespace

std::optional<EinsumShape> AnalyzeEinsum(const std::string& equation,
                                         const std::vector<std::vector<int64_t>>& operands) {
  std::string eq;
  for (char c : equation) {
    if (c != ' ') eq += c;
  }
  size_t arrow = eq.find("->");
  std::vector<std::string> terms = absl::StrSplit(eq.substr(0, arrow), ',');
  if (terms.size() != operands.size()) return std::nullopt;
  std::map<char, int64_t> sizes;
  std::map<char, int> uses;
  std::vector<int64_t> ellipsis;
  for (size_t t = 0; t < terms.size(); ++t) {
    const std::string& term = terms[t];
    const std::vector<int64_t>& dims = operands[t];
    size_t dots = term.find("...");
    size_t letters = term.size() - (dots == std::string::npos ? 0 : 3);
    if (dims.size() < letters || (dots == std::string::npos && dims.size() != letters)) return std::nullopt;
    size_t d = 0;
    for (size_t c = 0; c < term.size(); ++c) {
      if (c == dots) {
        std::vector<int64_t> here(dims.begin() + d, dims.begin() + d + (dims.size() - letters));
        d += here.size();
        if (!BroadcastInto(&ellipsis, here)) return std::nullopt;
        c += 2;
        continue;
      }
      char label = term[c];
      if (!std::isalpha(static_cast<unsigned char>(label))) return std::nullopt;
      int64_t size = dims[d++];
      auto [it, inserted] = sizes.emplace(label, size);
      if (!inserted && it->second != size) {
        if (it->second != 1 && size != 1) return std::nullopt;
        it->second = std::max(it->second, size);
      }
      ++uses[label];
    }
  }
  EinsumShape shape;
  if (arrow != std::string::npos) {
    std::string out = eq.substr(arrow + 2);
    size_t dots = out.find("...");
    for (size_t c = 0; c < out.size(); ++c) {
      if (c == dots) {
        shape.output.insert(shape.output.end(), ellipsis.begin(), ellipsis.end());
        c += 2;
        continue;
      }
      auto it = sizes.find(out[c]);
      if (it == sizes.end()) return std::nullopt;
      shape.output.push_back(it->second);
    }
  } else {
    // Implicit form: the broadcast dims, then the labels used once, in alphabetical order.
    shape.output = ellipsis;
    for (const auto& [label, count] : uses) {
      if (count == 1) shape.output.push_back(sizes[label]);
    }
  }
  shape.iterations = 1;
  for (int64_t d : ellipsis) shape.iterations *= static_cast<double>(d);
  for (const auto& [label, size] : sizes) shape.iterations *= static_cast<double>(size);
  return shape;
}

}  // namespace placement::onnx_import
