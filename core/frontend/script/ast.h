// The syntax tree of the script language (a Python subset; see script.h for the list).
// Nodes own their children; every node carries the location its diagnostics point at.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/frontend/script/source.h"

namespace tsr::frontend::script {

enum class BinOp : uint8_t { kAdd, kSub, kMul, kDiv, kFloorDiv, kMod, kMatMul, kPow };
enum class CmpOp : uint8_t { kLt, kGt, kLe, kGe, kEq, kNe };
const char* bin_op_text(BinOp op);
const char* cmp_op_text(CmpOp op);

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind : uint8_t {
  kName,       // name
  kInt,        // i
  kFloat,      // f
  kString,     // name holds the text
  kBool,       // i (0/1)
  kNone,
  kList,       // items
  kTuple,      // items
  kNeg,        // items[0]; also unary + (kPos)
  kPos,
  kNot,        // items[0]
  kBinary,     // bin_op, items[0], items[1]
  kCompare,    // cmp_op, items[0], items[1] (chains are desugared into kAnd)
  kAnd,        // items[0] and items[1]
  kOr,
  kCall,       // callee name in `name`, items = positional args, kwargs
  kSubscript,  // items[0][items[1]]
};

struct Keyword {
  std::string name;
  ExprPtr value;
  Loc loc;
};

struct Expr {
  ExprKind kind = ExprKind::kNone;
  Loc loc;
  std::string name;
  int64_t i = 0;
  double f = 0;
  BinOp bin_op = BinOp::kAdd;
  CmpOp cmp_op = CmpOp::kLt;
  std::vector<ExprPtr> items;
  std::vector<Keyword> kwargs;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

struct Param {
  std::string name;
  ExprPtr default_value;  // null: required
  Loc loc;
};

struct Decorator {
  std::string name;
  Loc loc;
};

struct FunctionDef {
  std::string name;
  Loc loc;
  std::vector<Param> params;
  std::vector<Decorator> decorators;
  Block body;
  bool has_decorator(const std::string& n) const;
};

enum class StmtKind : uint8_t {
  kExpr,       // value
  kAssign,     // targets (each a kName or a kTuple of kNames) = value
  kAugAssign,  // targets[0] (a kName) bin_op= value
  kIf,         // cond, body, orelse (elif: one kIf in orelse)
  kWhile,      // cond, body
  kFor,        // for var in value (a range(...) call or an expression): body
  kReturn,     // value (null: return None)
  kPass,
  kDef,        // def
};

struct Stmt {
  StmtKind kind = StmtKind::kPass;
  Loc loc;
  std::vector<ExprPtr> targets;
  ExprPtr value;
  ExprPtr cond;
  BinOp bin_op = BinOp::kAdd;
  std::string var;
  Block body, orelse;
  std::unique_ptr<FunctionDef> def;
};

struct Module {
  std::unique_ptr<SourceFile> source;
  Block body;
};

}  // namespace tsr::frontend::script
