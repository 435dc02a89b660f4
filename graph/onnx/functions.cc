#include "graph/onnx/functions.h"

#include <algorithm>
#include <map>
#include <utility>

#include <google/protobuf/unknown_field_set.h>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/onnx/subgraphs.h"
#include "graph/status_macros.h"

namespace placement::onnx_import {
namespace {

using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;

// Fields newer than the linked ONNX library, which its parser keeps as unknown fields.
constexpr int kNodeOverloadField = 8;             // NodeProto.overload (IR 10)
constexpr int kFunctionAttributeProtoField = 11;  // FunctionProto.attribute_proto (IR 9)
constexpr int kFunctionOverloadField = 13;        // FunctionProto.overload (IR 10)
constexpr size_t kMaxCallDepth = 64;

std::vector<std::string> UnknownStrings(const google::protobuf::Message& message, int field) {
  std::vector<std::string> values;
  const UnknownFieldSet& fields = message.GetReflection()->GetUnknownFields(message);
  for (int i = 0; i < fields.field_count(); ++i) {
    const UnknownField& f = fields.field(i);
    if (f.number() == field && f.type() == UnknownField::TYPE_LENGTH_DELIMITED) {
      values.push_back(f.length_delimited());
    }
  }
  return values;
}

std::string Overload(const google::protobuf::Message& message, int field) {
  std::vector<std::string> values = UnknownStrings(message, field);
  return values.empty() ? std::string() : values.back();
}

std::string Key(const std::string& domain, const std::string& name, const std::string& overload) {
  return absl::StrCat(domain == "ai.onnx" ? "" : domain, "\n", name, "\n", overload);
}

std::string Readable(const onnx::FunctionProto& f) {
  return f.domain().empty() ? f.name() : absl::StrCat(f.domain(), ".", f.name());
}

struct Function {
  const onnx::FunctionProto* proto = nullptr;
  std::vector<onnx::AttributeProto> defaults;  // IR 9 attribute_proto: attributes with default values
};

// Replaces attribute references (ref_attr_name) in a body node, and in the graphs nested in it, by the call's
// attribute of that name or the function's default; a reference to neither is dropped.
void ResolveAttributes(onnx::NodeProto* node, const onnx::NodeProto& call, const Function& fn) {
  auto* attributes = node->mutable_attribute();
  for (int i = 0; i < attributes->size();) {
    onnx::AttributeProto& a = *attributes->Mutable(i);
    if (a.ref_attr_name().empty()) {
      if (a.has_g()) {
        for (onnx::NodeProto& n : *a.mutable_g()->mutable_node()) ResolveAttributes(&n, call, fn);
      }
      for (onnx::GraphProto& g : *a.mutable_graphs()) {
        for (onnx::NodeProto& n : *g.mutable_node()) ResolveAttributes(&n, call, fn);
      }
      ++i;
      continue;
    }
    const onnx::AttributeProto* value = nullptr;
    for (const onnx::AttributeProto& given : call.attribute()) {
      if (given.name() == a.ref_attr_name()) value = &given;
    }
    for (const onnx::AttributeProto& d : fn.defaults) {
      if (value == nullptr && d.name() == a.ref_attr_name()) value = &d;
    }
    if (value == nullptr) {
      attributes->DeleteSubrange(i, 1);
      continue;
    }
    std::string name = a.name();
    a = *value;
    a.set_name(name);
    ++i;
  }
}

class Inliner {
 public:
  Inliner(onnx::ModelProto* model, int64_t max_nodes) : model_(*model), max_nodes_(max_nodes) {}

