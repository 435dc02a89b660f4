// Runs a fuzz target's LLVMFuzzerTestOneInput without libFuzzer, for CI builds (g++, no -fsanitize=fuzzer):
// every seed file of the directories given, then a fixed, deterministic set of mutations of them (truncations,
// bit flips, interesting bytes, splices of two seeds). A crash or a sanitizer report fails the test; so does
// finding no seed.
//
//   <target>_fuzz_replay DIR_OR_FILE... [--mutations N]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void Run(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// A small deterministic generator (SplitMix64), so every run tries the same inputs.
struct Random {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }
};

// Bytes that make parsers take unusual paths: delimiters, signs, huge and odd numbers, protobuf varints.
const char* const kInteresting[] = {"{",
                                    "}",
                                    "[",
                                    "]",
                                    "\"",
                                    ":",
                                    ",",
                                    "-1",
                                    "0",
                                    "1e308",
                                    "1e999",
                                    "NaN",
                                    "-0",
                                    "null",
                                    "true",
                                    "\xff\xff\xff\xff\x0f",
                                    "\x00",
                                    "\x80",
                                    "9999999999999999999"};

std::string Mutate(const std::vector<std::string>& seeds, Random& rng) {
  std::string s = seeds[rng.Below(seeds.size())];
  switch (rng.Below(5)) {
    case 0:  // truncate
      s.resize(rng.Below(s.size() + 1));
      break;
    case 1:  // flip a few bits
      for (int k = 0, n = 1 + static_cast<int>(rng.Below(4)); k < n && !s.empty(); ++k) {
        s[rng.Below(s.size())] ^= static_cast<char>(1u << rng.Below(8));
      }
      break;
    case 2: {  // insert or overwrite with an interesting token
      const std::string token = kInteresting[rng.Below(sizeof(kInteresting) / sizeof(kInteresting[0]))];
      const size_t at = rng.Below(s.size() + 1);
      if (rng.Below(2) == 0) {
        s.insert(at, token.empty() ? std::string(1, '\0') : token);
      } else {
        s.replace(at, std::min(token.size(), s.size() - at), token);
      }
      break;
    }
    case 3: {  // splice: a prefix of this seed, a suffix of another
      const std::string& other = seeds[rng.Below(seeds.size())];
      s = s.substr(0, rng.Below(s.size() + 1)) + other.substr(rng.Below(other.size() + 1));
      break;
    }
    default: {  // duplicate a slice
      if (s.empty()) break;
      const size_t from = rng.Below(s.size());
      const size_t len = rng.Below(std::min<size_t>(s.size() - from, 256) + 1);
      s.insert(rng.Below(s.size() + 1), s.substr(from, len));
      break;
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> seeds;
  long mutations = 2000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mutations") == 0 && i + 1 < argc) {
      mutations = std::strtol(argv[++i], nullptr, 10);
      continue;
    }
    const std::filesystem::path path(argv[i]);
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
    } else if (std::filesystem::is_regular_file(path)) {
      files.push_back(path);
    }
    for (const auto& f : files) seeds.push_back(ReadFile(f));
  }
  if (seeds.empty()) {
    std::fprintf(stderr, "no seed inputs found\n");
    return 2;
  }
  for (const std::string& seed : seeds) Run(seed);
  Random rng{0x5eed};
  for (long i = 0; i < mutations; ++i) Run(Mutate(seeds, rng));
  std::printf("ran %zu seeds and %ld mutations\n", seeds.size(), mutations);
  return 0;
}
