#include "core/frontend/script/parser.h"

#include <set>

#include "core/frontend/script/lexer.h"

namespace tsr::frontend::script {

const char* bin_op_text(BinOp op) {
  switch (op) {
    case BinOp::kAdd: return "+";
    case BinOp::kSub: return "-";
    case BinOp::kMul: return "*";
    case BinOp::kDiv: return "/";
    case BinOp::kFloorDiv: return "//";
    case BinOp::kMod: return "%";
    case BinOp::kMatMul: return "@";
    case BinOp::kPow: return "**";
  }
  return "?";
}

const char* cmp_op_text(CmpOp op) {
  switch (op) {
    case CmpOp::kLt: return "<";
    case CmpOp::kGt: return ">";
    case CmpOp::kLe: return "<=";
    case CmpOp::kGe: return ">=";
    case CmpOp::kEq: return "==";
    case CmpOp::kNe: return "!=";
  }
  return "?";
}

bool FunctionDef::has_decorator(const std::string& n) const {
  for (const Decorator& d : decorators)
    if (d.name == n) return true;
  return false;
}

namespace {

// Python keywords outside the subset, with what to say about them.
const char* unsupported_keyword(const std::string& w) {
  if (w == "class") return "class definitions";
  if (w == "lambda") return "lambda expressions";
  if (w == "with") return "with statements";
  if (w == "try" || w == "except" || w == "finally" || w == "raise") return "exceptions (try/except/raise)";
  if (w == "import" || w == "from") return "imports (every op is a builtin: call it by its snake_case name)";
  if (w == "global" || w == "nonlocal") return "global/nonlocal declarations";
  if (w == "yield") return "generators (yield)";
  if (w == "async" || w == "await") return "async functions";
  if (w == "del") return "del statements";
  if (w == "assert") return "assert statements";
  if (w == "break" || w == "continue") return "break/continue";
  if (w == "is") return "the 'is' operator";
  return nullptr;
}


class Parser {
 public:
  Parser(const SourceFile& src, std::vector<Token> toks) : src_(src), t_(std::move(toks)) {}

  Expected<Block> file() {
    Block body;
    while (peek().kind != Tok::kEnd) {
      if (peek().kind == Tok::kNewline) {
        ++p_;
        continue;
      }
      if (peek().kind == Tok::kIndent) return error(peek().loc, "unexpected indent");
      TSR_RETURN_IF_ERROR(statement(body));
    }
    return body;
  }

 private:
  const Token& peek(size_t k = 0) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  bool is_op(const char* op, size_t k = 0) const { return peek(k).kind == Tok::kOp && peek(k).text == op; }
  bool is_word(const char* w, size_t k = 0) const { return peek(k).kind == Tok::kName && peek(k).text == w; }
  Status error(Loc loc, const std::string& msg) const { return script_error(src_, loc, msg); }
  Status unsupported_here(Loc loc, const std::string& what) const {
    return script_error(src_, loc, str_cat(what, " are not supported by the script language"), StatusCode::kUnsupported);
  }
  std::string describe(const Token& t) const {
    switch (t.kind) {
      case Tok::kNewline: return "end of line";
      case Tok::kIndent: return "indent";
      case Tok::kDedent: return "dedent";
      case Tok::kEnd: return "end of file";
      case Tok::kString: return "string literal";
      default: return str_cat("'", t.text, "'");
    }
  }
  Status expect_op(const char* op, const char* context) {
    if (is_op(op)) {
      ++p_;
      return ok_status();
    }
    return error(peek().loc, str_cat("expected '", op, "' ", context, ", found ", describe(peek())));
  }
  Status check_keyword(const Token& t) const {
    if (t.kind != Tok::kName) return ok_status();
    if (const char* what = unsupported_keyword(t.text)) return unsupported_here(t.loc, what);
    return ok_status();
  }
  Expected<std::string> name(const char* context) {
    const Token& t = peek();
    if (t.kind != Tok::kName || is_keyword(t.text)) {
      TSR_RETURN_IF_ERROR(check_keyword(t));
      return error(t.loc, str_cat("expected a name ", context, ", found ", describe(t)));
    }
    ++p_;
    return t.text;
  }