  absl::Status Collect(std::unordered_map<std::string, int>* opsets, std::vector<std::string>* warnings) {
    const int model_default = opsets->at("");
    for (const onnx::FunctionProto& f : model_.functions()) {
      Function fn{&f, {}};
      for (const std::string& bytes : UnknownStrings(f, kFunctionAttributeProtoField)) {
        onnx::AttributeProto a;
        if (!a.ParseFromString(bytes)) {
          return absl::InvalidArgumentError(
              absl::StrCat("function '", Readable(f), "' has a malformed attribute_proto"));
        }
        fn.defaults.push_back(std::move(a));
      }
      if (!functions_.emplace(Key(f.domain(), f.name(), Overload(f, kFunctionOverloadField)), fn).second) {
        return absl::InvalidArgumentError(absl::StrCat("function '", Readable(f), "' is defined twice"));
      }
      for (const onnx::OperatorSetIdProto& opset : f.opset_import()) {
        std::string domain = opset.domain() == "ai.onnx" ? "" : opset.domain();
        auto [it, added] = opsets->emplace(domain, static_cast<int>(opset.version()));
        if (!added && domain.empty() && it->second != opset.version()) {
          warnings->push_back(absl::StrCat("function '", Readable(f), "' imports opset ", opset.version(),
                                           " of ai.onnx; its nodes are read at the model's opset ", model_default));
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status Run() {
    // Nested calls multiply: the size is counted first, so that a model that would inline to billions of nodes
    // is refused at once rather than after filling the memory.
    const double size = ExpandedSize(model_.graph().node());
    if (size > static_cast<double>(max_nodes_)) {
      return absl::ResourceExhaustedError(absl::StrCat("inlining the model's functions makes ", size,
                                                       " nodes, more than ", max_nodes_, " (max_nodes)"));
    }
    ReserveNames(*model_.mutable_graph(), &names_);
    nodes_ = model_.graph().node_size();
    std::vector<std::string> chain;
    return InlineGraph(model_.mutable_graph(), &chain);
  }

 private:
  // Nodes the list holds once every call is inlined (nested graphs counted too); a call cycle counts as
  // infinite, which the inlining itself then reports by name.
  double ExpandedSize(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
    double total = 0;
    for (const onnx::NodeProto& node : nodes) {
      const Function* fn = Called(node);
      if (fn == nullptr) {
        total += 1;
        for (const onnx::AttributeProto& a : node.attribute()) {
          if (a.has_g()) total += ExpandedSize(a.g().node());
        }
        continue;
      }
      auto it = sizes_.find(fn);
      if (it == sizes_.end()) {
        sizes_[fn] = -1;  // being counted: a call back to it is a cycle, left for Place to report by name
        const double size = ExpandedSize(fn->proto->node());
        sizes_[fn] = size;
        total += size;
      } else {
        total += it->second < 0 ? 1 : it->second;
      }
    }
    return total;
  }

  const Function* Called(const onnx::NodeProto& node) const {
    auto it = functions_.find(Key(node.domain(), node.op_type(), Overload(node, kNodeOverloadField)));
    return it == functions_.end() ? nullptr : &it->second;
  }

  absl::Status InlineGraph(onnx::GraphProto* graph, std::vector<std::string>* chain) {
    bool any = false;
    for (const onnx::NodeProto& node : graph->node()) any = any || Called(node) != nullptr || HasSubgraph(node);
    if (!any) return absl::OkStatus();
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    nodes.Swap(graph->mutable_node());
    for (onnx::NodeProto& node : nodes) {
      absl::Status status = Place(&node, chain, graph->mutable_node());
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

  // Appends `node` to `out`, or the inlined body when it calls a function.
  absl::Status Place(onnx::NodeProto* node, std::vector<std::string>* chain,
                     google::protobuf::RepeatedPtrField<onnx::NodeProto>* out) {
    const Function* fn = Called(*node);
    if (fn == nullptr) {
      for (onnx::AttributeProto& a : *node->mutable_attribute()) {
        if (a.has_g()) {
          RETURN_IF_ERROR(InlineGraph(a.mutable_g(), chain));
        }
        for (onnx::GraphProto& g : *a.mutable_graphs()) {
          RETURN_IF_ERROR(InlineGraph(&g, chain));
        }
      }
      out->Add()->Swap(node);
      return absl::OkStatus();
    }
    const std::string key = Key(fn->proto->domain(), fn->proto->name(), Overload(*fn->proto, kFunctionOverloadField));
    if (std::find(chain->begin(), chain->end(), key) != chain->end() || chain->size() >= kMaxCallDepth) {
      std::vector<std::string> names;
      for (const std::string& k : *chain) names.push_back(Readable(*functions_.at(k).proto));
      names.push_back(Readable(*fn->proto));
      return absl::InvalidArgumentError(absl::StrCat(
          chain->size() >= kMaxCallDepth ? "function calls nest deeper than 64: " : "a function calls itself: ",
          absl::StrJoin(names, " -> ")));
    }
    nodes_ += fn->proto->node_size() - 1;
    if (nodes_ > max_nodes_) {
      return absl::ResourceExhaustedError(absl::StrCat("inlining the model's functions makes more than ", max_nodes_,
                                                       " nodes (at a call of '", Readable(*fn->proto), "')"));
    }
    absl::StatusOr<std::vector<onnx::NodeProto>> body = Instantiate(*node, *fn);
    if (!body.ok()) return body.status();
    chain->push_back(key);
    for (onnx::NodeProto& n : *body) {
      RETURN_IF_ERROR(Place(&n, chain, out));
    }
    chain->pop_back();
    return absl::OkStatus();
  }

  // The body of `fn` for one call: formal inputs and outputs replaced by the call's, the body's own tensors and
  // nodes renamed under the call's name, attribute references resolved.
  absl::StatusOr<std::vector<onnx::NodeProto>> Instantiate(const onnx::NodeProto& call, const Function& fn) {
    const onnx::FunctionProto& f = *fn.proto;
    const std::string prefix = call.name().empty() ? absl::StrCat(f.name(), "_", ++calls_) : call.name();
    std::unordered_map<std::string, std::string> renames;
    for (int i = 0; i < f.input_size(); ++i) renames[f.input(i)] = i < call.input_size() ? call.input(i) : "";
    for (int o = 0; o < f.output_size(); ++o) {
      bool bound = o < call.output_size() && !call.output(o).empty();
      renames[f.output(o)] = bound ? call.output(o) : names_.Fresh(absl::StrCat(prefix, "/", f.output(o)));
    }
    for (const onnx::NodeProto& n : f.node()) {
      for (const std::string& output : n.output()) {
        if (!output.empty() && renames.count(output) == 0) {
          renames[output] = names_.Fresh(absl::StrCat(prefix, "/", output));
        }
      }
    }
    std::vector<onnx::NodeProto> body(f.node().begin(), f.node().end());
    for (size_t k = 0; k < body.size(); ++k) {
      onnx::NodeProto& n = body[k];
      for (std::string& input : *n.mutable_input()) {
        if (input.empty()) continue;
        auto it = renames.find(input);
        if (it == renames.end()) {
          return absl::InvalidArgumentError(absl::StrCat("function '", Readable(f), "' node ", k, " (", n.op_type(),
                                                         ") reads '", input,
                                                         "', which is neither an input of the "
                                                         "function nor made in its body"));
        }
        input = it->second;
      }
      for (std::string& output : *n.mutable_output()) {
        if (!output.empty()) output = renames.at(output);
      }
      ResolveAttributes(&n, call, fn);
      for (onnx::AttributeProto& a : *n.mutable_attribute()) {
        if (a.has_g()) RenameCaptured(a.mutable_g(), renames);
        for (onnx::GraphProto& g : *a.mutable_graphs()) RenameCaptured(&g, renames);
      }
      n.set_name(absl::StrCat(prefix, "/", n.name().empty() ? absl::StrCat(n.op_type(), "_", k) : n.name()));
    }
    return body;
  }

  onnx::ModelProto& model_;
  const int64_t max_nodes_;
  std::map<std::string, Function> functions_;
  NameTable names_;
  std::unordered_map<const Function*, double> sizes_;  // ExpandedSize of each function's body
  int64_t nodes_ = 0;
  int64_t calls_ = 0;
};

}  // namespace

absl::Status InlineFunctions(onnx::ModelProto* model, int64_t max_nodes, std::unordered_map<std::string, int>* opsets,
                             std::vector<std::string>* warnings) {
  if (model->functions_size() == 0) return absl::OkStatus();
  Inliner inliner(model, max_nodes);
  RETURN_IF_ERROR(inliner.Collect(opsets, warnings));
  return inliner.Run();
}

}  // namespace placement::onnx_import
