//===- BindMismatch.cpp - A bind argument of the wrong type, in graph terms ===//
#include "frontend/BindMismatch.h"

#include "frontend/Locations.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Type.h"
#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/SourceManager.h"

#include <utility>

namespace cg::frontend {
namespace {

// An expression naming a template argument, without the wrapping that
// substitution and implicit conversions add.
const clang::Expr* bare(const clang::Expr* e) {
  while (e) {
    if (auto* subst = llvm::dyn_cast<clang::SubstNonTypeTemplateParmExpr>(e))
      e = subst->getReplacement();
    else if (auto* stripped = e->IgnoreParenImpCasts(); stripped != e)
      e = stripped;
    else
      break;
  }
  return e;
}

const clang::CXXMethodDecl* methodOf(const clang::TemplateArgument& arg) {
  if (arg.getKind() == clang::TemplateArgument::Declaration)
    return llvm::dyn_cast<clang::CXXMethodDecl>(arg.getAsDecl());
  if (arg.getKind() != clang::TemplateArgument::Expression)
    return nullptr;
  const clang::Expr* e = bare(arg.getAsExpr());
  if (auto* address = llvm::dyn_cast_or_null<clang::UnaryOperator>(e))
    e = bare(address->getSubExpr());
  if (auto* ref = llvm::dyn_cast_or_null<clang::DeclRefExpr>(e))
    return llvm::dyn_cast<clang::CXXMethodDecl>(ref->getDecl());
  return nullptr;
}

std::optional<unsigned> indexOf(const clang::TemplateArgument& arg) {
  if (arg.getKind() == clang::TemplateArgument::Integral)
    return static_cast<unsigned>(arg.getAsIntegral().getZExtValue());
  if (arg.getKind() == clang::TemplateArgument::Expression)
    if (auto* literal = llvm::dyn_cast_or_null<clang::IntegerLiteral>(bare(arg.getAsExpr())))
      return static_cast<unsigned>(literal->getValue().getZExtValue());
  return std::nullopt;
}

// `cg::detail::arg_t<M, I>`, the type of bind's I-th parameter, if `type` is.
const clang::TemplateSpecializationType* bindParameter(clang::QualType type) {
  auto* specialization = type->getAs<clang::TemplateSpecializationType>();
  if (!specialization || specialization->template_arguments().size() != 2)
    return nullptr;
  auto* alias = specialization->getTemplateName().getAsTemplateDecl();
  if (!alias || alias->getQualifiedNameAsString() != "cg::detail::arg_t")
    return nullptr;
  return specialization;
}

// A type as the user would write it: Clang prints std::string, once
// substituted into a template, as the specialization it is.
std::string spelled(clang::QualType type, const clang::PrintingPolicy& policy) {
  std::string text = type.getAsString(policy);
  for (size_t at; (at = text.find("std::basic_string<char>")) != std::string::npos;)
    text.replace(at, 23, "std::string");
  return text;
}

// Whether `type` is a name the builder gave it (bind's `R`, a task's result
// type) rather than one the user wrote.
bool isBuilderSugar(clang::QualType type) {
  if (type->getAs<clang::SubstTemplateTypeParmType>())
    return true;
  auto* alias = type->getAs<clang::TypedefType>();
  if (!alias)
    return false;
  for (const clang::DeclContext* scope = alias->getDecl()->getDeclContext(); scope;
       scope = scope->getParent())
    if (auto* space = llvm::dyn_cast<clang::NamespaceDecl>(scope);
        space && space->getName() == "cg" && space->getParent()->isTranslationUnit())
      return true;
  return false;
}

// What a cg::Value<T> carries, as the user would write T, if `type` is one. A
// task's result is a cg::Value of the builder's own template parameter (R);
// its desugared type is the one the user knows.
std::optional<std::string> valueTypeOf(clang::QualType type, const clang::PrintingPolicy& policy) {
  clang::QualType bareType = type.getNonReferenceType().getUnqualifiedType();
  // The type argument as the user spelled it (std::string, not its template),
  // unless it is the builder's sugar for a task result.
  if (auto* written = bareType->getAs<clang::TemplateSpecializationType>())
    if (auto* named = written->getTemplateName().getAsTemplateDecl();
        named && named->getQualifiedNameAsString() == "cg::Value" &&
        written->template_arguments().size() == 1 &&
        written->template_arguments()[0].getKind() == clang::TemplateArgument::Type) {
      clang::QualType argument = written->template_arguments()[0].getAsType();
      if (!isBuilderSugar(argument))
        return spelled(argument, policy);
    }
  if (auto* record = bareType->getCanonicalTypeUnqualified()->getAsCXXRecordDecl())
    if (auto* value = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(record);
        value && value->getQualifiedNameAsString() == "cg::Value" &&
        value->getTemplateArgs().size() == 1)
      return spelled(value->getTemplateArgs()[0].getAsType().getCanonicalType(), policy);
  return std::nullopt;
}

// A task's tuple result not unpacked, std::tuple<cg::Value<E>...>: as the
// std::tuple<E...> the method returns, if `type` is one.
std::optional<std::string> tupleResultOf(clang::QualType type,
                                         const clang::PrintingPolicy& policy) {
  const auto* tuple = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(
      type.getNonReferenceType()->getCanonicalTypeUnqualified()->getAsCXXRecordDecl());
  if (!tuple || tuple->getQualifiedNameAsString() != "std::tuple" ||
      tuple->getTemplateArgs().size() != 1 ||
      tuple->getTemplateArgs()[0].getKind() != clang::TemplateArgument::Pack)
    return std::nullopt;
  std::string elements;
  for (const clang::TemplateArgument& element : tuple->getTemplateArgs()[0].pack_elements()) {
    if (element.getKind() != clang::TemplateArgument::Type)
      return std::nullopt;
    std::optional<std::string> carried = valueTypeOf(element.getAsType(), policy);
    if (!carried)
      return std::nullopt;
    elements += (elements.empty() ? "" : ", ") + *carried;
  }
  return "std::tuple<" + elements + ">";
}

// How the argument given is described: "a cg::Value<T>", "the whole ...
// result of a task" or "a constant of type 'T'".
std::string describeGiven(clang::QualType type, const clang::PrintingPolicy& policy) {
  if (std::optional<std::string> carried = valueTypeOf(type, policy))
    return "a cg::Value<" + *carried + ">";
  if (std::optional<std::string> tuple = tupleResultOf(type, policy))
    return "the whole '" + *tuple +
           "' result of a task; unpack it (auto [x, y] = a.bind<...>(...)) and pass an element";
  return "a constant of type '" + spelled(type, policy) + "'";
}

// A type in one spelling for every way of writing it, to compare two types.
std::string canonical(clang::QualType type, const clang::PrintingPolicy& policy) {
  return spelled(type.getNonReferenceType().getCanonicalType().getUnqualifiedType(), policy);
}

std::string qualifiedName(const clang::CXXMethodDecl* method) {
  return method->getParent()->getNameAsString() + "::" + method->getNameAsString();
}

} // namespace

std::optional<BindMismatch> bindMismatchOf(const clang::Diagnostic& note) {
  if (!note.hasSourceManager())
    return std::nullopt;
  const clang::TemplateSpecializationType* parameter = nullptr;
  std::optional<clang::QualType> given;
  for (unsigned i = 0; i < note.getNumArgs(); ++i) {
    if (note.getArgKind(i) != clang::DiagnosticsEngine::ak_qualtype)
      continue;
    clang::QualType type =
        clang::QualType::getFromOpaquePtr(reinterpret_cast<void*>(note.getRawArg(i)));
    if (type.isNull())
      continue;
    if (auto* bind = bindParameter(type))
      parameter = bind;
    else if (!given)
      given = type;
  }
  if (!parameter || !given)
    return std::nullopt;
  const clang::CXXMethodDecl* method = methodOf(parameter->template_arguments()[0]);
  std::optional<unsigned> index = indexOf(parameter->template_arguments()[1]);
  if (!method || !index || *index >= method->getNumParams())
    return std::nullopt;
  clang::PrintingPolicy policy(method->getASTContext().getLangOpts());
  policy.SuppressScope = false;
  const clang::SourceManager& sm = note.getSourceManager();
  const clang::ParmVarDecl* declared = method->getParamDecl(*index);
  BindMismatch out;
  out.argument = *index;
  out.method = qualifiedName(method);
  out.given = describeGiven(*given, policy);
  out.parameter = spelled(declared->getType(), policy);
  out.parameterCanonical = canonical(declared->getType(), policy);
  out.declared = toLoc(sm, method->getLocation());
  out.parameterRange =
      rangeOf(sm, clang::CharSourceRange::getTokenRange(declared->getSourceRange()));
  return out;
}

namespace {

// C of a cg::Actor<C> (what `a` is in a.bind<...>), or "" if `type` is not one.
std::string actorClassOf(clang::QualType type) {
  if (type.isNull())
    return "";
  if (type->isPointerType())
    type = type->getPointeeType();
  auto* actor = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(
      type.getNonReferenceType()->getCanonicalTypeUnqualified()->getAsCXXRecordDecl());
  if (!actor || actor->getQualifiedNameAsString() != "cg::Actor" ||
      actor->getTemplateArgs().size() != 1 ||
      actor->getTemplateArgs()[0].getKind() != clang::TemplateArgument::Type)
    return "";
  auto* cls = actor->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl();
  return cls ? cls->getNameAsString() : "";
}

struct FailedCallVisitor : clang::RecursiveASTVisitor<FailedCallVisitor> {
  FailedCallVisitor(const clang::SourceManager& sm, const clang::PrintingPolicy& policy)
      : sm(sm), policy(policy) {}
  // The cg::Values a function declared so far, for "did you mean": each
  // function starts afresh, and the traversal meets declarations in order.
  bool TraverseFunctionDecl(clang::FunctionDecl* function) {
    std::vector<FailedCall::Value> outer = std::exchange(values, {});
    bool go_on = clang::RecursiveASTVisitor<FailedCallVisitor>::TraverseFunctionDecl(function);
    values = std::move(outer);
    return go_on;
  }
  bool VisitVarDecl(clang::VarDecl* variable) {
    if (variable->getType()->isDependentType() || !variable->getIdentifier())
      return true;
    auto* record = variable->getType()
                       .getNonReferenceType()
                       ->getCanonicalTypeUnqualified()
                       ->getAsCXXRecordDecl();
    if (auto* value = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(record);
        value && value->getQualifiedNameAsString() == "cg::Value" &&
        value->getTemplateArgs().size() == 1)
      values.push_back({variable->getNameAsString(),
                        canonical(value->getTemplateArgs()[0].getAsType(), policy)});
    return true;
  }
  bool VisitRecoveryExpr(clang::RecoveryExpr* recovery) {
    auto parts = recovery->subExpressions();
    if (parts.empty() || !parts.front())
      return true;
    std::vector<ir::SourceRange> arguments;
    for (const clang::Expr* argument : parts.drop_front()) {
      auto range =
          argument ? rangeOf(sm, clang::CharSourceRange::getTokenRange(argument->getSourceRange()))
                   : std::nullopt;
      arguments.push_back(range.value_or(ir::SourceRange{}));
    }
    FailedCall call{toLoc(sm, parts.front()->getExprLoc()), std::move(arguments), std::nullopt,
                    values};
    // a.bind<&C::m>(...): one explicit template argument naming the method.
    if (auto* member = llvm::dyn_cast<clang::UnresolvedMemberExpr>(parts.front());
        member && member->getMemberName().getAsString() == "bind" &&
        member->getNumTemplateArgs() == 1)
      if (const clang::CXXMethodDecl* method = methodOf(member->getTemplateArgs()[0].getArgument()))
        call.bound = FailedCall::Method{
            qualifiedName(method), method->getNumParams(), toLoc(sm, method->getLocation()),
            method->getParent()->getNameAsString(), actorClassOf(member->getBaseType())};
    calls.push_back(std::move(call));
    return true;
  }
  const clang::SourceManager& sm;
  const clang::PrintingPolicy& policy;
  std::vector<FailedCall::Value> values;
  std::vector<FailedCall> calls;
};

} // namespace

std::vector<FailedCall> failedCalls(clang::ASTContext& context,
                                    const std::vector<clang::Decl*>& decls) {
  clang::PrintingPolicy policy(context.getLangOpts());
  policy.SuppressScope = false;
  FailedCallVisitor visitor(context.getSourceManager(), policy);
  for (clang::Decl* decl : decls)
    visitor.TraverseDecl(decl);
  return std::move(visitor.calls);
}

} // namespace cg::frontend
