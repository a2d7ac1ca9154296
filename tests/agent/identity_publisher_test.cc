// SPDX-License-Identifier: Apache-2.0
// The node identity the agent publishes for fleet correlation (issue 16.1):
// IB/RoCE GIDs from a sysfs tree (zero entries skipped, canonical form),
// the boot id, interface addresses without loopback.
#include "collector/agent/identity_publisher.h"

#include <algorithm>

#include <doctest/doctest.h>

#include "tests/fakes/fake_clock.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

TEST_CASE("Collect reads port GIDs from the sysfs root, skipping unused (zero) entries") {
  TempDir dir;
  const std::string ports = "sys/class/infiniband/mlx5_3/ports/1/gids/";
  dir.Write(ports + "0", "fe80:0000:0000:0000:0002:c903:0031:7c41\n");
  dir.Write(ports + "1", "0000:0000:0000:0000:0000:ffff:0a00:0411\n");  // RoCE v2, IPv4
  dir.Write(ports + "2", "0000:0000:0000:0000:0000:0000:0000:0000\n");
  dir.Write("sys/class/infiniband/mlx5_5/ports/1/gids/0",
            "fe80:0000:0000:0000:0002:c903:0031:7c45\n");
  dir.Write("boot_id", "0f5f5cd2-3d3e-4d8e-9d3b-4a0a4c3c1f00\n");
  IdentityPublisher::Options o;
  o.node = "gpu-17";
  o.sysfs_root = (dir.path() / "sys").string();
  o.boot_id_path = (dir.path() / "boot_id").string();
  const NodeIdentity id = IdentityPublisher::Collect(o);
  CHECK(id.node == "gpu-17");
  CHECK(id.boot_id == "0f5f5cd2-3d3e-4d8e-9d3b-4a0a4c3c1f00");
  CHECK(id.gids ==
        std::vector<std::string>{"10.0.4.17", "fe80::2:c903:31:7c41", "fe80::2:c903:31:7c45"});
  CHECK(std::find(id.addresses.begin(), id.addresses.end(), "127.0.0.1") == id.addresses.end());
  CHECK(std::find(id.addresses.begin(), id.addresses.end(), "::1") == id.addresses.end());
  CHECK_FALSE(id.hostname.empty());
  // What goes on the wire reads back.
  auto back = ParseNodeIdentity(SerializeNodeIdentity(id));
  REQUIRE(back);
  CHECK(back->gids == id.gids);
}

TEST_CASE("Collect without InfiniBand or a boot id still names the node") {
  TempDir dir;
  IdentityPublisher::Options o;
  o.node = "cpu-1";
  o.sysfs_root = (dir.path() / "none").string();
  o.boot_id_path = (dir.path() / "none").string();
  const NodeIdentity id = IdentityPublisher::Collect(o);
  CHECK(id.node == "cpu-1");
  CHECK(id.gids.empty());
  CHECK(id.boot_id.empty());
}

// The identity message says when it was published ("published", RFC 3339):
// the time of the clock the agent hands down, not one read behind its back.
TEST_CASE("Collect stamps the identity with the clock in its options") {
  TempDir dir;
  FakeClock clock;
  clock.Advance(std::chrono::minutes(3));
  IdentityPublisher::Options o;
  o.node = "gpu-7";
  o.sysfs_root = (dir.path() / "none").string();
  o.boot_id_path = (dir.path() / "none").string();
  o.clock = &clock;
  CHECK(IdentityPublisher::Collect(o).published == clock.Now());
}

}  // namespace
}  // namespace faultline
