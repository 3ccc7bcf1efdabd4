// Text rules shared by every layer: what a node name may be, and how text
// that came from elsewhere (a peer, a file) is made safe to print.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace riomesh::config {

// 1 to 64 letters, digits, '-', '_' or '.', starting with a letter or digit.
bool is_node_name(std::string_view text);
inline constexpr const char* node_name_rule =
    "1 to 64 letters, digits, '-', '_' or '.', starting with a letter or digit";

// `text` with every byte outside printable ASCII as \xNN and '\' as \\: a
// peer's string printed this way cannot end a log line, forge another, or
// send escape sequences to a terminal.
std::string printable(std::string_view text);

// "Did you mean": the candidate closest to `word` by edit distance, if it
// is close enough to be a likely typo; empty otherwise.
std::string closest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace riomesh::config
