// Recognizing a Hugging Face transformer in an ONNX export, so that an exported model can be planned layer by
// layer as its config.json is (graph/transformer_spec.h).
//
// The family and the embeddings come from the parameter names both PyTorch exporters keep for the tensors they
// read unchanged (any prefix before them, e.g. a wrapper's "m."):
//   bert   ...embeddings.word_embeddings.weight [vocab, hidden], ...position_embeddings, ...token_type_embeddings,
//          layers ...encoder.layer.N.
//   gpt2   ...wte.weight [vocab, hidden], ...wpe.weight [positions, hidden], layers ...h.N.
//   llama  ...embed_tokens.weight [vocab, hidden], layers ...layers.N. (Mistral and Qwen2 export the same names)
// Everything inside a layer comes from the graph (transformer_trace.h), since exports rename transposed weights
// and merge equal ones: the first attention's q, k and v projections and the Softmax between them give the heads
// (the Softmax's input [batch, heads, q, k], else the q side's Reshape), head_dim (q's width / heads) and the
// key/value heads (k's width / head_dim); the MLP after it gives its kind (one up projection or two), width and
// activation; a projection to the vocabulary after the last layer is the head.
#pragma once

#include <optional>
#include <string>
#include <unordered_set>

#include <onnx/onnx_pb.h>

#include "graph/onnx/infer_shapes.h"
#include "graph/transformer_spec.h"

namespace placement::onnx_import {

// The transformer `graph` computes, or nullopt when it is not one of the families above or its layers do not
// add up (widths that do not match, heads that do not divide the width). Never an error: most models are not
// transformers. `shapes` are the graph's inferred shapes, `weight_inputs` the graph inputs that hold weights.
//
// What the export cannot say is taken from the family, as the config's defaults would be: the layer count is
// the number of distinct layer indices in the names, or the attentions found where merged weights hid some;
// the norm is RMS where weight-only norms are named *norm* (or no LayerNormalization runs and the family uses
// RMSNorm); the head is tied when it reads the embedding, or holds the transposed embedding's bytes inline, and
// otherwise untied, except that a head whose weights are external data is taken as the family's default (tied
// for bert and gpt2, untied for llama). A model without a head counts as tied: it has no separate output layer.
std::optional<TransformerSpec> RecognizeTransformer(const onnx::GraphProto& graph, const InferredShapes& shapes,
                                                    const std::unordered_set<std::string>& weight_inputs);

}  // namespace placement::onnx_import
