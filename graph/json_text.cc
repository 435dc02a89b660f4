#include "graph/json_text.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace placement {
namespace {

// The key sets are reused across objects at the same depth, so a file with 100k operators does not allocate
// one per operator.
class KeyChecker : public JsonSaxBase {
 public:
  bool start_object(std::size_t) override {
    if (depth_ == open_.size()) open_.emplace_back();
    open_[depth_++].clear();
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool key(string_t& key) override {
    if (open_[depth_ - 1].insert(key).second) return true;
    duplicate_ = key;
    return false;
  }
  const std::string& duplicate() const { return duplicate_; }

 private:
  std::vector<absl::flat_hash_set<std::string>> open_;
  size_t depth_ = 0;
  std::string duplicate_;
};

}  // namespace

absl::Status CheckJsonText(absl::string_view text, absl::string_view what) {
  try {
    KeyChecker keys;
    if (nlohmann::ordered_json::sax_parse(text.begin(), text.end(), &keys)) return absl::OkStatus();
    if (!keys.duplicate().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the key '", keys.duplicate(), "' appears twice in one JSON object"));
    }
    return absl::InvalidArgumentError(absl::StrCat(what, " is not valid JSON: ", keys.error()));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is not valid JSON: ", e.what()));
  }
}

}  // namespace placement
