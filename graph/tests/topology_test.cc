#include "graph/topology_json.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "graph/device_presets.h"

namespace placement {
namespace {

using ::testing::HasSubstr;

Topology Parsed(const absl::StatusOr<Topology>& t) {
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Topology();
}

const Path& PathOf(const Topology& t, absl::string_view from, absl::string_view to) {
  const DeviceId a = t.FindDevice(from), b = t.FindDevice(to);
  EXPECT_GE(a, 0) << from;
  EXPECT_GE(b, 0) << to;
  return t.path(std::max(a, 0), std::max(b, 0));
}

std::vector<int32_t> ResourcesOf(const Topology& t, absl::string_view from, absl::string_view to) {
  absl::Span<const int32_t> r = t.path_resources(PathOf(t, from, to));
  return std::vector<int32_t>(r.begin(), r.end());
}

bool ShareAResource(const Topology& t, absl::string_view a, absl::string_view b, absl::string_view c,
                    absl::string_view d) {
  std::vector<int32_t> x = ResourcesOf(t, a, b), y = ResourcesOf(t, c, d);
  return std::any_of(x.begin(), x.end(), [&](int32_t r) { return std::find(y.begin(), y.end(), r) != y.end(); });
}

std::string ReadSourceFile(const std::string& relative) {
  std::ifstream in(std::string(PLACEMENT_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(in.good()) << relative;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void ExpectSameTopology(const Topology& a, const Topology& b) {
  EXPECT_EQ(a.name(), b.name());
  ASSERT_EQ(a.num_devices(), b.num_devices());
  for (DeviceId d = 0; d < a.num_devices(); ++d) {
    const Device &x = a.device(d), &y = b.device(d);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.type, y.type);
    EXPECT_EQ(x.peak_flops, y.peak_flops);
    EXPECT_EQ(x.memory_bandwidth, y.memory_bandwidth);
    EXPECT_EQ(x.memory_bytes, y.memory_bytes);
    EXPECT_EQ(x.host, y.host);
    EXPECT_EQ(x.launch_overhead, y.launch_overhead);
  }
  ASSERT_EQ(a.num_resources(), b.num_resources());
  for (int32_t r = 0; r < a.num_resources(); ++r) {
    EXPECT_EQ(a.resource(r).name, b.resource(r).name);
    EXPECT_EQ(a.resource(r).bandwidth, b.resource(r).bandwidth);
  }
  for (DeviceId x = 0; x < a.num_devices(); ++x) {
    for (DeviceId y = 0; y < a.num_devices(); ++y) {
      if (x == y) continue;
      EXPECT_EQ(a.path(x, y).latency, b.path(x, y).latency);
      EXPECT_EQ(a.path(x, y).bandwidth, b.path(x, y).bandwidth);
      absl::Span<const int32_t> ra = a.path_resources(a.path(x, y)), rb = b.path_resources(b.path(x, y));
      EXPECT_EQ(std::vector<int32_t>(ra.begin(), ra.end()), std::vector<int32_t>(rb.begin(), rb.end()));
    }
  }
}

// ---- Shorthand ----

TEST(TopologyShorthandTest, CountTimesPresetIsOneHostWithDevicesNamedGpu0Up) {
  Topology t = Parsed(ParseTopologyShorthand("4xA100"));
  EXPECT_EQ(t.name(), "4xA100");
  ASSERT_EQ(t.num_devices(), 4);
  for (DeviceId d = 0; d < 4; ++d) {
    EXPECT_EQ(t.device(d).name, absl::StrCat("gpu", d));
    EXPECT_EQ(t.device(d).kind, "A100");
    EXPECT_EQ(t.device(d).host, 0);
    EXPECT_EQ(t.device(d).peak_flops, 312e12);
  }
  EXPECT_EQ(PathOf(t, "gpu0", "gpu3").bandwidth, 300e9);
  EXPECT_EQ(PathOf(t, "gpu0", "gpu3").latency, 2e-6);
}

TEST(TopologyShorthandTest, HostsTimesCountNamesDevicesAfterTheirHost) {
  Topology t = Parsed(ParseTopologyShorthand("2x8xH100"));
  EXPECT_EQ(t.name(), "2x8xH100");
  ASSERT_EQ(t.num_devices(), 16);
  const DeviceId d = t.FindDevice("host1/gpu3");
  ASSERT_GE(d, 0);
  EXPECT_EQ(t.device(d).host, 1);
  EXPECT_EQ(PathOf(t, "host0/gpu0", "host0/gpu7").bandwidth, 450e9);
  EXPECT_EQ(PathOf(t, "host0/gpu0", "host1/gpu0").bandwidth, 400e9 / 8);
  EXPECT_EQ(PathOf(t, "host0/gpu0", "host1/gpu0").latency, 5e-6);
}

TEST(TopologyShorthandTest, TransfersLeavingAHostShareItsNetworkInterface) {
  Topology t = Parsed(ParseTopologyShorthand("2x8xH100"));
  // Two GPUs of host0 sending to host1 queue on host0's interface...
  EXPECT_TRUE(ShareAResource(t, "host0/gpu0", "host1/gpu0", "host0/gpu5", "host1/gpu2"));
  // ...while transfers inside host0 from different GPUs use their own ports.
  EXPECT_FALSE(ShareAResource(t, "host0/gpu0", "host0/gpu1", "host0/gpu2", "host0/gpu3"));
  EXPECT_FALSE(ShareAResource(t, "host0/gpu0", "host0/gpu1", "host1/gpu0", "host1/gpu1"));
}

TEST(TopologyShorthandTest, BarePresetIsOneDevice) {
  Topology t = Parsed(ParseTopologyShorthand("A100"));
  ASSERT_EQ(t.num_devices(), 1);
  EXPECT_EQ(t.device(0).name, "gpu0");
  EXPECT_EQ(t.name(), "1xA100");
}

TEST(TopologyShorthandTest, IgnoresCaseAndWhitespace) {
  Topology t = Parsed(ParseTopologyShorthand(" 2 X 8 x h100 "));
  EXPECT_EQ(t.name(), "2x8xH100");
  EXPECT_EQ(t.num_devices(), 16);
  EXPECT_EQ(t.device(0).kind, "H100");
}

TEST(TopologyShorthandTest, PlusJoinsPresetsOnOneHostWithTheAcceleratorsLink) {
  for (const char* text : {"8xV100+1xCPU", "1xCPU + 8xV100"}) {
    Topology t = Parsed(ParseTopologyShorthand(text));
    ASSERT_EQ(t.num_devices(), 9) << text;
    const DeviceId cpu = t.FindDevice("cpu0");
    ASSERT_GE(cpu, 0) << text;
    EXPECT_EQ(t.device(cpu).type, DeviceType::kCpu);
    EXPECT_EQ(t.device(cpu).kind, "CPU");
    EXPECT_GE(t.FindDevice("gpu7"), 0);
    EXPECT_EQ(PathOf(t, "gpu0", "gpu1").bandwidth, 150e9) << text;
    EXPECT_EQ(PathOf(t, "cpu0", "gpu1").bandwidth, 150e9) << text;
  }
}

TEST(TopologyShorthandTest, PlusWithHostCountsRepeatsTheMixOnEveryHost) {
  Topology t = Parsed(ParseTopologyShorthand("2x4xA100+2x1xCPU"));
  EXPECT_EQ(t.num_devices(), 10);
  EXPECT_GE(t.FindDevice("host1/cpu0"), 0);
  EXPECT_EQ(PathOf(t, "host0/cpu0", "host1/gpu0").bandwidth, 200e9 / 8);
}

TEST(TopologyShorthandTest, BadShorthandErrorsNameTheBadPart) {
  struct Case {
    const char* text;
    std::vector<const char*> messages;
  };
  for (const Case& c : std::vector<Case>{
           {"0xA100", {"'0xA100'", "at least 1"}},
           {"4xFOO", {"'4xFOO'", "unknown device preset 'FOO'", "H100, A100"}},
           {"x", {"'x'", "a count must come before 'x'"}},
           {"4x", {"'4x'", "no device preset"}},
           {"-1xH100", {"'-1xH100'", "whole numbers"}},
           {"", {"empty"}},
           {"  ", {"empty"}},
           {"4A100", {"'4A100'", "expected 'x' after the count 4"}},
           {"2x3x4xH100", {"'2x3x4xH100'", "HOSTSxCOUNTxPRESET"}},
           {"4xA100+", {"''", "empty"}},
           {"2x8xH100+1xCPU", {"same number of hosts", "'1xCPU' has 1"}},
           {"100000xH100", {"more than 1024 devices"}},
           {"64x64xH100", {"more than 1024 devices"}},
           {"1025xT4", {"more than 1024 devices"}},
           {"99999999999999999999xH100", {"more than 1024 devices"}},
           {"600xH100+600xCPU", {"more than 1024 devices"}},
       }) {
    absl::StatusOr<Topology> t = ParseTopologyShorthand(c.text);
    ASSERT_FALSE(t.ok()) << "'" << c.text << "' parsed";
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    for (const char* m : c.messages) EXPECT_THAT(t.status().message(), HasSubstr(m)) << c.text;
  }
}

TEST(TopologyShorthandTest, LargestAllowedClusterBuilds) {
  Topology t = Parsed(ParseTopologyShorthand("128x8xH100"));
  EXPECT_EQ(t.num_devices(), kMaxTopologyDevices);
}

// ---- JSON ----

TEST(TopologyJsonTest, HierarchicalFormBuildsRepeatedHostsWithTheirLinks) {
  Topology t = Parsed(ParseTopologyJson(R"({
    "name": "pair",
    "hosts": [{"name": "dgx", "count": 2,
               "devices": [{"preset": "H100", "count": 8}, {"preset": "CPU"}],
               "intra_host_link": {"bandwidth": "400GB/s", "latency": "3us"}}],
    "network": {"bandwidth": "200Gb/s", "latency": 1e-5}})"));
  EXPECT_EQ(t.name(), "pair");
  ASSERT_EQ(t.num_devices(), 18);
  EXPECT_GE(t.FindDevice("dgx0/gpu7"), 0);
  EXPECT_EQ(t.device(t.FindDevice("dgx1/cpu0")).type, DeviceType::kCpu);
  EXPECT_EQ(t.device(t.FindDevice("dgx1/cpu0")).host, 1);
  EXPECT_EQ(PathOf(t, "dgx0/gpu0", "dgx0/gpu1").bandwidth, 400e9);
  EXPECT_EQ(PathOf(t, "dgx0/gpu0", "dgx0/gpu1").latency, 3e-6);
  EXPECT_EQ(PathOf(t, "dgx0/gpu0", "dgx1/gpu0").bandwidth, 25e9);
  EXPECT_EQ(PathOf(t, "dgx0/gpu0", "dgx1/gpu0").latency, 1e-5);
}

TEST(TopologyJsonTest, LinksLeftOutTakeThePresetDefaults) {
  Topology t = Parsed(ParseTopologyJson(R"({"hosts": [{"devices": [{"preset": "a100", "count": 2}]},
                                                      {"devices": [{"preset": "A100", "count": 2}]}]})"));
  EXPECT_EQ(t.num_devices(), 4);
  EXPECT_EQ(PathOf(t, "host0/gpu0", "host0/gpu1").bandwidth, 300e9);
  EXPECT_EQ(PathOf(t, "host0/gpu0", "host1/gpu1").bandwidth, 25e9);
  EXPECT_EQ(PathOf(t, "host0/gpu0", "host1/gpu1").latency, 5e-6);
}

TEST(TopologyJsonTest, DeviceFieldsOverrideThePreset) {
  Topology t = Parsed(ParseTopologyJson(R"({"hosts": [{"devices": [
    {"preset": "H100", "name": "big", "kind": "H100-94GB", "memory": "94GB", "launch_overhead": "3us"}]}]})"));
  ASSERT_EQ(t.num_devices(), 1);
  EXPECT_EQ(t.device(0).name, "big");
  EXPECT_EQ(t.device(0).kind, "H100-94GB");
  EXPECT_EQ(t.device(0).memory_bytes, 94'000'000'000);
  EXPECT_EQ(t.device(0).launch_overhead, 3e-6);
  EXPECT_EQ(t.device(0).peak_flops, 989e12);
}

TEST(TopologyJsonTest, HostOverheadsAreReadAndWrittenBack) {
  Topology t = Parsed(ParseTopologyJson(R"({"hosts": [{"devices": [
    {"preset": "H100", "count": 2, "host_op_overhead": "35us", "host_backward_op_overhead": 8e-5}]}]})"));
  EXPECT_EQ(t.device(1).host_op_overhead, 35e-6);
  EXPECT_EQ(t.device(1).host_backward_op_overhead, 8e-5);
  Topology again = Parsed(ParseTopologyJson(TopologyToJson(t)));
  EXPECT_EQ(again.device(0).host_op_overhead, 35e-6);
  EXPECT_EQ(again.device(0).host_backward_op_overhead, 8e-5);
  EXPECT_FALSE(ParseTopologyJson(R"({"hosts": [{"devices": [{"preset": "H100", "host_op_overhead": "-1us"}]}]})").ok());
}

