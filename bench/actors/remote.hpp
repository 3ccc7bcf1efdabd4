// Servers on another host, for runs across a link: `actor_bench agent
// PORT` there runs, for each connection to it, the command that connection
// names, with the connection as the command's stdin and stdout (what
// `nc -l -e` does, kept inside the bench); here, `actor_bench relay HOST
// PORT ARGV...` stands in for that command as a child process: its stdin
// goes to the far command, the far command's stdout comes out of it.
// Bench infrastructure for a test network: the agent authenticates no one,
// so it runs nothing but the bench's own servers.
// --servers-at HOST:PORT (env ACTOR_BENCH_SERVERS_AT) turns it on.
#pragma once

#include <string>
#include <vector>

namespace bench {

// Listens on ADDRESS:PORT; runs only this bench's servers (`self serve
// ...`) and the rdma tools, whoever asks.
int agent(const std::string& address, int port, const std::string& self);
int relay(const std::string& host, const std::string& port, char** argv);

// `argv`, to run where the servers run: through the relay to the agent
// with --servers-at, else as it is.
std::vector<std::string> on_server_host(std::vector<std::string> argv);
// Where clients find the servers: the --servers-at host, else the VM's
// RDMA address, else loopback.
std::string server_address();
bool servers_remote();

}  // namespace bench
