// SPDX-License-Identifier: Apache-2.0
// ConfirmMemo: a repeated message is confirmed once, and the memo never
// answers for other bytes, another rule or another RuleSet.
#include "matcher/confirm_memo.h"

#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "tests/matcher/rule_test_util.h"

namespace faultline {
namespace {

ConfirmMemo::Result Matched(std::uint16_t offset, std::uint16_t size) {
  ConfirmMemo::Result r;
  r.matched = true;
  r.spans[0] = {offset, size};
  return r;
}

// Runs `body` on a thread of its own: a fresh memo (each thread has one),
// not switched off by what earlier tests of this thread confirmed.
template <class Body>
void OnFreshThread(const Body& body) {
  std::thread t(body);
  t.join();
}

TEST_CASE("the memo answers only for the very bytes stored, whatever their hashes") {
  OnFreshThread([] {
    ConfirmMemo memo;
    const std::string a = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1";
    const std::string b = "NVRM: Xid (PCI:0000:3b:00): 78, pid=1";  // one byte apart
    constexpr std::uint64_t kSameHash = 42;                         // they collide
    memo.Store(1, 0, MemoText(a, kSameHash), Matched(11, 15));
    const ConfirmMemo::Result* hit = memo.Find(1, 0, MemoText(a, kSameHash));
    REQUIRE(hit);
    CHECK(hit->matched);
    CHECK(hit->spans[0].offset == 11);
    CHECK_FALSE(memo.Find(1, 0, MemoText(b, kSameHash)));
    CHECK_FALSE(memo.Find(1, 0, MemoText(a.substr(0, a.size() - 1), kSameHash)));
    // a, b and c share a set of kWays == 2 slots: storing c evicts one of
    // a and b, and none answers for another.
    static_assert(ConfirmMemo::kWays == 2);
    const std::string c = "NVRM: Xid (PCI:0000:3b:00): 77, pid=1";
    memo.Store(1, 0, MemoText(b, kSameHash), ConfirmMemo::Result{});
    const ConfirmMemo::Result* miss = memo.Find(1, 0, MemoText(b, kSameHash));
    REQUIRE(miss);
    CHECK_FALSE(miss->matched);
    memo.Store(1, 0, MemoText(c, kSameHash), Matched(1, 2));
    const ConfirmMemo::Result* found_c = memo.Find(1, 0, MemoText(c, kSameHash));
    REQUIRE(found_c);
    CHECK(found_c->spans[0].offset == 1);
    const ConfirmMemo::Result* found_a = memo.Find(1, 0, MemoText(a, kSameHash));
    const ConfirmMemo::Result* found_b = memo.Find(1, 0, MemoText(b, kSameHash));
    CHECK((found_a == nullptr) != (found_b == nullptr));
    if (found_a) CHECK(found_a->spans[0].offset == 11);
    if (found_b) CHECK_FALSE(found_b->matched);
  });
}

TEST_CASE("the memo answers only for the rule and the RuleSet that stored it") {
  ConfirmMemo memo;
  const std::string text = "mlx5_core: link down on port 1";
  memo.Store(1, 3, MemoText(text), Matched(0, 9));
  CHECK(memo.Find(1, 3, MemoText(text)));
  CHECK_FALSE(memo.Find(1, 4, MemoText(text)));
  CHECK_FALSE(memo.Find(2, 3, MemoText(text)));
  CHECK(ConfirmMemo::NewOwner() != ConfirmMemo::NewOwner());
}

TEST_CASE("long texts and rules with many groups are not memoised, and rare hits turn it off") {
  ConfirmMemo memo;
  CHECK(memo.Usable(std::string(ConfirmMemo::kMaxTextBytes, 'x'), ConfirmMemo::kMaxGroups));
  CHECK_FALSE(memo.Usable(std::string(ConfirmMemo::kMaxTextBytes + 1, 'x'), 1));
  CHECK_FALSE(memo.Usable("short", ConfirmMemo::kMaxGroups + 1));
  // A window of distinct texts: no hits, so the memo is off for a while.
  for (std::uint32_t i = 0; i < ConfirmMemo::kWindow; ++i) {
    REQUIRE(memo.Usable("line", 1));
    memo.Find(1, 0, MemoText("line " + std::to_string(i)));
  }
  CHECK_FALSE(memo.Usable("line", 1));
  for (std::uint32_t i = 1; i < ConfirmMemo::kOffConfirmations; ++i) memo.Usable("line", 1);
  CHECK(memo.Usable("line", 1));
}

const char* const kLinkPack = R"(pack: link
version: 1
defaults: {sources: [kernel], category: network}
rules:
  - id: ib.link
    pattern: 'mlx5_core (?P<pci>[0-9a-f:.]+): Port (?P<port>\d+) link (?P<state>down|up)(?: \((?P<why>[a-z ]+)\))?'
    summary: 'port {port} {state}'
)";

using Fields = std::map<std::string, std::string>;

// The fields of each match of `text`, through Match and through the
// one-record path (its candidate rules only).
std::vector<Fields> FieldsOf(const RuleSet& set, std::string_view text) {
  std::vector<Fields> out;
  for (int path = 0; path < 2; ++path) {
    std::vector<RuleMatch> matches;
    if (path == 0) {
      set.Match(text, Origin::kKernel, matches);
    } else {
      set.MatchRecordText(text, Origin::kKernel, matches);
    }
    for (const RuleMatch& m : matches) out.push_back(m.fields);
  }
  return out;
}

TEST_CASE("repeated lines, and lines one byte apart, get RE2's matches and groups") {
  Loaded l = LoadPack(kLinkPack);
  REQUIRE(l.set);
  OnFreshThread([&] {
    const std::string down = "mlx5_core 0000:3b:00.0: Port 1 link down (cable pulled)";
    const std::string up = "mlx5_core 0000:3b:00.0: Port 1 link up";
    const std::string other_port = "mlx5_core 0000:3b:00.0: Port 2 link down (cable pulled)";
    // Every literal of the pattern, but no PCI address: RE2 says no.
    const std::string near_miss = "mlx5_core ZZZZ:3b:00.0: Port 1 link down (cable pulled)";
    const Fields down_fields{
        {"pci", "0000:3b:00.0"}, {"port", "1"}, {"state", "down"}, {"why", "cable pulled"}};
    const Fields up_fields{{"pci", "0000:3b:00.0"}, {"port", "1"}, {"state", "up"}};
    Fields port2 = down_fields;
    port2["port"] = "2";
    const std::uint64_t hits_before = ConfirmMemo::ForThisThread().hits();
    const std::uint64_t set_hits_before = ConfirmMemo::ForSetsOfThisThread().hits();
    for (int i = 0; i < 50; ++i) {
      CHECK(FieldsOf(*l.set, down) == std::vector<Fields>{down_fields, down_fields});
      CHECK(FieldsOf(*l.set, other_port) == std::vector<Fields>{port2, port2});
      CHECK(FieldsOf(*l.set, up) == std::vector<Fields>{up_fields, up_fields});
      CHECK(FieldsOf(*l.set, near_miss).empty());  // a near-miss storm: no match each time
    }
    // Each text was confirmed by RE2 once, then answered by the memo
    // (on both paths: the memo is keyed by the bytes, not by the caller);
    // the near miss reaches the rule's RE2 on the one-record path only
    // (Match's Set turns it away first).
    CHECK(ConfirmMemo::ForThisThread().hits() - hits_before == 3 * (50 * 2 - 1) + (50 - 1));
    // Match's Set answer for each of the four texts, from the Sets' memo
    // after the first.
    CHECK(ConfirmMemo::ForSetsOfThisThread().hits() - set_hits_before == 4 * (50 - 1));
  });
}

const char* const kTwoOriginsPack = R"(pack: origins
version: 1
defaults: {category: network}
rules:
  - id: kernel.link
    sources: [kernel]
    pattern: 'link (?:down|lost)'
    summary: 'kernel link'
  - id: pod.link
    sources: [pod]
    pattern: 'link (?:down|flap)'
    summary: 'pod link'
  - id: pod.port
    sources: [pod]
    pattern: 'port (?P<port>\d+) link'
    summary: 'pod port'
)";