TEST(TopologyJsonTest, FullySpecifiedDevicesNeedNoPreset) {
  Topology t = Parsed(ParseTopologyJson(R"({"hosts": [{
    "devices": [{"name": "fpga", "count": 2, "kind": "U280", "type": "accelerator", "peak_flops": "24.5 TFLOPS",
                 "memory_bandwidth": "460 GB/s", "memory": "unlimited"}],
    "intra_host_link": {"bandwidth": 1.6e10, "latency": "1us"}}]})"));
  ASSERT_EQ(t.num_devices(), 2);
  EXPECT_EQ(t.device(1).name, "fpga1");
  EXPECT_EQ(t.device(1).memory_bytes, 0);
  EXPECT_EQ(t.device(1).launch_overhead, 0);
  EXPECT_EQ(t.device(1).peak_flops, 24.5e12);
  EXPECT_EQ(PathOf(t, "fpga0", "fpga1").bandwidth, 1.6e10);
}

TEST(TopologyJsonTest, ExplicitMatrixFormGivesEachPairItsOwnLink) {
  Topology t = Parsed(ParseTopologyJson(R"({"name": "m", "devices": [{"preset": "T4", "count": 3}],
    "links": {"bandwidth": [[null, "8GB/s", 1e9], ["8GB/s", 0, "8GB/s"], [1e9, "8GB/s", null]],
              "latency": "10us"}})"));
  ASSERT_EQ(t.num_devices(), 3);
  EXPECT_EQ(PathOf(t, "gpu0", "gpu1").bandwidth, 8e9);
  EXPECT_EQ(PathOf(t, "gpu2", "gpu0").bandwidth, 1e9);
  EXPECT_EQ(PathOf(t, "gpu2", "gpu0").latency, 1e-5);
  EXPECT_FALSE(ShareAResource(t, "gpu0", "gpu1", "gpu0", "gpu2"));
}

