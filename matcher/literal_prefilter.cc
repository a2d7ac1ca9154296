// SPDX-License-Identifier: Apache-2.0
// Required-literal extraction from RE2 syntax, and the Vectorscan literal
// matcher that finds them all in one pass over a buffer.
#include "matcher/literal_prefilter.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include <hs/hs.h>

#include "matcher/ascii.h"
#include "matcher/find_literal.h"
#include "matcher/literal_keys.h"
#include "matcher/re2_syntax.h"

namespace faultline {
namespace {

// ---- Extraction -----------------------------------------------------------
//
// A walk over the pattern's tree (ParseRe2, re2_syntax.h) that computes, per
// node, either the exact string it matches (a run of literal characters) or
// a set of literals one of which every match contains. Anything it does not
// understand makes the node "unknown", which only loses prefiltering for the
// rule, never a match.

using LitSet = std::vector<RequiredLiteral>;

// Typical noise of a GPU node's logs: literals that occur here are common and
// make poor prefilter keys (every line would be a candidate).
constexpr std::string_view kNoise =
    "kernel: audit: type=1400 audit(1700000000.000:100): apparmor=\"STATUS\" "
    "systemd[1]: Started Session 1 of user root. Starting Daily Cleanup of Temporary Directories "
    "containerd[812]: time=\"2026-11-22T07:02:53Z\" level=info msg=\"StartContainer for \" "
    "kubelet[901]: I1122 07:02:53.179000 901 kubelet.go:2000] \"SyncLoop (PLEG): event for pod\" "
    "pod=\"default/train-0\" event=&{ID:abc Type:ContainerStarted Data:} "
    "reconciler.go operationExecutor.VerifyControllerAttachedVolume started for volume "
    "IPv6: ADDRCONF(NETDEV_CHANGE): eth0: link becomes ready EXT4-fs (nvme0n1p1): mounted "
    "filesystem "
    "NCCL INFO Channel 00/32 : 0 1 2 3 4 5 6 7 NCCL INFO Connected all rings comm 0x55 rank 0 "
    "nranks 8 "
    "NCCL INFO Using network IB NCCL INFO Bootstrap : Using eth0 "
    "INFO epoch 1 step 100 loss 2.345 lr 0.0001 throughput 1234.5 samples/sec "
    "sshd[1234]: Accepted publickey for root from 10.0.0.1 port 22 ssh2 pam_unix(sshd:session): "
    "session opened "
    "CRON[2222]: (root) CMD (command -v debian-sa1 > /dev/null && debian-sa1 1 1) "
    "nvidia-persistenced: device 0000:3b:00.0 - registered "
    "NVRM: loading NVIDIA UNIX x86_64 Kernel Module 535.129.03 NVRM: GPU at PCI:0000:3b:00 "
    "NVRM: GPU Board Serial Number: nvidia-nvswitch0: open "
    "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0 NCCL INFO Channel 24/0 via NET/IB/4/GDRDMA "
    "mlx5_0 port 1 port_rcv_packets +672909 (total 2046949073) port_xmit_data +1 (total 2) "
    "XFS (nvme1n1): Ending clean mount XFS (nvme2n1): Mounting V5 Filesystem "
    "systemd-networkd[1021]: veth6160251: Lost carrier veth6160251: Gained carrier "
    "nvidia-peermem: loading out-of-tree module taints kernel. nvidia_peermem: module verification "
    "EDAC MC0: Giving out device to module skx_edac controller "
    "I/O error, dev loop2, sector 0 op 0x0:(READ) level=ERROR ERROR "
    "mlx5_core 0000:5e:00.0: firmware version 28.39.1002 mlx5_core: E-Switch: Total vports "
    "eth0: Link is Up - 100Gbps/Full - flow control off "
    "dockerd level=warning msg=\"cleaning up after shim disconnected\" error GET /healthz 200";

double ByteWeight(unsigned char c) {
  if (c == ' ') return 0.3;
  if (c >= '0' && c <= '9') return 0.6;  // timestamps and counters everywhere
  if (std::string_view("etaoinsrhl").find(static_cast<char>(c)) != std::string_view::npos) {
    return 0.8;
  }
  if (c >= 'a' && c <= 'z') return 1.2;
  if (c >= 'A' && c <= 'Z') return 1.6;
  if (std::string_view("._-/=,()[]\"").find(static_cast<char>(c)) != std::string_view::npos) {
    return 0.9;
  }
  return 1.8;
}

// Rarity of a literal in log text, in nats: -log of the estimated chance
// that a line holds it. Bytes add by class; a literal seen in the noise
// sample above is common whatever its length.
double ComputeScore(const RequiredLiteral& lit) {
  if (lit.text.size() < 3) return 0;
  double s = 0;
  for (unsigned char c : lit.text) s += ByteWeight(c);
  // Scored many times per pattern at start-up: the noise is lowered once.
  static const std::string lowered_noise = [] {
    std::string lowered(kNoise);
    std::transform(lowered.begin(), lowered.end(), lowered.begin(), ::tolower);
    return lowered;
  }();
  std::string_view hay = kNoise;
  std::string needle = lit.text;
  if (lit.caseless) {
    hay = lowered_noise;
    std::transform(needle.begin(), needle.end(), needle.begin(), ::tolower);
  }
  std::size_t hits = 0;
  for (std::size_t at = hay.find(needle); at != std::string_view::npos;
       at = hay.find(needle, at + 1)) {
    ++hits;
  }
  if (hits > 0) s = 0.5 + std::min(s, 2.0) / static_cast<double>(hits);
  return s;
}

// ComputeScore, remembered: sets are scored again and again while a
// pattern is read, and each score searches the noise sample.
double Score(const RequiredLiteral& lit) {
  thread_local std::unordered_map<std::string, double> memo;
  std::string key = (lit.caseless ? "i" : "s") + lit.text;
  if (auto it = memo.find(key); it != memo.end()) return it->second;
  const double score = ComputeScore(lit);
  memo.emplace(std::move(key), score);
  return score;
}

// Rarity of "one of these literals": -log of the summed chances, so that ten
// rare alternatives beat one common literal, and one common alternative
// spoils the set.
// With `cap`, each literal's rarity counts up to it (ConsiderSpelled).
double SetScore(const LitSet& set, double cap = HUGE_VAL) {
  if (set.empty()) return 0;
  double chance = 0;
  for (const RequiredLiteral& lit : set) {
    const double s = Score(lit);
    if (s <= 0) return 0;
    chance += std::exp(-std::min(s, cap));
  }
  return std::max(1e-6, -std::log(chance));
}

// A spelt-out set's rarity counts each string up to kRareEnough nats (about
// one line in 3,000): past that a longer spelling finds no fewer lines in
// practice, and each string is one more literal for Vectorscan to search.
constexpr double kRareEnough = 8.0;
constexpr std::size_t kMinSpelledBytes = 6;

struct Info {
  bool exact = false;  // the node matches exactly `text` (and nothing else)
  RequiredLiteral text;
  LitSet best;            // one of these occurs in every match; empty = unknown
  double best_score = 0;  // Concat's: the score `best` was chosen by
  // Every set considered for `best` in this node's own sequence: each is
  // also required (for confirming a prefilter hit).
  std::vector<LitSet> all;
  // Further required sets, from inside groups and alternations (one
  // option per branch, joined): alternatives a scan may prefer to `best`
  // when its input shows `best` is common there (rule_sampling.cc).
  std::vector<LitSet> alts;
  // Every string the node matches, when they are few (kMaxSpelled, "" for
  // an optional part): `NCCL (WARN|ERROR)` is {"NCCL ERROR", "NCCL WARN"},
  // rarer than "NCCL " or {"ERROR", "WARN"} alone. Users write a word's
  // variants so; spelling them out gave user-gpu's rules 6.5% fewer
  // instructions on its gen corpus (bench/README.md). Unset: unknown or
  // too many.
  std::optional<LitSet> spelled;
};

constexpr std::size_t kMaxAlternatives = 16;
constexpr std::size_t kMaxSpelled = 16;

// True if every line holding `longer` also holds `shorter`: then a set with
// both needs only `shorter`.
bool Implies(const RequiredLiteral& longer, const RequiredLiteral& shorter) {
  if (shorter.text.size() > longer.text.size()) return false;
  if (!shorter.caseless) {
    return !longer.caseless && longer.text.find(shorter.text) != std::string::npos;
  }
  auto lower = [](std::string t) {
    for (char& c : t) c = AsciiLower(c);
    return t;
  };
  return lower(longer.text).find(lower(shorter.text)) != std::string::npos;
}

// True if every line holding one of `a` also holds one of `b`.
bool SetImplies(const LitSet& a, const LitSet& b) {
  return std::all_of(a.begin(), a.end(), [&](const RequiredLiteral& x) {
    return std::any_of(b.begin(), b.end(), [&](const RequiredLiteral& y) { return Implies(x, y); });
  });
}

// `set` sorted, without repeats and without members that imply another
// (" Port module event[error]" beside " Port module event").
LitSet Minimal(LitSet set) {
  SortUniqueLiterals(set);
  LitSet out;
  for (std::size_t i = 0; i < set.size(); ++i) {
    bool implied = false;
    for (std::size_t j = 0; j < set.size() && !implied; ++j) {
      implied = j != i && Implies(set[i], set[j]) && !(Implies(set[j], set[i]) && j > i);
    }
    if (!implied) out.push_back(set[i]);
  }
  return out;
}

// `tail` after `head`: caseless where either non-empty part is (a caseless
// search also finds the exact text).
void Append(RequiredLiteral& head, const RequiredLiteral& tail) {
  head.caseless = (head.caseless && !head.text.empty()) || (tail.caseless && !tail.text.empty());
  head.text += tail.text;
}

// Each of `heads` followed by each of `tails`, or unset past kMaxSpelled
// strings.
std::optional<LitSet> Spell(const LitSet& heads, const LitSet& tails) {
  if (heads.size() * tails.size() > kMaxSpelled) return std::nullopt;
  LitSet out;
  for (const RequiredLiteral& h : heads) {
    for (const RequiredLiteral& t : tails) Append(out.emplace_back(h), t);
  }
  SortUniqueLiterals(out);
  return out;
}

bool HasEmpty(const LitSet& set) {
  return std::any_of(set.begin(), set.end(),
                     [](const RequiredLiteral& l) { return l.text.empty(); });
}

bool Usable(const LitSet& set) {
  return !set.empty() && std::all_of(set.begin(), set.end(),
                                     [](const RequiredLiteral& l) { return l.text.size() >= 3; });
}

// The required sets a node offers: its exact text, or its own sets.
std::vector<LitSet> Options(const Info& i) {
  std::vector<LitSet> out;
  if (i.exact) {
    if (i.text.text.size() >= 3) out.push_back({i.text});
    return out;
  }
  for (const std::vector<LitSet>* from : {&i.all, &i.alts}) {
    for (const LitSet& set : *from) {
      if (Usable(set)) out.push_back(set);
    }
  }
  if (Usable(i.best)) out.push_back(i.best);
  return out;
}

void AddAlternatives(std::vector<LitSet> sets, std::vector<LitSet>& into) {
  for (LitSet& set : sets) {
    if (into.size() >= 4 * kMaxAlternatives) return;
    into.push_back(std::move(set));
  }
}

class Extractor {
 public:
  explicit Extractor(std::string_view p, bool case_classes = false)
      : p_(p), case_classes_(case_classes) {}

