// Checks that span several keys, run once every key has been read.
#pragma once

#include "reader.hpp"

#include <riomesh/config/settings.hpp>

namespace riomesh::config::detail {

void validate(const settings& value, reader& in);

}  // namespace riomesh::config::detail
