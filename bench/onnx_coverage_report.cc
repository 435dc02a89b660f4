// The coverage table of docs/onnx.md: every model scripts/onnx_coverage.py exported (its MANIFEST.tsv) imported
// as an inference graph; a row per architecture with how many of its exports import, and for the newest opset
// (folding on) the operators it becomes, the median import time and the assumptions it warns of.
//
//   build/bench/onnx_coverage_report --dir build/onnx_coverage [--repeats 5] [--dim height=320 --dim width=320]
//
// Prints a Markdown table on stdout; every export that fails to import, with why, on stderr.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "graph/onnx/onnx_import.h"

ABSL_FLAG(std::string, dir, "build/onnx_coverage", "folder with the exported models and their MANIFEST.tsv");
ABSL_FLAG(int32_t, repeats, 5, "imports per model; the median time is reported");
ABSL_FLAG(std::vector<std::string>, dim, std::vector<std::string>({"height=320", "width=320"}),
          "NAME=VALUE bound in every model");

namespace {

using placement::ImportOnnxFile;
using placement::OnnxImportOptions;
using placement::OnnxImportResult;

// What a warning is about, for the table: "data" (a size the data decides), "branch" (an If on data),
// "loop" (a trip count assumed or a body kept whole), "type" (an input type the schema does not list), "other".
std::string Kind(const std::string& warning) {
  if (warning.find("depends on the data") != std::string::npos) return "data";
  if (warning.find("both branches") != std::string::npos) return "branch";
  if (warning.find("iterations") != std::string::npos) return "loop";
  if (warning.find("schema does not list") != std::string::npos) return "type";
  return "other";
}

std::string Summary(const std::vector<std::string>& warnings) {
  std::map<std::string, int> kinds;
  for (const std::string& w : warnings) ++kinds[Kind(w)];
  std::vector<std::string> parts;
  for (const auto& [kind, n] : kinds) parts.push_back(absl::StrCat(n, " ", kind));
  return parts.empty() ? "none" : absl::StrJoin(parts, ", ");
}

struct Architecture {
  std::string family;
  int exported = 0;
  int imported = 0;
  std::string reference;  // the opset-17, folding-on figures (else the newest opset exported)
  int reference_opset = 0;
  std::vector<std::string> refused;
};

double MedianMs(const std::string& path, const OnnxImportOptions& options, int repeats,
                absl::StatusOr<OnnxImportResult>* result) {
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    *result = ImportOnnxFile(path, options);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    if (!result->ok()) break;
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// One exported file (a MANIFEST.tsv row: file, architecture, family, opset, folding, ..., status).
void Add(const std::vector<std::string>& cols, const OnnxImportOptions& options, int repeats,
         std::map<std::string, Architecture>* table) {
  Architecture& a = (*table)[cols[1]];
  a.family = cols[2];
  ++a.exported;
  absl::StatusOr<OnnxImportResult> result;
  const double ms = MedianMs(absl::StrCat(absl::GetFlag(FLAGS_dir), "/", cols[0]), options, repeats, &result);
  if (!result.ok()) {
    a.refused.push_back(absl::StrCat("opset ", cols[3], " folding ", cols[4], ": ", result.status().message()));
    return;
  }
  ++a.imported;
  int opset = 0;
  (void)absl::SimpleAtoi(cols[3], &opset);
  const int rank = opset * 2 + (cols[4] == "on" ? 1 : 0);
  if (rank <= a.reference_opset) return;
  a.reference_opset = rank;
  a.reference =
      absl::StrFormat("%d | %d | %.1f ms | %s", opset, result->problem.graph.num_ops(), ms, Summary(result->warnings));
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  OnnxImportOptions options;
  for (const std::string& item : absl::GetFlag(FLAGS_dim)) {
    std::vector<std::string> kv = absl::StrSplit(item, '=');
    int64_t value = 0;
    if (kv.size() != 2 || !absl::SimpleAtoi(kv[1], &value)) {
      std::cerr << "--dim '" << item << "' is not NAME=VALUE\n";
      return 2;
    }
    options.dims[kv[0]] = value;
  }
  std::ifstream manifest(absl::StrCat(absl::GetFlag(FLAGS_dir), "/MANIFEST.tsv"));
  if (!manifest) {
    std::cerr << "no MANIFEST.tsv in " << absl::GetFlag(FLAGS_dir) << ": run scripts/onnx_coverage.py first\n";
    return 1;
  }
  std::map<std::string, Architecture> table;
  bool warm = false;
  std::string line;
  while (std::getline(manifest, line)) {
    std::vector<std::string> cols = absl::StrSplit(line, '\t');
    if (line.empty() || line[0] == '#' || cols.size() < 11 || cols[0] == "file" || cols[10] != "ok") continue;
    if (!warm) {  // the first import also builds the ONNX library's schema registry: not timed
      (void)ImportOnnxFile(absl::StrCat(absl::GetFlag(FLAGS_dir), "/", cols[0]), options);
      warm = true;
    }
    Add(cols, options, std::max(1, absl::GetFlag(FLAGS_repeats)), &table);
  }
  std::cout << "| architecture | family | imported / exported | opset (folding on) | operators | import | "
               "warnings |\n|---|---|---:|---:|---:|---:|---|\n";
  for (const auto& [name, a] : table) {
    std::cout << "| " << name << " | " << a.family << " | " << a.imported << " / " << a.exported << " | "
              << (a.reference.empty() ? "– | – | – | –" : a.reference) << " |\n";
  }
  for (const auto& [name, a] : table) {
    for (const std::string& why : a.refused) std::cerr << name << " " << why << "\n";
  }
  return 0;
}