TEST(TopologyJsonTest, SharedBusFormGivesEachDeviceOneOutgoingBus) {
  Topology t = Parsed(ParseTopologyJson(R"({"devices": [{"preset": "P100", "count": 4}],
    "shared_bus": {"bandwidth": "4GB/s", "latency": "20us"}})"));
  ASSERT_EQ(t.num_devices(), 4);
  EXPECT_EQ(PathOf(t, "gpu0", "gpu3").bandwidth, 4e9);
  EXPECT_EQ(PathOf(t, "gpu0", "gpu3").latency, 2e-5);
  EXPECT_TRUE(ShareAResource(t, "gpu0", "gpu1", "gpu0", "gpu3"));
  EXPECT_FALSE(ShareAResource(t, "gpu0", "gpu1", "gpu1", "gpu0"));
}

TEST(TopologyJsonTest, PathsFormRefersToResourcesByIndexOrName) {
  Topology t =
      Parsed(ParseTopologyJson(R"({"devices": [{"name": "a", "preset": "V100"}, {"name": "b", "preset": "V100"}],
    "resources": [{"name": "switch", "bandwidth": "10GB/s"}, {"name": "a-port", "bandwidth": "20GB/s"}],
    "paths": {"latency": "1us", "resources": [[[], ["a-port", 0]], [[0], null]]}})"));
  EXPECT_EQ(PathOf(t, "a", "b").bandwidth, 10e9);
  EXPECT_EQ(ResourcesOf(t, "a", "b"), (std::vector<int32_t>{1, 0}));
  EXPECT_TRUE(ShareAResource(t, "a", "b", "b", "a"));
}

