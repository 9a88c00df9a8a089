#include "chat/jinja_interpreter.hpp"

#include <ctime>
#include <memory>

#include "chat/jinja_builtins.hpp"
#include "chat/jinja_lexer.hpp"
#include "runtime/fail.hpp"

namespace ember::jinja {

namespace {

// A runtime error already tagged with the position of the tag that failed.
struct LocatedError {
    std::string message;
    int line;
    int column;
};

// raise_exception(message) from the template.
struct RaisedError {
    std::string message;
};

struct Frame {
    std::vector<std::pair<std::string, Value>> vars;
    std::shared_ptr<Frame> parent;

    const Value* find(const std::string& name) const {
        for (const Frame* f = this; f; f = f->parent.get())
            for (const auto& [k, v] : f->vars)
                if (k == name) return &v;
        return nullptr;
    }
    void set(const std::string& name, Value value) {
        for (auto& [k, v] : vars) {
            if (k == name) {
                v = std::move(value);
                return;
            }
        }
        vars.emplace_back(name, std::move(value));
    }
};
using FramePtr = std::shared_ptr<Frame>;

FramePtr child_of(const FramePtr& parent) {
    auto f = std::make_shared<Frame>();
    f->parent = parent;
    return f;
}

class Interpreter {
public:
    Interpreter(const std::vector<std::pair<std::string, Value>>& context, const RenderOptions& options)
        : options_(options), limits_(options.limits) {
        for (const auto& [k, v] : context) context_.set(k, v);
        install_globals();
    }

    std::string run(const Template& tpl) {
        std::string out;
        out_ = &out;
        try {
            exec_body(tpl.body, child_of(nullptr));
        } catch (const LocatedError& e) {
            fail_at(e.line, e.column, e.message);
        } catch (const RaisedError& e) {
            fail(e.message);
        }
        return out;
    }

private:
    enum class Flow { normal, break_loop, continue_loop };

    const RenderOptions& options_;
    const RenderLimits& limits_;
    Frame context_;
    Frame globals_;
    std::string* out_ = nullptr;
    std::uint64_t iterations_ = 0;
    int call_depth_ = 0;
    // Frames that macros and caller() blocks were defined in. They are kept alive here for the
    // whole render and captured weakly, so a macro stored in its own frame is not a cycle.
    std::vector<FramePtr> pinned_;

    std::weak_ptr<Frame> pin(const FramePtr& frame) {
        pinned_.push_back(frame);
        return frame;
    }

    // ---- output ------------------------------------------------------------------------

    void write(std::string_view s) {
        if (out_->size() + s.size() > limits_.max_output_bytes)
            fail("output longer than the limit of " + std::to_string(limits_.max_output_bytes) + " bytes");
        out_->append(s);
    }

    // Renders `body` into a fresh string (macros, call/filter/set blocks).
    std::string capture(const Body& body, const FramePtr& frame) {
        std::string buffer;
        std::string* saved = out_;
        out_ = &buffer;
        struct Restore {
            std::string*& slot;
            std::string* value;
            ~Restore() { slot = value; }
        } restore{out_, saved};
        exec_body(body, frame);
        return buffer;
    }

    // ---- globals -----------------------------------------------------------------------