  // ---- statements ----
  Status statement(Block& out) {
    const Token& t = peek();
    if (t.kind == Tok::kOp && t.text == "@") return def_statement(out);
    if (t.kind == Tok::kName) {
      if (t.text == "def") return def_statement(out);
      if (t.text == "if") return if_statement(out, "if");
      if (t.text == "while") return while_statement(out);
      if (t.text == "for") return for_statement(out);
      TSR_RETURN_IF_ERROR(check_keyword(t));
    }
    return simple_statements(out);
  }

  Status simple_statements(Block& out) {
    for (;;) {
      TSR_RETURN_IF_ERROR(small_statement(out));
      if (is_op(";")) {
        ++p_;
        if (peek().kind == Tok::kNewline) break;
        continue;
      }
      break;
    }
    if (peek().kind != Tok::kNewline)
      return error(peek().loc, str_cat("expected end of line, found ", describe(peek())));
    ++p_;
    return ok_status();
  }

  Status small_statement(Block& out) {
    auto s = std::make_unique<Stmt>();
    s->loc = peek().loc;
    if (is_word("pass")) {
      ++p_;
      s->kind = StmtKind::kPass;
      out.push_back(std::move(s));
      return ok_status();
    }
    if (is_word("return")) {
      ++p_;
      s->kind = StmtKind::kReturn;
      if (peek().kind != Tok::kNewline && !is_op(";")) {
        TSR_ASSIGN_OR_RETURN(s->value, testlist());
      }
      out.push_back(std::move(s));
      return ok_status();
    }
    TSR_RETURN_IF_ERROR(check_keyword(peek()));
    TSR_ASSIGN_OR_RETURN(ExprPtr first, testlist());
    static const char* kAug[] = {"+=", "-=", "*=", "/=", "//=", "%=", "@=", "**="};
    static const BinOp kAugOps[] = {BinOp::kAdd, BinOp::kSub, BinOp::kMul, BinOp::kDiv,
                                    BinOp::kFloorDiv, BinOp::kMod, BinOp::kMatMul, BinOp::kPow};
    for (size_t k = 0; k < 8; ++k) {
      if (!is_op(kAug[k])) continue;
      if (first->kind != ExprKind::kName)
        return error(first->loc, "the target of an augmented assignment must be a name");
      ++p_;
      s->kind = StmtKind::kAugAssign;
      s->bin_op = kAugOps[k];
      s->targets.push_back(std::move(first));
      TSR_ASSIGN_OR_RETURN(s->value, testlist());
      out.push_back(std::move(s));
      return ok_status();
    }
    if (is_op("&=") || is_op("|=") || is_op("^=") || is_op("<<=") || is_op(">>="))
      return unsupported_here(peek().loc, "bitwise operators");
    if (is_op(":")) return unsupported_here(peek().loc, "variable annotations");
    if (!is_op("=")) {
      s->kind = StmtKind::kExpr;
      s->value = std::move(first);
      out.push_back(std::move(s));
      return ok_status();
    }
    s->kind = StmtKind::kAssign;
    std::vector<ExprPtr> chain;
    chain.push_back(std::move(first));
    while (is_op("=")) {
      ++p_;
      TSR_ASSIGN_OR_RETURN(ExprPtr e, testlist());
      chain.push_back(std::move(e));
    }
    s->value = std::move(chain.back());
    chain.pop_back();
    for (ExprPtr& target : chain) {
      TSR_RETURN_IF_ERROR(check_target(*target));
      s->targets.push_back(std::move(target));
    }
    out.push_back(std::move(s));
    return ok_status();
  }

