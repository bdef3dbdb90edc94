// A small JSON writer: objects, arrays, strings (escaped), numbers, booleans and null, indented
// two spaces per level.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace slimeccl::info {

class JsonWriter {
 public:
  JsonWriter& beginObject();
  JsonWriter& endObject();
  JsonWriter& beginArray();
  JsonWriter& endArray();
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(int64_t number);
  JsonWriter& value(int number) { return value(static_cast<int64_t>(number)); }
  JsonWriter& value(uint64_t number);
  JsonWriter& value(double number);
  JsonWriter& value(bool flag);
  JsonWriter& null();
  // key(name) then value(v), for brevity.
  template <typename T>
  JsonWriter& field(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }
  const std::string& text() const { return out_; }

 private:
  void beforeValue();
  void open(char bracket);
  void close(char bracket);
  std::string out_;
  std::vector<bool> empty_;  // per open container: nothing written in it yet
  bool afterKey_ = false;
};

}  // namespace slimeccl::info
