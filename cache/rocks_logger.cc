// NewSpdlogRocksLogger; see rocks_logger.h.
#include "cache/rocks_logger.h"

#include <cstdarg>
#include <cstdio>
#include <string>

#include "spdlog/spdlog.h"

namespace tccd::cache {
namespace {

class SpdlogRocksLogger final : public rocksdb::Logger {
 public:
  // Every level reaches Logv; spdlog's own level decides what is printed.
  SpdlogRocksLogger() : rocksdb::Logger(rocksdb::InfoLogLevel::DEBUG_LEVEL) {}

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
  }
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    const bool fatal =
        level >= rocksdb::InfoLogLevel::FATAL_LEVEL && level != rocksdb::InfoLogLevel::HEADER_LEVEL;
    const spdlog::level::level_enum ours = fatal ? spdlog::level::err : spdlog::level::debug;
    if (!spdlog::should_log(ours)) return;
    char buffer[1024];
    va_list copy;
    va_copy(copy, ap);
    const int n = vsnprintf(buffer, sizeof(buffer), format, copy);
    va_end(copy);
    if (n < 0) return;
    std::string line(buffer, std::min<size_t>(static_cast<size_t>(n), sizeof(buffer) - 1));
    while (!line.empty() && line.back() == '\n') line.pop_back();
    spdlog::log(ours, "rocksdb: {}", line);
  }
};

}  // namespace

std::shared_ptr<rocksdb::Logger> NewSpdlogRocksLogger() {
  return std::make_shared<SpdlogRocksLogger>();
}

}  // namespace tccd::cache