  Status check_target(const Expr& e) const {
    if (e.kind == ExprKind::kName) return ok_status();
    if (e.kind == ExprKind::kTuple || e.kind == ExprKind::kList) {
      for (const ExprPtr& item : e.items)
        if (item->kind != ExprKind::kName)
          return unsupported_here(item->loc, "nested or non-name unpacking targets");
      return ok_status();
    }
    if (e.kind == ExprKind::kSubscript)
      return unsupported_here(e.loc, "assignments to subscripts (tensors are immutable values)");
    return error(e.loc, "cannot assign to this expression");
  }

  // suite: a simple statement on the same line, or NEWLINE INDENT statements DEDENT.
  Status suite(Block& out, const char* what) {
    TSR_RETURN_IF_ERROR(expect_op(":", what));
    if (peek().kind != Tok::kNewline) return simple_statements(out);
    ++p_;
    if (peek().kind != Tok::kIndent) return error(peek().loc, str_cat("expected an indented block ", what));
    ++p_;
    while (peek().kind != Tok::kDedent && peek().kind != Tok::kEnd) TSR_RETURN_IF_ERROR(statement(out));
    if (peek().kind == Tok::kDedent) ++p_;
    return ok_status();
  }

  Status def_statement(Block& out) {
    auto def = std::make_unique<FunctionDef>();
    while (is_op("@")) {
      ++p_;
      Decorator d;
      d.loc = peek().loc;
      TSR_ASSIGN_OR_RETURN(d.name, name("after '@'"));
      if (is_op(".") || is_op("("))
        return unsupported_here(peek().loc, "dotted or called decorators (write @static)");
      if (peek().kind != Tok::kNewline) return error(peek().loc, "expected end of line after the decorator");
      ++p_;
      def->decorators.push_back(std::move(d));
    }
    if (!is_word("def")) {
      TSR_RETURN_IF_ERROR(check_keyword(peek()));
      return error(peek().loc, str_cat("expected 'def' after decorators, found ", describe(peek())));
    }
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::kDef;
    s->loc = peek().loc;
    ++p_;
    def->loc = peek().loc;
    TSR_ASSIGN_OR_RETURN(def->name, name("after 'def'"));
    TSR_RETURN_IF_ERROR(expect_op("(", "after the function name"));
    std::set<std::string> seen;
    while (!is_op(")")) {
      if (is_op("*") || is_op("**") || is_op("/")) return unsupported_here(peek().loc, "*args, **kwargs and / or * markers");
      Param prm;
      prm.loc = peek().loc;
      TSR_ASSIGN_OR_RETURN(prm.name, name("for a parameter"));
      if (!seen.insert(prm.name).second) return error(prm.loc, str_cat("duplicate parameter '", prm.name, "'"));
      if (is_op(":")) {  // annotations are read and ignored (documentation only)
        ++p_;
        TSR_ASSIGN_OR_RETURN(ExprPtr ignored, test());
        (void)ignored;
      }
      if (is_op("=")) {
        ++p_;
        TSR_ASSIGN_OR_RETURN(prm.default_value, test());
      } else if (!def->params.empty() && def->params.back().default_value) {
        return error(prm.loc, "a parameter without a default follows one with a default");
      }
      def->params.push_back(std::move(prm));
      if (!is_op(",")) break;
      ++p_;
    }
    TSR_RETURN_IF_ERROR(expect_op(")", "to close the parameter list"));
    if (is_op("->")) {
      ++p_;
      TSR_ASSIGN_OR_RETURN(ExprPtr ignored, test());
      (void)ignored;
    }
    TSR_RETURN_IF_ERROR(suite(def->body, "after the function header"));
    s->def = std::move(def);
    out.push_back(std::move(s));
    return ok_status();
  }

