// Every placectl command against the mistakes a command line makes: unknown and misspelt flags, each enumerated
// flag's bad value, numbers and durations out of range or not numbers at all, input files that are missing, folders,
// random bytes or empty, and a --dim the model has no symbol for. A usage error exits 2 naming the flag and the
// nearest valid spelling or the valid values; a bad input file exits 3 naming its path; nothing is quietly replaced
// by a default, and nothing is printed on stdout. The server commands' cases are refused before any connection
// (nothing listens on 127.0.0.1:1, so a case that got that far would exit 5).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/placectl_run.h"

namespace {

namespace fs = std::filesystem;
using placement::testing::PlacectlResult;
using placement::testing::RunPlacectl;
using ::testing::HasSubstr;

const std::string kSource = PLACEMENT_SOURCE_DIR;
const std::string kTiny = kSource + "/examples/graphs/tiny_pipeline.json";
const std::string kTinySplit = kSource + "/examples/placements/tiny_pipeline_split.json";
const std::string kVgg = kSource + "/tests/data/corpus/vgg16.onnx";
const std::string kNowhere = " --server 127.0.0.1:1";

// Files the cases read, in a folder of this process's own: a generated graph any cluster can run (its costs are
// FLOPs and bytes) and the four kinds of bad input.
class PlacectlFlagCatalogue : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("placectl_flag_catalogue_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "a_folder");
    const PlacectlResult chain = RunPlacectl("generate chain --ops 12");
    ASSERT_EQ(chain.exit_code, 0) << chain.err;
    std::ofstream(dir_ / "chain.json") << chain.out;
    std::ofstream(dir_ / "empty.json");
    std::mt19937 bytes(7);
    std::ofstream random(dir_ / "random.bin", std::ios::binary);
    random << '\xff';  // no format starts so
    for (int i = 0; i < 300; ++i) random << static_cast<char>(bytes() & 0xff);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static std::string Graph() { return (dir_ / "chain.json").string(); }
  // The bad inputs, by what is wrong with them.
  static std::vector<std::string> BadFiles() {
    return {(dir_ / "missing.json").string(), (dir_ / "a_folder").string(), (dir_ / "random.bin").string(),
            (dir_ / "empty.json").string()};
  }

  static fs::path dir_;
};

fs::path PlacectlFlagCatalogue::dir_;

struct Case {
  std::string args;
  std::vector<std::string> says;  // each is in stderr
};

void ExpectExit(int code, const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    const PlacectlResult r = RunPlacectl(c.args);
    EXPECT_EQ(r.exit_code, code) << "placectl " << c.args << "\n" << r.err;
    for (const std::string& s : c.says) EXPECT_THAT(r.err, HasSubstr(s)) << "placectl " << c.args;
    EXPECT_TRUE(r.out.empty()) << "placectl " << c.args << " printed " << r.out.substr(0, 200);
  }
}

// The commands `placectl help` lists: each has cases below, so a new one joins the catalogue.
TEST_F(PlacectlFlagCatalogue, EveryCommandIsCatalogued) {
  const PlacectlResult help = RunPlacectl("help");
  ASSERT_EQ(help.exit_code, 0);
  std::set<std::string> listed;
  std::istringstream lines(help.out);
  const std::regex command_line("^  ([a-z]+)( .*)?$");
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, command_line)) listed.insert(m[1]);
  }
  const std::set<std::string> catalogued = {"simulate", "place",   "memory",    "algorithms", "import",
                                            "generate", "presets", "calibrate", "train",      "curve",
                                            "submit",   "info",    "health",    "reload",     "bench"};
  EXPECT_EQ(listed, catalogued);
}

