//===- GraphDecoder.cpp - Constant-evaluated records to graph IR ---------===//
//
// The record layout mirrors cg::detail::Record field by field; a layout that
// does not match is a compiler bug (header and decoder out of step), reported
// as an internal compiler error rather than blamed on the user.
//
//===----------------------------------------------------------------------===//
#include "frontend/GraphDecoder.h"

#include "clang/AST/Attr.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace cg::frontend {
namespace {

// Field order of cg::detail::Record.
enum Field : unsigned { Kind, A, B, Tag, Name, Line, Column, FieldCount };
enum class RecordKind : int { Actor = 1, Input = 2, Task = 3, Argument = 4, Output = 5 };

[[noreturn]] void internalError(const std::string& what) {
  throw std::logic_error("internal compiler error: " + what);
}

const clang::APValue& element(const clang::APValue& array, unsigned index) {
  return index < array.getArrayInitializedElts() ? array.getArrayInitializedElt(index)
                                                 : array.getArrayFiller();
}

int64_t intField(const clang::APValue& record, Field field) {
  const clang::APValue& value = record.getStructField(field);
  if (!value.isInt())
    internalError("record field " + std::to_string(field) + " is not an integer");
  return value.getInt().getExtValue();
}

std::string nameField(const clang::APValue& record) {
  const clang::APValue& chars = record.getStructField(Name);
  std::string name;
  for (unsigned i = 0; i < chars.getArraySize(); ++i) {
    int64_t c = element(chars, i).getInt().getExtValue();
    if (c == 0)
      break;
    name.push_back(static_cast<char>(c));
  }
  return name;
}

// The template argument of the tag variable a record points at.
const clang::TemplateArgument& tagArgument(const clang::APValue& record) {
  const clang::APValue& tag = record.getStructField(Tag);
  if (!tag.isLValue())
    internalError("record tag is not an address");
  const auto* var = llvm::dyn_cast_or_null<clang::VarTemplateSpecializationDecl>(
      tag.getLValueBase().dyn_cast<const clang::ValueDecl*>());
  if (!var || var->getTemplateArgs().size() != 1)
    internalError("record tag does not point at a cg::detail tag variable");
  return var->getTemplateArgs()[0];
}

class Decoder {
public:
  Decoder(const GraphFunction& function, clang::ASTContext& context)
      : function_(function), context_(context) {
    // Canonical types carry no sugar, so printing them yields names that are
    // fully qualified and valid from any scope; defaults are left out.
    policy_.SuppressTagKeyword = true;
    policy_.SuppressDefaultTemplateArgs = true;
    policy_.SuppressInlineNamespace = true;
    policy_.SuppressUnwrittenScope = true;
  }

  std::variant<ir::Graph, std::vector<ir::Diagnostic>> run(const clang::APValue& encoded) {
    // std::array<Record, N> is a struct whose one field is the C array.
    if (!encoded.isStruct() || encoded.getStructNumFields() != 1)
      internalError("encoded graph is not a std::array");
    const clang::APValue& records = encoded.getStructField(0);
    graph_.name = function_.name;
    graph_.loc = function_.loc;
    for (unsigned i = 0; i < records.getArraySize(); ++i)
      decodeRecord(element(records, i));
    if (!diagnostics_.empty())
      return diagnostics_;
    return std::move(graph_);
  }

private:
  void decodeRecord(const clang::APValue& record) {
    if (!record.isStruct() || record.getStructNumFields() != FieldCount)
      internalError("graph record does not match cg::detail::Record");
    switch (static_cast<RecordKind>(intField(record, Kind))) {
    case RecordKind::Actor:
      return decodeActor(record);
    case RecordKind::Input:
      return decodeInput(record);
    case RecordKind::Task:
      return decodeTask(record);
    case RecordKind::Argument:
      if (graph_.tasks.empty())
        internalError("argument record before any task");
      graph_.tasks.back().args.push_back(valueId(record));
      return;
    case RecordKind::Output:
      graph_.outputs.push_back(valueId(record));
      return;
    }
    internalError("unknown record kind " + std::to_string(intField(record, Kind)));
  }

