// SPDX-License-Identifier: Apache-2.0
// Suppressor: first occurrence at once, repeats folded per (rule, captures).
#include "collector/agent/suppressor.h"

#include <doctest/doctest.h>

namespace faultline {
namespace {

using std::chrono::seconds;

FaultEvent Event(std::string rule, std::string pci) {
  FaultEvent e;
  e.rule = std::move(rule);
  e.fields = {{"pci", std::move(pci)}};
  return e;
}

Suppressor::Verdict Admit(Suppressor& s, FaultEvent e, Suppressor::Hold h,
                          std::chrono::steady_clock::time_point t,
                          std::vector<Suppressor::FollowUp>& due) {
  return s.Admit(e, h, t, due);
}

TEST_CASE(
    "the suppressor keys on rule and every capture, and windows restart while repeats go on") {
  Suppressor s({std::chrono::milliseconds(seconds(60)), 1000});
  const auto t0 = std::chrono::steady_clock::time_point(seconds(100));
  std::vector<Suppressor::FollowUp> due;
  using V = Suppressor::Verdict;
  CHECK(Admit(s, Event("xid", "a"), {0, 1}, t0, due) == V::kPublish);
  CHECK(Admit(s, Event("xid", "b"), {0, 2}, t0, due) == V::kPublish);    // other capture
  CHECK(Admit(s, Event("other", "a"), {0, 3}, t0, due) == V::kPublish);  // other rule
  CHECK(Admit(s, Event("xid", "a"), {0, 4}, t0, due) == V::kFoldedAndHeld);
  CHECK(Admit(s, Event("xid", "a"), {0, 5}, t0, due) == V::kFolded);
  CHECK(Admit(s, Event("xid", "a"), {1, 9}, t0, due) == V::kFoldedAndHeld);  // another source
  CHECK(due.empty());

  s.TakeDue(t0 + seconds(59), due);
  CHECK(due.empty());
  s.TakeDue(t0 + seconds(60), due);
  REQUIRE(due.size() == 1);
  CHECK(due[0].event.suppressed == 2);  // 3 repeats: the event itself and 2 more
  REQUIRE(due[0].holds.size() == 2);
  CHECK(due[0].holds[0].seq == 4);
  CHECK(due[0].holds[1].holder == 1);
  CHECK(s.entries() == 1);  // "xid/a" had repeats: a new window; the idle keys are gone

  due.clear();
  s.TakeDue(t0 + seconds(121), due);  // a quiet window ends the entry
  CHECK(due.empty());
  CHECK(s.entries() == 0);
  CHECK(Admit(s, Event("xid", "a"), {0, 10}, t0 + seconds(122), due) == V::kPublish);
}

// Issue 12.5: the pipeline flushes the windows whose hold has too many
// records behind it; each goes on folding until its own window end.
TEST_CASE("an early flush sends the follow-ups holding a source's old records, window kept") {
  Suppressor s({std::chrono::milliseconds(seconds(60)), 1000});
  const auto t0 = std::chrono::steady_clock::time_point(seconds(100));
  std::vector<Suppressor::FollowUp> due;
  using V = Suppressor::Verdict;
  CHECK(Admit(s, Event("xid", "a"), {0, 1}, t0, due) == V::kPublish);
  CHECK(Admit(s, Event("xid", "b"), {0, 2}, t0, due) == V::kPublish);
  CHECK(Admit(s, Event("xid", "c"), {1, 1}, t0, due) == V::kPublish);
  CHECK(Admit(s, Event("xid", "a"), {0, 10}, t0, due) == V::kFoldedAndHeld);
  CHECK(Admit(s, Event("xid", "a"), {0, 11}, t0, due) == V::kFolded);
  CHECK(Admit(s, Event("xid", "b"), {0, 50}, t0, due) == V::kFoldedAndHeld);  // newer hold
  CHECK(Admit(s, Event("xid", "c"), {1, 5}, t0, due) == V::kFoldedAndHeld);   // other source

  s.FlushHeld(0, 20, due);
  REQUIRE(due.size() == 1);
  CHECK(due[0].event.fields.at("pci") == "a");
  CHECK(due[0].event.suppressed == 1);  // 2 repeats: the event and 1 more
  REQUIRE(due[0].holds.size() == 1);
  CHECK(due[0].holds[0].seq == 10);
  due.clear();
  s.FlushHeld(0, 20, due);  // nothing held there any more
  CHECK(due.empty());

  // "a" goes on folding in the same window: a new hold, sent at its end.
  CHECK(Admit(s, Event("xid", "a"), {0, 60}, t0 + seconds(30), due) == V::kFoldedAndHeld);
  s.TakeDue(t0 + seconds(59), due);
  CHECK(due.empty());
  s.TakeDue(t0 + seconds(60), due);
  CHECK(due.size() == 3);  // a, b and c at the window's end
}

// Issue 11.4: distinct lines are all new keys, held for the whole window.
TEST_CASE("the suppressor's memory is bounded: past it, new keys are published unfolded") {
  Suppressor::Options options{std::chrono::milliseconds(seconds(60)), 1000};
  options.max_bytes = 64UL * 1024;
  Suppressor s(options);
  const auto t0 = std::chrono::steady_clock::time_point(seconds(100));
  std::vector<Suppressor::FollowUp> due;
  using V = Suppressor::Verdict;
  std::size_t published = 0;
  for (int i = 0; i < 10000; ++i) {
    const std::string pci(400, static_cast<char>('a' + i % 26));
    if (Admit(s, Event("nccl", pci + std::to_string(i)), {0, std::uint64_t(i)}, t0, due) ==
        V::kPublish) {
      ++published;
    }
    CHECK(s.bytes() <= options.max_bytes);
  }
  CHECK(published == 10000);  // every distinct line is published: nothing is lost
  CHECK(s.bypassed() > 9000);
  CHECK(s.entries() < 200);
  // Keys entered before the bound still fold their repeats.
  CHECK(Admit(s, Event("nccl", std::string(400, 'a') + "0"), {0, 10001}, t0, due) ==
        V::kFoldedAndHeld);
  CHECK(s.bytes() <= options.max_bytes + 8192);  // the held event of that entry
  s.TakeAll(due);
  CHECK(s.bytes() == 0);
}

TEST_CASE("a zero window turns suppression off") {
  Suppressor s({std::chrono::milliseconds(0), 1000});
  std::vector<Suppressor::FollowUp> due;
  const auto t = std::chrono::steady_clock::time_point();
  for (int i = 0; i < 3; ++i) {
    CHECK(Admit(s, Event("xid", "a"), {0, 1}, t, due) == Suppressor::Verdict::kPublish);
  }
  CHECK(s.entries() == 0);
}

}  // namespace
}  // namespace faultline