  Status if_statement(Block& out, const char* kw) {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::kIf;
    s->loc = peek().loc;
    ++p_;  // if / elif
    TSR_ASSIGN_OR_RETURN(s->cond, test());
    TSR_RETURN_IF_ERROR(suite(s->body, str_cat("after the ", kw, " condition").c_str()));
    if (is_word("elif")) {
      TSR_RETURN_IF_ERROR(if_statement(s->orelse, "elif"));
    } else if (is_word("else")) {
      ++p_;
      TSR_RETURN_IF_ERROR(suite(s->orelse, "after 'else'"));
    }
    out.push_back(std::move(s));
    return ok_status();
  }

  Status while_statement(Block& out) {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::kWhile;
    s->loc = peek().loc;
    ++p_;
    TSR_ASSIGN_OR_RETURN(s->cond, test());
    TSR_RETURN_IF_ERROR(suite(s->body, "after the while condition"));
    if (is_word("else")) return unsupported_here(peek().loc, "else clauses on loops");
    out.push_back(std::move(s));
    return ok_status();
  }

  Status for_statement(Block& out) {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::kFor;
    s->loc = peek().loc;
    ++p_;
    TSR_ASSIGN_OR_RETURN(s->var, name("after 'for'"));
    if (is_op(",")) return unsupported_here(peek().loc, "tuple targets in for loops");
    if (!is_word("in")) return error(peek().loc, str_cat("expected 'in' in the for statement, found ", describe(peek())));
    ++p_;
    TSR_ASSIGN_OR_RETURN(s->value, test());
    TSR_RETURN_IF_ERROR(suite(s->body, "after the for header"));
    if (is_word("else")) return unsupported_here(peek().loc, "else clauses on loops");
    out.push_back(std::move(s));
    return ok_status();
  }

  // ---- expressions ----
  static ExprPtr make(ExprKind k, Loc loc) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->loc = loc;
    return e;
  }

  bool starts_expression() const {
    const Token& t = peek();
    if (t.kind == Tok::kNewline || t.kind == Tok::kEnd || t.kind == Tok::kIndent || t.kind == Tok::kDedent) return false;
    if (t.kind == Tok::kOp) return t.text == "(" || t.text == "[" || t.text == "-" || t.text == "+" || t.text == "~" || t.text == "{";
    return !(t.kind == Tok::kName && (t.text == "in" || t.text == "if" || t.text == "else" || t.text == "for"));
  }

  // testlist: test (',' test)* [','] -> a tuple when there is a comma.
  Expected<ExprPtr> testlist() {
    const Loc loc = peek().loc;
    TSR_ASSIGN_OR_RETURN(ExprPtr first, test());
    if (!is_op(",")) return first;
    ExprPtr tuple = make(ExprKind::kTuple, loc);
    tuple->items.push_back(std::move(first));
    while (is_op(",")) {
      ++p_;
      if (!starts_expression()) break;
      TSR_ASSIGN_OR_RETURN(ExprPtr e, test());
      tuple->items.push_back(std::move(e));
    }
    return tuple;
  }

  Expected<ExprPtr> test() {
    if (is_word("lambda")) return unsupported_here(peek().loc, "lambda expressions");
    TSR_ASSIGN_OR_RETURN(ExprPtr e, or_test());
    if (is_word("if")) return unsupported_here(peek().loc, "conditional expressions (x if c else y)");
    if (is_op(":=")) return unsupported_here(peek().loc, "assignment expressions (:=)");
    return e;
  }

  Expected<ExprPtr> or_test() {
    TSR_ASSIGN_OR_RETURN(ExprPtr l, and_test());
    while (is_word("or")) {
      const Loc loc = peek().loc;
      ++p_;
      TSR_ASSIGN_OR_RETURN(ExprPtr r, and_test());
      ExprPtr e = make(ExprKind::kOr, loc);
      e->items.push_back(std::move(l));
      e->items.push_back(std::move(r));
      l = std::move(e);
    }
    return l;
  }

