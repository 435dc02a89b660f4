#include "policy/registry.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/spelling.h"

namespace placement {

void PlacerRegistry::Register(std::unique_ptr<Placer> placer) { placers_.push_back(std::move(placer)); }

absl::StatusOr<const Placer*> PlacerRegistry::Find(absl::string_view name) const {
  for (const auto& p : placers_) {
    if (p->name() == name) return p.get();
  }
  std::vector<std::string> names;
  for (const auto& p : placers_) names.emplace_back(p->name());
  const std::string nearest = NearestSpelling(name, names);
  return absl::NotFoundError(absl::StrCat(
      "unknown algorithm '", name, "'", nearest.empty() ? "" : absl::StrCat(" (did you mean ", nearest, "?)"),
      "; known algorithms: ",
      absl::StrJoin(placers_, ", ", [](std::string* out, const auto& p) { absl::StrAppend(out, p->name()); })));
}

std::vector<const Placer*> PlacerRegistry::All() const {
  std::vector<const Placer*> out;
  for (const auto& p : placers_) out.push_back(p.get());
  return out;
}

}  // namespace placement