TEST(TopologyJsonTest, SingleExplicitDeviceNeedsNoLinks) {
  Topology t = Parsed(ParseTopologyJson(R"({"devices": [{"preset": "CPU"}]})"));
  ASSERT_EQ(t.num_devices(), 1);
  EXPECT_EQ(t.device(0).name, "cpu0");
}

TEST(TopologyJsonTest, EveryValidationErrorIsItsOwnClearMessage) {
  struct Case {
    std::string json;
    std::vector<const char*> messages;
  };
  const std::string t4 = R"("devices": [{"preset": "T4", "count": 2}])";
  for (
      const Case& c : std::vector<Case>{
          {R"({"name": "empty"})", {"no devices"}},
          {R"({"hosts": []})", {"hosts: expected a non-empty list"}},
          {R"({"hosts": [{"name": "h"}]})", {"hosts[0]: 'devices' is required"}},
          {R"({"devices": []})", {"devices: expected a non-empty list"}},
          {R"({"devices": [{"name": "a", "preset": "T4"}, {"name": "a", "preset": "T4"}], "shared_bus": {"bandwidth": 1, "latency": 0}})",
           {"duplicate device name 'a'"}},
          {R"({"hosts": [{"name": "h", "devices": [{"preset": "T4"}]}, {"name": "h", "devices": [{"preset": "T4"}]}]})",
           {"hosts[1]: duplicate host name 'h'"}},
          {(R"({)" + t4 + R"(, "links": {"bandwidth": [[0, -5], [5, 0]], "latency": 0}})").c_str(),
           {"links.bandwidth[0][1]: must not be negative (got -5)"}},
          {(R"({)" + t4 + R"(, "links": {"bandwidth": [[0, "-5GB/s"], [5, 0]], "latency": 0}})").c_str(),
           {"links.bandwidth[0][1]: cannot read a bandwidth '-5GB/s': it is negative"}},
          {(R"({)" + t4 + R"(, "links": {"bandwidth": 0, "latency": 0}})").c_str(),
           {"links.bandwidth: must be positive"}},
          {R"({"devices": [{"preset": "T4", "memory_bandwidth": "nan"}]})",
           {"devices[0].memory_bandwidth: cannot read a bandwidth 'nan': it is not a finite number"}},
          {R"({"hosts": [{"devices": [{"preset": "T4"}], "intra_host_link": {"bandwith": "1GB/s"}}]})",
           {"unknown key 'bandwith' in hosts[0].intra_host_link", "known keys: bandwidth, latency"}},
          {R"({"hosts": [{"devices": [{"preset": "T4"}]}], "netwrok": {}})", {"unknown key 'netwrok' in the topology"}},
          {R"({"hosts": [{"devices": [{"preset": "H1000"}]}]})",
           {"hosts[0].devices[0].preset: unknown device preset 'H1000'", "H100, A100"}},
          {(R"({"devices": [{"preset": "T4", "count": 3}], "links": {"bandwidth": [[0, 1], [1, 0]], "latency": 0}})"),
           {"links.bandwidth: has 2 rows but there are 3 devices"}},
          {(R"({)" + t4 + R"(, "links": {"bandwidth": [[0, 1], [1]], "latency": 0}})").c_str(),
           {"links.bandwidth[1]: expected a row of 2 entries, one per device, got 1 entries"}},
          {"this is not JSON", {"not valid JSON", "parse error", "line 1, column 2"}},
          {R"({"hosts": [{"devices": [{"preset": "T4")", {"not valid JSON", "parse error"}},
          {"", {"not valid JSON"}},
          {R"([1, 2])", {"expected an object, got array"}},
          {R"({"hosts": [{"devices": [{"preset": "T4"}]}], "devices": []})", {"either 'hosts'", "not both"}},
          {R"({"hosts": [{"devices": [{"preset": "T4", "preset": "V100"}]}]})", {"'preset' appears twice"}},
          {R"({"devices": [{"name": "x", "kind": "K", "peak_flops": 1, "memory_bandwidth": 1}]})",
           {"devices[0]: 'memory' is required when no 'preset' is given"}},
          {R"({"devices": [{"preset": "T4", "count": 0}]})", {"devices[0].count: expected a whole number from 1"}},
          {R"({"devices": [{"preset": "T4", "count": 2.5}]})", {"devices[0].count: expected a whole number"}},
          {R"({"hosts": [{"count": 100000, "devices": [{"preset": "T4"}]}]})", {"hosts[0].count"}},
          {R"({"hosts": [{"count": 200, "devices": [{"preset": "T4", "count": 8}]}]})", {"more than 1024 devices"}},
          {R"({"devices": [{"preset": "T4", "type": "gpu"}]})",
           {"devices[0].type: expected \"accelerator\" or \"cpu\""}},
          {R"({"devices": [{"preset": "T4", "peak_flops": "65 TB"}]})", {"devices[0].peak_flops", "unknown unit 'TB'"}},
          {R"({"devices": [{"preset": "T4", "memory": true}]})", {"devices[0].memory: expected a number or a string"}},
          {(R"({)" + t4 + R"(})").c_str(),
           {"one of 'links', 'shared_bus' or 'paths' is required to connect 2 devices"}},
          {(R"({)" + t4 + R"(, "network": {}})").c_str(), {"network: belongs to the hierarchical form"}},
          {R"({"hosts": [{"devices": [{"preset": "T4"}]}], "links": {}})", {"links: belongs to the explicit form"}},
          {(R"({)" + t4 + R"(, "shared_bus": {"latency": 0}})").c_str(), {"shared_bus.bandwidth: is required"}},
          {(R"({)" + t4 + R"(, "resources": [], "paths": {"latency": 0, "resources": [[[], [3]], [[0], []]]}})")
               .c_str(),
           {"paths.resources[0][1]: 3 is not a resource"}},
          {(R"({)" + t4 +
            R"(, "resources": [{"bandwidth": 1}], "paths": {"latency": 0, "resources": [[[], [0, 0]], [[0], []]]}})")
               .c_str(),
           {"paths.resources[0][1]: lists resource 0 twice"}},
          {R"({"hosts": [{"devices": [{"kind": "K", "peak_flops": 1, "memory_bandwidth": 1, "memory": 0, "count": 2}]}]})",
           {"hosts[0].intra_host_link.bandwidth: is required"}},
          {R"({"hosts": [{"devices": [{"preset": "T4", "host": 1}]}]})", {"unknown key 'host' in hosts[0].devices[0]"}},
      }) {
    absl::StatusOr<Topology> t = ParseTopologyJson(c.json);
    ASSERT_FALSE(t.ok()) << c.json;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << c.json;
    for (const char* m : c.messages) EXPECT_THAT(t.status().message(), HasSubstr(m)) << c.json;
  }
}