TEST_F(PlacectlFlagCatalogue, UnknownAndMisspeltFlagsAreUsageErrorsNamingTheNearestSpelling) {
  const std::string g = Graph();
  const std::vector<Case> cases = {
      {"simulate " + kTiny + " --placement " + kTinySplit + " --objectve latency",
       {"unknown flag --objectve; did you mean --objective?"}},
      {"place " + g + " --device 2xA100", {"unknown flag --device; did you mean --devices?"}},
      {"place " + g + " --batchsize 4", {"unknown flag --batchsize; did you mean --batch?"}},
      {"place " + g + " --objectve=latency", {"did you mean --objective?"}},
      {"place " + g + " --zzzqqq 1", {"unknown flag --zzzqqq", "place takes --", "--algorithm"}},
      {"memory " + g + " --optimiser sgd --training", {"did you mean --optimizer?"}},
      {"algorithms --polciy_device none", {"did you mean --policy_device?"}},
      {"import " + g + " --sq 64", {"did you mean --seq?"}},
      {"generate chain --op 10", {"did you mean --ops?"}},
      {"presets --verbose", {"unknown flag --verbose", "presets takes no flags"}},
      {"calibrate --thread 2", {"did you mean --threads?"}},
      {"train " + g + " --device 2xA100", {"did you mean --devices?"}},
      {"curve a.tsv b.svg --outt c", {"unknown flag --outt", "curve takes no flags"}},
      {"submit " + g + " --sever 127.0.0.1:1", {"did you mean --server?"}},
      {"bench " + g + kNowhere + " --concurency 2", {"did you mean --concurrency?"}},
      {"info" + kNowhere + " --outptu json", {"did you mean --output?"}},
      {"health" + kNowhere + " --timout 1s", {"did you mean --timeout?"}},
      {"reload" + kNowhere + " --wieghts w.pt", {"did you mean --weights?"}},
      // Known flags that the command does not take.
      {"import " + g + " --devices 2xA100", {"--devices does not apply to import", "import takes --"}},
      {"presets --deadline 5s", {"--deadline does not apply to presets", "presets takes no flags"}},
      {"health" + kNowhere + " --chart c.html", {"--chart does not apply to health"}},
  };
  ExpectExit(2, cases);
}

// Each flag that takes one of a few words: the flag named, with the nearest word or the words it takes.
TEST_F(PlacectlFlagCatalogue, BadValuesAreUsageErrorsNamingTheFlag) {
  const std::string g = Graph();
  const std::string simulate = "simulate " + kTiny + " --placement " + kTinySplit;
  const std::string place = "place " + g + " --devices 2xA100 --policy_device none";
  const std::string submit = "submit " + g + " --devices 2xA100" + kNowhere;
  const std::vector<Case> cases = {
      {simulate + " --objective step_tme", {"--objective", "did you mean step_time?"}},
      {simulate + " --output jsn", {"--output", "did you mean json?"}},
      {simulate + " --cost_model tarnawsky", {"--cost_model", "did you mean tarnawski?"}},
      {simulate + " --priority upward_rnk", {"--priority", "did you mean upward_rank?"}},
      {simulate + " --simulator placetoo", {"--simulator", "did you mean placeto?"}},
      {simulate + " --precision fp33", {"--precision", "did you mean fp32?"}},
      {simulate + " --training --optimizer adamw", {"--optimizer", "did you mean adam?"}},
      {simulate + " --local=maybe", {"--local", "true or false"}},
      {place + " --objective latncy", {"--objective", "did you mean latency?"}},
      {place + " --output yaml", {"--output", "table, json"}},
      {place + " --cost_model roofline", {"--cost_model", "default, tarnawski, pipedream"}},
      {place + " --parallelism pipelin", {"--parallelism", "did you mean pipeline?"}},
      {place + " --schedule 1f1c", {"--schedule", "did you mean 1f1b?"}},
      {place + " --sharding zero4", {"--sharding", "zero1", "fsdp"}},
      {place + " --recompute ful", {"--recompute", "did you mean full?"}},
      {place + " --algorithm hefty", {"--algorithm", "did you mean heft?"}},
      {place + " --algorithm simulated_guessing", {"--algorithm", "local_search", "auto"}},
      {"place " + g + " --devices 2xA100 --policy_device cudda", {"--policy_device", "did you mean cuda?"}},
      {place + " --devices 8xH1000", {"--devices", "8xH1000"}},
      {"memory " + g + " --output jsn", {"--output", "did you mean json?"}},
      {"memory " + g + " --training --optimizer sdg", {"--optimizer", "did you mean sgd?"}},
      {"memory " + g + " --precision bf61", {"--precision", "bf16"}},
      {"import " + g + " --precision amp_bf61", {"--precision", "did you mean amp_bf16?"}},
      {"algorithms --policy_device cpux", {"--policy_device", "did you mean cpu?"}},
      {"generate chian", {"'chian'", "did you mean chain?"}},
      {"generate mystery", {"'mystery'", "layered", "unet"}},
      {"train " + g + " --devices 2xA100 --training --optimizer adamm", {"--optimizer", "did you mean adam?"}},
      {submit + " --objective throughpt", {"--objective", "did you mean throughput?"}},
      {submit + " --output jsn", {"--output", "did you mean json?"}},
      {submit + " --cost_model pipedrem", {"--cost_model", "did you mean pipedream?"}},
      {submit + " --parallelism dta", {"--parallelism", "did you mean data?"}},
      {submit + " --schedule gpip", {"--schedule", "did you mean gpipe?"}},
      {submit + " --sharding fsdq", {"--sharding", "did you mean fsdp?"}},
      {submit + " --recompute nne", {"--recompute", "did you mean none?"}},
      {"bench " + g + kNowhere + " --output yml", {"--output", "table, json"}},
      {"info" + kNowhere + " --output jsn", {"--output", "did you mean json?"}},
      {"reload" + kNowhere + " --output jsn", {"--output", "did you mean json?"}},
  };
  ExpectExit(2, cases);
}