  Expected<ExprPtr> and_test() {
    TSR_ASSIGN_OR_RETURN(ExprPtr l, not_test());
    while (is_word("and")) {
      const Loc loc = peek().loc;
      ++p_;
      TSR_ASSIGN_OR_RETURN(ExprPtr r, not_test());
      ExprPtr e = make(ExprKind::kAnd, loc);
      e->items.push_back(std::move(l));
      e->items.push_back(std::move(r));
      l = std::move(e);
    }
    return l;
  }

  Expected<ExprPtr> not_test() {
    if (is_word("not")) {
      const Loc loc = peek().loc;
      ++p_;
      TSR_ASSIGN_OR_RETURN(ExprPtr operand, not_test());
      ExprPtr e = make(ExprKind::kNot, loc);
      e->items.push_back(std::move(operand));
      return e;
    }
    return comparison();
  }

  bool comparison_op(CmpOp* op) const {
    static const char* kText[] = {"<", ">", "<=", ">=", "==", "!="};
    static const CmpOp kOps[] = {CmpOp::kLt, CmpOp::kGt, CmpOp::kLe, CmpOp::kGe, CmpOp::kEq, CmpOp::kNe};
    for (size_t k = 0; k < 6; ++k)
      if (is_op(kText[k])) {
        *op = kOps[k];
        return true;
      }
    return false;
  }

  // a < b < c is (a < b) and (b < c); b is evaluated twice (expressions have no side effects
  // other than print).
  Expected<ExprPtr> comparison() {
    TSR_ASSIGN_OR_RETURN(ExprPtr l, arith());
    ExprPtr result;
    CmpOp op;
    const Expr* prev = nullptr;
    ExprPtr prev_owned = std::move(l);
    while (comparison_op(&op) || is_word("in") || is_word("is") || (is_word("not") && peek(1).text == "in")) {
      if (peek().kind == Tok::kName)
        return unsupported_here(peek().loc, peek().text == "is" ? "the 'is' operator" : "membership tests ('in')");
      const Loc loc = peek().loc;
      ++p_;
      TSR_ASSIGN_OR_RETURN(ExprPtr r, arith());
      ExprPtr cmp = make(ExprKind::kCompare, loc);
      cmp->cmp_op = op;
      cmp->items.push_back(prev ? clone(*prev) : std::move(prev_owned));
      prev = r.get();
      cmp->items.push_back(std::move(r));
      if (!result) {
        result = std::move(cmp);
      } else {
        ExprPtr both = make(ExprKind::kAnd, loc);
        both->items.push_back(std::move(result));
        both->items.push_back(std::move(cmp));
        result = std::move(both);
      }
    }
    return result ? std::move(result) : std::move(prev_owned);
  }

  static ExprPtr clone(const Expr& e) {
    auto c = std::make_unique<Expr>();
    c->kind = e.kind;
    c->loc = e.loc;
    c->name = e.name;
    c->i = e.i;
    c->f = e.f;
    c->bin_op = e.bin_op;
    c->cmp_op = e.cmp_op;
    for (const ExprPtr& it : e.items) c->items.push_back(clone(*it));
    for (const Keyword& k : e.kwargs) c->kwargs.push_back({k.name, clone(*k.value), k.loc});
    return c;
  }

  Expected<ExprPtr> binary(ExprPtr l, BinOp op, Loc loc, ExprPtr r) {
    ExprPtr e = make(ExprKind::kBinary, loc);
    e->bin_op = op;
    e->items.push_back(std::move(l));
    e->items.push_back(std::move(r));
    return e;
  }

  Expected<ExprPtr> arith() {
    TSR_ASSIGN_OR_RETURN(ExprPtr l, term());
    for (;;) {
      if (is_op("|") || is_op("&") || is_op("^") || is_op("<<") || is_op(">>"))
        return unsupported_here(peek().loc, "bitwise operators");
      if (!is_op("+") && !is_op("-")) return l;
      const BinOp op = is_op("+") ? BinOp::kAdd : BinOp::kSub;
      const Loc loc = peek().loc;
      ++p_;
      TSR_ASSIGN_OR_RETURN(ExprPtr r, term());
      TSR_ASSIGN_OR_RETURN(l, binary(std::move(l), op, loc, std::move(r)));
    }
  }

