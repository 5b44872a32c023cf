#include "ping.hpp"

#include <boost/json.hpp>

namespace json = boost::json;

std::optional<std::string> ping_reply(std::string_view body) {
  boost::system::error_code ec;
  json::value request = json::parse(body, ec);
  if (ec || !request.is_object()) return std::nullopt;
  const json::value* sequence = request.as_object().if_contains("sequence");
  if (!sequence || !sequence->is_number()) return std::nullopt;
  return json::serialize(json::object{{"sequence", *sequence}});
}