TEST(TopologyJsonTest, EveryTruncationOfAValidFileIsAnErrorNotACrash) {
  const std::string text = ReadSourceFile("examples/topology/two_dgx_h100.json");
  ASSERT_FALSE(text.empty());
  const size_t end = text.find_last_of('}');
  for (size_t n = 0; n < end; ++n) {
    EXPECT_FALSE(ParseTopologyJson(absl::string_view(text).substr(0, n)).ok()) << n;
  }
}

TEST(TopologyJsonTest, ToJsonRoundTripsEveryFigureAndSharedLink) {
  std::vector<Topology> topologies = {
      Parsed(ParseTopologyShorthand("2x8xH100")),
      Parsed(ParseTopologyShorthand("3xV100+1xCPU")),
      Parsed(ParseTopologyJson(R"({"name": "bus \"quoted\"", "devices": [{"preset": "P100", "count": 3}],
                                   "shared_bus": {"bandwidth": "3.3GB/s", "latency": "13us"}})")),
      Parsed(LoadTopologyFile(std::string(PLACEMENT_SOURCE_DIR) + "/examples/topology/ring_4xv100.json")),
      Parsed(ParseTopologyJson(R"({"devices": [{"name": "odd", "kind": "K", "peak_flops": 0.1, "memory_bandwidth": 1e-3,
                                                "memory": 9007199254740993, "host": 3}]})")),
  };
  for (const Topology& t : topologies) {
    SCOPED_TRACE(t.name());
    const std::string json = TopologyToJson(t);
    absl::StatusOr<Topology> back = ParseTopologyJson(json);
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << json;
    ExpectSameTopology(t, *back);
    EXPECT_EQ(TopologyToJson(*back), json);
  }
}