  Expected<ExprPtr> term() {
    TSR_ASSIGN_OR_RETURN(ExprPtr l, factor());
    for (;;) {
      BinOp op;
      if (is_op("*")) op = BinOp::kMul;
      else if (is_op("/")) op = BinOp::kDiv;
      else if (is_op("//")) op = BinOp::kFloorDiv;
      else if (is_op("%")) op = BinOp::kMod;
      else if (is_op("@")) op = BinOp::kMatMul;
      else return l;
      const Loc loc = peek().loc;
      ++p_;
      TSR_ASSIGN_OR_RETURN(ExprPtr r, factor());
      TSR_ASSIGN_OR_RETURN(l, binary(std::move(l), op, loc, std::move(r)));
    }
  }

  Expected<ExprPtr> factor() {
    if (is_op("-") || is_op("+")) {
      const Loc loc = peek().loc;
      const bool neg = is_op("-");
      ++p_;
      TSR_ASSIGN_OR_RETURN(ExprPtr operand, factor());
      ExprPtr e = make(neg ? ExprKind::kNeg : ExprKind::kPos, loc);
      e->items.push_back(std::move(operand));
      return e;
    }
    if (is_op("~")) return unsupported_here(peek().loc, "bitwise operators");
    return power();
  }

  Expected<ExprPtr> power() {
    TSR_ASSIGN_OR_RETURN(ExprPtr base, atom_expr());
    if (!is_op("**")) return base;
    const Loc loc = peek().loc;
    ++p_;
    TSR_ASSIGN_OR_RETURN(ExprPtr exp, factor());  // right-associative, binds tighter than unary minus on the left
    return binary(std::move(base), BinOp::kPow, loc, std::move(exp));
  }

  Expected<ExprPtr> atom_expr() {
    TSR_ASSIGN_OR_RETURN(ExprPtr e, atom());
    for (;;) {
      if (is_op("(")) {
        if (e->kind != ExprKind::kName) return unsupported_here(peek().loc, "calls of computed values");
        const Loc loc = e->loc;
        ExprPtr call = make(ExprKind::kCall, loc);
        call->name = e->name;
        ++p_;
        TSR_RETURN_IF_ERROR(arguments(*call));
        e = std::move(call);
      } else if (is_op("[")) {
        const Loc loc = peek().loc;
        ++p_;
        if (is_op(":")) return unsupported_here(peek().loc, "slices (call slice(x, starts, ends, axes))");
        TSR_ASSIGN_OR_RETURN(ExprPtr index, test());
        if (is_op(":")) return unsupported_here(peek().loc, "slices (call slice(x, starts, ends, axes))");
        if (is_op(",")) return unsupported_here(peek().loc, "multi-dimensional subscripts (index one axis at a time)");
        TSR_RETURN_IF_ERROR(expect_op("]", "to close the subscript"));
        ExprPtr sub = make(ExprKind::kSubscript, loc);
        sub->items.push_back(std::move(e));
        sub->items.push_back(std::move(index));
        e = std::move(sub);
      } else if (is_op(".")) {
        return unsupported_here(peek().loc, str_cat("attribute and method accesses ('.", peek(1).text,
                                                   "'; call the op function instead, e.g. reduce_sum(x))"));
      } else {
        return e;
      }
    }
  }