    void install_globals() {
        globals_.set("range", make_callable("range", [this](CallArgs& a) {
            auto arg = [&](std::size_t i) {
                const Value& v = a.positional[i];
                if (!v.is_int() && !v.is_bool()) {
                    require_defined(v);
                    fail("'" + v.type_name() + "' object cannot be interpreted as an integer");
                }
                return v.is_bool() ? static_cast<std::int64_t>(v.as_bool()) : v.as_int();
            };
            std::int64_t start = 0, stop = 0, step = 1;
            if (a.positional.size() == 1) {
                stop = arg(0);
            } else if (a.positional.size() == 2 || a.positional.size() == 3) {
                start = arg(0);
                stop = arg(1);
                if (a.positional.size() == 3) step = arg(2);
            } else {
                fail("range expected 1 to 3 arguments, got " + std::to_string(a.positional.size()));
            }
            if (step == 0) fail("range() arg 3 must not be zero");
            std::vector<Value> items;
            for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
                if (static_cast<std::int64_t>(items.size()) >= limits_.max_range)
                    fail("range too big: the sandbox allows at most " + std::to_string(limits_.max_range) + " items");
                items.emplace_back(i);
            }
            return make_list(std::move(items));
        }));
        auto make_mapping = [](CallArgs& a, Dict::Kind kind) {
            auto d = std::make_shared<Dict>();
            d->kind = kind;
            for (const auto& p : a.positional) {
                if (!p.is_dict()) fail("namespace()/dict() positional argument must be a mapping");
                for (const auto& [k, v] : p.as_dict()->items) d->set(k, v);
            }
            for (const auto& [k, v] : a.keyword) d->set(k, v);
            return Value(std::move(d));
        };
        globals_.set("namespace", make_callable("namespace", [make_mapping](CallArgs& a) {
            return make_mapping(a, Dict::Kind::namespace_object);
        }));
        globals_.set("dict", make_callable("dict", [make_mapping](CallArgs& a) {
            return make_mapping(a, Dict::Kind::plain);
        }));
        globals_.set("joiner", make_callable("joiner", [](CallArgs& a) {
            ArgReader r(a, "joiner");
            std::string sep = r.get(0, "sep", Value(", ")).str();
            auto used = std::make_shared<bool>(false);
            return make_callable("joiner", [sep, used](CallArgs&) {
                if (!*used) {
                    *used = true;
                    return Value("");
                }
                return Value(sep);
            });
        }));
        globals_.set("raise_exception", make_callable("raise_exception", [](CallArgs& a) -> Value {
            ArgReader r(a, "raise_exception");
            throw RaisedError{r.get(0, "message").str()};
        }));
        globals_.set("strftime_now", make_callable("strftime_now", [this](CallArgs& a) {
            ArgReader r(a, "strftime_now");
            std::string format = r.get(0, "format").str();
            if (options_.strftime_now) return Value(options_.strftime_now(format));
            std::time_t now = std::time(nullptr);
            std::tm tm{};
            localtime_r(&now, &tm);
            char buf[256];
            std::size_t n = std::strftime(buf, sizeof(buf), format.c_str(), &tm);
            return Value(std::string(buf, n));
        }));
    }

    Value lookup(const std::string& name, const FramePtr& frame) const {
        if (const Value* v = frame->find(name)) return *v;
        if (const Value* v = context_.find(name)) return *v;
        if (const Value* v = globals_.find(name)) return *v;
        return Value::undefined("'" + name + "' is undefined");
    }

    // ---- statements --------------------------------------------------------------------

    Flow exec_body(const Body& body, const FramePtr& frame) {
        for (const auto& s : body) {
            Flow f = exec(*s, frame);
            if (f != Flow::normal) return f;
        }
        return Flow::normal;
    }

    Flow exec(const Stmt& s, const FramePtr& frame) {
        if (s.kind == Stmt::Kind::text) {
            try {
                write(s.text);
            } catch (const Error& e) {
                throw LocatedError{e.what(), s.line, s.column};
            }
            return Flow::normal;
        }
        try {
            return exec_tag(s, frame);
        } catch (const Error& e) {
            throw LocatedError{e.what(), s.line, s.column};
        }
    }

    void assign(const std::vector<std::string>& targets, const Value& value, Frame& frame) {
        if (targets.size() == 1) {
            frame.set(targets[0], value);
            return;
        }
        std::vector<Value> parts = iterate(value);
        if (parts.size() < targets.size())
            fail("not enough values to unpack (expected " + std::to_string(targets.size()) + ", got " +
                 std::to_string(parts.size()) + ")");
        if (parts.size() > targets.size())
            fail("too many values to unpack (expected " + std::to_string(targets.size()) + ")");
        for (std::size_t i = 0; i < targets.size(); ++i) frame.set(targets[i], parts[i]);
    }

    Flow exec_tag(const Stmt& s, const FramePtr& frame) {
        switch (s.kind) {
            case Stmt::Kind::output: {
                Value v = eval(*s.expr, frame);
                write(v.str());
                return Flow::normal;
            }
            case Stmt::Kind::if_: {
                for (const auto& [cond, body] : s.branches)
                    if (eval(*cond, frame).truthy()) return exec_body(body, frame);
                return exec_body(s.else_body, frame);
            }
            case Stmt::Kind::for_: return exec_for(s, frame);
            case Stmt::Kind::set: {
                Value v = eval(*s.expr, frame);
                if (!s.attribute.empty()) {
                    Value ns = lookup(s.targets[0], frame);
                    if (!ns.is_dict() || ns.as_dict()->kind != Dict::Kind::namespace_object)
                        fail("cannot assign attribute on non-namespace object");
                    ns.as_dict()->set(s.attribute, std::move(v));
                } else {
                    assign(s.targets, v, *frame);
                }
                return Flow::normal;
            }
            case Stmt::Kind::set_block: {
                Value v(capture(s.body, frame));
                if (s.expr) v = apply_block_filter(*s.expr, std::move(v), frame);
                frame->set(s.targets[0], std::move(v));
                return Flow::normal;
            }
            case Stmt::Kind::macro: {
                frame->set(s.text, make_macro(s, frame));
                return Flow::normal;
            }
            case Stmt::Kind::call_block: {
                const Stmt* stmt = &s;
                std::weak_ptr<Frame> defining = pin(frame);
                Value caller = make_callable("caller", [this, stmt, defining](CallArgs& a) {
                    FramePtr f = child_of(defining.lock());
                    bind_params(stmt->params, a, *f, "caller");
                    return Value(capture(stmt->body, f));
                });
                const Expr& call = *s.expr;
                Value callee = eval(*call.args[0], frame);
                CallArgs args = eval_args(call, frame, 1);
                args.keyword.emplace_back("caller", caller);
                write(invoke(callee, args).str());
                return Flow::normal;
            }
            case Stmt::Kind::filter_block: {
                Value v(capture(s.body, frame));
                write(apply_block_filter(*s.expr, std::move(v), frame).str());
                return Flow::normal;
            }
            case Stmt::Kind::break_: return Flow::break_loop;
            case Stmt::Kind::continue_: return Flow::continue_loop;
            case Stmt::Kind::scope: return exec_body(s.body, frame);
            case Stmt::Kind::text: break;
        }
        return Flow::normal;
    }

