// A small JSON reader for test assertions on slimeccl-info --json: parses the whole text or
// reports where it stopped.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace slimeccl::test {

struct JsonValue {
  enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
  bool flag = false;
  double number = 0;
  std::string text;
  std::vector<JsonValue> items;
  std::map<std::string, JsonValue> members;

  // Missing members and out-of-range items read as null.
  const JsonValue& operator[](const std::string& name) const;
  const JsonValue& operator[](size_t index) const;
  bool isNull() const { return kind == Kind::Null; }
  size_t size() const { return kind == Kind::Array ? items.size() : members.size(); }
};

// False with *error naming the offset when text is not one JSON value.
bool parseJson(const std::string& text, JsonValue* out, std::string* error);

}  // namespace slimeccl::test
