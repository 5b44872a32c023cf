// The json scenario's body handling, kept apart from main.cpp so that the
// Boost.JSON and the Beast headers compile in separate translation units.
#pragma once

#include <optional>
#include <string>
#include <string_view>

// {"sequence": N} -> {"sequence":N}; nothing when the body is not that.
std::optional<std::string> ping_reply(std::string_view body);