  LitSet Run() {
    std::optional<ReNode> tree = ParseRe2(p_, nullptr);
    if (!tree) return {};
    Info root = Alternation(*tree);
    if (failed_) return {};
    all_ = root.exact ? std::vector<LitSet>{LitSet{root.text}} : root.all;
    alts_ = root.exact ? all_ : Options(root);
    LitSet set = root.exact ? LitSet{root.text} : root.best;
    // Even a common literal beats running the regex on every line; only
    // literals shorter than 3 bytes (no set) are refused.
    if (SetScore(set) <= 0) return {};
    for (const RequiredLiteral& lit : set) {
      if (lit.text.size() < 3) return {};
    }
    return Minimal(std::move(set));  // "link down" covers " link down"
  }

 private:
  static void Consider(LitSet candidate, Info& out) {
    if (!candidate.empty()) out.all.push_back(candidate);
    const double score = SetScore(candidate);
    Choose(std::move(candidate), score, out);
  }
  // `candidate` as the best so far when it scores higher.
  static void Choose(LitSet candidate, double score, Info& out) {
    if (score > out.best_score) {
      out.best = std::move(candidate);
      out.best_score = score;
    }
  }
  // A word's variants spelt out: chosen over the best so far only for the
  // rarity it adds, each string counted at most kRareEnough. A rare
  // literal ("detected stall", "RDMA_CM_EVENT_") is kept rather than
  // replaced by its 5-8 spellings: every literal costs the search
  // (user-host real 16 MiB +14% instructions without this).
  static void ConsiderSpelled(LitSet candidate, Info& out) {
    out.all.push_back(candidate);
    // Short spellings are common words with a space or two (" CE " and
    // " UE " of `(CE|UE) `: 1,556 lines of the real corpus, where the
    // noise-ranked "EDAC " had 4).
    for (const RequiredLiteral& lit : candidate) {
      if (lit.text.size() < kMinSpelledBytes) return;
    }
    const double score = SetScore(candidate, kRareEnough);
    Choose(std::move(candidate), score, out);
  }

