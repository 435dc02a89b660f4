#include "graph/onnx/tests/test_models.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace placement::onnx_testing {

onnx::ModelProto NewModel(int opset) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("test");
  onnx::OperatorSetIdProto* op = model.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  model.mutable_graph()->set_name("g");
  return model;
}

void AddInput(onnx::ModelProto& model, const std::string& name, const std::vector<Dim>& dims, int32_t elem_type) {
  AddInput(*model.mutable_graph(), name, dims, elem_type);
}

void AddInput(onnx::GraphProto& graph, const std::string& name, const std::vector<Dim>& dims, int32_t elem_type) {
  onnx::ValueInfoProto* input = graph.add_input();
  input->set_name(name);
  onnx::TypeProto_Tensor* tensor = input->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (const Dim& d : dims) {
    onnx::TensorShapeProto_Dimension* dim = shape->add_dim();
    if (d.has_value) dim->set_dim_value(d.value);
    if (!d.param.empty()) dim->set_dim_param(d.param);
  }
}

void AddOutput(onnx::ModelProto& model, const std::string& name) { AddOutput(*model.mutable_graph(), name); }

void AddOutput(onnx::GraphProto& graph, const std::string& name) { graph.add_output()->set_name(name); }

onnx::NodeProto& AddNode(onnx::ModelProto& model, const std::string& op_type, std::vector<std::string> inputs,
                         std::vector<std::string> outputs, const std::string& name) {
  return AddNode(*model.mutable_graph(), op_type, std::move(inputs), std::move(outputs), name);
}

onnx::NodeProto& AddNode(onnx::GraphProto& graph, const std::string& op_type, std::vector<std::string> inputs,
                         std::vector<std::string> outputs, const std::string& name) {
  onnx::NodeProto* node = graph.add_node();
  node->set_op_type(op_type);
  node->set_name(name);
  for (const std::string& i : inputs) node->add_input(i);
  for (const std::string& o : outputs) node->add_output(o);
  return *node;
}

onnx::TensorProto& AddInitializer(onnx::ModelProto& model, const std::string& name, std::vector<int64_t> dims,
                                  int32_t elem_type) {
  onnx::TensorProto* t = model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(elem_type);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  int64_t size = elem_type == onnx::TensorProto::INT64 || elem_type == onnx::TensorProto::DOUBLE ? 8
                 : elem_type == onnx::TensorProto::FLOAT16                                       ? 2
                                                                                                 : 4;
  t->set_raw_data(std::string(static_cast<size_t>(n * size), '\0'));
  return *t;
}

onnx::TensorProto& AddInt64s(onnx::ModelProto& model, const std::string& name, std::vector<int64_t> values) {
  onnx::TensorProto* t = model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
  return *t;
}

void SetInt(onnx::NodeProto& node, const std::string& name, int64_t value) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

void SetInts(onnx::NodeProto& node, const std::string& name, std::vector<int64_t> values) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

onnx::NodeProto& AddScalar(onnx::GraphProto& graph, const std::string& output, int64_t value, int32_t elem_type) {
  onnx::NodeProto& node = AddNode(graph, "Constant", {}, {output}, output);
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(elem_type);
  if (elem_type == onnx::TensorProto::INT64)
    a->mutable_t()->add_int64_data(value);
  else
    a->mutable_t()->add_int32_data(static_cast<int32_t>(value));
  return node;
}

onnx::GraphProto& AddGraph(onnx::NodeProto& node, const std::string& attribute) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(attribute);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(attribute);
  return *a->mutable_g();
}

void SetFloat(onnx::NodeProto& node, const std::string& name, float value) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(value);
}

void SetString(onnx::NodeProto& node, const std::string& name, const std::string& value) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

std::string Serialize(const onnx::ModelProto& model) {
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

absl::StatusOr<OnnxImportResult> Import(const onnx::ModelProto& model, const OnnxImportOptions& options) {
  return ImportOnnxBytes(Serialize(model), options);
}

int64_t OutputBytes(const Graph& graph, const std::string& op, int k) {
  const OpId id = graph.FindOp(op);
  return id == kNone || k >= graph.num_outputs(id) ? -1 : graph.tensor(graph.first_output(id) + k).bytes;
}

namespace {

onnx::FunctionProto& AddCustomFunction(onnx::ModelProto& model, const std::string& name, const std::string& output) {
  bool imported = false;
  for (const onnx::OperatorSetIdProto& o : model.opset_import()) imported = imported || o.domain() == "custom";
  if (!imported) {
    onnx::OperatorSetIdProto* custom = model.add_opset_import();
    custom->set_domain("custom");
    custom->set_version(1);
  }
  onnx::FunctionProto* f = model.add_functions();
  f->set_name(name);
  f->set_domain("custom");
  f->add_input("a");
  f->add_output(output);
  return *f;
}

onnx::NodeProto& AddFunctionNode(onnx::FunctionProto& f, const std::string& op_type, const std::string& domain,
                                 const std::string& input, const std::string& output) {
  onnx::NodeProto* n = f.add_node();
  n->set_op_type(op_type);
  n->set_domain(domain);
  n->add_input(input);
  n->add_output(output);
  return *n;
}

}  // namespace

void AddSelfCallingFunction(onnx::ModelProto& model) {
  AddFunctionNode(AddCustomFunction(model, "Loopy", "b"), "Loopy", "custom", "a", "b");
}

void AddDoublingFunctions(onnx::ModelProto& model, int levels) {
  for (int level = 0; level < levels; ++level) {
    onnx::FunctionProto& f = AddCustomFunction(model, "F" + std::to_string(level), "c");
    const std::string callee = level == 0 ? "Relu" : "F" + std::to_string(level - 1);
    const std::string domain = level == 0 ? "" : "custom";
    AddFunctionNode(f, callee, domain, "a", "b");
    AddFunctionNode(f, callee, domain, "b", "c");
  }
}

onnx::ModelProto NonZeroModel() {
  onnx::ModelProto m = NewModel(17);
  AddInput(m, "scores", {"batch", 100});
  AddInitializer(m, "threshold", {});
  AddNode(m, "Greater", {"scores", "threshold"}, {"mask"}, "mask");
  AddNode(m, "NonZero", {"mask"}, {"hits"}, "nonzero");
  AddOutput(m, "hits");
  return m;
}

}  // namespace placement::onnx_testing
