// Loads a node's YAML file into validated settings. A file with any error
// yields no settings at all: a node never starts half-configured.
#pragma once

#include <riomesh/config/diagnostic.hpp>
#include <riomesh/config/overrides.hpp>
#include <riomesh/config/settings.hpp>

#include <string>
#include <vector>

namespace riomesh::config {

// Reads, parses and validates `path`, then applies `extra` on top.
// Throws config::error naming file, line and column of every problem.
settings load_file(const std::string& path, const overrides& extra = {});

// The same for YAML text; `source` names it in messages and relative paths
// (secret_file) resolve against `base_dir`.
settings load_string(const std::string& yaml, const std::string& source,
                     const std::string& base_dir = ".", const overrides& extra = {});

// What could be read of `path` (settings only where their text was good),
// and every problem found, in line order, appended to `problems`: for
// checkers that go on to report the rest (riomesh-node --check).
settings read_file(const std::string& path, const overrides& extra,
                   std::vector<diagnostic>& problems);

// `s` with `extra` applied; throws config::error naming each bad option.
settings apply(const overrides& extra, settings s);

}  // namespace riomesh::config