  Status arguments(Expr& call) {
    while (!is_op(")")) {
      if (is_op("*") || is_op("**")) return unsupported_here(peek().loc, "argument unpacking (*args, **kwargs)");
      if (peek().kind == Tok::kName && is_op("=", 1)) {
        Keyword k;
        k.loc = peek().loc;
        k.name = peek().text;
        p_ += 2;
        for (const Keyword& other : call.kwargs)
          if (other.name == k.name) return error(k.loc, str_cat("keyword argument '", k.name, "' repeated"));
        TSR_ASSIGN_OR_RETURN(k.value, test());
        call.kwargs.push_back(std::move(k));
      } else {
        if (!call.kwargs.empty()) return error(peek().loc, "positional argument follows keyword argument");
        TSR_ASSIGN_OR_RETURN(ExprPtr a, test());
        if (is_word("for")) return unsupported_here(peek().loc, "generator expressions");
        call.items.push_back(std::move(a));
      }
      if (!is_op(",")) break;
      ++p_;
    }
    return expect_op(")", "to close the argument list");
  }

  Expected<ExprPtr> atom() {
    const Token& t = peek();
    if (t.kind == Tok::kInt || t.kind == Tok::kFloat) {
      ExprPtr e = make(t.kind == Tok::kInt ? ExprKind::kInt : ExprKind::kFloat, t.loc);
      e->i = t.i;
      e->f = t.f;
      ++p_;
      return e;
    }
    if (t.kind == Tok::kString) {
      ExprPtr e = make(ExprKind::kString, t.loc);
      e->name = t.text;
      ++p_;
      if (peek().kind == Tok::kString) return unsupported_here(peek().loc, "implicit string concatenation");
      return e;
    }
    if (t.kind == Tok::kName) {
      if (t.text == "True" || t.text == "False") {
        ExprPtr e = make(ExprKind::kBool, t.loc);
        e->i = t.text == "True";
        ++p_;
        return e;
      }
      if (t.text == "None") {
        ++p_;
        return make(ExprKind::kNone, t.loc);
      }
      if (is_keyword(t.text)) {
        TSR_RETURN_IF_ERROR(check_keyword(t));
        return error(t.loc, str_cat("unexpected keyword '", t.text, "'"));
      }
      ExprPtr e = make(ExprKind::kName, t.loc);
      e->name = t.text;
      ++p_;
      return e;
    }
    if (t.kind == Tok::kOp && t.text == "(") {
      const Loc loc = t.loc;
      ++p_;
      if (is_op(")")) {
        ++p_;
        return make(ExprKind::kTuple, loc);
      }
      TSR_ASSIGN_OR_RETURN(ExprPtr inner, testlist());
      if (is_word("for")) return unsupported_here(peek().loc, "generator expressions");
      TSR_RETURN_IF_ERROR(expect_op(")", "to close the parenthesis"));
      return inner;
    }
    if (t.kind == Tok::kOp && t.text == "[") {
      ExprPtr list = make(ExprKind::kList, t.loc);
      ++p_;
      while (!is_op("]")) {
        TSR_ASSIGN_OR_RETURN(ExprPtr item, test());
        if (is_word("for")) return unsupported_here(peek().loc, "list comprehensions");
        list->items.push_back(std::move(item));
        if (!is_op(",")) break;
        ++p_;
      }
      TSR_RETURN_IF_ERROR(expect_op("]", "to close the list"));
      return list;
    }
    if (t.kind == Tok::kOp && t.text == "{") return unsupported_here(t.loc, "dicts and sets");
    if (t.kind == Tok::kOp && t.text == "~") return unsupported_here(t.loc, "bitwise operators");
    return error(t.loc, str_cat("expected an expression, found ", describe(t)));
  }

  const SourceFile& src_;
  std::vector<Token> t_;
  size_t p_ = 0;
};

}  // namespace

Expected<Module> parse_module(std::string file_name, std::string text) {
  Module m;
  m.source = std::make_unique<SourceFile>(std::move(file_name), std::move(text));
  TSR_ASSIGN_OR_RETURN(std::vector<Token> toks, tokenize(*m.source));
  Parser p(*m.source, std::move(toks));
  TSR_ASSIGN_OR_RETURN(m.body, p.file());
  return m;
}

}  // namespace tsr::frontend::script
