//===- SourceIncludes.cpp - What actor programs include instead of the source -===//
//
// The source is recognised by its file's unique ID (device and inode), so a
// path spelled differently, or through a link, is still the source. Only the
// source's own lines count: what its headers declare is what the programs
// include them for.
//
//===----------------------------------------------------------------------===//
#include "frontend/SourceIncludes.h"

#include "frontend/Locations.h"

#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Token.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <filesystem>
#include <optional>

namespace cg::frontend {
namespace {

std::optional<llvm::sys::fs::UniqueID> uniqueIdOf(const std::string& path) {
  llvm::sys::fs::UniqueID id;
  if (llvm::sys::fs::getUniqueID(path, id))
    return std::nullopt;
  return id;
}

bool inSource(const clang::SourceManager& sm, clang::SourceLocation loc,
              const std::optional<llvm::sys::fs::UniqueID>& source) {
  if (!source || loc.isInvalid())
    return false;
  clang::OptionalFileEntryRef file = sm.getFileEntryRefForID(sm.getFileID(sm.getExpansionLoc(loc)));
  return file && file->getUniqueID() == *source;
}

std::string where(const clang::SourceManager& sm, clang::SourceLocation loc) {
  ir::SourceLoc at = toLoc(sm, loc);
  return "(" + llvm::sys::path::filename(at.file).str() + ":" + std::to_string(at.line) + ")";
}

class Recorder : public clang::PPCallbacks {
public:
  Recorder(const clang::SourceManager& sm, const std::string& source, SourceIncludes& out)
      : sm_(sm), sourceId_(uniqueIdOf(source)),
        sourceDir_(llvm::sys::path::parent_path(source).str()), out_(out) {}

  void InclusionDirective(clang::SourceLocation hash, const clang::Token&, llvm::StringRef fileName,
                          bool angled, clang::CharSourceRange, clang::OptionalFileEntryRef file,
                          llvm::StringRef, llvm::StringRef, const clang::Module*,
                          clang::SrcMgr::CharacteristicKind) override {
    if (!inSource(sm_, hash, sourceId_))
      return;
    SourceInclude include{fileName.str(), angled, false};
    if (!angled && file) {
      llvm::SmallString<256> beside(sourceDir_);
      llvm::sys::path::append(beside, fileName);
      std::optional<llvm::sys::fs::UniqueID> id = uniqueIdOf(beside.str().str());
      include.besideSource = id && *id == file->getUniqueID();
    }
    out_.includes.push_back(std::move(include));
  }

  // A macro the source defines may change what a header it includes next
  // declares: the programs then need the source's lines in order.
  void MacroDefined(const clang::Token& name, const clang::MacroDirective*) override {
    macro(name, "macro");
  }
  void MacroUndefined(const clang::Token& name, const clang::MacroDefinition&,
                      const clang::MacroDirective*) override {
    macro(name, "#undef of macro");
  }

private:
  void macro(const clang::Token& name, const char* what) {
    if (out_.neededFor.empty() && inSource(sm_, name.getLocation(), sourceId_))
      out_.neededFor = std::string(what) + " '" + name.getIdentifierInfo()->getName().str() + "' " +
                       where(sm_, name.getLocation());
  }

  const clang::SourceManager& sm_;
  std::optional<llvm::sys::fs::UniqueID> sourceId_;
  std::string sourceDir_;
  SourceIncludes& out_;
};

/// Why `decl`, declared in the source, is needed by the programs; empty if
/// it is not (a function, a constant, a namespace around such).
std::string neededBecause(const clang::SourceManager& sm, const clang::Decl* decl) {
  if (decl->isImplicit())
    return "";
  if (const auto* fn = llvm::dyn_cast<clang::FunctionDecl>(decl)) {
    // An out-of-class member or an explicit specialization belongs to a
    // class or a template the programs use.
    if (llvm::isa<clang::CXXMethodDecl>(fn))
      return "member function '" + fn->getQualifiedNameAsString() + "' " +
             where(sm, decl->getLocation());
    if (fn->getTemplateSpecializationKind() == clang::TSK_ExplicitSpecialization)
      return "specialization of '" + fn->getQualifiedNameAsString() + "' " +
             where(sm, decl->getLocation());
    return "";
  }
  if (llvm::isa<clang::FunctionTemplateDecl, clang::UsingDirectiveDecl, clang::StaticAssertDecl,
                clang::EmptyDecl>(decl))
    return "";
  if (llvm::isa<clang::VarDecl>(decl) && !llvm::isa<clang::VarTemplateSpecializationDecl>(decl))
    return "";
  if (const auto* spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(decl))
    return "specialization of '" + spec->getSpecializedTemplate()->getQualifiedNameAsString() +
           "' " + where(sm, decl->getLocation());
  if (const auto* tag = llvm::dyn_cast<clang::TagDecl>(decl))
    return tag->getKindName().str() + " '" + tag->getQualifiedNameAsString() + "' " +
           where(sm, decl->getLocation());
  if (llvm::isa<clang::TypedefNameDecl>(decl))
    return "alias '" + llvm::cast<clang::NamedDecl>(decl)->getQualifiedNameAsString() + "' " +
           where(sm, decl->getLocation());
  if (llvm::isa<clang::TemplateDecl>(decl))
    return "template '" + llvm::cast<clang::NamedDecl>(decl)->getQualifiedNameAsString() + "' " +
           where(sm, decl->getLocation());
  if (const auto* named = llvm::dyn_cast<clang::NamedDecl>(decl))
    return "'" + named->getQualifiedNameAsString() + "' " + where(sm, decl->getLocation());
  return "a declaration " + where(sm, decl->getLocation());
}

void check(const clang::SourceManager& sm, const clang::DeclContext* context,
           const std::optional<llvm::sys::fs::UniqueID>& source, SourceIncludes& out) {
  for (const clang::Decl* decl : context->noload_decls()) {
    if (!out.neededFor.empty())
      return;
    if (!inSource(sm, decl->getLocation(), source))
      continue; // a header's: the programs include the header
    if (llvm::isa<clang::NamespaceDecl, clang::LinkageSpecDecl>(decl))
      check(sm, llvm::cast<clang::DeclContext>(decl), source, out);
    else
      out.neededFor = neededBecause(sm, decl);
  }
}

} // namespace

std::unique_ptr<clang::PPCallbacks> recordSourceIncludes(const clang::SourceManager& sm,
                                                         const std::string& source,
                                                         SourceIncludes& out) {
  return std::make_unique<Recorder>(sm, source, out);
}

void checkSourceDeclarations(clang::ASTContext& context, const std::string& source,
                             SourceIncludes& out) {
  if (out.neededFor.empty())
    check(context.getSourceManager(), context.getTranslationUnitDecl(), uniqueIdOf(source), out);
}

std::string includeLineFor(const SourceInclude& include, const std::string& sourceInclude) {
  if (include.angled)
    return "#include <" + include.spelled + ">";
  if (!include.besideSource)
    return "#include \"" + include.spelled + "\"";
  // Beside the source: by its path from where the source's is taken.
  std::filesystem::path path = std::filesystem::path(sourceInclude).parent_path() / include.spelled;
  return "#include \"" + path.lexically_normal().generic_string() + "\"";
}

} // namespace cg::frontend