  // Flags the extractor knows to leave the literals as they are (s, m, U)
  // or to make them caseless (i, already on each literal node).
  static bool KnownFlags(std::string_view flags) {
    return flags.find_first_not_of("imsU-") == std::string_view::npos;
  }

 public:
  // After Run(): every required set seen in the pattern's top-level
  // sequence (the chosen one included).
  const std::vector<LitSet>& all() const { return all_; }
  // After Run(): every usable required set found anywhere, `all()` too.
  const std::vector<LitSet>& alternatives() const { return alts_; }

 private:
  Info Alternation(const ReNode& n) {
    std::vector<Info> branches;
    for (const ReNode& branch : n.children) {
      branches.push_back(Concat(branch));
      if (failed_) return {};
    }
    if (branches.size() == 1) return branches[0];
    Info out;
    if (std::all_of(branches.begin(), branches.end(), [](const Info& b) { return b.spelled; })) {
      LitSet spelled;
      for (const Info& b : branches) {
        spelled.insert(spelled.end(), b.spelled->begin(), b.spelled->end());
      }
      SortUniqueLiterals(spelled);
      if (spelled.size() <= kMaxSpelled) out.spelled = std::move(spelled);
    }
    for (Info& b : branches) {
      LitSet s = b.exact ? LitSet{b.text} : b.best;
      if (s.empty() || (b.exact && b.text.text.size() < 3)) {
        Info unknown;  // no required set, but maybe its strings
        unknown.spelled = std::move(out.spelled);
        return unknown;
      }
      out.best.insert(out.best.end(), s.begin(), s.end());
    }
    // Alternatives: one required set of each branch, joined (the branches'
    // best sets joined are `best`); a few per branch, the rarest first.
    std::vector<LitSet> joined{LitSet{}};
    for (Info& b : branches) {
      std::vector<LitSet> options = Options(b);
      std::stable_sort(options.begin(), options.end(),
                       [](const LitSet& x, const LitSet& y) { return SetScore(x) > SetScore(y); });
      if (options.size() > 4) options.resize(4);
      std::vector<LitSet> next;
      for (const LitSet& head : joined) {
        for (const LitSet& option : options) {
          if (next.size() == kMaxAlternatives) break;
          LitSet u = head;
          u.insert(u.end(), option.begin(), option.end());
          next.push_back(std::move(u));
        }
      }
      joined = std::move(next);
      if (joined.empty()) break;
    }
    out.alts = std::move(joined);
    return out;
  }

