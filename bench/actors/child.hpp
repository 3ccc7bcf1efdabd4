// A process the bench starts, with a pipe to its stdin and one from its
// stdout: the bench's side of process_io.hpp.
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <string>
#include <vector>

namespace bench {

class child {
 public:
  explicit child(const std::vector<std::string>& argv);
  ~child();
  child(const child&) = delete;
  child& operator=(const child&) = delete;

  // The next line of its stdout, without the newline; false at its end.
  bool next_line(std::string& line);
  // Reads lines until one starts with `prefix` and puts the rest of it in
  // `rest`; false if its stdout ended first.
  bool await(const std::string& prefix, std::string& rest);
  void say(const std::string& line);
  void close_stdin();
  // Closes its stdin, reads its stdout to the end into `rest` and reaps it:
  // true if it exited 0.
  bool finish(std::vector<std::string>& rest);

 private:
  pid_t pid_ = -1;
  int to_ = -1;
  FILE* from_ = nullptr;
};

}  // namespace bench