    Value apply_block_filter(const Expr& chain, Value v, const FramePtr& frame) {
        FramePtr f = child_of(frame);
        f->set(kBlockPlaceholder, std::move(v));
        return eval(chain, f);
    }

    Flow exec_for(const Stmt& s, const FramePtr& frame) {
        std::vector<Value> items = iterate(eval(*s.expr, frame));
        if (s.cond) {
            std::vector<Value> kept;
            for (auto& item : items) {
                count_iteration();
                FramePtr f = child_of(frame);
                assign(s.targets, item, *f);
                if (eval(*s.cond, f).truthy()) kept.push_back(std::move(item));
            }
            items = std::move(kept);
        }
        if (items.empty()) return exec_body(s.else_body, frame);
        auto n = static_cast<std::int64_t>(items.size());
        for (std::int64_t i = 0; i < n; ++i) {
            count_iteration();
            FramePtr f = child_of(frame);
            const Value& item = items[static_cast<std::size_t>(i)];
            assign(s.targets, item, *f);
            auto loop = std::make_shared<Dict>();
            loop->kind = Dict::Kind::loop;
            loop->items = {
                {"index", Value(i + 1)},
                {"index0", Value(i)},
                {"revindex", Value(n - i)},
                {"revindex0", Value(n - i - 1)},
                {"first", Value(i == 0)},
                {"last", Value(i == n - 1)},
                {"length", Value(n)},
                {"depth", Value(std::int64_t{1})},
                {"depth0", Value(std::int64_t{0})},
                {"previtem", i > 0 ? items[static_cast<std::size_t>(i - 1)] : Value::undefined("there is no previous item")},
                {"nextitem", i + 1 < n ? items[static_cast<std::size_t>(i + 1)] : Value::undefined("there is no next item")},
                {"cycle", make_callable("loop.cycle", [i](CallArgs& a) {
                     if (a.positional.empty()) fail("no items for cycling given");
                     return a.positional[static_cast<std::size_t>(i) % a.positional.size()];
                 })},
            };
            f->set("loop", Value(std::move(loop)));
            Flow flow = exec_body(s.body, f);
            if (flow == Flow::break_loop) break;
        }
        return Flow::normal;
    }

    void count_iteration() {
        if (++iterations_ > limits_.max_loop_iterations)
            fail("loop iterations exceed the limit of " + std::to_string(limits_.max_loop_iterations));
    }

    // ---- macros ------------------------------------------------------------------------

    void bind_params(const std::vector<std::pair<std::string, ExprPtr>>& params, const CallArgs& a, Frame& f,
                     const std::string& name) {
        std::vector<Value> varargs;
        for (std::size_t i = 0; i < a.positional.size(); ++i) {
            if (i < params.size()) f.set(params[i].first, a.positional[i]);
            else varargs.push_back(a.positional[i]);
        }
        auto kwargs = std::make_shared<Dict>();
        for (const auto& [k, v] : a.keyword) {
            bool is_param = false;
            for (std::size_t i = 0; i < params.size(); ++i) {
                if (params[i].first != k) continue;
                if (i < a.positional.size()) fail("macro '" + name + "' got multiple values for argument '" + k + "'");
                is_param = true;
            }
            if (is_param || k == "caller") f.set(k, v);
            else kwargs->set(k, v);
        }
        f.set("varargs", make_list(std::move(varargs)));
        f.set("kwargs", Value(kwargs));
    }

