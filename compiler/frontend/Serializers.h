//===- Serializers.h - Which types can cross an actor boundary ---*- C++ -*-===//
//
// Every value that travels between processes needs a cg::Codec. Built-in
// codecs cover arithmetic types, enums, std::string and the standard
// containers (cg/serialize.hpp, cg/codecs.hpp); users may specialize
// cg::Codec<T> themselves. For plain aggregates (structs of serializable
// members) the frontend generates the codec from the fields, so the user
// writes nothing. Anything else is an error naming the offending member.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/AggregateCodec.h"
#include "ir/Graph.h"

#include "clang/AST/ASTContext.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cg::frontend {

using ir::AggregateCodec;

/// Why a type cannot be sent: the message, and the member to blame (none
/// when it is the type itself).
struct Unsendable {
  std::string message;
  ir::SourceLoc member;   // where the member is declared
  std::string memberName; // "Meta::handle"
};

class SerializerPlanner {
public:
  explicit SerializerPlanner(clang::ASTContext& context);

  /// Checks that values of `type` can be sent; returns why not, or nothing.
  std::optional<Unsendable> require(clang::QualType type);

  /// The aggregates to generate codecs for, each after those of its fields.
  const std::vector<AggregateCodec>& codecs() const { return codecs_; }

  /// How generated code spells `type`: canonical, fully qualified.
  std::string spell(clang::QualType type) const;

private:
  std::optional<std::string> visit(clang::QualType type, const std::string& path, bool root);
  std::optional<std::string> visitStd(const clang::ClassTemplateSpecializationDecl* spec,
                                      const std::string& path);
  bool hasUserCodec(clang::QualType type);

  clang::ASTContext& context_;
  clang::PrintingPolicy policy_;
  std::map<const clang::Type*, bool> done_; // canonical type -> fully checked
                                            // (false: being checked)
  std::vector<AggregateCodec> codecs_;
  const clang::FieldDecl* blamed_ = nullptr; // the innermost member that failed
};

} // namespace cg::frontend