TEST(TopologyJsonTest, MissingFileIsNotFoundNamingThePath) {
  absl::StatusOr<Topology> t = LoadTopologyFile("/nonexistent/cluster.json");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(t.status().message(), HasSubstr("'/nonexistent/cluster.json'"));
}

TEST(TopologyJsonTest, DirectoryIsNotFoundRatherThanBadJson) {
  absl::StatusOr<Topology> t = LoadTopologyFile(::testing::TempDir());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(t.status().message(), HasSubstr("not a regular file"));
}

TEST(TopologyJsonTest, ToJsonReplacesInvalidUtf8InsteadOfThrowing) {
  std::vector<Device> devices = {MakeDevice(**FindDevicePreset("T4"), "bad\xff"),
                                 MakeDevice(**FindDevicePreset("T4"), "ok")};
  absl::StatusOr<Topology> t = BuildSharedBus("name\xfe", devices, 1e9, 0);
  ASSERT_TRUE(t.ok()) << t.status();
  const std::string json = TopologyToJson(*t);
  absl::StatusOr<Topology> back = ParseTopologyJson(json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->num_devices(), 2);
}

TEST(TopologyJsonTest, ExampleFilesLoadAndMatchTheDocs) {
  Topology dgx = Parsed(LoadTopologyFile(std::string(PLACEMENT_SOURCE_DIR) + "/examples/topology/two_dgx_h100.json"));
  EXPECT_EQ(dgx.num_devices(), 16);
  EXPECT_EQ(PathOf(dgx, "dgx1/gpu0", "dgx1/gpu7").bandwidth, 450e9);
  EXPECT_EQ(PathOf(dgx, "dgx0/gpu0", "dgx1/gpu7").bandwidth, 50e9);

  Topology ring = Parsed(LoadTopologyFile(std::string(PLACEMENT_SOURCE_DIR) + "/examples/topology/ring_4xv100.json"));
  EXPECT_EQ(ring.num_devices(), 4);
  EXPECT_EQ(PathOf(ring, "gpu0", "gpu1").bandwidth, 50e9);
  EXPECT_EQ(PathOf(ring, "gpu0", "gpu2").bandwidth, 12e9);
  EXPECT_EQ(PathOf(ring, "gpu0", "gpu2").latency, 8e-6);

  // The worked example in the documentation is the example file, word for word.
  const std::string docs = ReadSourceFile("docs/topology.md");
  EXPECT_THAT(docs, HasSubstr(ReadSourceFile("examples/topology/two_dgx_h100.json")));
  EXPECT_THAT(docs, HasSubstr(ReadSourceFile("examples/topology/ring_4xv100.json")));
  for (const DevicePreset& p : DevicePresets()) EXPECT_THAT(docs, HasSubstr(std::string(p.model)));
}