// Counts, fractions and durations: out of range, or not a number at all (absl's own report would exit 1).
TEST_F(PlacectlFlagCatalogue, BadNumbersAreUsageErrorsNamingTheFlag) {
  const std::string g = Graph();
  const std::string place = "place " + g + " --devices 2xA100 --policy_device none";
  const std::string onnx = "import " + kVgg;
  const std::string train = "train " + g + " --devices 2xA100";
  const std::vector<Case> cases = {
      {place + " --batch 0", {"--batch 0"}},
      {place + " --batch -4", {"--batch -4"}},
      {place + " --batch abc", {"--batch", "'abc'"}},
      {place + " --batch", {"--batch needs a value"}},
      {place + " --seq 0", {"--seq 0"}},
      {place + " --deadline 0s", {"--deadline", "'0s'"}},
      {place + " --deadline abc", {"--deadline", "'abc'"}},
      {place + " --global_batch -1", {"--global_batch -1"}},
      {place + " --micro_batch 0", {"--micro_batch 0"}},
      {place + " --seed abc", {"--seed", "'abc'"}},
      {place + " --seed -1", {"--seed", "'-1'"}},
      {onnx + " --num_data_inputs -5", {"--num_data_inputs -5"}},
      {onnx + " --loop_iterations -1", {"--loop_iterations -1"}},
      {onnx + " --max_unrolled_nodes -1", {"--max_unrolled_nodes -1"}},
      {onnx + " --training --backward_multiplier -1", {"--backward_multiplier -1"}},
      {onnx + " --dim batch=abc", {"--dim", "'batch=abc'"}},
      {"memory " + kVgg + " --batch 0", {"--batch 0"}},
      {"generate chain --ops 0", {"--ops 0"}},
      {"generate chain --ops -3", {"--ops -3"}},
      {"generate chain --width 0", {"--width 0"}},
      {"generate chain --batch 0", {"--batch 0"}},
      {"generate chain --seed abc", {"--seed", "'abc'"}},
      {"calibrate --threads 0", {"--threads 0"}},
      {"calibrate --measure_seconds 0", {"--measure_seconds 0"}},
      {train + " --threads 0", {"--threads 0"}},
      {train + " --iterations -1", {"--iterations -1"}},
      {train + " --validation_share 1.5", {"--validation_share 1.5"}},
      {train + " --time_limit abc", {"--time_limit", "'abc'"}},
      {train + " --learning_rate -1", {"--learning_rate -1"}},
      {"submit " + g + kNowhere + " --deadline abc", {"--deadline", "'abc'"}},
      {"submit " + g + kNowhere + " --global_batch -1", {"--global_batch -1"}},
      {"submit " + g + kNowhere + " --batch 0", {"--batch 0"}},
      {"bench " + g + kNowhere + " --concurrency 0", {"--concurrency 0"}},
      {"bench " + g + kNowhere + " --requests -1", {"--requests -1"}},
      {"bench " + g + kNowhere + " --duration 0s", {"--duration", "'0s'"}},
      {"bench " + g + kNowhere + " --unique_fraction 2", {"--unique_fraction 2"}},
      {"simulate " + kTiny + " --placement " + kTinySplit + kNowhere + " --timeout abc", {"--timeout", "'abc'"}},
      {"algorithms" + kNowhere + " --timeout 0s", {"--timeout", "'0s'"}},
      {"info" + kNowhere + " --timeout 0s", {"--timeout", "'0s'"}},
      {"health" + kNowhere + " --timeout abc", {"--timeout", "'abc'"}},
      {"reload" + kNowhere + " --timeout -1s", {"--timeout", "'-1s'"}},
  };
  ExpectExit(2, cases);
}

