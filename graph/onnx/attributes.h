// Reading node attributes by name, with the value to use when the attribute is absent.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace placement::onnx_import {

inline const onnx::AttributeProto* FindAttr(const onnx::NodeProto& node, const char* name) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

inline int64_t IntAttr(const onnx::NodeProto& node, const char* name, int64_t fallback) {
  const onnx::AttributeProto* a = FindAttr(node, name);
  return a != nullptr && a->has_i() ? a->i() : fallback;
}

inline float FloatAttr(const onnx::NodeProto& node, const char* name, float fallback) {
  const onnx::AttributeProto* a = FindAttr(node, name);
  return a != nullptr && a->has_f() ? a->f() : fallback;
}

inline std::string StringAttr(const onnx::NodeProto& node, const char* name, const std::string& fallback) {
  const onnx::AttributeProto* a = FindAttr(node, name);
  return a != nullptr && a->has_s() ? a->s() : fallback;
}

inline std::vector<int64_t> IntsAttr(const onnx::NodeProto& node, const char* name) {
  const onnx::AttributeProto* a = FindAttr(node, name);
  return a == nullptr ? std::vector<int64_t>() : std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

}  // namespace placement::onnx_import