std::vector<std::string> RuleIds(const RuleSet& set, std::string_view text, Origin origin) {
  std::vector<RuleMatch> matches;
  set.Match(text, origin, matches);
  std::vector<std::string> ids;
  ids.reserve(matches.size());
  for (const RuleMatch& m : matches) ids.push_back(m.rule->id);
  return ids;
}

TEST_CASE("the Set's answer is the memo's only for the origin that asked it") {
  Loaded l = LoadPack(kTwoOriginsPack);
  REQUIRE(l.set);
  OnFreshThread([&] {
    const std::string text = "port 3 link down";
    using Ids = std::vector<std::string>;
    const std::uint64_t hits_before = ConfirmMemo::ForThisThread().hits();
    const std::uint64_t set_hits_before = ConfirmMemo::ForSetsOfThisThread().hits();
    for (int i = 0; i < 20; ++i) {
      CHECK(RuleIds(*l.set, text, Origin::kKernel) == Ids{"kernel.link"});
      CHECK(RuleIds(*l.set, text, Origin::kPod) == Ids{"pod.link", "pod.port"});
      CHECK(RuleIds(*l.set, "port 3 link flap", Origin::kKernel).empty());
    }
    // The three Set answers came from the Sets' memo after their first, and
    // pod.port's groups from the rules' memo.
    CHECK(ConfirmMemo::ForSetsOfThisThread().hits() - set_hits_before == 3 * (20 - 1));
    CHECK(ConfirmMemo::ForThisThread().hits() - hits_before == 20 - 1);
  });
}