  void decodeActor(const clang::APValue& record) {
    const clang::TemplateArgument& arg = tagArgument(record);
    ir::Actor actor{nameField(record), typeName(arg.getAsType()).spelling, locOf(record)};
    const auto* cls = arg.getAsType()->getAsCXXRecordDecl();
    if (!cls || !isAnnotated(cls, "cg::actor"))
      diagnostics_.push_back({actor.loc,
                              "class '" + qualified(arg.getAsType()) +
                                  "' is used as an actor but is not marked CG_ACTOR",
                              {}});
    graph_.actors.push_back(std::move(actor));
  }

  void decodeInput(const clang::APValue& record) {
    unsigned id = newValue(record, {typeName(tagArgument(record).getAsType()),
                                    {ir::Producer::Kind::Input,
                                     static_cast<unsigned>(graph_.inputs.size())}});
    graph_.inputs.push_back(id);
  }

  void decodeTask(const clang::APValue& record) {
    const clang::TemplateArgument& arg = tagArgument(record);
    if (arg.getKind() != clang::TemplateArgument::Declaration)
      internalError("method tag argument is not a declaration");
    const auto* method = llvm::dyn_cast<clang::CXXMethodDecl>(arg.getAsDecl());
    if (!method)
      internalError("method tag does not name a member function");
    ir::Task task;
    task.actor = static_cast<unsigned>(intField(record, A));
    if (task.actor >= graph_.actors.size())
      internalError("task names an undeclared actor");
    task.method = method->getNameAsString();
    task.loc = locOf(record);
    if (method->getAccess() != clang::AS_public)
      diagnostics_.push_back({task.loc,
                              "method '" + method->getQualifiedNameAsString() +
                                  "' is not public; only public methods of an actor can be bound",
                              {}});
    clang::QualType result = method->getReturnType().getNonReferenceType().getUnqualifiedType();
    task.result = newValue(record, {typeName(result),
                                    {ir::Producer::Kind::Task,
                                     static_cast<unsigned>(graph_.tasks.size())}});
    graph_.tasks.push_back(std::move(task));
  }

  // Value ids are dense and in creation order; the record's id must agree.
  unsigned newValue(const clang::APValue& record, ir::Value value) {
    auto expected = static_cast<int64_t>(graph_.values.size());
    Field idField = static_cast<RecordKind>(intField(record, Kind)) == RecordKind::Task ? B : A;
    if (intField(record, idField) != expected)
      internalError("value ids are not dense");
    graph_.values.push_back(std::move(value));
    return static_cast<unsigned>(expected);
  }

  unsigned valueId(const clang::APValue& record) {
    int64_t id = intField(record, A);
    if (id < 0 || id >= static_cast<int64_t>(graph_.values.size()))
      internalError("record names an unknown value");
    return static_cast<unsigned>(id);
  }

  ir::SourceLoc locOf(const clang::APValue& record) const {
    return {function_.loc.file, static_cast<unsigned>(intField(record, Line)),
            static_cast<unsigned>(intField(record, Column))};
  }

  std::string qualified(clang::QualType type) const {
    return type.getCanonicalType().getAsString(policy_);
  }
  // The spelling generated code uses; std::string is spelled as users write it.
  ir::Type typeName(clang::QualType type) const {
    std::string spelling = qualified(type);
    for (size_t at = spelling.find("std::basic_string<char>"); at != std::string::npos;
         at = spelling.find("std::basic_string<char>", at))
      spelling.replace(at, strlen("std::basic_string<char>"), "std::string");
    return {spelling};
  }

  static bool isAnnotated(const clang::Decl* decl, llvm::StringRef annotation) {
    for (const auto* attr : decl->specific_attrs<clang::AnnotateAttr>())
      if (attr->getAnnotation() == annotation)
        return true;
    return false;
  }

  const GraphFunction& function_;
  clang::ASTContext& context_;
  clang::PrintingPolicy policy_{context_.getLangOpts()};
  ir::Graph graph_;
  std::vector<ir::Diagnostic> diagnostics_;
};

} // namespace

std::variant<ir::Graph, std::vector<ir::Diagnostic>>
decodeGraph(const clang::APValue& records, const GraphFunction& function,
            clang::ASTContext& context) {
  return Decoder(function, context).run(records);
}

} // namespace cg::frontend
