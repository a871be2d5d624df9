// A permanent's checkpoint: which chunks of its iteration range are done
// and what each contributed, so a stopped run resumes where it left off.
//
//   tcc-permanent-checkpoint 1
//   matrix 8f3a09c2d17e4b65      (fingerprint of n and the entries)
//   mode float                   (or exact)
//   chunks 4096
//   done 0 0x1.3c0ca2a5b1d5dp+24 (chunk, partial sum: hex float or decimal integer)
//   ...
//
// Written to a temporary file and renamed, so a crash leaves the previous
// checkpoint whole.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace tcc::rt::permanent {

struct Checkpoint {
  uint64_t fingerprint = 0;
  std::string mode;  // "float" or "exact"
  int64_t chunks = 0;
  std::map<int64_t, std::string> partials;  // completed chunk -> its partial sum, as text
};

// nullopt when the file does not exist; throws PermanentError for one that
// is not a checkpoint (naming the line).
std::optional<Checkpoint> readCheckpoint(const std::string& path);
// Throws PermanentError when the file cannot be written.
void writeCheckpoint(const std::string& path, const Checkpoint& checkpoint);

}  // namespace tcc::rt::permanent
