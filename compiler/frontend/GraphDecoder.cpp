//===- GraphDecoder.cpp - Constant-evaluated records to graph IR ---------===//
//
// The record layout mirrors cg::detail::Record field by field; a layout that
// does not match is a compiler bug (header and decoder out of step), reported
// as an internal compiler error rather than blamed on the user.
//
//===----------------------------------------------------------------------===//
#include "frontend/GraphDecoder.h"

#include "frontend/Locations.h"
#include "support/CppLiteral.h"
#include "support/InternalError.h"

#include <cg/detail/graph_records.hpp>

#include "clang/AST/Attr.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

namespace cg::frontend {
namespace {

using cg::detail::CollectiveKind;
using cg::detail::RecordKind;

// Field order of cg::detail::Record (cg/detail/graph_records.hpp): the
// evaluated record is read by field index.
enum Field : unsigned {
  Kind,
  A,
  B,
  C,
  Tag,
  Integer,
  Floating,
  Text,
  TextSize,
  Line,
  Column,
  File,
  FieldCount
};
#define CG_FIELD_FOLLOWS(before, after)                                                            \
  static_assert(offsetof(cg::detail::Record, before) < offsetof(cg::detail::Record, after),        \
                "cg::detail::Record's fields moved: update enum Field")
CG_FIELD_FOLLOWS(kind, a);
CG_FIELD_FOLLOWS(a, b);
CG_FIELD_FOLLOWS(b, c);
CG_FIELD_FOLLOWS(c, tag);
CG_FIELD_FOLLOWS(tag, integer);
CG_FIELD_FOLLOWS(integer, floating);
CG_FIELD_FOLLOWS(floating, text);
CG_FIELD_FOLLOWS(text, text_size);
CG_FIELD_FOLLOWS(text_size, line);
CG_FIELD_FOLLOWS(line, column);
CG_FIELD_FOLLOWS(column, file);
#undef CG_FIELD_FOLLOWS
static_assert(sizeof(cg::detail::Record) ==
                  offsetof(cg::detail::Record, file) + sizeof(cg::detail::Record::file),
              "cg::detail::Record has a field after `file`: update enum Field");

// Field order of cg::detail::Encoded.
enum EncodedField : unsigned {
  EncodedRecordCount,
  EncodedTextSize,
  EncodedRecords,
  EncodedText,
  EncodedFieldCount
};

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

// The first `size` characters of std::array<char, N> (a struct holding a C array).
std::string charArray(const clang::APValue& array, uint64_t size) {
  const clang::APValue& chars = array.getStructField(0);
  if (size > chars.getArraySize())
    internalError("the text pool is larger than its array");
  std::string text;
  text.reserve(size);
  for (unsigned i = 0; i < size; ++i)
    text.push_back(static_cast<char>(element(chars, i).getInt().getExtValue()));
  return text;
}

uint64_t sizeField(const clang::APValue& encoded, EncodedField field) {
  if (!encoded.isStruct() || encoded.getStructNumFields() != EncodedFieldCount)
    internalError("encoded graph does not match cg::detail::Encoded");
  const clang::APValue& value = encoded.getStructField(field);
  if (!value.isInt())
    internalError("encoded graph size is not an integer");
  return value.getInt().getZExtValue();
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

// The AST a record's tag variable belongs to.
const clang::ASTContext& tagContext(const clang::APValue& record) {
  return record.getStructField(Tag).getLValueBase().get<const clang::ValueDecl*>()->getASTContext();
}

class Decoder {
public:
  Decoder(const GraphFunction& function, SerializerPlanner& serializers)
      : function_(function), serializers_(serializers) {}

  std::variant<ir::Graph, std::vector<ir::Diagnostic>> run(const clang::APValue& encoded) {
    EncodedSizes sizes = encodedSizes(encoded);
    if (!sizes.fit)
      internalError("decoding a graph whose records did not fit the probe's arrays");
    text_ = charArray(encoded.getStructField(EncodedText), sizes.text);
    const clang::APValue& records = encoded.getStructField(EncodedRecords).getStructField(0);
    graph_.name = function_.name;
    graph_.loc = function_.loc;
    graph_.actorSet = function_.over;
    for (unsigned i = 0; i < sizes.records; ++i)
      decodeRecord(element(records, i));
    applyCosts();
    if (!diagnostics_.empty())
      return diagnostics_;
    return std::move(graph_);
  }

private:
  void decodeRecord(const clang::APValue& record) {
    if (!record.isStruct() || record.getStructNumFields() != FieldCount)
      internalError("graph record does not match cg::detail::Record");
    auto kind = static_cast<RecordKind>(intField(record, Kind));
    switch (kind) {
    case RecordKind::actor:
      decodeActor(record);
      break;
    case RecordKind::input:
      decodeInput(record);
      break;
    case RecordKind::task:
      decodeTask(record);
      break;
    case RecordKind::argument:
      if (owner_ != RecordKind::task)
        internalError("argument record outside a task");
      graph_.tasks.back().args.push_back({ir::Arg::Kind::Value, valueId(record), {}});
      return;
    case RecordKind::constant:
      if (owner_ == RecordKind::task)
        graph_.tasks.back().args.push_back({ir::Arg::Kind::Constant, 0, constant(record)});
      else if (owner_ == RecordKind::actor)
        graph_.actors.back().constructorArgs.push_back(constant(record));
      else
        internalError("constant record outside an actor or a task");
      return;
    case RecordKind::output:
      graph_.outputs.push_back(valueId(record));
      break;
    case RecordKind::transport:
      decodeTransport(record);
      break;
    case RecordKind::collective:
      decodeCollective(record);
      break;
    case RecordKind::rank:
      if (owner_ != RecordKind::collective && owner_ != RecordKind::rank)
        internalError("rank record outside a collective");
      decodeRank(record);
      break;
    case RecordKind::cost:
      costs_[methodOf(record)] = record.getStructField(Floating).getFloat().convertToDouble();
      break;
    case RecordKind::host: {
      // actor.host(i): the last call for an actor counts.
      int64_t actor = intField(record, A);
      if (actor < 0 || static_cast<uint64_t>(actor) >= graph_.actors.size())
        internalError("host record for actor " + std::to_string(actor));
      graph_.actors[static_cast<size_t>(actor)].host = static_cast<unsigned>(intField(record, B));
      break;
    }
    case RecordKind::gpus: {
      // a.gpus(n): the last call for an actor counts.
      int64_t actor = intField(record, A);
      if (actor < 0 || actor >= static_cast<int64_t>(graph_.actors.size()))
        internalError("gpus record names an undeclared actor");
      graph_.actors[static_cast<size_t>(actor)].gpus = static_cast<unsigned>(intField(record, B));
      break;
    }
    default:
      internalError("unknown record kind " + std::to_string(intField(record, Kind)));
    }
    owner_ = kind;
  }

  void decodeActor(const clang::APValue& record) {
    const clang::TemplateArgument& arg = tagArgument(record);
    ir::Actor actor{text(record), typeName(arg.getAsType()).spelling, {}, locOf(record)};
    actor.needsArguments = intField(record, C) == 1;
    const auto* cls = arg.getAsType()->getAsCXXRecordDecl();
    if (cls && cls->isLocalClass()) {
      // Generated code names the class from files of its own, outside the
      // function that declares it.
      ir::Diagnostic diagnostic{actor.loc, "actor class '" + cls->getNameAsString() +
                                               "' is declared inside a function; generated code "
                                               "cannot name it: declare it at namespace scope"};
      diagnostic.notes.push_back(
          {toLoc(cls->getASTContext().getSourceManager(), cls->getLocation()),
           "'" + cls->getNameAsString() + "' is declared here"});
      diagnostics_.push_back(std::move(diagnostic));
    } else if ((!cls || !isAnnotated(cls, "cg::actor")) &&
               notActors_.insert(qualified(arg.getAsType())).second) {
      // One error per class, at its first use: the fix is one, at the class.
      ir::Diagnostic diagnostic{actor.loc, "class '" + qualified(arg.getAsType()) +
                                               "' is used as an actor but is not marked CG_ACTOR"};
      if (cls) {
        // The fix: `struct CG_ACTOR Echo`, the macro before the class's name.
        ir::SourceLoc name = toLoc(cls->getASTContext().getSourceManager(), cls->getLocation());
        diagnostic.notes.push_back(
            {name,
             "mark '" + cls->getNameAsString() + "' CG_ACTOR where it is declared",
             {},
             {{{name, name}, true, "CG_ACTOR "}}});
      }
      diagnostics_.push_back(std::move(diagnostic));
    }
    graph_.actors.push_back(std::move(actor));
  }

  void decodeInput(const clang::APValue& record) {
    unsigned position = static_cast<unsigned>(graph_.inputs.size());
    clang::QualType type = tagArgument(record).getAsType();
    requireSerializable(type, locOf(record));
    requireSmallEnough(type, tagContext(record), locOf(record));
    unsigned id =
        newValue(intField(record, A), typeName(type), {ir::Producer::Kind::Input, position, -1});
    graph_.inputs.push_back(id);
  }

  static const clang::CXXMethodDecl* methodOf(const clang::APValue& record) {
    const clang::TemplateArgument& arg = tagArgument(record);
    if (arg.getKind() != clang::TemplateArgument::Declaration)
      internalError("method tag argument is not a declaration");
    const auto* method = llvm::dyn_cast<clang::CXXMethodDecl>(arg.getAsDecl());
    if (!method)
      internalError("method tag does not name a member function");
    return method->getCanonicalDecl();
  }

  // v.with_tensor_transport(t): the last call for a value counts.
  void decodeTransport(const clang::APValue& record) {
    unsigned value = valueId(record);
    int64_t transport = intField(record, B);
    ir::Value& v = graph_.values[value];
    v.cudaDevice = 0;
    switch (transport) {
    case static_cast<int64_t>(cg::TensorTransport::shm):
      v.transport = ir::Transport::Shm;
      break;
    case static_cast<int64_t>(cg::TensorTransport::nccl):
      v.transport = ir::Transport::Nccl;
      break;
    case static_cast<int64_t>(cg::TensorTransport::cuda_ipc):
      v.transport = ir::Transport::CudaIpc;
      break;
    case cg::detail::kDeviceTransport:
      switch (intField(record, C)) {
      case static_cast<int64_t>(cg::DeviceKind::cpu):
        v.transport = ir::Transport::Cpu;
        break;
      case static_cast<int64_t>(cg::DeviceKind::cuda):
        v.transport = ir::Transport::Cuda;
        v.cudaDevice = static_cast<unsigned>(intField(record, Integer));
        break;
      default:
        internalError("unknown device kind " + std::to_string(intField(record, C)));
      }
      break;
    default:
      internalError("unknown transport " + std::to_string(intField(record, B)));
    }
    if (v.transport == ir::Transport::Nccl && v.producer.kind == ir::Producer::Kind::Input)
      diagnostics_.push_back(
          {locOf(record),
           "graph input #" + std::to_string(v.producer.index) +
               " cannot use transport nccl: the driver takes part in no NCCL group; "
               "send it over nccl from the first actor that reads it",
           {}});
  }

  // cg::allreduce(g, {x0, x1, ...}, op) and friends: one ir::Collective, then
  // one task per rank (see decodeRank).
  void decodeCollective(const clang::APValue& record) {
    ir::Collective collective;
    auto kind = static_cast<CollectiveKind>(intField(record, A));
    switch (kind) {
    case CollectiveKind::allreduce:
      collective.kind = ir::Collective::Kind::AllReduce;
      break;
    case CollectiveKind::allgather:
      collective.kind = ir::Collective::Kind::AllGather;
      break;
    case CollectiveKind::reducescatter:
      collective.kind = ir::Collective::Kind::ReduceScatter;
      break;
    default:
      internalError("unknown collective kind " + std::to_string(intField(record, A)));
    }
    int64_t op = intField(record, B);
    if (kind != CollectiveKind::allgather) {
      if (op < 0 || op > static_cast<int64_t>(cg::ReduceOp::avg)) // the last enumerator
        internalError("unknown reduce operation " + std::to_string(op));
      collective.reduceOp = std::string(cg::to_string(static_cast<cg::ReduceOp>(op)));
    }
    collective.loc = locOf(record);
    collectiveType_ = tagArgument(record).getAsType();
    requireSerializable(collectiveType_, collective.loc);
    graph_.collectives.push_back(std::move(collective));
  }

  // One rank: a task on the actor that produced the rank's value, reading it
  // in memory, its result a value of the same type.
  void decodeRank(const clang::APValue& record) {
    ir::Collective& collective = graph_.collectives.back();
    auto rank = static_cast<unsigned>(collective.tasks.size());
    unsigned input = valueId(record);
    const ir::Producer& producer = graph_.values[input].producer;
    std::string name(ir::toString(collective.kind));
    ir::Task task;
    task.method = name;
    task.loc = collective.loc;
    task.collective = static_cast<int>(graph_.collectives.size() - 1);
    task.args.push_back({ir::Arg::Kind::Value, input, {}});
    if (producer.kind == ir::Producer::Kind::Input) {
      diagnostics_.push_back({collective.loc,
                              "rank " + std::to_string(rank) + " of the " + name +
                                  " is graph input #" + std::to_string(producer.index) +
                                  "; each rank runs on the actor that produced its value, "
                                  "so pass a task's result",
                              {}});
    } else {
      task.actor = graph_.tasks[producer.index].actor;
      for (unsigned r = 0; r < rank; ++r) {
        const ir::Task& other = graph_.tasks[collective.tasks[r]];
        bool otherOnActor =
            graph_.values[other.args[0].value].producer.kind == ir::Producer::Kind::Task;
        if (otherOnActor && other.actor == task.actor)
          diagnostics_.push_back(
              {collective.loc,
               "ranks " + std::to_string(r) + " and " + std::to_string(rank) + " of the " + name +
                   " both run on actor '" + graph_.actors[task.actor].name +
                   "', which produced both values; a collective needs one actor per rank",
               {}});
      }
    }
    auto index = static_cast<unsigned>(graph_.tasks.size());
    task.results.push_back(newValue(intField(record, B), typeName(collectiveType_),
                                    {ir::Producer::Kind::Task, index, -1}));
    collective.tasks.push_back(index);
    graph_.tasks.push_back(std::move(task));
    taskMethods_.push_back(nullptr);
  }

  // g.cost<&C::m>(c) sets the cost of every task binding C::m.
  void applyCosts() {
    for (size_t t = 0; t < graph_.tasks.size(); ++t)
      if (auto it = costs_.find(taskMethods_[t]); taskMethods_[t] && it != costs_.end())
        graph_.tasks[t].cost = it->second;
  }

  void decodeTask(const clang::APValue& record) {
    const clang::CXXMethodDecl* method = methodOf(record);
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
    if (method->getPrimaryTemplate() != nullptr)
      // Generated code calls the method by name with the values it received,
      // which would deduce other template arguments than the bind's.
      diagnostics_.push_back({task.loc,
                              "method '" + method->getQualifiedNameAsString() +
                                  "' is a member function template; bind a method that is not a "
                                  "template (one that calls this one)",
                              {}});
    for (const clang::ParmVarDecl* parameter : method->parameters())
      requireSmallEnough(parameter->getType().getNonReferenceType(), method->getASTContext(),
                         task.loc);
    auto index = static_cast<unsigned>(graph_.tasks.size());
    clang::QualType result = method->getReturnType().getNonReferenceType().getUnqualifiedType();
    requireSmallEnough(result, method->getASTContext(), task.loc);
    int64_t first = intField(record, B);
    int64_t unpacked = intField(record, C);
    if (unpacked == 0) {
      requireSerializable(result, task.loc, method);
      task.results.push_back(
          newValue(first, typeName(result), {ir::Producer::Kind::Task, index, -1}));
    } else {
      std::vector<clang::QualType> elements = tupleElements(result);
      if (static_cast<int64_t>(elements.size()) != unpacked)
        internalError("unpacked result count does not match the method's std::tuple");
      for (int k = 0; k < unpacked; ++k) {
        requireSerializable(elements[k], task.loc, method);
        task.results.push_back(
            newValue(first + k, typeName(elements[k]), {ir::Producer::Kind::Task, index, k}));
      }
    }
    graph_.tasks.push_back(std::move(task));
    taskMethods_.push_back(method);
  }

  std::vector<clang::QualType> tupleElements(clang::QualType tuple) const {
    const auto* spec = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(
        tuple.getCanonicalType()->getAsCXXRecordDecl());
    if (!spec || spec->getTemplateArgs().size() != 1 ||
        spec->getTemplateArgs()[0].getKind() != clang::TemplateArgument::Pack)
      internalError("a method result unpacked as a tuple is not a std::tuple");
    std::vector<clang::QualType> elements;
    for (const clang::TemplateArgument& element : spec->getTemplateArgs()[0].pack_elements())
      elements.push_back(element.getAsType());
    return elements;
  }

  // A constant record as a C++ expression of its type.
  ir::Constant constant(const clang::APValue& record) const {
    clang::QualType type = tagArgument(record).getAsType().getCanonicalType();
    ir::Constant out{typeName(type), ""};
    int64_t integer = intField(record, Integer);
    if (intField(record, C) == 1) {
      out.expression = "std::string(" + cppStringLiteral(text(record)) + ")";
    } else if (type->isBooleanType()) {
      out.expression = integer ? "true" : "false";
    } else if (type->isRealFloatingType()) {
      out.expression = cppFloatingLiteral(
          record.getStructField(Floating).getFloat().convertToDouble(), out.type.spelling);
    } else if (type->isEnumeralType() || type->isAnyCharacterType()) {
      out.expression = "static_cast<" + out.type.spelling + ">(" + std::to_string(integer) + ")";
    } else if (type->isUnsignedIntegerType()) {
      out.expression = std::to_string(static_cast<uint64_t>(integer)) + "ull";
    } else if (integer == INT64_MIN) {
      out.expression = "(-9223372036854775807ll - 1)";
    } else {
      out.expression = std::to_string(integer) +
                       (type->isSpecificBuiltinType(clang::BuiltinType::Int) ? "" : "ll");
    }
    return out;
  }

  // Value ids are dense and in creation order; the record's id must agree.
  unsigned newValue(int64_t id, ir::Type type, ir::Producer producer) {
    if (id != static_cast<int64_t>(graph_.values.size()))
      internalError("value ids are not dense");
    graph_.values.push_back({std::move(type), producer, ir::Transport::Shm});
    return static_cast<unsigned>(id);
  }

  unsigned valueId(const clang::APValue& record) {
    int64_t id = intField(record, A);
    if (id < 0 || id >= static_cast<int64_t>(graph_.values.size()))
      internalError("record names an unknown value");
    return static_cast<unsigned>(id);
  }

  std::string text(const clang::APValue& record) const {
    int64_t offset = intField(record, Text);
    int64_t size = intField(record, TextSize);
    if (offset < 0 || size < 0 || static_cast<size_t>(offset + size) > text_.size())
      internalError("record text is outside the text pool");
    return text_.substr(static_cast<size_t>(offset), static_cast<size_t>(size));
  }

  // A bind made in a helper function reports the helper's file; records that
  // carry no file (constants) report the graph function's.
  ir::SourceLoc locOf(const clang::APValue& record) const {
    return {fileOf(record), static_cast<unsigned>(intField(record, Line)),
            static_cast<unsigned>(intField(record, Column))};
  }

  // std::source_location::file_name() points at a string literal Clang made
  // from the presumed file name, the same spelling its diagnostics use.
  std::string fileOf(const clang::APValue& record) const {
    const clang::APValue& file = record.getStructField(File);
    if (!file.isLValue() || file.isNullPointer())
      return function_.loc.file;
    const auto* literal = llvm::dyn_cast_or_null<clang::StringLiteral>(
        file.getLValueBase().dyn_cast<const clang::Expr*>());
    if (!literal || !file.getLValueOffset().isZero())
      internalError("record file is not a file name");
    return literal->getString().str();
  }

  // One error per type that cannot be sent, at its first use, with a note at
  // the member to blame, and one at the method that returns the type.
  void requireSerializable(clang::QualType type, const ir::SourceLoc& loc,
                           const clang::CXXMethodDecl* returnedBy = nullptr) {
    std::optional<Unsendable> problem = serializers_.require(type);
    if (!problem || !unsendable_.insert(problem->message).second)
      return;
    ir::Diagnostic diagnostic{loc, problem->message};
    if (returnedBy)
      diagnostic.notes.push_back(
          {toLoc(returnedBy->getASTContext().getSourceManager(), returnedBy->getLocation()),
           "'" + returnedBy->getParent()->getNameAsString() + "::" + returnedBy->getNameAsString() +
               "' returns it"});
    if (!problem->member.file.empty())
      diagnostic.notes.push_back(
          {problem->member, "'" + problem->memberName + "' is declared here"});
    diagnostics_.push_back(std::move(diagnostic));
  }

  // A value of a type larger than this (a std::array of a billion chars) is
  // an object on the stack of the thread that passes it, as an argument, a
  // result or a decoded copy; Linux gives a thread 8 MiB of stack.
  static constexpr uint64_t kMaxValueBytes = uint64_t{1} << 20;

  // One error per type too large to pass, at its first use.
  void requireSmallEnough(clang::QualType type, const clang::ASTContext& context,
                          const ir::SourceLoc& loc) {
    if (type->isDependentType() || type->isIncompleteType() || type->isVoidType())
      return;
    uint64_t bytes = static_cast<uint64_t>(context.getTypeSizeInChars(type).getQuantity());
    if (bytes <= kMaxValueBytes || !tooLarge_.insert(qualified(type)).second)
      return;
    diagnostics_.push_back({loc,
                            "type '" + qualified(type) + "' is " + std::to_string(bytes) +
                                " bytes, more than the " + std::to_string(kMaxValueBytes) +
                                " bytes (1 MiB) a value passed between tasks may be: it is held "
                                "on a thread's stack; pass a std::vector or a cg::Tensor",
                            {}});
  }

  std::string qualified(clang::QualType type) const { return serializers_.spell(type); }
  ir::Type typeName(clang::QualType type) const { return {serializers_.spell(type)}; }

  static bool isAnnotated(const clang::Decl* decl, llvm::StringRef annotation) {
    for (const auto* attr : decl->specific_attrs<clang::AnnotateAttr>())
      if (attr->getAnnotation() == annotation)
        return true;
    return false;
  }

  const GraphFunction& function_;
  SerializerPlanner& serializers_;
  std::set<std::string> unsendable_; // messages of types already reported
  std::set<std::string> tooLarge_;   // types already reported too large to pass
  std::set<std::string> notActors_;  // classes already reported not CG_ACTOR
  std::string text_;
  RecordKind owner_ = RecordKind::output;                // what the last actor/task/... record was
  clang::QualType collectiveType_;                       // the value type of the last collective
  std::vector<const clang::CXXMethodDecl*> taskMethods_; // per task; null for a rank
  std::map<const clang::CXXMethodDecl*, double> costs_;  // g.cost<&C::m>(c), by method
  ir::Graph graph_;
  std::vector<ir::Diagnostic> diagnostics_;
};

} // namespace

EncodedSizes encodedSizes(const clang::APValue& encoded) {
  EncodedSizes sizes;
  sizes.records = sizeField(encoded, EncodedRecordCount);
  sizes.text = sizeField(encoded, EncodedTextSize);
  // The arrays: std::array<T, N> holds one C array.
  uint64_t recordCapacity = encoded.getStructField(EncodedRecords).getStructField(0).getArraySize();
  uint64_t textCapacity = encoded.getStructField(EncodedText).getStructField(0).getArraySize();
  sizes.fit = sizes.records <= recordCapacity && sizes.text <= textCapacity;
  return sizes;
}

std::variant<ir::Graph, std::vector<ir::Diagnostic>> decodeGraph(const clang::APValue& records,
                                                                 const GraphFunction& function,
                                                                 SerializerPlanner& serializers) {
  return Decoder(function, serializers).run(records);
}

} // namespace cg::frontend
