#include <riomesh/actors/envelope/body_pool.hpp>

namespace riomesh::actors::body_pool {
namespace {

thread_local std::vector<std::vector<unsigned char>> spare;

}  // namespace

std::vector<unsigned char> take() {
  if (spare.empty())
    return {};
  auto out = std::move(spare.back());
  spare.pop_back();
  return out;
}

void give(std::vector<unsigned char>&& body) {
  if (body.capacity() == 0 || body.capacity() > largest || spare.size() >= kept)
    return;
  body.clear();
  spare.push_back(std::move(body));
}

}  // namespace riomesh::actors::body_pool
