// Human-written quantities: "80GiB", "900 GB/s", "400Gb/s", "5us", "989TFLOPS".
//
// Cluster descriptions are written by hand, and a figure off by a factor of 8 (bits vs bytes) or 1.07 (GB vs
// GiB) silently skews every prediction. So the units are spelled out and parsed strictly: SI prefixes
// (k M G T P) are powers of 1000, binary prefixes (Ki Mi Gi Ti Pi) powers of 1024, 'B' is a byte and 'b' a
// bit, and anything else is an error that quotes the text. A bare number is in the SI base unit (bytes,
// bytes/s, seconds, FLOP/s). Results are finite and non-negative.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace placement {

// "80GiB", "16 GB", "512MiB", "1024" (bytes). Bits are rejected: capacities are in bytes.
absl::StatusOr<double> ParseBytes(absl::string_view text);

// Bytes per second: "900GB/s", "400Gb/s" and "400Gbps" (bits), "7600 B/us", "12 GiB/s", "1e9".
absl::StatusOr<double> ParseBandwidth(absl::string_view text);

// Seconds: "5us", "5µs", "2.5 ms", "10ns", "1.5s", "1e-6".
absl::StatusOr<double> ParseSeconds(absl::string_view text);

// FLOP per second: "989TFLOPS", "312 TFLOP/s", "19.5 tflops", "5e12". Prefixes are SI; case does not matter
// here, so "m" is mega (a milli-FLOP/s device does not exist).
absl::StatusOr<double> ParseFlops(absl::string_view text);

// Three significant figures with a unit, for reports; the output parses back with the functions above.
std::string FormatBytes(double bytes);                 // binary prefixes: 80e9 -> "74.5 GiB"
std::string FormatBandwidth(double bytes_per_second);  // SI prefixes: 450e9 -> "450 GB/s"
std::string FormatSeconds(double seconds);             // 0.0123 -> "12.3 ms", 2e-6 -> "2 us"
std::string FormatFlops(double flops);                 // 989e12 -> "989 TFLOP/s"

}  // namespace placement