    Value make_macro(const Stmt& s, const FramePtr& frame) {
        const Stmt* stmt = &s;
        std::weak_ptr<Frame> defining = pin(frame);
        return make_callable(s.text, [this, stmt, defining](CallArgs& a) {
            if (++call_depth_ > limits_.max_call_depth) {
                --call_depth_;
                fail("macro calls nested deeper than " + std::to_string(limits_.max_call_depth));
            }
            struct Depth {
                int& d;
                ~Depth() { --d; }
            } depth{call_depth_};
            FramePtr f = child_of(defining.lock());
            bind_params(stmt->params, a, *f, stmt->text);
            for (std::size_t i = a.positional.size(); i < stmt->params.size(); ++i) {
                const auto& [pname, def] = stmt->params[i];
                bool given = false;
                for (const auto& [k, v] : a.keyword) given = given || k == pname;
                if (given) continue;
                f->set(pname, def ? eval(*def, f) : Value::undefined("'" + pname + "' is undefined"));
            }
            return Value(capture(stmt->body, f));
        });
    }

    // ---- expressions -------------------------------------------------------------------

    CallArgs eval_args(const Expr& e, const FramePtr& frame, std::size_t first) {
        CallArgs args;
        for (std::size_t i = first; i < e.args.size(); ++i) args.positional.push_back(eval(*e.args[i], frame));
        for (const auto& [k, v] : e.kwargs) args.keyword.emplace_back(k, eval(*v, frame));
        return args;
    }

    Value invoke(const Value& callee, CallArgs& args) {
        if (callee.is_undefined()) require_defined(callee);
        if (!callee.is_callable()) fail("'" + callee.type_name() + "' object is not callable");
        return callee.as_callable()->fn(args);
    }

    Value eval(const Expr& e, const FramePtr& frame) {
        switch (e.kind) {
            case Expr::Kind::literal: return e.value;
            case Expr::Kind::name: return lookup(e.name, frame);
            case Expr::Kind::list:
            case Expr::Kind::tuple: {
                std::vector<Value> items;
                items.reserve(e.args.size());
                for (const auto& a : e.args) items.push_back(eval(*a, frame));
                return make_list(std::move(items), e.kind == Expr::Kind::tuple);
            }
            case Expr::Kind::dict: {
                auto d = std::make_shared<Dict>();
                for (std::size_t i = 0; i + 1 < e.args.size(); i += 2) {
                    Value k = eval(*e.args[i], frame);
                    if (!k.is_string()) fail("dict keys must be strings in ember's templates, got " + k.type_name());
                    d->set(k.as_string(), eval(*e.args[i + 1], frame));
                }
                return Value(std::move(d));
            }
            case Expr::Kind::attribute: return get_attribute(eval(*e.args[0], frame), e.name, limits_);
            case Expr::Kind::subscript: return get_item(eval(*e.args[0], frame), eval(*e.args[1], frame), limits_);
            case Expr::Kind::slice: {
                Value obj = eval(*e.args[0], frame);
                auto part = [&](std::size_t i) { return e.args[i] ? eval(*e.args[i], frame) : Value::none(); };
                return get_slice(obj, part(1), part(2), part(3));
            }
            case Expr::Kind::call: {
                Value callee = eval(*e.args[0], frame);
                CallArgs args = eval_args(e, frame, 1);
                return invoke(callee, args);
            }
            case Expr::Kind::filter: {
                Value subject = eval(*e.args[0], frame);
                CallArgs args = eval_args(e, frame, 1);
                return apply_filter(e.name, subject, args, limits_);
            }
            case Expr::Kind::test: {
                Value subject = eval(*e.args[0], frame);
                CallArgs args = eval_args(e, frame, 1);
                bool r = apply_test(e.name, subject, args, limits_);
                return Value(e.negated ? !r : r);
            }
            case Expr::Kind::unary: {
                Value v = eval(*e.args[0], frame);
                if (e.name == "not") return Value(!v.truthy());
                return unary_op(e.name, v);
            }
            case Expr::Kind::binary: {
                Value a = eval(*e.args[0], frame);
                if (e.name == "and") return a.truthy() ? eval(*e.args[1], frame) : a;
                if (e.name == "or") return a.truthy() ? a : eval(*e.args[1], frame);
                Value b = eval(*e.args[1], frame);
                return binary_op(e.name, a, b, limits_);
            }
            case Expr::Kind::conditional: {
                if (eval(*e.args[1], frame).truthy()) return eval(*e.args[0], frame);
                if (e.args[2]) return eval(*e.args[2], frame);
                return Value::undefined("the inline if-expression on line " + std::to_string(e.line) +
                                        " evaluated to false and no else section was defined.");
            }
        }
        return Value();
    }
};

}  // namespace

std::string render(const Template& tpl, const std::vector<std::pair<std::string, Value>>& context,
                   const RenderOptions& options) {
    // Values created from here on are accounted against the limits (jinja_sandbox.hpp).
    SandboxScope sandbox(options.limits);
    return Interpreter(context, options).run(tpl);
}

}  // namespace ember::jinja
