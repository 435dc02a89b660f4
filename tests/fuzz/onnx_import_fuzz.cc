// Fuzz target: the ONNX importer on arbitrary bytes (what a Place request's `onnx` field may hold).
#include <cstddef>
#include <cstdint>

#include "graph/onnx/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  placement::LooksLikeOnnx(bytes);
  placement::OnnxImportOptions options;  // no model_dir: external data is refused, as on the server
  options.max_nodes = 100000;            // a server's limit on operators bounds what an input may expand to
  (void)placement::ImportOnnxBytes(bytes, options);
  return 0;
}
