#include "tests/topo/json_reader.h"

#include <cstdlib>

namespace slimeccl::test {
namespace {

const JsonValue& nullValue() {
  static const JsonValue value;
  return value;
}

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  bool parseDocument(JsonValue* out, std::string* error) {
    bool ok = parseValue(out) && (skipSpace(), pos_ == text_.size());
    if (!ok) *error = "invalid JSON at offset " + std::to_string(pos_);
    return ok;
  }

 private:
  void skipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }

  bool literal(const char* word) {
    std::string w = word;
    if (text_.compare(pos_, w.size(), w) != 0) return false;
    pos_ += w.size();
    return true;
  }

  bool parseString(std::string* out) {
    if (pos_ >= text_.size() || text_[pos_] != '"') return false;
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (pos_ >= text_.size()) return false;
      char e = text_[pos_++];
      switch (e) {
        case 'n': *out += '\n'; break;
        case 't': *out += '\t'; break;
        case 'r': *out += '\r'; break;
        case 'u':
          if (pos_ + 4 > text_.size()) return false;
          *out += static_cast<char>(strtol(text_.substr(pos_, 4).c_str(), nullptr, 16));
          pos_ += 4;
          break;
        default: *out += e;
      }
    }
    if (pos_ >= text_.size()) return false;
    ++pos_;
    return true;
  }

  bool parseValue(JsonValue* out) {
    skipSpace();
    if (pos_ >= text_.size()) return false;
    char c = text_[pos_];
    if (c == '{') return parseObject(out);
    if (c == '[') return parseArray(out);
    if (c == '"') {
      out->kind = JsonValue::Kind::String;
      return parseString(&out->text);
    }
    if (literal("true") || literal("false")) {
      out->kind = JsonValue::Kind::Bool;
      out->flag = c == 't';
      return true;
    }
    if (literal("null")) return true;
    char* end = nullptr;
    out->number = strtod(text_.c_str() + pos_, &end);
    if (end == text_.c_str() + pos_) return false;
    out->kind = JsonValue::Kind::Number;
    pos_ = end - text_.c_str();
    return true;
  }

  bool parseArray(JsonValue* out) {
    out->kind = JsonValue::Kind::Array;
    ++pos_;
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') return ++pos_, true;
    while (true) {
      out->items.emplace_back();
      if (!parseValue(&out->items.back())) return false;
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      return pos_ < text_.size() && text_[pos_++] == ']';
    }
  }

  bool parseObject(JsonValue* out) {
    out->kind = JsonValue::Kind::Object;
    ++pos_;
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == '}') return ++pos_, true;
    while (true) {
      std::string name;
      skipSpace();
      if (!parseString(&name)) return false;
      skipSpace();
      if (pos_ >= text_.size() || text_[pos_++] != ':') return false;
      if (!parseValue(&out->members[name])) return false;
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      return pos_ < text_.size() && text_[pos_++] == '}';
    }
  }

  const std::string& text_;
  size_t pos_ = 0;
};

}  // namespace

const JsonValue& JsonValue::operator[](const std::string& name) const {
  auto it = members.find(name);
  return it != members.end() ? it->second : nullValue();
}

const JsonValue& JsonValue::operator[](size_t index) const { return index < items.size() ? items[index] : nullValue(); }

bool parseJson(const std::string& text, JsonValue* out, std::string* error) {
  *out = JsonValue{};
  return Parser(text).parseDocument(out, error);
}

}  // namespace slimeccl::test
