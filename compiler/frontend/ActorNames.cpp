//===- ActorNames.cpp - Actor names the builder cannot see whole ---------===//
//
// Looks at every string literal converted to cg::ActorName (g.actor's name)
// or passed to cg::indexed_name (its prefix): the places where the builder
// takes a `const char*` and stops at the first NUL.
//
//===----------------------------------------------------------------------===//
#include "frontend/ActorNames.h"

#include "frontend/Locations.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"

#include <string>

namespace cg::frontend {
namespace {

/// The literal `arg` is, if it is a narrow string literal with a NUL before
/// its end.
const clang::StringLiteral* literalWithNul(const clang::Expr* arg) {
  const auto* literal = llvm::dyn_cast<clang::StringLiteral>(arg->IgnoreParenImpCasts());
  if (!literal || !literal->isOrdinary() ||
      literal->getString().find('\0') == llvm::StringRef::npos)
    return nullptr;
  return literal;
}

struct NulVisitor : clang::RecursiveASTVisitor<NulVisitor> {
  explicit NulVisitor(const clang::SourceManager& sm) : sm(sm) {}

  // cg::ActorName("..."), or g.actor's cg::Located<cg::ActorName>("..."),
  // which converts inside the builder, where no literal is left to see.
  bool VisitCXXConstructExpr(clang::CXXConstructExpr* construct) {
    const clang::CXXRecordDecl* made = construct->getConstructor()->getParent();
    if (construct->getNumArgs() >= 1 && (isActorName(made) || isLocatedActorName(made)))
      report(construct->getArg(0), "an actor name");
    return true;
  }

  static bool isActorName(const clang::CXXRecordDecl* record) {
    return record && record->getQualifiedNameAsString() == "cg::ActorName";
  }

  static bool isLocatedActorName(const clang::CXXRecordDecl* record) {
    const auto* located = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(record);
    if (!located || located->getQualifiedNameAsString() != "cg::Located" ||
        located->getTemplateArgs().size() != 1 ||
        located->getTemplateArgs()[0].getKind() != clang::TemplateArgument::Type)
      return false;
    return isActorName(located->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl());
  }

  bool VisitCallExpr(clang::CallExpr* call) {
    const clang::FunctionDecl* callee = call->getDirectCallee();
    if (callee && call->getNumArgs() >= 1 &&
        callee->getQualifiedNameAsString() == "cg::indexed_name")
      report(call->getArg(0), "the prefix of cg::indexed_name");
    return true;
  }

  void report(const clang::Expr* arg, const std::string& what) {
    const clang::StringLiteral* literal = literalWithNul(arg);
    if (!literal)
      return;
    ir::SourceLoc at = toLoc(sm, sm.getFileLoc(literal->getBeginLoc()));
    std::string before = literal->getString().substr(0, literal->getString().find('\0')).str();
    ir::Diagnostic error{at, what +
                                 " holds a NUL character ('\\0'), where the name would end: it "
                                 "would be '" +
                                 before + "'"};
    if (auto range = rangeOf(sm, clang::CharSourceRange::getTokenRange(literal->getSourceRange())))
      error.ranges.push_back(*range);
    problems.push_back(std::move(error));
  }

  const clang::SourceManager& sm;
  std::vector<ir::Diagnostic> problems;
};

} // namespace

std::vector<ir::Diagnostic> actorNamesWithNul(clang::ASTContext& context,
                                              const std::vector<clang::Decl*>& decls) {
  const clang::SourceManager& sm = context.getSourceManager();
  NulVisitor visitor(sm);
  // The standard library's declarations name no actor: not worth a walk.
  for (clang::Decl* decl : decls)
    if (!sm.isInSystemHeader(decl->getLocation()))
      visitor.TraverseDecl(decl);
  return std::move(visitor.problems);
}

} // namespace cg::frontend