TEST(TopologyJsonTest, EveryJsonBlockInTheDocsParses) {
  const std::string docs = ReadSourceFile("docs/topology.md");
  int blocks = 0;
  for (size_t at = docs.find("```json\n"); at != std::string::npos; at = docs.find("```json\n", at)) {
    at += 8;
    const size_t end = docs.find("```", at);
    ASSERT_NE(end, std::string::npos);
    absl::StatusOr<Topology> t = ParseTopologyJson(absl::string_view(docs).substr(at, end - at));
    EXPECT_TRUE(t.ok()) << t.status() << "\n" << docs.substr(at, end - at);
    ++blocks;
    at = end + 3;
  }
  EXPECT_GE(blocks, 4);
}

TEST(TopologyJsonTest, ArgumentIsShorthandInlineJsonOrAFile) {
  EXPECT_EQ(Parsed(ParseTopologyArgument("4xT4")).num_devices(), 4);
  EXPECT_EQ(Parsed(ParseTopologyArgument(R"( {"devices": [{"preset": "T4"}]})")).num_devices(), 1);
  EXPECT_EQ(Parsed(ParseTopologyArgument(std::string(PLACEMENT_SOURCE_DIR) + "/examples/topology/ring_4xv100.json"))
                .num_devices(),
            4);
  absl::StatusOr<Topology> missing = ParseTopologyArgument("cluster.json");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

TEST(TopologyJsonTest, FileErrorsArePrefixedWithThePath) {
  const std::string path = ::testing::TempDir() + "/bad_topology.json";
  std::ofstream(path) << R"({"devices": [{"preset": "T4", "count": 2}], "links": {"bandwidth": "1GB/s"}})";
  absl::StatusOr<Topology> t = LoadTopologyFile(path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr(path + ": links: 'latency' is required"));
}

}  // namespace
}  // namespace placement
