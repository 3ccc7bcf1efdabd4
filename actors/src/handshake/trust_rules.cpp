#include <riomesh/actors/handshake/trust_rules.hpp>

namespace riomesh::actors {
namespace {

peer_verdict refuse(std::string why, bool wrong_node = false) {
  peer_verdict v;
  v.why = std::move(why);
  v.wrong_node = wrong_node;
  return v;
}

peer_verdict accept(bool authenticated, bool admin = false) {
  peer_verdict v;
  v.ok = true;
  v.authenticated = authenticated;
  v.admin = admin;
  return v;
}

}  // namespace

peer_verdict judge(const peer_claim& c) {
  static const credentials none;
  const credentials& cr = c.creds ? *c.creds : none;
  const auto& name = c.claimed;
  if (name == c.our_name)
    return refuse("the peer claims this node's own name ('" + name + "')", true);
  if (c.we_dialed && !c.expected.empty() && name != c.expected)
    return refuse("expected node '" + c.expected + "', found node '" + name + "'", true);
  if (!c.we_dialed && !c.meant.empty())
    return refuse(
        "this is node '" + c.our_name + "', not node '" + c.meant + "' as the dialer expected",
        true);
  bool listed = cr.trusted.count(name) > 0;
  switch (c.proof) {
    case handshake::proof::key:
      if (name != c.proven)
        return refuse("its key is node '" + c.proven +
                      "''s in this node's keyring, but it claims to be '" + name + "'");
      return accept(true, cr.admins.count(name) > 0);
    case handshake::proof::secret:
      if (listed)
        return refuse("node '" + name +
                      "' is in this node's keyring: it proves its name with its key "
                      "(node.key_file), not with the cluster secret");
      if (!c.we_dialed && name != c.proven)
        return refuse("its cluster secret was bound to the name '" + c.proven +
                      "', but it claims to be '" + name + "'");
      return accept(true);
    case handshake::proof::none:
      break;
  }
  if (listed)
    return refuse("node '" + name +
                  "' is in this node's keyring, but did not prove itself with the key listed "
                  "there (an impostor, or a wrong node.key_file)");
  if (!cr.secret.empty())
    return refuse(c.we_dialed
                      ? "the peer did not prove the cluster secret (it has none, or another)"
                      : "the peer did not prove the cluster secret" +
                            (c.psk_declined.empty() ? std::string{" (it offered none)"}
                                                    : ": " + c.psk_declined));
  if (!cr.trusted.empty())
    return refuse("no key for node '" + name +
                  "' in this node's keyring, and no cluster secret to accept it by");
  if (!c.allow_unauthenticated)
    return refuse(
        "neither side proves itself (no cluster secret, no node key), and this node only "
        "accepts that on loopback or with cluster.insecure: true");
  return accept(false);
}

}  // namespace riomesh::actors
