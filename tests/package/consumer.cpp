// Embeds a riomesh node the way the README tells users to.
#include <riomesh/runtime.hpp>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer NODE.yaml\n";
    return 2;
  }
  auto rt = riomesh::runtime::from_file(argv[1]);
  std::cout << "consumer: node '" << rt.settings().node.name << "' with " << rt.worker_threads()
            << " workers\n";
  return 0;
}