  // A sequence of atoms (letter case is already resolved on each literal).
  // Besides the runs of exact text, consecutive atoms whose strings are
  // known (Info::spelled) are spelled out together: each string of
  // `spelled` is one the atoms since the last break may match, so the set
  // is required.
  Info Concat(const ReNode& n) {
    Info out;
    RequiredLiteral run;  // exact text since the last atom that is not
    bool all_exact = true;
    LitSet spelled{RequiredLiteral{}};  // {""}: nothing since the last break
    bool all_spelled = true;
    auto flush_run = [&] {
      if (!run.text.empty()) Consider({run}, out);
      run = {};
    };
    auto flush_spelled = [&] {
      if (!HasEmpty(spelled)) {
        LitSet set = Minimal(spelled);
        if (set.size() > 1) ConsiderSpelled(std::move(set), out);  // one: the run's
      }
      spelled = {RequiredLiteral{}};
    };
    // The strings of a known atom after those so far; past kMaxSpelled the
    // ones so far are a set of their own, and the atom's start the next.
    auto spell = [&](const LitSet& tails) {
      if (tails.size() == 1) {  // one string: onto each, in place
        for (RequiredLiteral& head : spelled) Append(head, tails[0]);
        return;
      }
      if (std::optional<LitSet> joined = Spell(spelled, tails)) {
        spelled = std::move(*joined);
        return;
      }
      flush_spelled();
      all_spelled = false;
      spelled = tails;
    };
    auto unspelled = [&] {
      flush_spelled();
      all_spelled = false;
    };
    for (const ReNode& node : n.children) {
      if (node.kind == ReNode::Kind::kFlags) {  // "(?i)" for the rest of the group
        if (node.flags.empty() || !KnownFlags(node.flags)) return Fail();
        continue;
      }
      if (node.kind == ReNode::Kind::kRepeat) {
        Info atom = Atom(node.children[0]);
        if (failed_) return {};
        // The atom's literals are required only if it must occur; it is no
        // longer exact, so it ends the current run.
        flush_run();
        all_exact = false;
        if (node.min >= 1) {
          if (atom.exact) {
            Consider({atom.text}, out);
          } else {
            Consider(atom.best, out);
            AddAlternatives(Options(atom), out.alts);
          }
        }
        if (node.op == '?' && atom.spelled) {  // its strings, or none of them
          LitSet tails = *atom.spelled;
          tails.push_back(RequiredLiteral{});
          SortUniqueLiterals(tails);
          spell(tails);
        } else {
          unspelled();
        }
        continue;
      }
      Info atom = Atom(node);
      if (failed_) return {};
      if (atom.exact) {
        if (atom.text.text.empty()) continue;  // an empty group
        Append(run, atom.text);
        spell({atom.text});
        continue;
      }
      flush_run();
      all_exact = false;
      Consider(atom.best, out);
      AddAlternatives(Options(atom), out.alts);
      if (atom.spelled) {
        spell(*atom.spelled);
      } else {
        unspelled();
      }
    }
    if (all_exact) {
      out.exact = true;
      out.text = run;
      out.spelled = LitSet{run};
      return out;
    }
    if (all_spelled) out.spelled = spelled;
    flush_run();
    flush_spelled();
    return out;
  }

