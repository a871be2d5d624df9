#include "checkpoint.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "permanent_matrix.h"

namespace tcc::rt::permanent {
namespace {

constexpr const char* kMagic = "tcc-permanent-checkpoint 1";

[[noreturn]] void malformed(const std::string& path, int line, const std::string& what) {
  throw PermanentError("perm: checkpoint " + path + ":" + std::to_string(line) + ": " + what);
}

}  // namespace

std::optional<Checkpoint> readCheckpoint(const std::string& path) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  std::ifstream in(path);
  if (!in) {
    throw PermanentError("perm: cannot read checkpoint " + path + ": " + std::strerror(errno));
  }
  Checkpoint checkpoint;
  std::string text;
  int line = 0;
  auto header = [&](const char* key) {
    ++line;
    if (!std::getline(in, text)) malformed(path, line, std::string("missing the '") + key + "' line");
    std::istringstream words(text);
    std::string word, value, rest;
    if (!(words >> word >> value) || word != key || (words >> rest))
      malformed(path, line, std::string("expected '") + key + " VALUE', found '" + text + "'");
    return value;
  };
  ++line;
  if (!std::getline(in, text) || text != kMagic) malformed(path, line, "not a tcc permanent checkpoint");
  try {
    checkpoint.fingerprint = std::stoull(header("matrix"), nullptr, 16);
    checkpoint.mode = header("mode");
    checkpoint.chunks = std::stoll(header("chunks"));
  } catch (const std::logic_error&) {
    malformed(path, line, "bad number in '" + text + "'");
  }
  while (std::getline(in, text)) {
    ++line;
    std::istringstream words(text);
    std::string word, partial, rest;
    int64_t chunk = -1;
    if (!(words >> word >> chunk >> partial) || word != "done" || (words >> rest) || chunk < 0 ||
        chunk >= checkpoint.chunks)
      malformed(path, line, "expected 'done CHUNK PARTIAL' with CHUNK below " + std::to_string(checkpoint.chunks) +
                                ", found '" + text + "'");
    checkpoint.partials[chunk] = partial;
  }
  return checkpoint;
}

void writeCheckpoint(const std::string& path, const Checkpoint& checkpoint) {
  std::string temporary = path + ".partial";
  {
    std::ofstream out(temporary, std::ios::trunc);
    char fingerprint[17];
    std::snprintf(fingerprint, sizeof fingerprint, "%016llx", static_cast<unsigned long long>(checkpoint.fingerprint));
    out << kMagic << "\nmatrix " << fingerprint << "\nmode " << checkpoint.mode << "\nchunks " << checkpoint.chunks
        << "\n";
    for (const auto& [chunk, partial] : checkpoint.partials) out << "done " << chunk << " " << partial << "\n";
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw PermanentError("perm: cannot write checkpoint " + path + ": " + std::strerror(errno));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    int error = errno;
    std::remove(temporary.c_str());
    throw PermanentError("perm: cannot write checkpoint " + path + ": " + std::strerror(error));
  }
}

}  // namespace tcc::rt::permanent
