//===- Serializers.cpp - Which types can cross an actor boundary ---------===//
#include "frontend/Serializers.h"

#include "frontend/Locations.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"

#include <set>

namespace cg::frontend {
namespace {

// Standard templates with built-in codecs whose template arguments must all
// be serializable (comparators, hashes, allocators and a duration's period are
// skipped).
const std::set<std::string> kStdContainers = {
    "vector",        "array", "optional", "pair",          "tuple",   "map",
    "unordered_map", "set",   "deque",    "unordered_set", "variant", "duration"};

const std::set<std::string> kSmartPointers = {"unique_ptr", "shared_ptr", "weak_ptr"};

bool inStd(const clang::Decl* decl) {
  const clang::DeclContext* ns = decl->getDeclContext()->getEnclosingNamespaceContext();
  // std::chrono's types are standard types too (std::chrono::duration has a codec).
  if (const auto* named = llvm::dyn_cast<clang::NamespaceDecl>(ns);
      named && named->getName() == "chrono")
    ns = ns->getParent();
  return ns->isStdNamespace();
}

} // namespace

SerializerPlanner::SerializerPlanner(clang::ASTContext& context)
    : context_(context), policy_(context.getLangOpts()) {
  policy_.SuppressTagKeyword = true;
  policy_.SuppressDefaultTemplateArgs = true;
  policy_.SuppressInlineNamespace = true;
  policy_.SuppressUnwrittenScope = true;
}

std::string SerializerPlanner::spell(clang::QualType type) const {
  std::string spelling = type.getCanonicalType().getUnqualifiedType().getAsString(policy_);
  const std::string longName = "std::basic_string<char>";
  for (size_t at = spelling.find(longName); at != std::string::npos;
       at = spelling.find(longName, at))
    spelling.replace(at, longName.size(), "std::string");
  return spelling;
}

std::optional<Unsendable> SerializerPlanner::require(clang::QualType type) {
  blamed_ = nullptr;
  std::optional<std::string> problem = visit(type, spell(type), /*root=*/true);
  if (!problem)
    return std::nullopt;
  Unsendable out{"type '" + spell(type) + "' cannot be sent between actors: " + *problem, {}, {}};
  if (blamed_) {
    out.member = toLoc(context_.getSourceManager(), blamed_->getLocation());
    out.memberName = blamed_->getParent()->getNameAsString() + "::" + blamed_->getNameAsString();
  }
  return out;
}

// `path` names where the type sits, as "Request::meta.handle"; `root` says it
// is the type being sent itself (its members follow "::").
std::optional<std::string> SerializerPlanner::visit(clang::QualType type, const std::string& path,
                                                    bool root) {
  clang::QualType canonical = type.getCanonicalType().getUnqualifiedType();
  // Known good, or being visited (a recursive aggregate, through a container).
  if (done_.count(canonical.getTypePtr()))
    return std::nullopt;
  // Messages name the type as written (std::FILE, not _IO_FILE).
  std::string written = type.getUnqualifiedType().getAsString(policy_);
  // "'Request::meta.file' is a 'File', which ..." or, for the type sent
  // itself, "'File' ..." (not "'File' is a 'File'").
  auto subject = [&]() {
    return path == written ? "'" + path + "'" : "'" + path + "' is a '" + written + "', which";
  };
  auto cannot = [&](const std::string& why) -> std::optional<std::string> {
    return subject() + " " + why +
           "; make it an aggregate of serializable members or "
           "specialize cg::Codec<" +
           written + ">";
  };
  // A standard type cannot be made an aggregate: name what can be sent.
  auto cannotStandard = [&]() -> std::optional<std::string> {
    return subject() +
           " has no serializer; send a type that has one (std::string, std::vector, "
           "std::array, std::deque, std::optional, std::variant, std::pair, std::tuple, "
           "std::map, std::unordered_map, std::set, std::unordered_set, std::chrono::duration, "
           "or an aggregate of them), or specialize cg::Codec<" +
           written + ">";
  };
  // Advice that fits the type: no codec could send these.
  if (canonical->isPointerType() || canonical->isMemberPointerType())
    return "'" + path + "' is a '" + written +
           "': a pointer cannot be sent, its address means nothing in another process; send "
           "what it points to (a std::vector or a std::string; a method reads one in place "
           "through a std::span or std::string_view parameter)";
  if (const auto* smart = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(
          canonical->getAsCXXRecordDecl());
      smart && inStd(smart) && kSmartPointers.count(smart->getName().str())) {
    std::string owned = smart->getTemplateArgs()[0].getAsType().getAsString(policy_);
    return (path == written ? std::string() : "'" + path + "' is a '" + written + "': ") +
           "a smart pointer owns memory of this process, which another cannot reach; send the "
           "value it points to ('" +
           owned + "'), or a std::optional<" + owned + "> where it may be empty";
  }
  if (const auto* record = canonical->getAsCXXRecordDecl();
      record && inStd(record) && record->getName() == "function")
    return "'" + path + "' is a '" + written +
           "': code cannot be sent between processes; send the data it needs, and call the "
           "function in the method that receives it";

  if (canonical->isArithmeticType() || canonical->isEnumeralType())
    return std::nullopt;
  const auto* record = canonical->getAsCXXRecordDecl();
  // Standard templates are judged by name: a specialization the source never
  // instantiates (a std::vector<T> only ever read as a std::span) has no
  // definition yet.
  const bool standard = record && inStd(record);
  if (standard && !kStdContainers.count(record->getName().str()) &&
      record->getName() != "basic_string")
    return cannotStandard();
  if (!record || (!standard && !record->hasDefinition()))
    return cannot("has no serializer");
  if (hasUserCodec(canonical)) {
    done_[canonical.getTypePtr()] = true;
    return std::nullopt;
  }
  if (standard) {
    const auto* spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(record);
    if (spec && spec->getName() == "basic_string" &&
        spec->getTemplateArgs()[0].getAsType()->isCharType())
      return std::nullopt;
    if (!spec || !kStdContainers.count(spec->getName().str()))
      return cannotStandard();
    if (auto problem = visitStd(spec, path))
      return problem;
    done_[canonical.getTypePtr()] = true;
    return std::nullopt;
  }

  if (!record->isAggregate() || record->isUnion() || record->isLambda() ||
      record->getNumBases() != 0)
    return cannot("is not an aggregate without base classes");
  AggregateCodec codec{spell(canonical), {}};
  done_[canonical.getTypePtr()] = false;
  for (const clang::FieldDecl* field : record->fields()) {
    std::string fieldPath = path + (root ? "::" : ".") + field->getNameAsString();
    if (field->getType()->isReferenceType()) {
      done_.erase(canonical.getTypePtr());
      blamed_ = field;
      return "'" + fieldPath + "' is a reference member, which cannot be sent";
    }
    if (auto problem = visit(field->getType(), fieldPath, false)) {
      done_.erase(canonical.getTypePtr());
      if (!blamed_)
        blamed_ = field; // the innermost: the first to return
      return problem;
    }
    codec.fields.push_back({field->getNameAsString(), spell(field->getType())});
  }
  done_[canonical.getTypePtr()] = true;
  codecs_.push_back(std::move(codec));
  return std::nullopt;
}

std::optional<std::string>
SerializerPlanner::visitStd(const clang::ClassTemplateSpecializationDecl* spec,
                            const std::string& path) {
  llvm::StringRef name = spec->getName();
  const clang::TemplateArgumentList& args = spec->getTemplateArgs();
  auto element = [&](unsigned i, const std::string& suffix) {
    return visit(args[i].getAsType(), path + suffix, false);
  };
  if (name == "vector" || name == "array" || name == "deque" || name == "set" ||
      name == "unordered_set")
    return element(0, "[]");
  if (name == "duration")
    return element(0, ".count()");
  if (name == "optional")
    return element(0, ".value()");
  if (name == "pair") {
    if (auto problem = element(0, ".first"))
      return problem;
    return element(1, ".second");
  }
  if (name == "map" || name == "unordered_map") {
    if (auto problem = element(0, ".key"))
      return problem;
    return element(1, ".value");
  }
  // tuple and variant: one pack.
  unsigned index = 0;
  for (const clang::TemplateArgument& arg : args[0].pack_elements())
    if (auto problem = visit(arg.getAsType(), path + "<" + std::to_string(index++) + ">", false))
      return problem;
  return std::nullopt;
}

// An explicit specialization of cg::Codec for exactly this type, written by
// the user somewhere in the translation unit.
bool SerializerPlanner::hasUserCodec(clang::QualType type) {
  clang::TranslationUnitDecl* unit = context_.getTranslationUnitDecl();
  for (const clang::Decl* decl : unit->decls()) {
    const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(decl);
    if (!ns || ns->getName() != "cg")
      continue;
    for (const clang::Decl* member : ns->decls()) {
      const auto* codec = llvm::dyn_cast<clang::ClassTemplateDecl>(member);
      if (!codec || codec->getName() != "Codec")
        continue;
      for (const clang::ClassTemplateSpecializationDecl* spec : codec->specializations())
        if (spec->getSpecializationKind() == clang::TSK_ExplicitSpecialization &&
            context_.hasSameType(spec->getTemplateArgs()[0].getAsType(), type))
          return true;
    }
  }
  return false;
}

} // namespace cg::frontend