// Each file a command reads, as each kind of bad input: the path named, exit 3.
TEST_F(PlacectlFlagCatalogue, BadInputFilesExit3NamingThePath) {
  const std::string g = Graph();
  const std::vector<std::string> reads = {
      "simulate FILE --placement " + kTinySplit,
      "simulate " + kTiny + " --placement FILE",
      "place FILE --devices 2xA100 --algorithm single_device",
      "place " + g + " --topology FILE --algorithm single_device",
      "place " + g + " --devices 2xA100 --algorithm single_device --costs FILE",
      "memory FILE",
      "memory " + g + " --topology FILE",
      "import FILE",
      "curve FILE " + (fs::temp_directory_path() / "placectl_flag_catalogue_curve.svg").string(),
      "calibrate --measurements FILE",
      "submit FILE" + kNowhere,
      "submit " + g + " --devices 2xA100 --costs FILE" + kNowhere,
      "submit " + g + " --devices 2xA100 --tls_ca FILE" + kNowhere,
      "submit " + g + " --devices 2xA100 --tls_cert FILE --tls_key FILE" + kNowhere,
      "bench FILE" + kNowhere,
      "info --token_file FILE" + kNowhere,
      "reload --weights FILE" + kNowhere,
  };
  std::vector<Case> cases;
  for (const std::string& read : reads) {
    for (const std::string& file : BadFiles()) {
      std::string args = read;
      for (size_t at = args.find("FILE"); at != std::string::npos; at = args.find("FILE")) args.replace(at, 4, file);
      cases.push_back({args, {file}});
    }
  }
  // LibTorch's readers, in placectl-torch: the policy's weights, and train's graphs (a folder is a folder of them).
  const std::string missing = BadFiles()[0];
  const std::string random = BadFiles()[2];
  cases.push_back({"place " + g + " --devices 2xA100 --algorithm policy --policy_weights " + missing, {missing}});
  cases.push_back({"place " + g + " --devices 2xA100 --algorithm policy --policy_weights " + random, {random}});
  cases.push_back({"train " + missing + " --devices 2xA100 --iterations 1", {missing}});
  cases.push_back({"train " + random + " --devices 2xA100 --iterations 1", {random}});
  cases.push_back({"train " + BadFiles()[1] + " --devices 2xA100 --iterations 1", {BadFiles()[1]}});
  ExpectExit(3, cases);
}

// A --dim names a symbol of the model's inputs: any other is the command line's mistake, refused naming those the
// model has (and the nearest); the model itself is fine.
TEST_F(PlacectlFlagCatalogue, DimForAnUnknownSymbolIsAUsageErrorNamingTheModelsSymbols) {
  const std::vector<Case> cases = {
      {"import " + kVgg + " --dim foo=3", {"--dim 'foo'", "their named dimensions: batch"}},
      {"import " + kVgg + " --dim batc=3", {"--dim 'batc'", "did you mean batch?"}},
      {"memory " + kVgg + " --dim foo=3", {"--dim 'foo'", "batch"}},
      {"place " + kVgg + " --devices 2xA100 --algorithm single_device --dim foo=3", {"--dim 'foo'", "batch"}},
      // An ONNX option on a graph whose costs are fixed binds nothing either.
      {"import " + Graph() + " --dim batch=3", {"--dim", "apply to ONNX models"}},
      {"place " + Graph() + " --devices 2xA100 --batch 4", {"--batch", "apply to ONNX models"}},
  };
  ExpectExit(2, cases);
}

}  // namespace
