#include <axon/error.hpp>
#include <axon/parse.hpp>

namespace axon {

UsageError::UsageError(const std::string& message) : std::runtime_error(parse::one_line(message)) {}
UsageError::UsageError(const char* message) : std::runtime_error(parse::one_line(message)) {}

}  // namespace axon