  static Info Exact(char c, bool caseless) {
    Info i;
    bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (c == ':' || c == '\n' || (caseless && static_cast<unsigned char>(c) >= 0x80)) {
      return i;  // a break: see the header for ':'; Vectorscan folds ASCII only
    }
    i.exact = true;
    i.text.text = std::string(1, c);
    i.text.caseless = caseless && letter;
    i.spelled = LitSet{i.text};
    return i;
  }

  Info Atom(const ReNode& n) {
    switch (n.kind) {
      case ReNode::Kind::kGroup:
        if (!n.named && !KnownFlags(n.flags)) return Fail();
        return Alternation(n.children[0]);
      case ReNode::Kind::kLiteral:
        // A code point from \x{...}: its UTF-8 bytes; not worth it.
        if (n.value >= 0x80 && n.escape == 'x') return Info{};
        return Exact(static_cast<char>(n.value), n.caseless);
      case ReNode::Kind::kAlternation:
        return Alternation(n);
      case ReNode::Kind::kClass:
        return case_classes_ ? CaseClass(n) : Info{};
      default:  // '.', an anchor, \d \w \s \b \p{..}: no literal
        return Info{};
    }
  }

  // A class of one letter in both cases (`[Xx]`, as users write a caseless
  // letter), or of one character: that character, exactly. Any other class
  // is no literal.
  static Info CaseClass(const ReNode& n) {
    if (n.negated || n.items.empty() || n.items.size() > 2) return Info{};
    for (const ReClassItem& item : n.items) {
      if (item.kind != ReClassItem::Kind::kChar) return Info{};
    }
    const char c = n.items[0].lo;
    if (static_cast<unsigned char>(c) >= 0x80) return Info{};  // a UTF-8 byte, not a character
    if (n.items.size() == 1) return Exact(c, n.caseless);
    const char other = n.items[1].lo;
    if (!IsAsciiLetter(c) || c == other || AsciiLower(c) != AsciiLower(other)) return Info{};
    return Exact(c, /*caseless=*/true);
  }

