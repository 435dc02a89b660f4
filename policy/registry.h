// The placers by name. A registry knows no family: whoever assembles one registers what it should hold
// (policy/placer_families.h registers every family this build has).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/placer.h"

namespace placement {

class PlacerRegistry {
 public:
  void Register(std::unique_ptr<Placer> placer);
  // NOT_FOUND listing the known names when absent.
  absl::StatusOr<const Placer*> Find(absl::string_view name) const;
  std::vector<const Placer*> All() const;  // in registration order

 private:
  std::vector<std::unique_ptr<Placer>> placers_;
};

}  // namespace placement
