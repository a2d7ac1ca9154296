// SPDX-License-Identifier: Apache-2.0
#include "matcher/re2_syntax.h"

#include <cstdlib>
#include <string>

namespace faultline {

std::optional<GroupOpen> ReadGroupOpen(std::string_view p, std::size_t pos) {
  GroupOpen g;
  if (pos < p.size() && (p[pos] == 'P' || p[pos] == '<')) {
    const std::size_t close = p.find('>', pos);
    if (close == std::string_view::npos) return std::nullopt;
    g.named = true;
    g.end = close + 1;
    return g;
  }
  const std::size_t stop = p.find_first_of(":)", pos);
  if (stop == std::string_view::npos) return std::nullopt;
  g.flags = p.substr(pos, stop - pos);
  g.rest_of_sequence = p[stop] == ')';
  g.end = stop + 1;
  return g;
}

bool CaselessAfter(std::string_view flags, bool caseless) {
  const std::size_t minus = flags.find('-');
  if (flags.substr(0, minus).find('i') != std::string_view::npos) caseless = true;
  if (minus != std::string_view::npos && flags.substr(minus).find('i') != std::string_view::npos) {
    caseless = false;
  }
  return caseless;
}

std::optional<CountedRepeat> ReadCountedRepeat(std::string_view p, std::size_t pos) {
  const std::size_t close = p.find('}', pos);
  if (close == std::string_view::npos) return std::nullopt;
  const std::string_view body = p.substr(pos + 1, close - pos - 1);
  if (body.empty() || body[0] == ',' ||
      body.find_first_not_of("0123456789,") != std::string_view::npos) {
    return std::nullopt;
  }
  return CountedRepeat{std::atoi(std::string(body).c_str()), body, close + 1};
}

std::optional<HexEscape> ReadHexEscape(std::string_view p, std::size_t pos) {
  std::string hex;
  std::size_t end = 0;
  if (pos < p.size() && p[pos] == '{') {
    const std::size_t close = p.find('}', pos);
    if (close == std::string_view::npos) return std::nullopt;
    hex = std::string(p.substr(pos + 1, close - pos - 1));
    end = close + 1;
  } else {
    hex = std::string(p.substr(pos, 2));
    end = pos + 2;
  }
  return HexEscape{std::strtol(hex.c_str(), nullptr, 16), end};
}

Quoted ReadQuoted(std::string_view p, std::size_t pos) {
  const std::size_t stop = p.find("\\E", pos);
  if (stop == std::string_view::npos) return {p.substr(pos), p.size()};
  return {p.substr(pos, stop - pos), stop + 2};
}

}  // namespace faultline