  Info Fail() {
    failed_ = true;
    return Info{};
  }

  std::string_view p_;
  bool case_classes_ = false;
  bool failed_ = false;
  std::vector<LitSet> all_;
  std::vector<LitSet> alts_;
};

}  // namespace

void SortUniqueLiterals(std::vector<RequiredLiteral>& literals) {
  std::sort(literals.begin(), literals.end(),
            [](const RequiredLiteral& a, const RequiredLiteral& b) {
              return std::tie(a.text, a.caseless) < std::tie(b.text, b.caseless);
            });
  literals.erase(std::unique(literals.begin(), literals.end()), literals.end());
}

namespace {

// ExtractConfirmLiteralSets from an Extractor that has Run and chose
// `chosen` (sorted, not empty).
std::vector<LitSet> ConfirmSetsOf(const Extractor& extractor, const LitSet& chosen) {
  std::vector<std::pair<double, LitSet>> scored;
  for (LitSet set : extractor.all()) {
    SortUniqueLiterals(set);
    if (set == chosen) continue;
    bool usable = true;
    for (const RequiredLiteral& lit : set) usable &= lit.text.size() >= 3;
    const double score = SetScore(set);
    if (!usable || score <= 0) continue;
    if (std::any_of(scored.begin(), scored.end(), [&](const auto& s) { return s.second == set; })) {
      continue;
    }
    scored.emplace_back(score, std::move(set));
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  constexpr std::size_t kMaxConfirmSets = 3;
  std::vector<LitSet> out;
  for (auto& scored_set : scored) {
    if (out.size() == kMaxConfirmSets) break;
    LitSet& set = scored_set.second;
    // A set that every line holding the chosen one (or a set kept before
    // it) holds can turn no candidate away: "GPU has fallen off the "
    // beside the chosen {"GPU has fallen off the bus", "... rails"}.
    if (SetImplies(chosen, set) ||
        std::any_of(out.begin(), out.end(), [&](const LitSet& k) { return SetImplies(k, set); })) {
      continue;
    }
    out.push_back(std::move(set));
  }
  return out;
}

}  // namespace

RequiredAndConfirmLiterals ExtractRequiredAndConfirmLiterals(std::string_view pattern) {
  Extractor extractor(pattern);
  RequiredAndConfirmLiterals out;
  out.required = extractor.Run();
  SortUniqueLiterals(out.required);
  if (!out.required.empty()) out.confirm = ConfirmSetsOf(extractor, out.required);
  return out;
}

std::vector<std::vector<RequiredLiteral>> ExtractConfirmLiteralSets(std::string_view pattern) {
  return ExtractRequiredAndConfirmLiterals(pattern).confirm;
}

std::vector<std::vector<RequiredLiteral>> ExtractAlternativeLiteralSets(std::string_view pattern) {
  Extractor extractor(pattern);
  LitSet chosen = extractor.Run();
  if (chosen.empty()) return {};
  SortUniqueLiterals(chosen);
  std::vector<LitSet> out{chosen};
  std::vector<LitSet> rest;
  for (LitSet set : extractor.alternatives()) {
    SortUniqueLiterals(set);
    if (!Usable(set) || SetScore(set) <= 0) continue;
    if (std::any_of(out.begin(), out.end(), [&](const LitSet& s) { return s == set; }) ||
        std::any_of(rest.begin(), rest.end(), [&](const LitSet& s) { return s == set; })) {
      continue;
    }
    rest.push_back(std::move(set));
  }
  // By estimated rarity, so that a tie in a sample keeps the likelier one.
  std::stable_sort(rest.begin(), rest.end(),
                   [](const LitSet& a, const LitSet& b) { return SetScore(a) > SetScore(b); });
  for (LitSet& set : rest) {
    if (out.size() == kMaxAlternatives) break;
    out.push_back(std::move(set));
  }
  return out;
}

bool LineHasLiteral(std::string_view line, const RequiredLiteral& lit) {
  return FindLiteral(line, lit.text, lit.caseless) != std::string_view::npos;
}

std::vector<RequiredLiteral> ExtractRequiredLiterals(std::string_view pattern, bool case_classes) {
  LitSet set = Extractor(pattern, case_classes).Run();
  SortUniqueLiterals(set);  // drops repeats (an alternation of identical branches)
  return set;
}

// ---- Matching ---------------------------------------------------------------

struct LiteralPrefilter::State {
  unsigned literals = 0;  // ids at or past this are the stride guard's (never reported)
  hs_database_t* db = nullptr;
  hs_scratch_t* prototype = nullptr;
  mutable std::mutex mu;
  mutable std::vector<hs_scratch_t*> pool;  // idle scratches, one per concurrent Scan

