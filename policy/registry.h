// The placers by name.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/placer.h"

namespace placement {

class PlacerRegistry {
 public:
  // Every placer this build has, registered once.
  static const PlacerRegistry& Default();
  // The same families plus what `extra` registers (e.g. the learned placers, which live outside this library),
  // before AUTO, whose portfolio then looks its candidates up in the new registry.
  static std::unique_ptr<PlacerRegistry> WithFamilies(const std::function<void(PlacerRegistry&)>& extra);

  void Register(std::unique_ptr<Placer> placer);
  // NOT_FOUND listing the known names when absent.
  absl::StatusOr<const Placer*> Find(absl::string_view name) const;
  std::vector<const Placer*> All() const;  // in registration order

 private:
  std::vector<std::unique_ptr<Placer>> placers_;
};

}  // namespace placement