TEST_CASE("a reloaded RuleSet is never answered from the memo of the one it replaced") {
  const std::string text = "mlx5_core 0000:3b:00.0: Port 1 link down (cable pulled)";
  OnFreshThread([&] {
    {
      Loaded old_set = LoadPack(kLinkPack);
      REQUIRE(old_set.set);
      for (int i = 0; i < 3; ++i) REQUIRE(FieldsOf(*old_set.set, text).size() == 2);
    }  // freed: the next RuleSet may take its address
    std::string pack = kLinkPack;
    const std::string old_pattern = "Port (?P<port>\\d+)";
    pack.replace(pack.find(old_pattern), old_pattern.size(), "Port (?P<port>\\d)(?P<more>\\d*)");
    Loaded reloaded = LoadPack(pack);
    REQUIRE(reloaded.set);
    const Fields fields{{"more", ""},
                        {"pci", "0000:3b:00.0"},
                        {"port", "1"},
                        {"state", "down"},
                        {"why", "cable pulled"}};
    CHECK(FieldsOf(*reloaded.set, text) == std::vector<Fields>{fields, fields});
  });
}

TEST_CASE("many threads confirm the same storm on one RuleSet, each with its own memo") {
  Loaded l = LoadPack(kLinkPack);
  REQUIRE(l.set);
  const std::vector<std::string> texts = {
      "mlx5_core 0000:3b:00.0: Port 1 link down (cable pulled)",
      "mlx5_core 0000:3b:00.0: Port 1 link up",
      "mlx5_core ZZZZ:3b:00.0: Port 1 link down",
  };
  std::vector<std::vector<Fields>> expected;
  expected.reserve(texts.size());
  for (const std::string& t : texts) expected.push_back(FieldsOf(*l.set, t));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        const std::size_t k = static_cast<std::size_t>(i + t) % texts.size();
        if (FieldsOf(*l.set, texts[k]) != expected[k]) ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(wrong == 0);
}

}  // namespace
}  // namespace faultline