  ~State() {
    for (hs_scratch_t* s : pool) hs_free_scratch(s);
    if (prototype) hs_free_scratch(prototype);
    if (db) hs_free_database(db);
  }
};

LiteralPrefilter::LiteralPrefilter(std::unique_ptr<State> state) : state_(std::move(state)) {}
LiteralPrefilter::~LiteralPrefilter() = default;

namespace {

// Vectorscan's FDR engine (used for more than 48 literals; Teddy, below
// that, has no stride) steps through the input 4 bytes at a time when the
// shortest literal has 5 bytes or more, or 4 and at most two literals have
// 4 (findDesiredStride in fdr_engine_description.cpp), and 2 at a time
// otherwise. On log text stride 4 ran at half the speed: 0.17 s against
// 0.08 s for the same 163 literals over 256 MiB (bench/README.md). A
// 2-byte literal that UTF-8 text never holds (0xFE and 0xFF are no UTF-8
// byte) keeps the stride at 2 and costs nothing measurable; its hits, on
// binary input, are dropped. Only where it is needed: it takes one of
// FDR's 8 buckets, which slowed a database that had stride 2 anyway.
bool NeedsStrideGuard(const std::vector<RequiredLiteral>& literals) {
  if (literals.size() <= kTeddyMaxLiterals) return false;
  std::size_t shortest = SIZE_MAX, four = 0;
  for (const RequiredLiteral& lit : literals) {
    shortest = std::min(shortest, lit.text.size());
    four += lit.text.size() == 4;
  }
  return shortest >= 5 || (shortest == 4 && four <= 2);
}
constexpr std::string_view kStrideGuard = "\xfe\xff";

}  // namespace

Result<std::unique_ptr<LiteralPrefilter>> LiteralPrefilter::Build(
    const std::vector<RequiredLiteral>& literals, bool any_cpu) {
  if (literals.empty()) return InvalidArgumentError("no literals");
  std::vector<const char*> exprs;
  std::vector<std::size_t> lens;
  std::vector<unsigned> flags, ids;
  for (std::size_t i = 0; i < literals.size(); ++i) {
    exprs.push_back(literals[i].text.data());
    lens.push_back(literals[i].text.size());
    flags.push_back(literals[i].caseless ? HS_FLAG_CASELESS : 0);
    ids.push_back(static_cast<unsigned>(i));
  }
  if (NeedsStrideGuard(literals)) {
    exprs.push_back(kStrideGuard.data());
    lens.push_back(kStrideGuard.size());
    flags.push_back(0);
    ids.push_back(static_cast<unsigned>(literals.size()));
  }
  auto state = std::make_unique<State>();
  state->literals = static_cast<unsigned>(literals.size());
  hs_compile_error_t* error = nullptr;
  hs_platform_info_t any_platform{};  // no CPU feature, generic tuning
  any_platform.tune = HS_TUNE_FAMILY_GENERIC;
  if (hs_compile_lit_multi(exprs.data(), flags.data(), ids.data(), lens.data(),
                           static_cast<unsigned>(exprs.size()), HS_MODE_BLOCK,
                           any_cpu ? &any_platform : nullptr, &state->db, &error) != HS_SUCCESS) {
    std::string message = error && error->message ? error->message : "unknown error";
    hs_free_compile_error(error);
    return InvalidArgumentError("vectorscan: " + message);
  }
  if (hs_alloc_scratch(state->db, &state->prototype) != HS_SUCCESS) {
    return InternalError("vectorscan: cannot allocate scratch");
  }
  return std::unique_ptr<LiteralPrefilter>(new LiteralPrefilter(std::move(state)));
}

std::string LiteralPrefilter::Serialize() const {
  char* bytes = nullptr;
  std::size_t length = 0;
  if (hs_serialize_database(state_->db, &bytes, &length) != HS_SUCCESS) return {};
  std::string out(bytes, length);
  std::free(bytes);  // allocated by Vectorscan's default allocator, malloc
  return out;
}

Result<std::unique_ptr<LiteralPrefilter>> LiteralPrefilter::Deserialize(std::string_view bytes,
                                                                        unsigned literals) {
  auto state = std::make_unique<State>();
  state->literals = literals;
  if (hs_deserialize_database(bytes.data(), bytes.size(), &state->db) != HS_SUCCESS) {
    state->db = nullptr;
    return InvalidArgumentError("vectorscan: cannot read the serialized database");
  }
  if (hs_alloc_scratch(state->db, &state->prototype) != HS_SUCCESS) {
    return InternalError("vectorscan: cannot allocate scratch");
  }
  return std::unique_ptr<LiteralPrefilter>(new LiteralPrefilter(std::move(state)));
}

namespace {
struct HitContext {
  LiteralPrefilter::HitFn fn;
  void* context;
  unsigned literals;
};
int OnHsMatch(unsigned id, unsigned long long /*from*/, unsigned long long to, unsigned /*flags*/,
              void* ctx) {
  auto* h = static_cast<HitContext*>(ctx);
  if (id < h->literals) h->fn(h->context, id, to);
  return 0;
}
}  // namespace

Status LiteralPrefilter::Scan(std::string_view text, HitFn on_hit, void* context) const {
  if (text.size() > UINT_MAX) return InvalidArgumentError("buffer too large for one scan");
  hs_scratch_t* scratch = nullptr;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!state_->pool.empty()) {
      scratch = state_->pool.back();
      state_->pool.pop_back();
    }
  }
  if (!scratch && hs_clone_scratch(state_->prototype, &scratch) != HS_SUCCESS) {
    return InternalError("vectorscan: cannot clone scratch");
  }
  HitContext h{on_hit, context, state_->literals};
  hs_error_t rc = hs_scan(state_->db, text.data(), static_cast<unsigned>(text.size()), 0, scratch,
                          &OnHsMatch, &h);
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->pool.push_back(scratch);
  }
  if (rc != HS_SUCCESS) return InternalError("vectorscan: scan failed: " + std::to_string(rc));
  return OkStatus();
}

}  // namespace faultline
