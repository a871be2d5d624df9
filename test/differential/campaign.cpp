#include "campaign.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "known_bugs.h"
#include "minimizer.h"
#include "regression_file.h"

namespace tcc::differential {
namespace {

void writeAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

// The child checks the case and writes outcome (with "z" for an all-zero
// result and ";NAME" for each oracle that evaluated it), signature and
// detail, separated by NUL bytes; a child that dies first is a crash.
Verdict checkProgramIsolated(const std::string& programText, const std::map<std::string, rt::Coo>& inputs,
                             const std::vector<const Oracle*>& oracles, int timeoutSeconds, bool compileOnly) {
  int channel[2];
  if (pipe(channel) != 0) return {Outcome::InvalidCase, "pipe failed", "invalid"};
  pid_t child = fork();
  if (child < 0) return {Outcome::InvalidCase, "fork failed", "invalid"};
  if (child == 0) {
    close(channel[0]);
    alarm(static_cast<unsigned>(timeoutSeconds));
    Verdict verdict = checkProgram(programText, inputs, oracles, compileOnly);
    std::string message = std::to_string(static_cast<int>(verdict.outcome)) + (verdict.zeroResult ? "z" : "");
    for (const auto& oracle : verdict.checkedBy) message += ";" + oracle;
    message += '\0' + verdict.signature + '\0' + verdict.detail;
    writeAll(channel[1], message);
    close(channel[1]);
    _exit(0);
  }
  close(channel[1]);
  std::string message;
  char buffer[4096];
  for (ssize_t n; (n = read(channel[0], buffer, sizeof buffer)) > 0;) message.append(buffer, static_cast<size_t>(n));
  close(channel[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (WIFSIGNALED(status)) {
    int signal = WTERMSIG(status);
    std::string name = signal == SIGALRM ? "timeout after " + std::to_string(timeoutSeconds) + " s"
                                         : std::string("signal ") + strsignal(signal);
    return {Outcome::Crash, name, "crash: " + name};
  }
  size_t first = message.find('\0'), second = first == std::string::npos ? first : message.find('\0', first + 1);
  if (second == std::string::npos)
    return {Outcome::Crash, "child exited with status " + std::to_string(WEXITSTATUS(status)), "crash: exit"};
  Verdict verdict;
  std::string head = message.substr(0, first);
  for (size_t at = head.rfind(';'); at != std::string::npos; at = head.rfind(';')) {
    verdict.checkedBy.insert(verdict.checkedBy.begin(), head.substr(at + 1));
    head.erase(at);
  }
  verdict.outcome = static_cast<Outcome>(std::stoi(head));
  verdict.zeroResult = head.back() == 'z';
  verdict.signature = message.substr(first + 1, second - first - 1);
  verdict.detail = message.substr(second + 1);
  return verdict;
}

namespace {

std::string fileName(const Case& c, const Verdict& verdict) {
  std::string name = toString(verdict.outcome) + "_" + c.origin;
  std::string clean;
  for (char ch : name) {
    if (std::isalnum(static_cast<unsigned char>(ch))) clean += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    else if (!clean.empty() && clean.back() != '_') clean += '_';
  }
  while (!clean.empty() && clean.back() == '_') clean.pop_back();
  return clean + ".tc";
}

std::string oneLine(std::string text) {
  for (char& ch : text)
    if (ch == '\n') ch = ' ';
  return text;
}

}  // namespace

bool isFinding(Outcome outcome) {
  return outcome != Outcome::Matched && outcome != Outcome::Refused && outcome != Outcome::CompiledNotRun;
}

Verdict checkCase(const Case& c, const CampaignOptions& options) {
  if (options.isolate)
    return checkProgramIsolated(c.programText(), c.data, options.oracles, options.timeoutSeconds, options.compileOnly);
  return checkProgram(c.programText(), c.data, options.oracles, options.compileOnly);
}

Finding investigate(const Case& c, const Verdict& verdict, const CampaignOptions& options) {
  Finding finding{c, verdict, std::nullopt, std::nullopt, verdict, ""};
  auto check = [&](const Case& variant) { return checkCase(variant, options); };
  finding.knownBug = knownOpenBug(c, verdict, check);
  if (options.minimizeFindings && (!finding.knownBug || options.minimizeKnownBugs)) {
    MinimizeOptions limits;
    limits.maxAttempts = options.minimizeAttempts;
    auto result = minimize(c, [&](const Case& candidate) { return check(candidate).signature == verdict.signature; },
                           limits);
    finding.minimized = result.reduced;
    finding.minimizedVerdict = check(result.reduced);
    // The smaller case tells more reliably which bug it is.
    finding.knownBug = knownOpenBug(result.reduced, finding.minimizedVerdict, check);
  }
  const Case& shown = finding.minimized ? *finding.minimized : c;
  if (!options.saveDir.empty() && (finding.minimized || !finding.knownBug)) {
    std::filesystem::create_directories(options.saveDir);
    std::vector<std::string> header = {
        "differential regression: " + toString(verdict.outcome) + " (generated from " + c.origin +
            (finding.minimized ? ", minimized)" : ")"),
        "found: " + oneLine(finding.minimizedVerdict.detail.substr(0, 300))};
    if (finding.knownBug) header.push_back("open bug: " + *finding.knownBug);
    finding.savedPath = options.saveDir + "/" + fileName(c, verdict);
    std::ofstream(finding.savedPath) << regressionFileText(shown, header);
  }
  return finding;
}

}  // namespace tcc::differential
