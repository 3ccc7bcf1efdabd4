// rsocket_peer / riomesh_peer: one role of an interop case (cases.hpp),
// on librdmacm's rsocket API or on riomesh, as the program was built.
//
//   *_peer CASE ROLE -s ADDR [-p PORT]              connect
//   *_peer CASE ROLE -b ADDR [-p PORT] [-r FILE]    listen, accept one
#include "cases.hpp"

#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

using namespace riomesh::interop;

int main(int argc, char** argv) {
  std::string server, bind_addr, port = "7471", ready_file;
  for (int opt; (opt = getopt(argc, argv, "s:b:p:r:")) != -1;) {
    switch (opt) {
      case 's':
        server = optarg;
        break;
      case 'b':
        bind_addr = optarg;
        break;
      case 'p':
        port = optarg;
        break;
      case 'r':
        ready_file = optarg;
        break;
      default:
        return 2;
    }
  }
  if (argc - optind != 2 || !known_case(argv[optind], argv[optind + 1]) ||
      server.empty() == bind_addr.empty()) {
    std::fprintf(stderr,
                 "usage: %s CASE ROLE (-s ADDR | -b ADDR [-r FILE]) [-p PORT]\n"
                 "  ordering writer|reader, maps writer|reader, shutdown first|second,\n"
                 "  close streamer|closer|vanish\n",
                 argv[0]);
    return 2;
  }
  std::string name = argv[optind], role = argv[optind + 1];
  auto api = make_peer_api();
  bool up = false;
  if (!server.empty()) {
    // The other side may not listen yet: retry for a while.
    for (int i = 0; i < 100 && !up; ++i) {
      up = api->connect(server, port, iomap_slots);
      if (!up) {
        api = make_peer_api();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  } else {
    up = api->accept(bind_addr, port, iomap_slots, ready_file);
  }
  if (!up) {
    std::fprintf(stderr, "%s: cannot connect: %s\n", api->name(), api->error().c_str());
    return 1;
  }
  bool ok = run_case(name, role, *api);
  api->close();
  std::printf("%s: %s %s: %s\n", api->name(), name.c_str(), role.c_str(), ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
