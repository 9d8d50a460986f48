// mapped-file.h: a read-only memory map of a whole file (model weights are used in place,
// never copied). Errors name the file.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace kvarena {

class mapped_file {
 public:
  explicit mapped_file(const std::string& path);  // throws engine_error "PATH: ..."
  ~mapped_file();
  mapped_file(const mapped_file&) = delete;
  mapped_file& operator=(const mapped_file&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace kvarena
